/* Portable float32 depthwise channel: each output row is the accumulator, tap by tap (the order per
 * output is bias, then the taps: the bits of the SIMD kernel and of the GEMM path). Reads no slack. */
#include "f32/dwconv.h"

QW_DECLARE_F32_DWCONV_UKERNEL(qw_f32_dwconv_ukernel__scalar) {
  QW_ASSERT_F32_DWCONV_UKERNEL();
  const float bias = w[0];
  for (size_t oy = 0; oy < rows; oy++, input += row_stride, out += n) {
    for (size_t j = 0; j < n; j++) {
      out[j] = bias;
    }
    for (size_t t = 0; t < taps; t++) {
      const float wt = w[w_stride * (t + 1)];
      const float* row = input + offsets[t];
      for (size_t j = 0; j < n; j++) {
        out[j] = out[j] + wt * row[j];
      }
    }
  }
}
