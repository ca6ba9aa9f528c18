/* HistogramObserver of PyTorch 1.13 (torch/ao/quantization/observer.py): forward (torch.histc,
 * _adjust_min_max, _combine_histograms) and _non_linear_param_search with the L2
 * _compute_quantization_error, in the float32 / float64 arithmetic torch uses, step for step. */
#include <math.h>
#include <string.h>

#include "observers/observers.h"
#include "qtypes.h"

size_t qw_histogram_workspace_size(size_t bins) {
  size_t bytes;
  return qw_size3(bins, sizeof(double) + sizeof(float), 1, &bytes) ? bytes : 0;
}

/* Edge i of torch.linspace(left, right, steps) as PyTorch 1.13's x86 build computes it (ATen
 * RangeFactoriesKernel.cpp, AVX2, the float expressions contracted to FMAs): blocks of 16 edges as two
 * 8-lane vectors whose base is fmaf(step, idx, left), or fmaf(-step, steps - 1 - idx, right) from the
 * vector's first index idx on past the middle, each lane base + lane * step; the tail one by one. */
static float linspace_edge(float left, float right, float step, int64_t steps, int64_t i) {
  const int64_t half = steps / 2;
  if (i < steps / 16 * 16) {
    const int64_t idx = i - i % 8;
    const float base = idx < half ? fmaf(step, (float)idx, left) : fmaf(-step, (float)(steps - idx - 1), right);
    return base + (float)(i % 8) * step;
  }
  return i < half ? fmaf(step, (float)i, left) : fmaf(-step, (float)(steps - i - 1), right);
}

/* torch.histc(x, bins, min=lo, max=hi) on CPU (ATen Histogram.cpp histc_select_outer_bin_edges, then
 * HistogramKernel.cpp, LINEAR_INTERPOLATION): outer edges e_0, e_bins taken from the linspace tensor,
 * bin (int64)((x - e_0) / (e_bins - e_0) * bins) in float32, divided before the multiplication (the
 * other order puts values on a bin edge one bin lower, e.g. 8.03 of [0, 10] in 1000 bins), a value
 * on the last edge counted in the last bin. */
static qw_status histc(size_t n, const float* x, size_t bins, double lo, double hi, float data_min, float data_max,
                       float* hist) {
  if (lo == hi) {
    lo = data_min;
    hi = data_max;
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  const float start = (float)lo, end = (float)hi;
  if (!isfinite(start) || !isfinite(end) || !(start < end)) {
    return QW_INVALID_ARGUMENT;
  }
  const int64_t steps = (int64_t)bins + 1;
  const float step = (end - start) / (float)(steps - 1);
  const float left = linspace_edge(start, end, step, steps, 0);
  const float right = linspace_edge(start, end, step, steps, steps - 1);
  memset(hist, 0, bins * sizeof(float));
  const float width = right - left;
  const float nb = (float)(int64_t)bins;
  for (size_t i = 0; i < n; i++) {
    const float v = x[i];
    if (!(v >= left && v <= right)) continue;
    const float p = (v - left) / width * nb;
    /* torch casts to int64 directly; a range so wide that p is not finite would index out of
     * bounds there. qwasm clamps to stay in bounds. */
    int64_t pos = (p >= 0.0f && p < 9.2e18f) ? (int64_t)p : (p >= 0.0f ? (int64_t)bins : 0);
    if (pos >= (int64_t)bins) pos = (int64_t)bins - 1;
    hist[pos] += 1.0f;
  }
  return QW_OK;
}

static void aminmax(size_t n, const float* x, float* lo, float* hi, int* bad) {
  float mn = INFINITY, mx = -INFINITY;
  int b = 0;
  for (size_t i = 0; i < n; i++) {
    const float v = x[i];
    if (!isfinite(v)) b = 1;
    if (v < mn) mn = v;
    if (v > mx) mx = v;
  }
  *lo = mn;
  *hi = mx;
  *bad = b;
}

qw_status qw_histogram_observe(size_t n, const float* x, size_t bins, int32_t upsample_rate, float* hist,
                               float* min_val, float* max_val, void* workspace) {
  if (n == 0 || x == NULL || bins == 0 || upsample_rate < 1 || hist == NULL || min_val == NULL || max_val == NULL ||
      workspace == NULL || !qw_count_fits(n, sizeof(float)) || qw_histogram_workspace_size(bins) == 0) {
    return QW_INVALID_ARGUMENT;
  }
  float mn, mx;
  int bad;
  aminmax(n, x, &mn, &mx, &bad);
  /* torch: int(nan) / int(inf) raise in Python before histc runs. */
  if (bad) return QW_INVALID_ARGUMENT;
  const float cur_min = *min_val, cur_max = *max_val;
  const int uninitialized = cur_min == INFINITY && cur_max == -INFINITY;
  const int same_values = cur_min == cur_max;
  double* integral = (double*)workspace;
  float* new_hist = (float*)(integral + bins);
  if (uninitialized || same_values) {
    qw_status s = histc(n, x, bins, trunc((double)mn), trunc((double)mx), mn, mx, hist);
    if (s != QW_OK) return s;
    *min_val = mn;
    *max_val = mx;
    return QW_OK;
  }
  if (!(cur_min < cur_max) || !isfinite(cur_min) || !isfinite(cur_max)) return QW_INVALID_ARGUMENT;
  float cmin = mn < cur_min ? mn : cur_min;
  float cmax = mx > cur_max ? mx : cur_max;
  /* _adjust_min_max */
  const int64_t up = upsample_rate;
  const float hist_bin_width = (cur_max - cur_min) / (float)((int64_t)bins * up);
  const float span = (float)(int64_t)bins * hist_bin_width;
  const float ratio = ceilf((cmax - cmin) / span);
  if (!(ratio >= 1.0f && ratio < 9.0e15f)) return QW_UNSUPPORTED;
  const int64_t downsample_rate = (int64_t)ratio;
  const float e = (float)downsample_rate * span - (cmax - cmin);
  cmax = cmax + e;
  const float start_f = nearbyintf((cur_min - cmin) / hist_bin_width);
  if (!(start_f >= 0.0f && start_f < 9.0e15f)) return QW_UNSUPPORTED;
  const int64_t start_idx = (int64_t)start_f;
  qw_status s = histc(n, x, bins, trunc((double)cmin), trunc((double)cmax), mn, mx, new_hist);
  if (s != QW_OK) return s;
  if (cmin == cur_min && cmax == cur_max) {
    for (size_t i = 0; i < bins; i++) new_hist[i] = new_hist[i] + hist[i];
  } else {
    /* _combine_histograms: the old histogram upsampled (each bin repeated up times) placed at
     * start_idx in a zero array of bins * downsample_rate, float64 cumsum sampled every
     * downsample_rate, differenced against its float32 copy, / up, to float32, added. */
    const int64_t len = (int64_t)bins * up;
    const int64_t total_len = (int64_t)bins * downsample_rate;
    if (start_idx + len > total_len) {
      return QW_UNSUPPORTED; /* torch: the slice assignment fails with a shape mismatch */
    }
    size_t k = 0;
    while (k < bins && (int64_t)k * downsample_rate + downsample_rate - 1 < start_idx) integral[k++] = 0.0;
    double acc = 0.0;
    for (int64_t j = 0; j < len; j++) {
      acc += (double)hist[j / up];
      const int64_t pos = start_idx + j;
      if (k < bins && (int64_t)k * downsample_rate + downsample_rate - 1 == pos) integral[k++] = acc;
    }
    while (k < bins) integral[k++] = acc;
    for (size_t b = 0; b < bins; b++) {
      const double shifted = b == 0 ? 0.0 : (double)(float)integral[b - 1];
      const float interp = (float)((integral[b] - shifted) / (double)up);
      new_hist[b] = new_hist[b] + interp;
    }
  }
  memcpy(hist, new_hist, bins * sizeof(float));
  *min_val = cmin;
  *max_val = cmax;
  return QW_OK;
}

/* _compute_quantization_error(next_start_bin, next_end_bin), L2. */
static double quantization_error(size_t bins, const float* hist, float min_val, float max_val, double dst_nbins,
                                 int64_t next_start, int64_t next_end, float* norm) {
  const double bin_width = ((double)max_val - (double)min_val) / (double)bins;
  const double dst_bin_width = bin_width * (double)(next_end - next_start + 1) / dst_nbins;
  if (dst_bin_width == 0.0) return 0.0;
  const float bw = (float)bin_width;
  const float dbw = (float)dst_bin_width;
  const float half = (float)(dst_bin_width / 2);
  const float neg_half = (float)(-dst_bin_width / 2);
  const float top = (float)(dst_nbins - 1);
  const float mid = (half * half * half - neg_half * neg_half * neg_half) / 3.0f;
  const float half3 = half * half * half;
  const float neg_half3 = neg_half * neg_half * neg_half;
  for (size_t i = 0; i < bins; i++) {
    const float begin = (float)((int64_t)i - next_start) * bw;
    const float end = begin + bw;
    float db = qw_div_floor_f32(begin, dbw);
    db = db < 0.0f ? 0.0f : (db > top ? top : db);
    const float db_center = (db + 0.5f) * dbw;
    float de = qw_div_floor_f32(end, dbw);
    de = de < 0.0f ? 0.0f : (de > top ? top : de);
    const float density = hist[i] / bw;
    float acc = 0.0f;
    const float dlb = begin - db_center;
    acc = acc + density * ((half3 - dlb * dlb * dlb) / 3.0f);
    acc = acc + (de - db - 1.0f) * (density * mid);
    const float de_center = de * dbw + half;
    const float dle = end - de_center;
    acc = acc + density * ((dle * dle * dle - neg_half3) / 3.0f);
    norm[i] = acc;
  }
  return (double)qw_torch_sum_f32(norm, bins);
}

qw_status qw_histogram_search(size_t bins, const float* hist, float min_val, float max_val, double dst_nbins,
                              float* new_min, float* new_max, void* workspace) {
  if (bins == 0 || qw_histogram_workspace_size(bins) == 0 || hist == NULL || new_min == NULL || new_max == NULL ||
      workspace == NULL || !(dst_nbins >= 2) ||
      !isfinite(min_val) || !isfinite(max_val) || min_val > max_val) {
    return QW_INVALID_ARGUMENT;
  }
  float* csum = (float*)workspace;
  float* norm = csum + bins;
  const float bin_width = (max_val - min_val) / (float)(int64_t)bins;
  const double total = (double)qw_torch_sum_f32(hist, bins);
  double run = 0.0;
  for (size_t i = 0; i < bins; i++) {
    run += (double)hist[i];
    csum[i] = (float)run;
  }
  const double stepsize = 1e-5;
  double alpha = 0.0, beta = 1.0;
  int64_t start_bin = 0, end_bin = (int64_t)bins - 1;
  double norm_min = INFINITY;
  while (alpha < beta) {
    const double next_alpha = alpha + stepsize;
    const double next_beta = beta - stepsize;
    /* cSum[l] < next_alpha * total compares a float32 tensor with a Python float: in float32. */
    const float lo_target = (float)(next_alpha * total);
    const float hi_target = (float)(next_beta * total);
    int64_t l = start_bin, r = end_bin;
    while (l < end_bin && csum[l] < lo_target) l++;
    while (r > start_bin && csum[r] > hi_target) r--;
    int64_t next_start = start_bin, next_end = end_bin;
    if ((l - start_bin) > (end_bin - r)) {
      next_start = l;
      alpha = next_alpha;
    } else {
      next_end = r;
      beta = next_beta;
    }
    if (next_start == start_bin && next_end == end_bin) continue;
    const double err = quantization_error(bins, hist, min_val, max_val, dst_nbins, next_start, next_end, norm);
    if (err > norm_min) break;
    norm_min = err;
    start_bin = next_start;
    end_bin = next_end;
  }
  *new_min = min_val + bin_width * (float)start_bin;
  *new_max = min_val + bin_width * (float)(end_bin + 1);
  return QW_OK;
}
