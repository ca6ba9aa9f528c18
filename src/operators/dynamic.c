/* ONNX DynamicQuantizeLinear: choose uint8 qparams from the data's range, then quantize with them.
 * The float steps follow ONNX Runtime (GetQuantizationParameter): scale = (max - min) / 255 with the
 * range widened to include 0, zero point = round_half_even(clamp(0 - min / scale, 0, 255)). */
#include <math.h>

#include "config.h"
#include "qtypes.h"

qw_status qw_dynamic_quantize(size_t n, const float* x, uint8_t* y, float* scale, int32_t* zero_point) {
  if ((n != 0 && (x == NULL || y == NULL)) || scale == NULL || zero_point == NULL || !qw_count_fits(n, sizeof(float))) {
    return QW_INVALID_ARGUMENT;
  }
  const float qmin = (float)qw_dtype_min(QW_QUINT8), qmax = (float)qw_dtype_max(QW_QUINT8);
  float lo = 0.0f, hi = 0.0f;
  if (!qw_kernels()->f32_range(n, x, &lo, &hi)) {
    return QW_INVALID_ARGUMENT;
  }
  const float s = (hi - lo) / (qmax - qmin);
  if (s == 0.0f || !isfinite(1.0f / s)) {
    /* All zeros (or a range too small for a usable scale): every output is the zero point 0. */
    for (size_t i = 0; i < n; i++) {
      y[i] = 0;
    }
    *scale = s;
    *zero_point = 0;
    return QW_OK;
  }
  float zp = qmin - lo / s;
  zp = zp < qmin ? qmin : zp > qmax ? qmax : zp;
  *scale = s;
  *zero_point = (int32_t)nearbyintf(zp);
  return qw_quantize(n, x, y, QW_QUINT8, QW_ROUND_ONNX, s, *zero_point);
}
