/* Quantized add as ONNX Runtime computes com.microsoft QLinearAdd on targets without its fixed-point
 * path (the wasm build among them; MLAS qladd.cpp, MlasQLinearAddKernelRawHelper):
 *
 *   c = (a_s * (float)(a - a_z) + b_s * (float)(b - b_z)) / y_s       (float32, one rounding each)
 *   y = (int)nearbyintf(min(max(c, qmin - y_z), qmax - y_z) + y_z)    (clamp first, zero point added in float)
 *
 * The spec's formula, evaluated in that order; the order matters only at ties and at the clamp edge. */
#ifndef QWASM_VADD_H
#define QWASM_VADD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

struct qw_vadd_onnx_params {
  float a_scale, b_scale, y_scale;
  int32_t a_zero_point, b_zero_point;
  float y_zero_point; /* as float: ORT adds it before rounding */
  float y_min, y_max; /* qmin - y_z, qmax - y_z */
};

static inline int32_t qw_vadd_onnx_value(int32_t a, int32_t b, const struct qw_vadd_onnx_params* p) {
  const float va = p->a_scale * (float)(a - p->a_zero_point);
  const float vb = p->b_scale * (float)(b - p->b_zero_point);
  float c = (va + vb) / p->y_scale;
  c = c < p->y_min ? p->y_min : c;
  c = p->y_max < c ? p->y_max : c;
  return (int32_t)nearbyintf(c + p->y_zero_point);
}

/* QLinearMul, the same way (MLAS qlmul.cpp, portable kernel): c = (a_s (a - za) * b_s (b - zb)) / y_s. */
static inline int32_t qw_vmul_onnx_value(int32_t a, int32_t b, const struct qw_vadd_onnx_params* p) {
  const float va = p->a_scale * (float)(a - p->a_zero_point);
  const float vb = p->b_scale * (float)(b - p->b_zero_point);
  float c = (va * vb) / p->y_scale;
  c = c < p->y_min ? p->y_min : c;
  c = p->y_max < c ? p->y_max : c;
  return (int32_t)nearbyintf(c + p->y_zero_point);
}

/* y[i] = rule(a[i], b[i]) for n contiguous 8-bit elements (quint8 or qint8 by the variant). */
typedef void (*qw_vadd_onnx_ukernel)(size_t n, const void* a, const void* b, void* y,
                                     const struct qw_vadd_onnx_params* params);

#define QW_DECLARE_VADD_ONNX_UKERNEL(name) \
  void name(size_t n, const void* a, const void* b, void* y, const struct qw_vadd_onnx_params* params)

QW_DECLARE_VADD_ONNX_UKERNEL(qw_qu8_vadd_onnx_ukernel__scalar);
QW_DECLARE_VADD_ONNX_UKERNEL(qw_qs8_vadd_onnx_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_VADD_ONNX_UKERNEL(qw_qu8_vadd_onnx_ukernel__wasmsimd);
QW_DECLARE_VADD_ONNX_UKERNEL(qw_qs8_vadd_onnx_ukernel__wasmsimd);
#endif

#endif /* QWASM_VADD_H */
