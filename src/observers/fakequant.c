/* torch.fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine (ATen 1.13
 * QuantizedOpKernels.cpp, fake_quant_*_cachemask kernels):
 *   inv = 1.0f / scale;  t = (float)zero_point + nearbyintf(x * inv)   (float32 addition)
 *   q = (int64)t;  y = (float)((fmin(fmax((double)q, qmin), qmax) - zero_point) * (double)scale)
 * Where torch's float -> int64 conversion overflows (NaN, +-Inf, |t| >= 2^63: torch gives qmin for all),
 * qwasm follows qw_quantize: NaN -> zero_point (y = 0), +Inf and huge positive -> qmax, -Inf -> qmin. */
#include <math.h>

#include "observers/observers.h"
#include "qtypes.h"

static inline float fake_one(float x, float scale, float inv, int32_t zp, int32_t qmin, int32_t qmax) {
  const float t = (float)zp + nearbyintf(x * inv);
  double q;
  if (t != t) {
    q = (double)zp;
  } else if (t >= 9.2233720368547758e18f) {
    q = (double)qmax;
  } else if (t < -9.2233720368547758e18f) {
    q = (double)qmin;
  } else {
    q = (double)(int64_t)t;
  }
  q = fmin(fmax(q, (double)qmin), (double)qmax);
  return (float)((q - (double)zp) * (double)scale);
}

/* A custom [qmin, qmax] instead of a dtype's range. */
static int valid_qparams(float scale, int32_t zp, int32_t qmin, int32_t qmax) {
  return qw_scale_valid(scale) && qmin <= qmax && zp >= qmin && zp <= qmax;
}

qw_status qw_fake_quantize(size_t n, const float* x, float* y, float scale, int32_t zero_point, int32_t quant_min,
                           int32_t quant_max) {
  if ((n > 0 && (x == NULL || y == NULL)) || quant_min > quant_max || !qw_count_fits(n, sizeof(float))) return QW_INVALID_ARGUMENT;
  if (!valid_qparams(scale, zero_point, quant_min, quant_max)) return QW_INVALID_QPARAMS;
  const float inv = 1.0f / scale;
  for (size_t i = 0; i < n; i++) y[i] = fake_one(x[i], scale, inv, zero_point, quant_min, quant_max);
  return QW_OK;
}

qw_status qw_fake_quantize_per_channel(size_t outer, size_t channels, size_t inner, const float* x, float* y,
                                       const float* scales, const int32_t* zero_points, int32_t quant_min,
                                       int32_t quant_max) {
  size_t n;
  if (x == NULL || y == NULL || scales == NULL || zero_points == NULL || quant_min > quant_max ||
      !qw_size3(outer, channels, inner, &n) || !qw_count_fits(n, sizeof(float))) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t c = 0; c < channels; c++) {
    if (!valid_qparams(scales[c], zero_points[c], quant_min, quant_max)) return QW_INVALID_QPARAMS;
  }
  for (size_t o = 0; o < outer; o++) {
    for (size_t c = 0; c < channels; c++) {
      const float s = scales[c];
      const float inv = 1.0f / s;
      const int32_t zp = zero_points[c];
      const size_t base = (o * channels + c) * inner;
      for (size_t i = 0; i < inner; i++) y[base + i] = fake_one(x[base + i], s, inv, zp, quant_min, quant_max);
    }
  }
  return QW_OK;
}
