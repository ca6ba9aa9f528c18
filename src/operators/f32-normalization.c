/* Softmax and layer normalization of transformers, with onnxruntime's arithmetic (src/f32/softmax.h,
 * src/f32/layernorm.h give the formulas). */
#include <math.h>

#include "config.h"
#include "qtypes.h"

size_t qw_f32_softmax_workspace_size(size_t axis_len, size_t inner) {
  size_t bytes;
  return inner > 1 && qw_size3(axis_len, inner, sizeof(float), &bytes) ? bytes : 0;
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
  if (inner == 1) {
    for (size_t r = 0; r < outer; r++) {
      softmax(axis_len, x + r * axis_len, y + r * axis_len);
    }
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

qw_status qw_f32_layer_norm(size_t rows, size_t cols, const float* x, const float* skip, size_t skip_rows,
                            const float* bias, const float* gamma, const float* beta, float epsilon, float* y,
                            float* sum) {
  if (!qw_size_fits4(rows, cols, sizeof(float), 1) || isnan(epsilon) || (rows * cols != 0 && (x == NULL || y == NULL || gamma == NULL)) ||
      (skip != NULL && skip_rows == 0)) {
    return QW_INVALID_ARGUMENT;
  }
  const qw_f32_layernorm_ukernel layernorm = qw_kernels()->f32_layernorm;
  const qw_f32_layernorm4_ukernel layernorm4 = qw_kernels()->f32_layernorm4;
  size_t r = 0;
  for (; r + 4 <= rows; r += 4) { /* four rows' statistics in parallel: the same per-row arithmetic */
    const float* xs[4];
    const float* ss[4];
    float* ys[4];
    float* sums[4];
    for (size_t i = 0; i < 4; i++) {
      xs[i] = x + (r + i) * cols;
      ss[i] = skip != NULL ? skip + ((r + i) % skip_rows) * cols : NULL;
      ys[i] = y + (r + i) * cols;
      sums[i] = sum != NULL ? sum + (r + i) * cols : NULL;
    }
    layernorm4(cols, xs, skip != NULL ? ss : NULL, bias, gamma, beta, epsilon, ys, sum != NULL ? sums : NULL);
  }
  for (; r < rows; r++) {
    layernorm(cols, x + r * cols, skip != NULL ? skip + (r % skip_rows) * cols : NULL, bias, gamma, beta, epsilon,
              y + r * cols, sum != NULL ? sum + r * cols : NULL);
  }
  return QW_OK;
}
