/* Portable float32 GELU kernels: loops over the per-element rules of src/f32/mlas.h. */
#include "f32/mlas.h"
#include "f32/vgelu.h"

#define QW_F32_VGELU_SCALAR(name, element_op)                   \
  QW_DECLARE_F32_VGELU_UKERNEL(name) {                          \
    for (size_t i = 0; i < n; i++) {                            \
      y[i] = element_op(bias != NULL ? x[i] + bias[i] : x[i]);  \
    }                                                           \
  }

QW_F32_VGELU_SCALAR(qw_f32_vgelu_erf_ukernel__scalar, qw_gelu_erf)
QW_F32_VGELU_SCALAR(qw_f32_vgelu_tanh_ukernel__scalar, qw_gelu_tanh)
