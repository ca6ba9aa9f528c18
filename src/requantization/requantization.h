/*
 * Requantization: int32 accumulators of a GEMM / convolution row -> 8-bit outputs. One row of n
 * outputs per call; per-column arrays hold what depends on the output channel.
 *
 *   x = acc[j] + bias[j]       (int32, wrapping; acc is the exact sum_k (a - a_zp)(w - w_zp))
 *
 * fp32 (PyTorch qnnpack, ONNX, PyTorch fbgemm):
 *   v = ((float)x + bias_f32[j]) * multiplier[j];  q = clamp(nearbyint(v) + zp, qmin, qmax)
 *   (NaN gives clamp(zp); with overflow_to_min, as FBGEMM's cvtps2dq, |v| >= 2^31 or NaN gives qmin)
 *   qnnpack: int32 bias in bias, bias_f32 = 0, multiplier = (w_scale * in_scale) * (1 / out_scale);
 *   onnx:    int32 bias in bias, bias_f32 = 0, multiplier = (in_scale * w_scale) / out_scale;
 *   fbgemm:  bias = 0, bias_f32 = bias / (in_scale * w_scale), multiplier = (in_scale * w_scale) / out_scale.
 *   (The multipliers are computed by the caller; this stage only applies them.)
 * fixedpoint (gemmlowp / TFLite, integer only):
 *   q = clamp(RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x << left, m0[j]), right) + zp)
 *   with shift[j] = left - right as TFLite's QuantizeMultiplier gives it (m0 in [2^30, 2^31)).
 * onednn (oneDNN's int8 convolution, PyTorch 2.x's x86 engine), float32, the zero point before rounding:
 *   q = clamp(nearbyint((((float)x * onednn_src_scale) * multiplier[j] + bias_f32[j]) * onednn_dst_inv_scale + zp))
 *   with multiplier = (float)w_scale and the float bias unscaled. Scalar in every build.
 * [qmin, qmax] carries fused activations (ReLU: qmin = max(qmin, zp); ReLU6 / hardtanh: quantized bounds).
 */
#ifndef QWASM_REQUANTIZATION_H
#define QWASM_REQUANTIZATION_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

struct qw_requantization_params {
  const int32_t* bias;         /* [n] int32, zeros when there is none */
  const float* bias_f32;       /* [n] float, zeros unless fbgemm */
  const float* multiplier;     /* [n] fp32 modes */
  const int32_t* m0;           /* [n] fixedpoint */
  const int32_t* shift;        /* [n] fixedpoint: > 0 left, < 0 right */
  int32_t zero_point;
  int32_t qmin;
  int32_t qmax;
  /* 1 when every bias_f32 is 0 and every multiplier finite: v = (float)x * multiplier is then never
   * NaN and the float bias adds nothing, so vector kernels may skip both (a hint, same results). */
  int32_t fp32_plain;
  /* 1 (set only by a caller that bounds its accumulators) when fp32_plain and |(float)x * multiplier| < 2^22 for
   * every accumulator x the kernel sees: kernels may then leave the clamp to qmin until after rounding (same
   * results, requantize-wasmsimd.h). */
  int32_t fp32_bounded;
  /* FBGEMM: a v beyond int32 (or NaN) gives qmin (cvtps2dq returns INT32_MIN). */
  int32_t overflow_to_min;
  float onednn_src_scale;     /* onednn: 1.0f / (float)(1.0 / in_scale) */
  float onednn_dst_inv_scale; /* onednn: 1.0f / (1.0f / (float)(1.0 / out_scale)) */
};

/* The output stages, the first index of the kernel table's requantize[][] (none: the exact int32 sum). */
/* The output stages, by the index of their kernels in struct qw_kernels' requantize table; F32 (float outputs,
 * (float)acc * multiplier (+ bias_f32 when not NULL): the dynamic int8 matmul) takes scale_output instead. */
enum {
  QW_REQUANT_KERNEL_FP32 = 0,
  QW_REQUANT_KERNEL_FIXEDPOINT = 1,
  QW_REQUANT_KERNEL_ONEDNN = 2,
  QW_REQUANT_KERNEL_NONE = 3,
  QW_REQUANT_KERNEL_F32 = 4,
};

/* An output stage kernel: `rows` rows of n outputs, row r's accumulators at acc + r * acc_stride (int32 elements),
 * its outputs at (char*)y + r * y_stride (bytes), column j's parameters at index j in every row. One call per block
 * of rows, so that short rows (16 columns in MobileNet's early GEMMs, a depthwise row's pixels) share the setup. */
typedef void (*qw_requantization_ukernel)(size_t rows, size_t n, const int32_t* acc, size_t acc_stride,
                                          const struct qw_requantization_params* params, void* y, size_t y_stride);

/* The fp32_bounded test for one column: no accumulator of magnitude at most acc_max plus |bias| (within int32) reaches
 * 2^22 once scaled by multiplier. */
static inline int qw_fp32_column_bounded(double acc_max, int32_t bias, float multiplier) {
  const double sum_max = fabs((double)bias) + acc_max;
  return sum_max <= 2147483647.0 && sum_max * fabs((double)multiplier) < 4194304.0;
}

static inline int32_t qw_requant_input(int32_t acc, size_t j, const struct qw_requantization_params* p) {
  return (int32_t)((uint32_t)acc + (uint32_t)p->bias[j]);
}

/* The fp32 rule for output j, saturating like the vector code (nearest, then clamp in float). */
static inline int32_t qw_requantize_fp32_value(int32_t x, size_t j, const struct qw_requantization_params* p) {
  const float v = ((float)x + p->bias_f32[j]) * p->multiplier[j];
  if (p->overflow_to_min && !(fabsf(v) < 2147483648.0f)) {
    return p->qmin;
  }
  float t = nearbyintf(v);
  if (t != t) {
    return p->zero_point < p->qmin ? p->qmin : p->zero_point > p->qmax ? p->qmax : p->zero_point;
  }
  t += (float)p->zero_point;
  t = t < (float)p->qmin ? (float)p->qmin : t;
  t = (float)p->qmax < t ? (float)p->qmax : t;
  return (int32_t)t;
}

/* gemmlowp's SaturatingRoundingDoublingHighMul: round(a * b / 2^31), ties toward +infinity. */
static inline int32_t qw_srdhm(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) {
    return INT32_MAX;
  }
  const int64_t ab = (int64_t)a * (int64_t)b;
  const int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* gemmlowp's RoundingDivideByPOT: x / 2^e rounded half away from zero. */
static inline int32_t qw_rdbpot(int32_t x, int e) {
  const int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (remainder > threshold ? 1 : 0);
}

/* oneDNN: v = ((float)x * S) * W[j] + bias; v * Dinv + zp rounded to nearest even, saturated (NaN: qmin). */
static inline int32_t qw_requantize_onednn_value(int32_t x, size_t j, const struct qw_requantization_params* p) {
  const float v = ((float)x * p->onednn_src_scale) * p->multiplier[j] + p->bias_f32[j];
  float t = v * p->onednn_dst_inv_scale + (float)p->zero_point;
  if (t != t) {
    return p->qmin;
  }
  t = t < (float)p->qmin ? (float)p->qmin : t;
  t = (float)p->qmax < t ? (float)p->qmax : t;
  return (int32_t)nearbyintf(t);
}

static inline int32_t qw_requantize_fixedpoint_value(int32_t x, size_t j, const struct qw_requantization_params* p) {
  const int32_t shift = p->shift[j];
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const int32_t scaled = qw_rdbpot(qw_srdhm((int32_t)((uint32_t)x << left), p->m0[j]), right);
  int64_t q = (int64_t)scaled + p->zero_point;
  q = q < p->qmin ? p->qmin : q;
  q = q > p->qmax ? p->qmax : q;
  return (int32_t)q;
}

#define QW_DECLARE_REQUANTIZATION_UKERNEL(name)                                                                  \
  void name(size_t rows, size_t n, const int32_t* acc, size_t acc_stride, const struct qw_requantization_params* params, \
            void* y, size_t y_stride)

/* No scaling: the exact int32 sum (ONNX MatMulInteger / ConvInteger). */
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qs32_requantize_none_ukernel__scalar);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qu8_requantize_fp32_ukernel__scalar);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qs8_requantize_fp32_ukernel__scalar);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qu8_requantize_fixedpoint_ukernel__scalar);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qs8_requantize_fixedpoint_ukernel__scalar);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qu8_requantize_onednn_ukernel__scalar);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qs8_requantize_onednn_ukernel__scalar);
/* int32 -> float32 (onnxruntime's MLAS_QGEMM_SCALE_BIAS_OUTPUT_PROCESSOR, qpostprocessor.cpp):
 * y[j] = (float)acc[j] * multiplier[j], then + bias_f32[j] (the _bias kernels; bias_f32 unused otherwise).
 * y is float32. */
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_f32_scale_ukernel__scalar);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_f32_scale_bias_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_f32_scale_ukernel__wasmsimd);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_f32_scale_bias_ukernel__wasmsimd);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qu8_requantize_fp32_ukernel__wasmsimd);
QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qs8_requantize_fp32_ukernel__wasmsimd);
#endif

#endif /* QWASM_REQUANTIZATION_H */
