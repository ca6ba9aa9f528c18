/* wasm SIMD128 float32 layer normalization: one row with scalar statistics (sequential sums) and a vector output
 * pass; four rows with their statistics in the four lanes. */
#include "f32/layernorm.h"
#include "simd128.h"

/* y = (v - mean) / std * gamma (+ beta) over a row holding v, four at a time. */
static void layernorm_output(size_t n, float* y, float mean, float std, const float* gamma, const float* beta) {
  const v128_t vmean = wasm_f32x4_splat(mean), vstd = wasm_f32x4_splat(std);
  size_t h = 0;
  for (; h + 4 <= n; h += 4) {
    v128_t v = wasm_f32x4_mul(wasm_f32x4_div(wasm_f32x4_sub(wasm_v128_load(y + h), vmean), vstd), wasm_v128_load(gamma + h));
    if (beta != NULL) {
      v = wasm_f32x4_add(v, wasm_v128_load(beta + h));
    }
    wasm_v128_store(y + h, v);
  }
  for (; h < n; h++) {
    const float v = (y[h] - mean) / std * gamma[h];
    y[h] = beta != NULL ? v + beta[h] : v;
  }
}

QW_DECLARE_F32_LAYERNORM_UKERNEL(qw_f32_layernorm_ukernel_4__wasmsimd) {
  float mean, std;
  qw_layernorm_statistics(n, x, skip, bias, epsilon, y, sum, &mean, &std);
  layernorm_output(n, y, mean, std, gamma, beta);
}

/* The rows' v = x (+ skip) (+ bias), stored in y (and sum), along the row four at a time: the scalar order. */
static void layernorm_inputs(size_t n, const float* x, const float* skip, const float* bias, float* y, float* sum) {
  size_t h = 0;
  for (; h + 4 <= n; h += 4) {
    v128_t v = wasm_v128_load(x + h);
    if (skip != NULL) {
      v = wasm_f32x4_add(v, wasm_v128_load(skip + h));
    }
    if (bias != NULL) {
      v = wasm_f32x4_add(v, wasm_v128_load(bias + h));
    }
    if (sum != NULL) {
      wasm_v128_store(sum + h, v);
    }
    wasm_v128_store(y + h, v);
  }
  for (; h < n; h++) {
    qw_layernorm_input(h, x, skip, bias, y, sum);
  }
}

/* Rows 4g + r for g < G, r < 4: Welford's recurrence with row 4g + r in lane r of vector g. Each row's statistics are
 * one chain of dependent operations (a division among them); G vectors keep G independent chains in flight. */
QW_ALWAYS_INLINE void layernorm_rows(size_t G, size_t n, const float* const* x, const float* const* skip,
                                     const float* bias, const float* gamma, const float* beta, float epsilon,
                                     float* const* y, float* const* sum) {
  for (size_t r = 0; r < 4 * G; r++) {
    layernorm_inputs(n, x[r], skip != NULL ? skip[r] : NULL, bias, y[r], sum != NULL ? sum[r] : NULL);
  }
  v128_t mean[4], m2[4];
  for (size_t g = 0; g < G; g++) mean[g] = m2[g] = wasm_f32x4_splat(0.0f);
  for (size_t h = 0; h < n; h++) {
    const v128_t count = wasm_f32x4_splat((float)(h + 1));
    for (size_t g = 0; g < G; g++) {
      float* const* yg = y + 4 * g;
      const v128_t v = wasm_f32x4_make(yg[0][h], yg[1][h], yg[2][h], yg[3][h]);
      const v128_t d = wasm_f32x4_sub(v, mean[g]);
      mean[g] = wasm_f32x4_add(mean[g], wasm_f32x4_div(d, count));
      m2[g] = wasm_f32x4_add(m2[g], wasm_f32x4_mul(d, wasm_f32x4_sub(v, mean[g])));
    }
  }
  for (size_t g = 0; g < G; g++) {
    const v128_t std = wasm_f32x4_sqrt(wasm_f32x4_add(wasm_f32x4_div(m2[g], wasm_f32x4_splat((float)n)), wasm_f32x4_splat(epsilon)));
    float means[4], stds[4];
    wasm_v128_store(means, mean[g]);
    wasm_v128_store(stds, std);
    for (size_t r = 0; r < 4; r++) {
      layernorm_output(n, y[4 * g + r], means[r], stds[r], gamma, beta);
    }
  }
}

QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm4_ukernel__wasmsimd) {
  layernorm_rows(1, n, x, skip, bias, gamma, beta, epsilon, y, sum);
}

/* Eight rows: two chains side by side (the division's latency bounds one chain). 512 rows of 384: 1.53 -> 0.90 ns per
 * element against four rows at a time, in Node 20 and in Chromium 156 alike. */
QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm8_ukernel__wasmsimd) {
  layernorm_rows(2, n, x, skip, bias, gamma, beta, epsilon, y, sum);
}

/* Sixteen rows: four chains (128 rows of 384, as MiniLM's: 36.5 -> 25 us in Node 24 against eight rows at a time;
 * 32 rows gave 24). */
QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm16_ukernel__wasmsimd) {
  layernorm_rows(4, n, x, skip, bias, gamma, beta, epsilon, y, sum);
}
