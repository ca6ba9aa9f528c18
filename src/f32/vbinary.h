/*
 * float32 binary elementwise microkernels: y[i] = a[i] op b[i] for i < n, in three forms: vv (both
 * vectors), vs (b[0] for every i), sv (a[0] for every i). add / sub / mul / div are single IEEE
 * operations (Eigen's, in onnxruntime); pow is onnxruntime's Pow: x * x for an exponent of exactly 2,
 * (x * x) * x for 3, powf otherwise, those shortcuts taken only when the exponent is one value over the
 * span (the vs form), as its broadcaster does. y may alias a or b.
 */
#ifndef QWASM_F32_VBINARY_H
#define QWASM_F32_VBINARY_H

#include <stddef.h>

enum { QW_F32_VBINARY_VV = 0, QW_F32_VBINARY_VS = 1, QW_F32_VBINARY_SV = 2 };

typedef void (*qw_f32_vbinary_ukernel)(size_t n, const float* a, const float* b, float* y);

#define QW_DECLARE_F32_VBINARY_UKERNEL(name) void name(size_t n, const float* a, const float* b, float* y)

#define QW_DECLARE_F32_VBINARY_FAMILY(op, isa)                 \
  QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_v##op##_ukernel__##isa);  \
  QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_v##op##c_ukernel__##isa); \
  QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_vr##op##c_ukernel__##isa)

QW_DECLARE_F32_VBINARY_FAMILY(add, scalar);
QW_DECLARE_F32_VBINARY_FAMILY(sub, scalar);
QW_DECLARE_F32_VBINARY_FAMILY(mul, scalar);
QW_DECLARE_F32_VBINARY_FAMILY(div, scalar);
QW_DECLARE_F32_VBINARY_FAMILY(pow, scalar);
#if QW_SIMD
QW_DECLARE_F32_VBINARY_FAMILY(add, wasmsimd);
QW_DECLARE_F32_VBINARY_FAMILY(sub, wasmsimd);
QW_DECLARE_F32_VBINARY_FAMILY(mul, wasmsimd);
QW_DECLARE_F32_VBINARY_FAMILY(div, wasmsimd);
#endif

/* onnxruntime's Pow for a single exponent e (the vs form). */
static inline float qw_pow_by_scalar(float x, float e) {
  if (e == 2.0f) {
    return x * x;
  }
  if (e == 3.0f) {
    return x * x * x;
  }
  return __builtin_powf(x, e);
}

#endif /* QWASM_F32_VBINARY_H */
