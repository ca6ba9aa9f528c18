/* wasm SIMD128 float32 layer normalization row: scalar statistics (sequential sums), vector output pass. */
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
