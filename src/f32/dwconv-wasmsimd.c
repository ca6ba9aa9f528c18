/* wasm SIMD128 float32 depthwise channel: per output row, 16 outputs (4 f32x4 accumulators) per pass
 * over the taps, then 4 at a time, then a last partial vector (reading up to 3 floats of slack,
 * storing only the real lanes); multiply then add (the scalar kernel's bits). */
#include "f32/dwconv.h"
#include "simd128.h"

QW_DECLARE_F32_DWCONV_UKERNEL(qw_f32_dwconv_ukernel_16__wasmsimd) {
  QW_ASSERT_F32_DWCONV_UKERNEL();
  const v128_t bias = wasm_v128_load32_splat(w);
  for (size_t oy = 0; oy < rows; oy++, input += row_stride, out += n) {
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
      v128_t acc0 = bias, acc1 = bias, acc2 = bias, acc3 = bias;
      for (size_t t = 0; t < taps; t++) {
        const v128_t wt = wasm_v128_load32_splat(w + w_stride * (t + 1));
        const float* row = input + offsets[t] + j;
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
    for (; j < n; j += 4) {
      v128_t acc = bias;
      for (size_t t = 0; t < taps; t++) {
        const v128_t wt = wasm_v128_load32_splat(w + w_stride * (t + 1));
        acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wt, wasm_v128_load(input + offsets[t] + j)));
      }
      const size_t left = n - j;
      if (left >= 4) {
        wasm_v128_store(out + j, acc);
      } else {
        float* o = out + j;
        if (left & 2) {
          wasm_v128_store64_lane(o, acc, 0);
          acc = wasm_i64x2_shuffle(acc, acc, 1, 1);
          o += 2;
        }
        if (left & 1) {
          wasm_v128_store32_lane(o, acc, 0);
        }
      }
    }
  }
}
