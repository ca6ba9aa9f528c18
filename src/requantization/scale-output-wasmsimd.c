/* wasm SIMD128 int32 -> float32 output stage of the dynamic int8 matmul: f32x4.convert_i32x4_s (the
 * rounding of (float)int32), one multiply, one add, as MLAS's output processor. */
#include "requantization/requantization.h"
#include "simd128.h"

QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_f32_scale_ukernel__wasmsimd) {
  for (size_t r = 0; r < rows; r++, acc += acc_stride, y = (char*)y + y_stride) {
    float* out = (float*)y;
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const v128_t v = wasm_f32x4_convert_i32x4(wasm_v128_load(acc + j));
      wasm_v128_store(out + j, wasm_f32x4_mul(v, wasm_v128_load(params->multiplier + j)));
    }
    for (; j < n; j++) {
      out[j] = (float)acc[j] * params->multiplier[j];
    }
  }
}

QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_f32_scale_bias_ukernel__wasmsimd) {
  for (size_t r = 0; r < rows; r++, acc += acc_stride, y = (char*)y + y_stride) {
    float* out = (float*)y;
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const v128_t v =
          wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_v128_load(acc + j)), wasm_v128_load(params->multiplier + j));
      wasm_v128_store(out + j, wasm_f32x4_add(v, wasm_v128_load(params->bias_f32 + j)));
    }
    for (; j < n; j++) {
      out[j] = (float)acc[j] * params->multiplier[j] + params->bias_f32[j];
    }
  }
}
