/* Portable float32 binary elementwise kernels (vv, vs = "c", sv = "rc": XNNPACK's naming). */
#include <math.h>

#include "f32/vbinary.h"

#define QW_F32_VBINARY_SCALAR(op, expr)                             \
  QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_v##op##_ukernel__scalar) {  \
    for (size_t i = 0; i < n; i++) {                                \
      const float va = a[i], vb = b[i];                             \
      y[i] = expr;                                                  \
    }                                                               \
  }                                                                 \
  QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_v##op##c_ukernel__scalar) { \
    const float vb = b[0];                                          \
    for (size_t i = 0; i < n; i++) {                                \
      const float va = a[i];                                        \
      y[i] = expr;                                                  \
    }                                                               \
  }                                                                 \
  QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_vr##op##c_ukernel__scalar) { \
    const float va = a[0];                                          \
    for (size_t i = 0; i < n; i++) {                                \
      const float vb = b[i];                                        \
      y[i] = expr;                                                  \
    }                                                               \
  }

QW_F32_VBINARY_SCALAR(add, va + vb)
QW_F32_VBINARY_SCALAR(sub, va - vb)
QW_F32_VBINARY_SCALAR(mul, va * vb)
QW_F32_VBINARY_SCALAR(div, va / vb)

QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_vpow_ukernel__scalar) {
  for (size_t i = 0; i < n; i++) {
    y[i] = powf(a[i], b[i]);
  }
}

QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_vpowc_ukernel__scalar) {
  const float e = b[0];
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_pow_by_scalar(a[i], e);
  }
}

QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_vrpowc_ukernel__scalar) {
  const float base = a[0];
  for (size_t i = 0; i < n; i++) {
    y[i] = powf(base, b[i]);
  }
}
