/* Choosing scale and zero point exactly as PyTorch 1.13 does:
 * torch/ao/quantization/utils.py calculate_qmin_qmax and observer.py _calculate_qparams.
 * The arithmetic is float32, operation for operation, as torch's float32 tensors compute it. */
#include <float.h>
#include <math.h>

#include "qtypes.h"

/* Python's floor division by 2. */
static int64_t floor_half(int64_t a) {
  return a >= 0 ? a / 2 : -((-a + 1) / 2);
}

qw_status qw_quant_range(qw_dtype dtype, int reduce_range, int has_custom_range, int32_t quant_min, int32_t quant_max,
                         int32_t* qmin, int32_t* qmax) {
  if (qmin == NULL || qmax == NULL || !qw_dtype_valid(dtype)) {
    return QW_INVALID_ARGUMENT;
  }
  if (has_custom_range) {
    /* torch: "Used-specified quantization range must include 0." and "qmin must be strictly less
     * than qmax"; qint8 ranges at most 256 long, qint32 at most 2^31; reduce_range halves. */
    const int64_t length = (int64_t)quant_max - quant_min + 1;
    if (!(quant_min <= 0 && 0 <= quant_max) || quant_min >= quant_max ||
        (dtype == QW_QINT8 && length > 256) || (dtype == QW_QINT32 && length > ((int64_t)1 << 31))) {
      return QW_INVALID_ARGUMENT;
    }
    *qmin = reduce_range ? (int32_t)floor_half(quant_min) : quant_min;
    *qmax = reduce_range ? (int32_t)floor_half(quant_max) : quant_max;
    return QW_OK;
  }
  /* reduce_range drops one bit of an 8-bit range (quint8 [0, 127], qint8 [-64, 63]); qint32 ignores it. */
  const int halve = reduce_range && dtype != QW_QINT32;
  *qmin = halve ? qw_dtype_min(dtype) / 2 : qw_dtype_min(dtype);
  *qmax = halve ? qw_dtype_max(dtype) / 2 : qw_dtype_max(dtype);
  return QW_OK;
}

static float torch_max(float a, float b) {
  return b > a ? b : a;
}

static float torch_min(float a, float b) {
  return b < a ? b : a;
}

/* float -> int32 as torch's .to(torch.int) does on x86 (cvttss2si): out-of-range values and NaN
 * become INT32_MIN. Only reachable for qint32 affine ranges. */
static int32_t float_to_int32_x86(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) {
    return INT32_MIN;
  }
  return (int32_t)v;
}

qw_status qw_choose_qparams(float min_val, float max_val, qw_dtype dtype, qw_qscheme qscheme, int32_t qmin,
                            int32_t qmax, int has_custom_range, float eps, float* scale, int32_t* zero_point) {
  if (scale == NULL || zero_point == NULL || !qw_dtype_valid(dtype) ||
      (unsigned)qscheme > QW_PER_CHANNEL_SYMMETRIC || qmin >= qmax || !(eps >= 0.0f) || isinf(eps)) {
    return QW_INVALID_ARGUMENT;
  }
  if (min_val == INFINITY && max_val == -INFINITY) {
    /* Nothing observed: torch warns and returns its defaults. */
    *scale = 1.0f;
    *zero_point = 0;
    return QW_OK;
  }
  if (!isfinite(min_val) || !isfinite(max_val) || min_val > max_val) {
    return QW_INVALID_ARGUMENT;
  }
  /* torch.min / torch.max keep their first argument on ties, which decides the sign of zeros. */
  const float min_neg = torch_min(min_val, 0.0f);
  float max_pos = torch_max(max_val, 0.0f);
  float s;
  int32_t zp = 0;
  if (qscheme == QW_PER_TENSOR_SYMMETRIC || qscheme == QW_PER_CHANNEL_SYMMETRIC) {
    max_pos = torch_max(-min_neg, max_pos);
    /* float(quant_max - quant_min) / 2 is a Python double, cast to float32 by the tensor op:
     * 127.5 for 8 bits, hence the "divide by 127.5" of symmetric int8. */
    s = max_pos / (float)((double)((int64_t)qmax - qmin) / 2.0);
    s = torch_max(s, eps);
    if (dtype == QW_QUINT8) {
      zp = has_custom_range ? (int32_t)floor_half((int64_t)qmin + qmax) : 128;
    }
  } else {
    s = (max_pos - min_neg) / (float)((int64_t)qmax - qmin);
    s = torch_max(s, eps);
    /* quant_min - round(min_neg / scale).to(torch.int), in int32 arithmetic, then clamp. */
    const int32_t rounded = float_to_int32_x86(nearbyintf(min_neg / s));
    zp = (int32_t)((uint32_t)qmin - (uint32_t)rounded);
    zp = zp < qmin ? qmin : zp;
    zp = zp > qmax ? qmax : zp;
  }
  *scale = s;
  *zero_point = zp;
  return QW_OK;
}

qw_status qw_choose_qparams_per_channel(size_t channels, const float* min_vals, const float* max_vals, qw_dtype dtype,
                                        qw_qscheme qscheme, int32_t qmin, int32_t qmax, int has_custom_range,
                                        float eps, float* scales, int32_t* zero_points) {
  if (min_vals == NULL || max_vals == NULL || scales == NULL || zero_points == NULL || !qw_count_fits(channels, sizeof(float))) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t c = 0; c < channels; c++) {
    if (!isfinite(min_vals[c]) || !isfinite(max_vals[c])) {
      return QW_INVALID_ARGUMENT;
    }
    const qw_status status = qw_choose_qparams(min_vals[c], max_vals[c], dtype, qscheme, qmin, qmax,
                                               has_custom_range, eps, &scales[c], &zero_points[c]);
    if (status != QW_OK) {
      return status;
    }
  }
  return QW_OK;
}
