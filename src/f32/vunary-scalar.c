/* Portable float32 unary kernels: loops over the per-element rules of src/f32/mlas.h. */
#include <math.h>

#include "f32/mlas.h"
#include "f32/vunary.h"

QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vexp_ukernel__scalar) {
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_mlas_exp(x[i]);
  }
}

QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_verf_ukernel__scalar) {
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_mlas_erf(x[i]);
  }
}

QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vtanh_ukernel__scalar) {
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_mlas_tanh(x[i]);
  }
}

QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vsqrt_ukernel__scalar) {
  for (size_t i = 0; i < n; i++) {
    y[i] = sqrtf(x[i]);
  }
}
