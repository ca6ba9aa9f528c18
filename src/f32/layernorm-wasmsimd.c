/* wasm SIMD128 float32 layer normalization: one row with scalar statistics (sequential sums) and a vector output
 * pass; four rows with their statistics in the four lanes. */
#include "f32/layernorm.h"
#include "simd128.h"

QW_DECLARE_F32_LAYERNORM_UKERNEL(qw_f32_layernorm_ukernel_4__wasmsimd) {
  float mean, std;
  qw_layernorm_statistics(n, x, skip, bias, epsilon, y, sum, &mean, &std);
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
    float v = x[h];
    if (skip != NULL) {
      v = v + skip[h];
    }
    if (bias != NULL) {
      v = v + bias[h];
    }
    if (sum != NULL) {
      sum[h] = v;
    }
    y[h] = v;
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
  for (size_t r = 0; r < 4; r++) {
    float row_mean, row_std;
    switch (r) { /* extract_lane needs a constant lane */
      case 0: row_mean = wasm_f32x4_extract_lane(mean, 0); row_std = wasm_f32x4_extract_lane(std, 0); break;
      case 1: row_mean = wasm_f32x4_extract_lane(mean, 1); row_std = wasm_f32x4_extract_lane(std, 1); break;
      case 2: row_mean = wasm_f32x4_extract_lane(mean, 2); row_std = wasm_f32x4_extract_lane(std, 2); break;
      default: row_mean = wasm_f32x4_extract_lane(mean, 3); row_std = wasm_f32x4_extract_lane(std, 3); break;
    }
    const v128_t vmean = wasm_f32x4_splat(row_mean), vstd = wasm_f32x4_splat(row_std);
    float* yr = y[r];
    size_t h = 0;
    for (; h + 4 <= n; h += 4) {
      v128_t o = wasm_f32x4_mul(wasm_f32x4_div(wasm_f32x4_sub(wasm_v128_load(yr + h), vmean), vstd), wasm_v128_load(gamma + h));
      if (beta != NULL) {
        o = wasm_f32x4_add(o, wasm_v128_load(beta + h));
      }
      wasm_v128_store(yr + h, o);
    }
    for (; h < n; h++) {
      const float o = (yr[h] - row_mean) / row_std * gamma[h];
      yr[h] = beta != NULL ? o + beta[h] : o;
    }
  }
}
