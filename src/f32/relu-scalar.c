/* Portable float32 ReLU (NaN and -0.0f give +0.0f). */
#include <assert.h>

#include "f32/relu.h"

QW_DECLARE_F32_RELU_UKERNEL(qw_f32_relu_ukernel__scalar) {
  assert(n != 0 && x != NULL && y != NULL);
  for (size_t i = 0; i < n; i++) {
    const float v = x[i];
    y[i] = v > 0.0f ? v : 0.0f;
  }
}
