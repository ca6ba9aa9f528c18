/* Portable float32 unary kernels: loops over the per-element rules of src/f32/mlas.h. */
#include <math.h>

#include "f32/mlas.h"
#include "f32/vunary.h"

#define QW_F32_VUNARY_SCALAR(name, element_op) \
  QW_DECLARE_F32_VUNARY_UKERNEL(name) {        \
    for (size_t i = 0; i < n; i++) {           \
      y[i] = element_op(x[i]);                 \
    }                                          \
  }

QW_F32_VUNARY_SCALAR(qw_f32_vexp_ukernel__scalar, qw_mlas_exp)
QW_F32_VUNARY_SCALAR(qw_f32_verf_ukernel__scalar, qw_mlas_erf)
QW_F32_VUNARY_SCALAR(qw_f32_vtanh_ukernel__scalar, qw_mlas_tanh)
QW_F32_VUNARY_SCALAR(qw_f32_vsqrt_ukernel__scalar, sqrtf)
