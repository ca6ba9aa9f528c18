/*
 * Quantize / dequantize microkernels: signatures, parameters and the per-element rules.
 *
 * Kernel names read as XNNPACK's: qw_<in>_<out>_<op>_<rule>_ukernel__<isa>, with
 * f32 = float, qu8 = quint8, qs8 = qint8, qs32 = qint32.
 *
 * The per-element functions below ARE the reference semantics: the scalar kernels loop over
 * them, and the SIMD kernels use them for tails, so scalar and SIMD builds agree by construction
 * and the tests check that they do.
 */
#ifndef QWASM_QUANTIZE_H
#define QWASM_QUANTIZE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Parameters prepared once per call (or per channel) by qw_quantize_params_init. */
struct qw_quantize_params {
  float scale;      /* onnx rule divides by it */
  float inv_scale;  /* torch rule multiplies by 1.0f / scale */
  float zero_point_f; /* (float) zero_point: the torch rule adds zp in float32 */
  float qmin_f;     /* (float) qmin, exact */
  float qmax_f;     /* (float) qmax; for qint32 this is 2^31, which the conversion saturates */
  int32_t zero_point;
  int32_t qmin;
  int32_t qmax;
};

struct qw_dequantize_params {
  float scale;
  int32_t zero_point;
};

/* Per-channel dequantize keeps PyTorch's float64 channel scale. */
struct qw_dequantize_f64_params {
  double scale;
  float zero_point_f;
};

typedef void (*qw_quantize_ukernel)(size_t n, const float* x, void* y, const struct qw_quantize_params* params);
typedef void (*qw_dequantize_ukernel)(size_t n, const void* q, float* y, const struct qw_dequantize_params* params);
typedef void (*qw_dequantize_f64_ukernel)(size_t n, const void* q, float* y, const struct qw_dequantize_f64_params* params);

static inline void qw_quantize_params_init(struct qw_quantize_params* p, float scale, int32_t zero_point, int32_t qmin,
                                           int32_t qmax) {
  p->scale = scale;
  p->inv_scale = 1.0f / scale;
  p->zero_point = zero_point;
  p->zero_point_f = (float)zero_point;
  p->qmin = qmin;
  p->qmax = qmax;
  p->qmin_f = (float)qmin;
  p->qmax_f = (float)qmax;
}

/* float -> int32 for a value already clamped to [qmin_f, qmax_f]; 2^31 (qint32's qmax_f) saturates,
 * as wasm's i32x4.trunc_sat_f32x4_s does. */
static inline int32_t qw_clamped_float_to_int32(float t) {
  return t >= 2147483648.0f ? INT32_MAX : (int32_t)t;
}

/* PyTorch: q = clamp((float)zp + nearbyint(x * inv_scale), qmin, qmax). */
static inline int32_t qw_quantize_torch(float x, const struct qw_quantize_params* p) {
  const float r = nearbyintf(x * p->inv_scale);
  if (r != r) {
    return p->zero_point; /* NaN */
  }
  float t = r + p->zero_point_f;
  t = t < p->qmin_f ? p->qmin_f : t;
  t = p->qmax_f < t ? p->qmax_f : t;
  return qw_clamped_float_to_int32(t);
}

/* ONNX: q = saturate(round_half_even(x / scale) + zp), the addition exact (done in double: both
 * operands are integers below 2^53 once r is clamped to +-2^33, far outside every range). */
static inline int32_t qw_quantize_onnx(float x, const struct qw_quantize_params* p) {
  float r = nearbyintf(x / p->scale);
  if (r != r) {
    return p->zero_point; /* NaN */
  }
  r = r < -8589934592.0f ? -8589934592.0f : r;
  r = 8589934592.0f < r ? 8589934592.0f : r;
  double t = (double)r + (double)p->zero_point;
  t = t < (double)p->qmin ? (double)p->qmin : t;
  t = (double)p->qmax < t ? (double)p->qmax : t;
  return (int32_t)t;
}

/* FBGEMM's QuantizeAvx2 (PyTorch 2.x on x86, 8-bit quantize_per_tensor): fma(x, inv_scale, zp), one
 * rounding; min(., 2147483520) takes NaN and +Inf to qmax; cvtps2dq rounds to nearest even and takes
 * values below -2^31 to INT32_MIN; clamp. Clamping the float first gives the same integers. */
static inline int32_t qw_quantize_fbgemm(float x, const struct qw_quantize_params* p) {
  float t = fmaf(x, p->inv_scale, p->zero_point_f);
  if (t != t) {
    return p->qmax;
  }
  t = t < p->qmin_f ? p->qmin_f : t;
  t = p->qmax_f < t ? p->qmax_f : t;
  return qw_clamped_float_to_int32(nearbyintf(t));
}

/* FBGEMM's scalar Quantize (LEGACY): nearbyint((float)zp + x * inv_scale), two float roundings; NaN
 * becomes INT32_MIN, whose low byte is 0 for the 8-bit types. */
static inline int32_t qw_quantize_fbgemm_scalar(float x, const struct qw_quantize_params* p) {
  float t = nearbyintf(p->zero_point_f + x * p->inv_scale);
  if (t != t) {
    return p->qmin == INT32_MIN ? INT32_MIN : 0;
  }
  t = t < p->qmin_f ? p->qmin_f : t;
  t = p->qmax_f < t ? p->qmax_f : t;
  return qw_clamped_float_to_int32(t);
}

/* real = scale * (float)(q - zp); the subtraction wraps modulo 2^32 like wasm's i32x4.sub. */
static inline float qw_dequantize_value(int32_t q, const struct qw_dequantize_params* p) {
  const int32_t d = (int32_t)((uint32_t)q - (uint32_t)p->zero_point);
  return p->scale * (float)d;
}

/* PyTorch's per-channel dequantize: (float)((double)((float)q - (float)zp) * scale_f64). For 8-bit
 * values and a float32-representable scale this equals qw_dequantize_value exactly. */
static inline float qw_dequantize_f64_value(int32_t q, const struct qw_dequantize_f64_params* p) {
  return (float)((double)((float)q - p->zero_point_f) * p->scale);
}

#define QW_DECLARE_QUANTIZE_UKERNEL(name) \
  void name(size_t n, const float* x, void* y, const struct qw_quantize_params* params)
#define QW_DECLARE_DEQUANTIZE_UKERNEL(name) \
  void name(size_t n, const void* q, float* y, const struct qw_dequantize_params* params)

#define QW_DECLARE_DEQUANTIZE_F64_UKERNEL(name) \
  void name(size_t n, const void* q, float* y, const struct qw_dequantize_f64_params* params)

/* DynamicQuantizeLinear's quantize (qw_kernels()->quantize_dynamic): the ONNX rule to quint8 for finite x whose
 * quotient |x / scale| is below 2^22, which data quantized with a scale from its own range guarantees
 * (src/operators/dynamic.c). The scalar build runs the ONNX kernel itself. */
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qu8_quantize_torch_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs8_quantize_torch_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs32_quantize_torch_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qu8_quantize_onnx_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs8_quantize_onnx_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs32_quantize_onnx_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qu8_quantize_fbgemm_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs8_quantize_fbgemm_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qu8_quantize_fbgemm_scalar_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs8_quantize_fbgemm_scalar_ukernel__scalar);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs32_quantize_fbgemm_scalar_ukernel__scalar);
QW_DECLARE_DEQUANTIZE_UKERNEL(qw_qu8_f32_dequantize_ukernel__scalar);
QW_DECLARE_DEQUANTIZE_UKERNEL(qw_qs8_f32_dequantize_ukernel__scalar);
QW_DECLARE_DEQUANTIZE_UKERNEL(qw_qs32_f32_dequantize_ukernel__scalar);
QW_DECLARE_DEQUANTIZE_F64_UKERNEL(qw_qu8_f32_dequantize_f64scale_ukernel__scalar);
QW_DECLARE_DEQUANTIZE_F64_UKERNEL(qw_qs8_f32_dequantize_f64scale_ukernel__scalar);
QW_DECLARE_DEQUANTIZE_F64_UKERNEL(qw_qs32_f32_dequantize_f64scale_ukernel__scalar);

#if QW_SIMD
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qu8_quantize_torch_ukernel__wasmsimd);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs8_quantize_torch_ukernel__wasmsimd);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs32_quantize_torch_ukernel__wasmsimd);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qu8_quantize_onnx_ukernel__wasmsimd);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs8_quantize_onnx_ukernel__wasmsimd);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs32_quantize_onnx_ukernel__wasmsimd);
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qu8_quantize_dynamic_ukernel__wasmsimd);
QW_DECLARE_DEQUANTIZE_UKERNEL(qw_qu8_f32_dequantize_ukernel__wasmsimd);
QW_DECLARE_DEQUANTIZE_UKERNEL(qw_qs8_f32_dequantize_ukernel__wasmsimd);
QW_DECLARE_DEQUANTIZE_UKERNEL(qw_qs32_f32_dequantize_ukernel__wasmsimd);
QW_DECLARE_DEQUANTIZE_F64_UKERNEL(qw_qu8_f32_dequantize_f64scale_ukernel__wasmsimd);
QW_DECLARE_DEQUANTIZE_F64_UKERNEL(qw_qs8_f32_dequantize_f64scale_ukernel__wasmsimd);
QW_DECLARE_DEQUANTIZE_F64_UKERNEL(qw_qs32_f32_dequantize_f64scale_ukernel__wasmsimd);
#endif

#endif /* QWASM_QUANTIZE_H */
