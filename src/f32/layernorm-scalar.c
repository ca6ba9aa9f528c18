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

QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm4_ukernel__scalar) {
  for (size_t r = 0; r < 4; r++) {
    qw_f32_layernorm_ukernel__scalar(n, x[r], skip != NULL ? skip[r] : NULL, bias, gamma, beta, epsilon, y[r],
                                     sum != NULL ? sum[r] : NULL);
  }
}

QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm8_ukernel__scalar) {
  for (size_t r = 0; r < 8; r++) {
    qw_f32_layernorm_ukernel__scalar(n, x[r], skip != NULL ? skip[r] : NULL, bias, gamma, beta, epsilon, y[r],
                                     sum != NULL ? sum[r] : NULL);
  }
}

QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm16_ukernel__scalar) {
  for (size_t r = 0; r < 16; r++) {
    qw_f32_layernorm_ukernel__scalar(n, x[r], skip != NULL ? skip[r] : NULL, bias, gamma, beta, epsilon, y[r],
                                     sum != NULL ? sum[r] : NULL);
  }
}
