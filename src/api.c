/* The exported entry points: validate, prepare parameters, dispatch to the selected kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "operators/operators.h"
#include "qtypes.h"
#include "threadpool.h"

void* qw_alloc(size_t size) {
  if (size == 0 || size > QW_MAX_BYTES) {
    return NULL;
  }
  void* ptr = NULL;
  return posix_memalign(&ptr, 16, size) == 0 ? ptr : NULL;
}

void qw_free(void* ptr) {
  free(ptr);
}

const char* qw_isa(void) {
  return qw_kernels()->isa;
}

/* Quantize and dequantize split over the threads in elementwise tiles (each element's value depends on it alone,
 * so any split gives the same bytes). */
struct quantize_job {
  qw_quantize_ukernel quantize;
  qw_dequantize_ukernel dequantize;
  struct qw_quantize_params q;
  struct qw_dequantize_params dq;
  size_t element_size;
  const void* x;
  void* y;
};

static void quantize_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct quantize_job* job = (const struct quantize_job*)context;
  job->quantize(count, (const float*)job->x + start, (char*)job->y + start * job->element_size, &job->q);
}

static void dequantize_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct quantize_job* job = (const struct quantize_job*)context;
  job->dequantize(count, (const char*)job->x + start * job->element_size, (float*)job->y + start, &job->dq);
}

qw_status qw_quantize(size_t n, const float* x, void* y, qw_dtype dtype, qw_rounding rounding, float scale,
                      int32_t zero_point) {
  if ((n != 0 && (x == NULL || y == NULL)) || !qw_dtype_valid(dtype) || (unsigned)rounding > QW_ROUND_FBGEMM_SCALAR ||
      !qw_count_fits(n, sizeof(float)) || !qw_aligned(y, qw_dtype_size(dtype))) {
    return QW_INVALID_ARGUMENT;
  }
  if (!qw_qparams_valid(dtype, scale, zero_point)) {
    return QW_INVALID_QPARAMS;
  }
  struct qw_quantize_params params;
  qw_quantize_params_init(&params, scale, zero_point, qw_dtype_min(dtype), qw_dtype_max(dtype));
  qw_quantize_parallel(qw_kernels()->quantize[rounding][dtype], &params, n, x, y, qw_dtype_size(dtype));
  return QW_OK;
}

void qw_quantize_parallel(qw_quantize_ukernel quantize, const struct qw_quantize_params* params, size_t n,
                          const float* x, void* y, size_t element_size) {
  const struct quantize_job job = {.quantize = quantize, .q = *params, .element_size = element_size, .x = x, .y = y};
  qw_parallelize(quantize_task, &job, n, qw_elementwise_tile(n));
}

qw_status qw_quantize_per_channel(size_t outer, size_t channels, size_t inner, const float* x, void* y, qw_dtype dtype,
                                  qw_rounding rounding, const float* scales, const int32_t* zero_points) {
  size_t n;
  if (x == NULL || y == NULL || scales == NULL || zero_points == NULL || !qw_dtype_valid(dtype) ||
      (unsigned)rounding > QW_ROUND_FBGEMM_SCALAR || !qw_size3(outer, channels, inner, &n) || !qw_count_fits(n, sizeof(float)) ||
      !qw_aligned(y, qw_dtype_size(dtype))) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t c = 0; c < channels; c++) {
    if (!qw_qparams_valid(dtype, scales[c], zero_points[c])) {
      return QW_INVALID_QPARAMS;
    }
  }
  /* PyTorch's per-channel quantize goes through quantize_val: FBGEMM's scalar rule on x86 builds. */
  const qw_rounding rule = rounding == QW_ROUND_FBGEMM ? QW_ROUND_FBGEMM_SCALAR : rounding;
  const qw_quantize_ukernel ukernel = qw_kernels()->quantize[rule][dtype];
  const size_t size = qw_dtype_size(dtype);
  for (size_t o = 0; o < outer && inner != 0; o++) {
    for (size_t c = 0; c < channels; c++) {
      struct qw_quantize_params params;
      qw_quantize_params_init(&params, scales[c], zero_points[c], qw_dtype_min(dtype), qw_dtype_max(dtype));
      const size_t offset = (o * channels + c) * inner;
      ukernel(inner, x + offset, (char*)y + offset * size, &params);
    }
  }
  return QW_OK;
}

qw_status qw_dequantize(size_t n, const void* q, float* y, qw_dtype dtype, float scale, int32_t zero_point) {
  if ((n != 0 && (q == NULL || y == NULL)) || !qw_dtype_valid(dtype) || !qw_count_fits(n, sizeof(float)) ||
      !qw_aligned(q, qw_dtype_size(dtype))) {
    return QW_INVALID_ARGUMENT;
  }
  if (!qw_qparams_valid(dtype, scale, zero_point)) {
    return QW_INVALID_QPARAMS;
  }
  const struct quantize_job job = {.dequantize = qw_kernels()->dequantize[dtype], .dq = {scale, zero_point},
                                   .element_size = qw_dtype_size(dtype), .x = q, .y = y};
  qw_parallelize(dequantize_task, &job, n, qw_elementwise_tile(n));
  return QW_OK;
}

qw_status qw_dequantize_per_channel(size_t outer, size_t channels, size_t inner, const void* q, float* y,
                                    qw_dtype dtype, const double* scales, const int32_t* zero_points) {
  size_t n;
  if (q == NULL || y == NULL || scales == NULL || zero_points == NULL || !qw_dtype_valid(dtype) ||
      !qw_size3(outer, channels, inner, &n) || !qw_count_fits(n, sizeof(float)) || !qw_aligned(q, qw_dtype_size(dtype))) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t c = 0; c < channels; c++) {
    if (!qw_qparams_valid(dtype, (float)scales[c], zero_points[c]) || !isfinite(scales[c])) {
      return QW_INVALID_QPARAMS;
    }
  }
  const qw_dequantize_f64_ukernel ukernel = qw_kernels()->dequantize_f64scale[dtype];
  const size_t size = qw_dtype_size(dtype);
  for (size_t o = 0; o < outer && inner != 0; o++) {
    for (size_t c = 0; c < channels; c++) {
      const struct qw_dequantize_f64_params params = {scales[c], (float)zero_points[c]};
      const size_t offset = (o * channels + c) * inner;
      ukernel(inner, (const char*)q + offset * size, y + offset, &params);
    }
  }
  return QW_OK;
}

qw_status qw_requantize(size_t n, const void* x, qw_dtype x_dtype, float x_scale, int32_t x_zero_point, void* y,
                        qw_dtype y_dtype, float y_scale, int32_t y_zero_point, qw_rounding rounding) {
  if ((n != 0 && (x == NULL || y == NULL)) || !qw_dtype_valid(x_dtype) || !qw_dtype_valid(y_dtype) ||
      (unsigned)rounding > QW_ROUND_FBGEMM_SCALAR ||
      !qw_count_fits(n, qw_dtype_size(x_dtype) > qw_dtype_size(y_dtype) ? qw_dtype_size(x_dtype) : qw_dtype_size(y_dtype)) ||
      !qw_aligned(x, qw_dtype_size(x_dtype)) || !qw_aligned(y, qw_dtype_size(y_dtype))) {
    return QW_INVALID_ARGUMENT;
  }
  if (!qw_qparams_valid(x_dtype, x_scale, x_zero_point) || !qw_qparams_valid(y_dtype, y_scale, y_zero_point)) {
    return QW_INVALID_QPARAMS;
  }
  /* In place is allowed only when the element sizes match: each block is read before written. */
  if (x == y && qw_dtype_size(x_dtype) != qw_dtype_size(y_dtype)) {
    return QW_INVALID_ARGUMENT;
  }
  const struct qw_kernels* kernels = qw_kernels();
  const struct qw_dequantize_params dq = {x_scale, x_zero_point};
  struct qw_quantize_params qp;
  qw_quantize_params_init(&qp, y_scale, y_zero_point, qw_dtype_min(y_dtype), qw_dtype_max(y_dtype));
  /* Through a float block on the stack: the same float the two separate calls would produce. */
  enum { BLOCK = 256 };
  float block[BLOCK];
  for (size_t i = 0; i < n; i += BLOCK) {
    const size_t len = n - i < BLOCK ? n - i : BLOCK;
    kernels->dequantize[x_dtype](len, (const char*)x + i * qw_dtype_size(x_dtype), block, &dq);
    kernels->quantize[rounding][y_dtype](len, block, (char*)y + i * qw_dtype_size(y_dtype), &qp);
  }
  return QW_OK;
}

