/* ONNX DynamicQuantizeLinear: choose uint8 qparams from the data's range, then quantize with them.
 * The float steps follow ONNX Runtime (GetQuantizationParameter): scale = (max - min) / 255 with the
 * range widened to include 0, zero point = round_half_even(clamp(0 - min / scale, 0, 255)). */
#include <float.h>
#include <math.h>

#include "config.h"
#include "operators/operators.h"
#include "qtypes.h"
#include "threadpool.h"

/* Each thread's range of the tiles it ran, from 0 (what the callers start from). */
struct range_slot {
  float lo, hi;
  int finite;
};

struct range_job {
  qw_f32_range_ukernel range;
  const float* x;
  struct range_slot* slots; /* [qw_threads()] */
};

static void range_task(const void* context, size_t thread, size_t start, size_t count) {
  const struct range_job* job = (const struct range_job*)context;
  struct range_slot* slot = &job->slots[thread];
  if (!job->range(count, job->x + start, &slot->lo, &slot->hi)) {
    slot->finite = 0;
  }
}

int qw_f32_range_parallel(size_t n, const float* x, float* lo, float* hi) {
  struct range_slot slots[QW_MAX_THREADS];
  const size_t threads = qw_threads();
  for (size_t t = 0; t < threads; t++) {
    slots[t] = (struct range_slot){0.0f, 0.0f, 1};
  }
  const struct range_job job = {.range = qw_kernels()->f32_range, .x = x, .slots = slots};
  qw_parallelize(range_task, &job, n, qw_elementwise_tile(n));
  /* the kernels' comparisons, so that a -0 never replaces a +0 here either */
  for (size_t t = 0; t < threads; t++) {
    if (!slots[t].finite) {
      return 0;
    }
    *lo = slots[t].lo < *lo ? slots[t].lo : *lo;
    *hi = slots[t].hi > *hi ? slots[t].hi : *hi;
  }
  return 1;
}

qw_status qw_quantize_own_range(size_t n, const float* x, uint8_t* y, float scale, int32_t zero_point) {
  /* x within [lo, hi] (lo <= 0 <= hi) and scale = (hi - lo) / 255 rounded: |x| <= hi - lo, so |x / scale| is at most
   * 255 and a little, far below the kernel's 2^22, for every normal scale */
  if (!(scale >= FLT_MIN && scale <= FLT_MAX)) {
    return qw_quantize(n, x, y, QW_QUINT8, QW_ROUND_ONNX, scale, zero_point);
  }
  if (zero_point < 0 || zero_point > 255) {
    return QW_INVALID_QPARAMS;
  }
  struct qw_quantize_params params;
  qw_quantize_params_init(&params, scale, zero_point, 0, 255);
  qw_quantize_parallel(qw_kernels()->quantize_dynamic, &params, n, x, y, 1);
  return QW_OK;
}

qw_status qw_dynamic_quantize(size_t n, const float* x, uint8_t* y, float* scale, int32_t* zero_point) {
  if ((n != 0 && (x == NULL || y == NULL)) || scale == NULL || zero_point == NULL || !qw_count_fits(n, sizeof(float))) {
    return QW_INVALID_ARGUMENT;
  }
  const float qmin = (float)qw_dtype_min(QW_QUINT8), qmax = (float)qw_dtype_max(QW_QUINT8);
  float lo = 0.0f, hi = 0.0f;
  if (!qw_f32_range_parallel(n, x, &lo, &hi)) {
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
  return qw_quantize_own_range(n, x, y, s, *zero_point);
}
