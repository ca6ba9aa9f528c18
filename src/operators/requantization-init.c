/* Preparing the per-output-channel requantization of a GEMM or convolution, for each named mode.
 * The float formulas are written operation by operation as each reference computes them. */
#include <math.h>
#include <string.h>

#include "operators/operators.h"
#include "qtypes.h"
#include "quantize/quantize.h"

struct requantization_blob {
  uint32_t magic;
  uint32_t n;
  int32_t kernel; /* QW_REQUANT_KERNEL_FP32 / _FIXEDPOINT */
  int32_t output_dtype;
  int32_t mode; /* qw_requant_mode */
  struct qw_requantization_params params;
};

#define BLOB_MAGIC 0x51575251u /* "QRWQ" */

static size_t blob_arrays_offset(void) {
  return qw_round_up(sizeof(struct requantization_blob), 16);
}

size_t qw_requantization_size(size_t n) {
  return n > QW_MAX_BYTES ? 0 : qw_size_or_zero(blob_arrays_offset() + 5 * (uint64_t)qw_round_up(n, 4) * sizeof(int32_t));
}

/* TFLite's QuantizeMultiplier: m = m0 * 2^(shift - 31), m0 in [2^30, 2^31). */
static void quantize_multiplier(double m, int32_t* m0, int32_t* shift) {
  if (!(m > 0.0)) {
    *m0 = 0;
    *shift = 0;
    return;
  }
  int e;
  const double q = frexp(m, &e);
  int64_t q_fixed = (int64_t)round(q * 2147483648.0);
  if (q_fixed == ((int64_t)1 << 31)) {
    q_fixed /= 2;
    e++;
  }
  if (e < -31) {
    q_fixed = 0;
    e = 0;
  }
  if (e > 30) { /* multipliers >= 2^30 are not representable; saturate as TFLite does */
    q_fixed = INT32_MAX;
    e = 30;
  }
  *m0 = (int32_t)q_fixed;
  *shift = e;
}

/* A real clamp bound in output integers, quantized with the mode's rounding rule and saturated. */
static int32_t quantize_bound(float bound, float scale, int32_t zero_point, int onnx_rule, int32_t lo, int32_t hi) {
  struct qw_quantize_params p;
  qw_quantize_params_init(&p, scale, zero_point, lo, hi);
  return onnx_rule ? qw_quantize_onnx(bound, &p) : qw_quantize_torch(bound, &p);
}

qw_status qw_requantization_init(void* buffer, size_t n, qw_requant_mode mode, double in_scale_f64,
                                 const double* w_scales, size_t w_scale_count, const int32_t* w_zero_points,
                                 qw_dtype w_dtype, const float* bias_f32, const int32_t* bias_i32, double out_scale_f64,
                                 int32_t out_zero_point, qw_dtype out_dtype, float clamp_min, float clamp_max,
                                 int32_t w_per_channel) {
  /* PyTorch keeps scales as double and casts them to float for the float arithmetic below; the
   * qnnpack bias scale alone is a double product (see docs/quantization.md). */
  const float in_scale = (float)in_scale_f64;
  const float out_scale = (float)out_scale_f64;
  if (buffer == NULL || w_scales == NULL || w_zero_points == NULL || (w_scale_count != 1 && w_scale_count != n) ||
      (unsigned)mode > QW_REQUANT_ONEDNN || ((out_dtype == QW_QINT32) != (mode == QW_REQUANT_NONE)) ||
      !qw_dtype_valid(out_dtype) || !qw_dtype_is_8bit(w_dtype) || (bias_f32 != NULL && bias_i32 != NULL) ||
      (mode == QW_REQUANT_ONNX && bias_f32 != NULL) || (mode == QW_REQUANT_ONEDNN && bias_i32 != NULL) ||
      isnan(clamp_min) || isnan(clamp_max) || clamp_min > clamp_max || qw_requantization_size(n) == 0) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t j = 0; bias_f32 != NULL && j < n; j++) {
    if (isnan(bias_f32[j])) {
      return QW_INVALID_ARGUMENT; /* a NaN bias has no meaning (an infinite one saturates, as in PyTorch) */
    }
  }
  const int32_t out_min = qw_dtype_min(out_dtype), out_max = qw_dtype_max(out_dtype);
  /* The input and weight scales are factors; the output's is quantized with. */
  if (mode != QW_REQUANT_NONE &&
      (!qw_scale_positive(in_scale) || !qw_qparams_valid(out_dtype, out_scale, out_zero_point))) {
    return QW_INVALID_QPARAMS;
  }
  for (size_t j = 0; j < w_scale_count; j++) {
    if ((mode != QW_REQUANT_NONE && !qw_scale_positive((float)w_scales[j])) ||
        !qw_zero_point_valid(w_dtype, w_zero_points[j])) {
      return QW_INVALID_QPARAMS;
    }
  }

  struct requantization_blob* blob = (struct requantization_blob*)buffer;
  memset(buffer, 0, qw_requantization_size(n));
  const size_t stride = qw_round_up(n, 4);
  int32_t* arrays = (int32_t*)((char*)buffer + blob_arrays_offset());
  int32_t* bias = arrays;
  float* bias_float = (float*)(arrays + stride);
  float* multiplier = (float*)(arrays + 2 * stride);
  int32_t* m0 = arrays + 3 * stride;
  int32_t* shift = arrays + 4 * stride;

  const int per_channel = w_per_channel != 0 || w_scale_count > 1;
  for (size_t j = 0; j < n; j++) {
    const double w_scale_f64 = w_scales[w_scale_count == 1 ? 0 : j];
    const float w_scale = (float)w_scale_f64;
    switch (mode) {
      case QW_REQUANT_QNNPACK:
      case QW_REQUANT_FIXEDPOINT: {
        /* PyTorch's qnnpack: requant_scale = w_scale * in_scale * (1 / out_scale) in float; the
         * float bias quantized to int32 by torch's rule with scale (float)(w_scale * in_scale), that
         * product taken in double. */
        multiplier[j] = (w_scale * in_scale) * (1.0f / out_scale);
        if (bias_f32 != NULL) {
          struct qw_quantize_params p;
          qw_quantize_params_init(&p, (float)(w_scale_f64 * in_scale_f64), 0, INT32_MIN, INT32_MAX);
          bias[j] = qw_quantize_torch(bias_f32[j], &p);
        }
        if (mode == QW_REQUANT_FIXEDPOINT) {
          quantize_multiplier(in_scale_f64 * w_scale_f64 / out_scale_f64, &m0[j], &shift[j]);
        }
        break;
      }
      case QW_REQUANT_FBGEMM: {
        /* FBGEMM (OutputProcessing-inl.h; QuantUtilsAvx2.cc requantizeOutputProcessingAvx2, the path of
         * every column on x86): act_times_w_scale = in_scale * w_scale; multiplier = act_times_w_scale /
         * out_scale; the float bias is added to the float accumulator divided by act_times_w_scale per
         * channel, but per tensor multiplied by its reciprocal, taken in double and rounded to float. */
        const float act_times_w_scale = in_scale * w_scale;
        multiplier[j] = act_times_w_scale / out_scale;
        if (bias_f32 != NULL) {
          bias_float[j] = per_channel ? bias_f32[j] / act_times_w_scale
                                      : bias_f32[j] * (float)(1.0 / (double)act_times_w_scale);
        }
        break;
      }
      case QW_REQUANT_ONNX:
        /* ONNX Runtime's QLinearConv / QLinearMatMul: a_scale * b_scale / y_scale in float. */
        multiplier[j] = in_scale * w_scale / out_scale;
        break;
      case QW_REQUANT_ONEDNN:
        /* oneDNN: the weight scale as float, the float bias added unscaled (the scalars below) */
        multiplier[j] = w_scale;
        if (bias_f32 != NULL) {
          bias_float[j] = bias_f32[j];
        }
        break;
      case QW_REQUANT_NONE:
        break;
    }
    if (bias_i32 != NULL) {
      bias[j] = bias_i32[j];
    }
  }
  /* FBGEMM converts with cvtps2dq: a scaled value of 2^31 or more in magnitude (or NaN) becomes INT32_MIN,
   * which saturates to the lowest output. Without a float bias that needs a multiplier of at least 1. */
  const int overflow_to_min = mode == QW_REQUANT_FBGEMM;
  int fp32_plain = 1;
  for (size_t j = 0; j < n; j++) {
    fp32_plain &= bias_float[j] == 0.0f && isfinite(multiplier[j]) && !(overflow_to_min && multiplier[j] >= 1.0f);
  }
  const int onnx_rule = mode == QW_REQUANT_ONNX;
  blob->magic = BLOB_MAGIC;
  blob->n = (uint32_t)n;
  blob->kernel = mode == QW_REQUANT_FIXEDPOINT ? QW_REQUANT_KERNEL_FIXEDPOINT
                 : mode == QW_REQUANT_NONE     ? QW_REQUANT_KERNEL_NONE
                 : mode == QW_REQUANT_ONEDNN   ? QW_REQUANT_KERNEL_ONEDNN
                                               : QW_REQUANT_KERNEL_FP32;
  blob->output_dtype = out_dtype;
  blob->mode = mode;
  blob->params = (struct qw_requantization_params){
      .bias = bias,
      .bias_f32 = bias_float,
      .multiplier = multiplier,
      .m0 = m0,
      .shift = shift,
      .zero_point = out_zero_point,
      .qmin = mode == QW_REQUANT_NONE ? out_min
                                      : quantize_bound(clamp_min, out_scale, out_zero_point, onnx_rule, out_min, out_max),
      .qmax = mode == QW_REQUANT_NONE ? out_max
                                      : quantize_bound(clamp_max, out_scale, out_zero_point, onnx_rule, out_min, out_max),
      .fp32_plain = fp32_plain,
      .overflow_to_min = overflow_to_min,
      /* PyTorch hands ideep 1.0 / scale (double, stored as float); ideep gives oneDNN 1.0f / that, and
       * oneDNN multiplies by the reciprocal of the destination scale. */
      .onednn_src_scale = 1.0f / (float)(1.0 / in_scale_f64),
      .onednn_dst_inv_scale = 1.0f / (1.0f / (float)(1.0 / out_scale_f64)),
  };
  return QW_OK;
}

qw_status qw_requantization_clamp(void* buffer, size_t n, int32_t lo, int32_t hi) {
  struct requantization_blob* blob = (struct requantization_blob*)buffer;
  if (buffer == NULL || blob->magic != BLOB_MAGIC || blob->n != n || lo > hi) {
    return QW_INVALID_ARGUMENT;
  }
  /* clamp(clamp(v, qmin, qmax), lo, hi) as one clamp; disjoint ranges leave a single value */
  const int32_t qmin = blob->params.qmin, qmax = blob->params.qmax;
  if (hi < qmin) {
    blob->params.qmin = blob->params.qmax = hi;
  } else if (lo > qmax) {
    blob->params.qmin = blob->params.qmax = lo;
  } else {
    blob->params.qmin = lo > qmin ? lo : qmin;
    blob->params.qmax = hi < qmax ? hi : qmax;
  }
  return QW_OK;
}

int qw_output_stage_of(const void* buffer, size_t n, struct qw_output_stage* out) {
  const struct requantization_blob* blob = (const struct requantization_blob*)buffer;
  if (buffer == NULL || blob->magic != BLOB_MAGIC || blob->n != n) {
    return 0;
  }
  out->params = &blob->params;
  out->kernel = blob->kernel;
  out->mode = blob->mode;
  out->y_signed = blob->output_dtype == QW_QINT8;
  out->elem_size = blob->output_dtype == QW_QINT32 ? 4 : 1;
  return 1;
}
