/* Portable int32 -> float32 output stage of the dynamic int8 matmul (requantization.h). */
#include "requantization/requantization.h"

QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_f32_scale_ukernel__scalar) {
  for (size_t r = 0; r < rows; r++, acc += acc_stride, y = (char*)y + y_stride) {
    float* out = (float*)y;
    for (size_t j = 0; j < n; j++) {
      out[j] = (float)acc[j] * params->multiplier[j];
    }
  }
}

QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_f32_scale_bias_ukernel__scalar) {
  for (size_t r = 0; r < rows; r++, acc += acc_stride, y = (char*)y + y_stride) {
    float* out = (float*)y;
    for (size_t j = 0; j < n; j++) {
      out[j] = (float)acc[j] * params->multiplier[j] + params->bias_f32[j];
    }
  }
}
