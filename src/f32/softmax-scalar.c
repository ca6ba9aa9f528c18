/* Portable float32 softmax row: the SIMD kernel's four accumulator lanes kept as an array. */
#include <float.h>

#include "f32/mlas.h"
#include "f32/softmax.h"

QW_DECLARE_F32_SOFTMAX_UKERNEL(qw_f32_softmax_ukernel__scalar) {
  float max = -FLT_MAX;
  for (size_t i = 0; i < n; i++) {
    max = qw_wasm_fmaxf(max, x[i]);
  }
  const float negative_max = -max;
  float lanes[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (size_t l = 0; l < 4; l++) {
      y[i + l] = qw_mlas_exp_minus_max(x[i + l], negative_max);
      lanes[l] = lanes[l] + y[i + l];
    }
  }
  float sum = n >= 4 ? (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]) : 0.0f;
  for (; i < n; i++) {
    y[i] = qw_mlas_exp_minus_max(x[i], negative_max);
    sum = sum + y[i];
  }
  const float scale = 1.0f / sum;
  for (i = 0; i < n; i++) {
    y[i] = y[i] * scale;
  }
}
