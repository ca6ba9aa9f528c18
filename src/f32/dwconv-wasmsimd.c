/* wasm SIMD128 float32 depthwise row: 16 outputs (4 f32x4 accumulators) per pass over the taps, then
 * 4 at a time, then one by one; multiply then add (the scalar kernel's bits). */
#include "f32/dwconv.h"
#include "simd128.h"

QW_DECLARE_F32_DWCONV_UKERNEL(qw_f32_dwconv_ukernel_16__wasmsimd) {
  const v128_t bias = wasm_v128_load32_splat(w);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    v128_t acc0 = bias, acc1 = bias, acc2 = bias, acc3 = bias;
    for (size_t t = 0; t < taps; t++) {
      const v128_t wt = wasm_v128_load32_splat(w + QW_F32_GEMM_MR * (t + 1));
      const float* row = rows[t] + j;
      acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(wt, wasm_v128_load(row)));
      acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(wt, wasm_v128_load(row + 4)));
      acc2 = wasm_f32x4_add(acc2, wasm_f32x4_mul(wt, wasm_v128_load(row + 8)));
      acc3 = wasm_f32x4_add(acc3, wasm_f32x4_mul(wt, wasm_v128_load(row + 12)));
    }
    wasm_v128_store(out + j, acc0);
    wasm_v128_store(out + j + 4, acc1);
    wasm_v128_store(out + j + 8, acc2);
    wasm_v128_store(out + j + 12, acc3);
  }
  for (; j + 4 <= n; j += 4) {
    v128_t acc = bias;
    for (size_t t = 0; t < taps; t++) {
      const v128_t wt = wasm_v128_load32_splat(w + QW_F32_GEMM_MR * (t + 1));
      acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wt, wasm_v128_load(rows[t] + j)));
    }
    wasm_v128_store(out + j, acc);
  }
  for (; j < n; j++) {
    float acc = w[0];
    for (size_t t = 0; t < taps; t++) {
      acc = acc + w[QW_F32_GEMM_MR * (t + 1)] * rows[t][j];
    }
    out[j] = acc;
  }
}
