/* Softmax and layer normalization of transformers, with onnxruntime's arithmetic (src/f32/softmax.h,
 * src/f32/layernorm.h give the formulas). */
#include <math.h>

#include "config.h"
#include "qtypes.h"
#include "threadpool.h"

size_t qw_f32_softmax_workspace_size(size_t axis_len, size_t inner) {
  size_t bytes;
  return inner > 1 && qw_size3(axis_len, inner, sizeof(float), &bytes) ? bytes : 0;
}

struct softmax_rows_job {
  qw_f32_softmax_ukernel softmax;
  size_t axis_len;
  const float* x;
  float* y;
};

static void softmax_rows_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct softmax_rows_job* job = (const struct softmax_rows_job*)context;
  for (size_t r = start; r < start + count; r++) {
    job->softmax(job->axis_len, job->x + r * job->axis_len, job->y + r * job->axis_len);
  }
}

qw_status qw_f32_softmax(size_t outer, size_t axis_len, size_t inner, const float* x, float* y, void* workspace) {
  size_t n;
  if (!qw_size3(outer, axis_len, inner, &n) || !qw_count_fits(n, sizeof(float)) || (n != 0 && (x == NULL || y == NULL)) ||
      (inner > 1 && n != 0 && workspace == NULL)) {
    return QW_INVALID_ARGUMENT;
  }
  if (n == 0) {
    return QW_OK; /* nothing to compute (and no row to point into) */
  }
  const qw_f32_softmax_ukernel softmax = qw_kernels()->f32_softmax;
  if (inner == 1) { /* rows split over the threads: each row is one kernel call */
    const struct softmax_rows_job job = {.softmax = softmax, .axis_len = axis_len, .x = x, .y = y};
    qw_parallelize(softmax_rows_task, &job, outer, qw_parallel_tile(outer, 1, 4, (4096 + axis_len - 1) / axis_len));
    return QW_OK;
  }
  /* Another axis: onnxruntime transposes it last, computes the rows and transposes back; per slice here. */
  float* rows = (float*)workspace;
  for (size_t o = 0; o < outer; o++) {
    const float* xs = x + o * axis_len * inner;
    float* ys = y + o * axis_len * inner;
    for (size_t a = 0; a < axis_len; a++) {
      for (size_t i = 0; i < inner; i++) {
        rows[i * axis_len + a] = xs[a * inner + i];
      }
    }
    for (size_t i = 0; i < inner; i++) {
      softmax(axis_len, rows + i * axis_len, rows + i * axis_len);
    }
    for (size_t a = 0; a < axis_len; a++) {
      for (size_t i = 0; i < inner; i++) {
        ys[a * inner + i] = rows[i * axis_len + a];
      }
    }
  }
  return QW_OK;
}

/* Rows [start, start + count) of a layer normalization, eight at a time, then four, then one (the same per-row
 * arithmetic, statistics computed side by side), so any split gives the same bits. */
struct layer_norm_job {
  size_t cols, skip_rows;
  const float* x;
  const float* skip;
  const float* bias;
  const float* gamma;
  const float* beta;
  float epsilon;
  float* y;
  float* sum;
};

static void layer_norm_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct layer_norm_job* job = (const struct layer_norm_job*)context;
  const qw_f32_layernorm_ukernel layernorm = qw_kernels()->f32_layernorm;
  const qw_f32_layernorm4_ukernel group_kernels[3] = {qw_kernels()->f32_layernorm16, qw_kernels()->f32_layernorm8,
                                                      qw_kernels()->f32_layernorm4};
  const size_t group_rows[3] = {16, 8, 4};
  const size_t cols = job->cols, end = start + count;
  size_t r = start;
  for (size_t g = 0; g < 3; g++) {
    for (const size_t rows = group_rows[g]; r + rows <= end; r += rows) {
      const float* xs[16];
      const float* ss[16];
      float* ys[16];
      float* sums[16];
      for (size_t i = 0; i < rows; i++) {
        xs[i] = job->x + (r + i) * cols;
        ss[i] = job->skip != NULL ? job->skip + ((r + i) % job->skip_rows) * cols : NULL;
        ys[i] = job->y + (r + i) * cols;
        sums[i] = job->sum != NULL ? job->sum + (r + i) * cols : NULL;
      }
      group_kernels[g](cols, xs, job->skip != NULL ? ss : NULL, job->bias, job->gamma, job->beta, job->epsilon, ys,
                       job->sum != NULL ? sums : NULL);
    }
  }
  for (; r < end; r++) {
    layernorm(cols, job->x + r * cols, job->skip != NULL ? job->skip + (r % job->skip_rows) * cols : NULL, job->bias,
              job->gamma, job->beta, job->epsilon, job->y + r * cols, job->sum != NULL ? job->sum + r * cols : NULL);
  }
}

qw_status qw_f32_layer_norm(size_t rows, size_t cols, const float* x, const float* skip, size_t skip_rows,
                            const float* bias, const float* gamma, const float* beta, float epsilon, float* y,
                            float* sum) {
  if (!qw_size_fits4(rows, cols, sizeof(float), 1) || isnan(epsilon) || (rows * cols != 0 && (x == NULL || y == NULL || gamma == NULL)) ||
      (skip != NULL && skip_rows == 0)) {
    return QW_INVALID_ARGUMENT;
  }
  if (rows == 0 || cols == 0) {
    return QW_OK; /* no element to write */
  }
  const struct layer_norm_job job = {
      .cols = cols, .skip_rows = skip_rows, .x = x, .skip = skip, .bias = bias, .gamma = gamma, .beta = beta,
      .epsilon = epsilon, .y = y, .sum = sum,
  };
  /* tiles of whole four-row groups, at least 4096 elements each */
  qw_parallelize(layer_norm_task, &job, rows, qw_parallel_tile(rows, 4, 4, qw_round_up((4096 + cols - 1) / cols, 4)));
  return QW_OK;
}
