/* Portable float32 layer normalization row (src/f32/layernorm.h). */
#include "f32/layernorm.h"

QW_DECLARE_F32_LAYERNORM_UKERNEL(qw_f32_layernorm_ukernel__scalar) {
  float mean, std;
  qw_layernorm_statistics(n, x, skip, bias, epsilon, y, sum, &mean, &std);
  for (size_t h = 0; h < n; h++) {
    const float v = (y[h] - mean) / std * gamma[h];
    y[h] = beta != NULL ? v + beta[h] : v;
  }
}
