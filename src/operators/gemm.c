/* The GEMM driver: picks the packed layout for the row count, blocks the columns so a block of
 * packed weights stays in L2 while all rows stream past it, runs the microkernel into an int32 row
 * block and the requantization microkernel row by row. Shared by fully-connected layers, matmuls
 * and convolutions. */
#include "operators/operators.h"

#include <string.h>

#include "config.h"
#include "qwasm.h"

/* Rows at which the int16 c2 layout wins over streaming int8 weights (see gemm.h). */
#define C2_MIN_ROWS 4

struct packed_header {
  uint32_t magic;
  uint32_t layout;
  uint32_t n;
  uint32_t k;
};
#define PACKED_MAGIC 0x4B505751u /* "QWPK" */
#define HEADER_BYTES 16

/* Columns per cache block: about 128 KiB of packed weights. */
static size_t column_block(size_t k, size_t bytes_per_weight, size_t nr) {
  const size_t per_column = qw_round_up(k, 8) * bytes_per_weight;
  size_t nc = (128 * 1024 / per_column) / nr * nr;
  return nc < nr ? nr : nc;
}

size_t qw_gemm_pack_size(size_t n, size_t k, int layout) {
  if (n == 0 || k == 0) return 0;
  return HEADER_BYTES + (layout == QW_GEMM_LAYOUT_INT16 ? qw_gemm_c2_size(n, k) : qw_gemm_c8_size(n, k));
}

qw_status qw_gemm_pack(size_t n, size_t k, const void* w, qw_dtype w_dtype, size_t n_stride, size_t k_stride,
                       const int32_t* w_zero_points, size_t zp_count, int layout, void* packed) {
  if (w == NULL || packed == NULL || w_zero_points == NULL || n == 0 || k == 0 || k >= 65536 ||
      (zp_count != 1 && zp_count != n) || (w_dtype != QW_QINT8 && w_dtype != QW_QUINT8) ||
      (layout != QW_GEMM_LAYOUT_INT8 && layout != QW_GEMM_LAYOUT_INT16)) {
    return QW_INVALID_ARGUMENT;
  }
  const int32_t w_min = w_dtype == QW_QUINT8 ? 0 : -128;
  for (size_t j = 0; j < zp_count; j++) {
    if (w_zero_points[j] < w_min || w_zero_points[j] > w_min + 255) {
      return QW_INVALID_QPARAMS;
    }
  }
  struct packed_header* h = (struct packed_header*)packed;
  *h = (struct packed_header){PACKED_MAGIC, (uint32_t)layout, (uint32_t)n, (uint32_t)k};
  void* body = (char*)packed + HEADER_BYTES;
  if (layout == QW_GEMM_LAYOUT_INT16) {
    qw_pack_gemm_c2(n, k, (const uint8_t*)w, n_stride, k_stride, w_dtype == QW_QINT8, w_zero_points, zp_count,
                    (int16_t*)body);
  } else {
    qw_pack_gemm_c8(n, k, (const uint8_t*)w, n_stride, k_stride, w_dtype == QW_QUINT8 ? 0x80 : 0, w_zero_points,
                    zp_count, (int8_t*)body);
  }
  return QW_OK;
}

const void* qw_gemm_packed_body(const void* packed, size_t n, size_t k, int layout) {
  const struct packed_header* h = (const struct packed_header*)packed;
  if (packed == NULL || h->magic != PACKED_MAGIC || h->layout != (uint32_t)layout || h->n != n || h->k != k) {
    return NULL;
  }
  return (const char*)packed + HEADER_BYTES;
}

size_t qw_gemm_workspace_size(size_t n, size_t k) {
  /* int32 rows of a block, the c2 A panel, the c8 effective bias */
  return QW_GEMM_MR_MAX * qw_round_up(n, 8) * sizeof(int32_t) +
         QW_GEMM_MR_MAX * qw_round_up(k, QW_GEMM_C2_KR) * sizeof(int16_t) + qw_round_up(n, 4) * sizeof(int32_t);
}

static struct qw_requantization_params offset_params(const struct qw_requantization_params* rq, size_t n0) {
  struct qw_requantization_params r = *rq; /* every array is allocated for all n */
  r.bias += n0;
  r.bias_f32 += n0;
  r.w_zero_point += n0;
  r.multiplier += n0;
  r.m0 += n0;
  r.shift += n0;
  return r;
}

struct qw_requantization_params qw_requantization_params_at(const struct qw_requantization_params* rq, size_t n0) {
  return offset_params(rq, n0);
}

qw_requantization_ukernel qw_output_kernel(const struct qw_output_stage* out) {
  if (out->kernel == QW_REQUANT_KERNEL_NONE) {
    return qw_qs32_qs32_requantize_none_ukernel__scalar;
  }
  return qw_kernels()->requantize[out->kernel][out->y_signed];
}

/* sum_k a[k] of one raw row. */
static int32_t row_sum(const uint8_t* a, size_t k, int is_signed) {
  int32_t s = 0;
  if (is_signed) {
    for (size_t i = 0; i < k; i++) s += (int8_t)a[i];
  } else {
    for (size_t i = 0; i < k; i++) s += a[i];
  }
  return s;
}

void qw_gemm_run(size_t m, size_t n, size_t k, const uint8_t* a, size_t a_stride, int a_signed, int32_t a_zero_point,
                 const struct qw_gemm_weights* w, const struct qw_output_stage* out, uint8_t* y, size_t y_stride,
                 int32_t* workspace) {
  const struct qw_kernels* kernels = qw_kernels();
  const qw_requantization_ukernel requantize = qw_output_kernel(out);
  const size_t kc2 = qw_round_up(k, QW_GEMM_C2_KR);
  int32_t* cblock = workspace;
  int16_t* panel = (int16_t*)(cblock + QW_GEMM_MR_MAX * qw_round_up(n, 8));
  int32_t* bias_eff = (int32_t*)(panel + QW_GEMM_MR_MAX * kc2);

  if (w->c2 != NULL && (m >= C2_MIN_ROWS || w->c8 == NULL)) {
    /* Exact sums of centered values: no correction terms (row_sum 0). */
    const size_t nc_block = column_block(k, sizeof(int16_t), QW_GEMM_C2_NR);
    for (size_t n0 = 0; n0 < n; n0 += nc_block) {
      const size_t nc = n - n0 < nc_block ? n - n0 : nc_block;
      const struct qw_requantization_params rq = offset_params(out->params, n0);
      const int16_t* wb = w->c2 + n0 * kc2;
      for (size_t m0 = 0; m0 < m; m0 += 4) {
        const size_t mr = m - m0 < 4 ? m - m0 : 4;
        qw_pack_gemm_a(mr, k, a + m0 * a_stride, a_stride, a_signed, a_zero_point, panel);
        kernels->gemm_c2[mr - 1](mr, nc, kc2, panel, wb, cblock, nc);
        for (size_t r = 0; r < mr; r++) {
          requantize(nc, cblock + r * nc, 0, &rq, y + (m0 + r) * y_stride + n0 * out->elem_size);
        }
      }
    }
    return;
  }

  /* c8 on raw rows: -a_zp * colsum folds into the bias, w_zp * (raw row sum) is subtracted per row. */
  const size_t kc8 = qw_round_up(k, QW_GEMM_C8_KR);
  const int32_t* colsum = (const int32_t*)(w->c8 + qw_round_up(n, QW_GEMM_C8_NR) * kc8);
  for (size_t j = 0; j < n; j++) {
    bias_eff[j] = (int32_t)((uint32_t)out->params->bias[j] - (uint32_t)a_zero_point * (uint32_t)colsum[j]);
  }
  struct qw_requantization_params rq_all = *out->params;
  rq_all.bias = bias_eff;
  const size_t nc_block = column_block(k, 1, QW_GEMM_C8_NR);
  for (size_t n0 = 0; n0 < n; n0 += nc_block) {
    const size_t nc = n - n0 < nc_block ? n - n0 : nc_block;
    const struct qw_requantization_params rq = offset_params(&rq_all, n0);
    for (size_t m0 = 0; m0 < m; m0 += 2) {
      const size_t mr = m - m0 < 2 ? m - m0 : 2;
      const uint8_t* a_block = a + m0 * a_stride;
      kernels->gemm_c8[a_signed][mr - 1](mr, nc, k, a_block, a_stride, w->c8 + n0 * kc8, cblock, nc);
      for (size_t r = 0; r < mr; r++) {
        requantize(nc, cblock + r * nc, row_sum(a_block + r * a_stride, k, a_signed), &rq,
                   y + (m0 + r) * y_stride + n0 * out->elem_size);
      }
    }
  }
}

qw_status qw_gemm(size_t m, size_t n, size_t k, const void* a, size_t a_stride, qw_dtype a_dtype, int32_t a_zero_point,
                  const void* packed_int8, const void* packed_int16, const void* requantization, void* y,
                  size_t y_stride, void* workspace) {
  struct qw_output_stage out;
  struct qw_gemm_weights w = {
      (const int8_t*)(packed_int8 ? qw_gemm_packed_body(packed_int8, n, k, QW_GEMM_LAYOUT_INT8) : NULL),
      (const int16_t*)(packed_int16 ? qw_gemm_packed_body(packed_int16, n, k, QW_GEMM_LAYOUT_INT16) : NULL),
  };
  const int32_t a_min = a_dtype == QW_QINT8 ? -128 : 0;
  if (!qw_output_stage_of(requantization, n, &out) || (w.c8 == NULL && w.c2 == NULL) ||
      (packed_int8 != NULL && w.c8 == NULL) || (packed_int16 != NULL && w.c2 == NULL) || workspace == NULL ||
      n == 0 || k == 0 || (m != 0 && (a == NULL || y == NULL || a_stride < k || y_stride < n * out.elem_size)) ||
      (a_dtype != QW_QINT8 && a_dtype != QW_QUINT8)) {
    return QW_INVALID_ARGUMENT;
  }
  if (a_zero_point < a_min || a_zero_point > a_min + 255) {
    return QW_INVALID_QPARAMS;
  }
  qw_gemm_run(m, n, k, (const uint8_t*)a, a_stride, a_dtype == QW_QINT8, a_zero_point, &w, &out, (uint8_t*)y, y_stride,
              (int32_t*)workspace);
  return QW_OK;
}
