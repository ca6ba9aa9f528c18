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

QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm4_ukernel__wasmsimd) {
  for (size_t r = 0; r < 4; r++) {
    layernorm_inputs(n, x[r], skip != NULL ? skip[r] : NULL, bias, y[r], sum != NULL ? sum[r] : NULL);
  }
  /* Welford's recurrence, row r in lane r */
  v128_t mean = wasm_f32x4_splat(0.0f), m2 = mean;
  for (size_t h = 0; h < n; h++) {
    const v128_t v = wasm_f32x4_make(y[0][h], y[1][h], y[2][h], y[3][h]);
    const v128_t d = wasm_f32x4_sub(v, mean);
    mean = wasm_f32x4_add(mean, wasm_f32x4_div(d, wasm_f32x4_splat((float)(h + 1))));
    m2 = wasm_f32x4_add(m2, wasm_f32x4_mul(d, wasm_f32x4_sub(v, mean)));
  }
  const v128_t std = wasm_f32x4_sqrt(wasm_f32x4_add(wasm_f32x4_div(m2, wasm_f32x4_splat((float)n)), wasm_f32x4_splat(epsilon)));
  float means[4], stds[4];
  wasm_v128_store(means, mean);
  wasm_v128_store(stds, std);
  for (size_t r = 0; r < 4; r++) {
    layernorm_output(n, y[r], means[r], stds[r], gamma, beta);
  }
}
