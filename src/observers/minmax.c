/* torch.aminmax over a whole tensor and per channel: the reductions behind MinMaxObserver,
 * MovingAverage*, PerChannel* and HistogramObserver. NaN propagates (torch's aminmax returns NaN
 * when any element is NaN). Exact: a min or max does not round. */
#include <math.h>

#include "observers/observers.h"
#include "qtypes.h"

static void minmax_run(size_t n, const float* x, float* lo, float* hi, int* nan) {
  float mn = *lo, mx = *hi;
  for (size_t i = 0; i < n; i++) {
    const float v = x[i];
    if (v != v) {
      *nan = 1;
      continue;
    }
    if (v < mn) mn = v;
    if (v > mx) mx = v;
  }
  *lo = mn;
  *hi = mx;
}

qw_status qw_observe_minmax(size_t n, const float* x, float* min_val, float* max_val) {
  if (n == 0 || x == NULL || min_val == NULL || max_val == NULL || !qw_count_fits(n, sizeof(float))) {
    return QW_INVALID_ARGUMENT;
  }
  float lo = INFINITY, hi = -INFINITY;
  int nan = 0;
  minmax_run(n, x, &lo, &hi, &nan);
  *min_val = nan ? NAN : lo;
  *max_val = nan ? NAN : hi;
  return QW_OK;
}

qw_status qw_observe_minmax_per_channel(size_t outer, size_t channels, size_t inner, const float* x, float* min_vals,
                                        float* max_vals) {
  size_t n;
  if (outer == 0 || channels == 0 || inner == 0 || x == NULL || min_vals == NULL || max_vals == NULL ||
      !qw_size3(outer, channels, inner, &n) || !qw_count_fits(n, sizeof(float))) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t c = 0; c < channels; c++) {
    float lo = INFINITY, hi = -INFINITY;
    int nan = 0;
    for (size_t o = 0; o < outer; o++) {
      minmax_run(inner, x + (o * channels + c) * inner, &lo, &hi, &nan);
    }
    min_vals[c] = nan ? NAN : lo;
    max_vals[c] = nan ? NAN : hi;
  }
  return QW_OK;
}
