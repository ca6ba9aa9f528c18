/* The GEMM driver: blocks the columns so a block of packed weights stays in L2 while the rows
 * stream past it; per block of up to 4 rows it packs A, runs the microkernel for that row count
 * into an int32 row block, then the requantization microkernel row by row. Shared by
 * fully-connected layers, matmuls and convolutions. */
#include "operators/operators.h"

#include <string.h>

#include "config.h"
#include "qwasm.h"

struct packed_header {
  uint32_t magic;
  uint32_t n;
  uint32_t k;
  uint32_t reserved;
};
#define PACKED_MAGIC 0x4B505751u /* "QWPK" */
#define HEADER_BYTES 16

/* Columns per cache block: about 256 KiB of packed weights (a quarter of these machines' L2). */
static size_t column_block(size_t k) {
  const size_t per_column = qw_round_up(k, QW_GEMM_KR) * sizeof(int16_t);
  const size_t nc = (256 * 1024 / per_column) / QW_GEMM_NR * QW_GEMM_NR;
  return nc < QW_GEMM_NR ? QW_GEMM_NR : nc;
}

size_t qw_gemm_pack_size(size_t n, size_t k) {
  return n == 0 || k == 0 ? 0 : HEADER_BYTES + qw_gemm_packed_size(n, k);
}

qw_status qw_gemm_pack(size_t n, size_t k, const void* w, qw_dtype w_dtype, size_t n_stride, size_t k_stride,
                       const int32_t* w_zero_points, size_t zp_count, void* packed) {
  if (w == NULL || packed == NULL || w_zero_points == NULL || n == 0 || k == 0 || k >= QW_GEMM_K_MAX ||
      (zp_count != 1 && zp_count != n) || (w_dtype != QW_QINT8 && w_dtype != QW_QUINT8)) {
    return QW_INVALID_ARGUMENT;
  }
  const int32_t w_min = w_dtype == QW_QUINT8 ? 0 : -128;
  for (size_t j = 0; j < zp_count; j++) {
    if (w_zero_points[j] < w_min || w_zero_points[j] > w_min + 255) {
      return QW_INVALID_QPARAMS;
    }
  }
  struct packed_header* h = (struct packed_header*)packed;
  *h = (struct packed_header){PACKED_MAGIC, (uint32_t)n, (uint32_t)k, 0};
  qw_pack_gemm_weights(n, k, (const uint8_t*)w, n_stride, k_stride, w_dtype == QW_QINT8, w_zero_points, zp_count,
                       (int16_t*)((char*)packed + HEADER_BYTES));
  return QW_OK;
}

const int16_t* qw_gemm_packed_weights(const void* packed, size_t n, size_t k) {
  const struct packed_header* h = (const struct packed_header*)packed;
  if (packed == NULL || h->magic != PACKED_MAGIC || h->n != n || h->k != k) {
    return NULL;
  }
  return (const int16_t*)((const char*)packed + HEADER_BYTES);
}

size_t qw_gemm_workspace_size(size_t n, size_t k) {
  /* int32 rows of a block, the A panel */
  return QW_GEMM_MR_MAX * qw_round_up(n, QW_GEMM_NR) * sizeof(int32_t) +
         QW_GEMM_MR_MAX * qw_round_up(k, QW_GEMM_KR) * sizeof(int16_t);
}

struct qw_requantization_params qw_requantization_params_at(const struct qw_requantization_params* rq, size_t n0) {
  struct qw_requantization_params r = *rq; /* every array present is allocated for all n */
  r.bias = r.bias != NULL ? r.bias + n0 : NULL;
  r.bias_f32 = r.bias_f32 != NULL ? r.bias_f32 + n0 : NULL;
  r.multiplier = r.multiplier != NULL ? r.multiplier + n0 : NULL;
  r.m0 = r.m0 != NULL ? r.m0 + n0 : NULL;
  r.shift = r.shift != NULL ? r.shift + n0 : NULL;
  return r;
}

qw_requantization_ukernel qw_output_kernel(const struct qw_output_stage* out) {
  if (out->kernel == QW_REQUANT_KERNEL_NONE) {
    return qw_qs32_qs32_requantize_none_ukernel__scalar;
  }
  if (out->kernel == QW_REQUANT_KERNEL_F32) {
    return qw_kernels()->scale_output[out->params->bias_f32 != NULL];
  }
  return qw_kernels()->requantize[out->kernel][out->y_signed];
}

void qw_gemm_run(size_t m, size_t n, size_t k, const uint8_t* a, size_t a_stride, int a_signed, int32_t a_zero_point,
                 const int16_t* w, const struct qw_output_stage* out, uint8_t* y, size_t y_stride, int32_t* workspace) {
  const struct qw_kernels* kernels = qw_kernels();
  const qw_requantization_ukernel requantize = qw_output_kernel(out);
  const qw_gemm_pack_a_ukernel pack_a = kernels->gemm_pack_a[a_signed];
  const size_t kc = qw_round_up(k, QW_GEMM_KR);
  int32_t* cblock = workspace;
  int16_t* panel = (int16_t*)(cblock + QW_GEMM_MR_MAX * qw_round_up(n, QW_GEMM_NR));
  /* A single row block is packed once and sweeps all columns (the weights are read once anyway);
   * more rows are re-packed per column block, which keeps the weight block in cache (a few percent
   * of the multiply-adds' time). */
  const int single_block = m <= QW_GEMM_MR_MAX;
  const size_t nc_block = single_block ? n : column_block(k);
  if (single_block && m != 0) {
    pack_a(m, k, a, a_stride, a_zero_point, panel);
  }
  for (size_t n0 = 0; n0 < n; n0 += nc_block) {
    const size_t nc = n - n0 < nc_block ? n - n0 : nc_block;
    const struct qw_requantization_params rq = qw_requantization_params_at(out->params, n0);
    const int16_t* wb = w + n0 * kc;
    for (size_t m0 = 0; m0 < m; m0 += QW_GEMM_MR_MAX) {
      const size_t mr = m - m0 < QW_GEMM_MR_MAX ? m - m0 : QW_GEMM_MR_MAX;
      if (!single_block) {
        pack_a(mr, k, a + m0 * a_stride, a_stride, a_zero_point, panel);
      }
      kernels->gemm[mr - 1](mr, nc, kc, panel, wb, cblock, nc);
      for (size_t r = 0; r < mr; r++) {
        requantize(nc, cblock + r * nc, &rq, y + (m0 + r) * y_stride + n0 * out->elem_size);
      }
    }
  }
}

qw_status qw_gemm(size_t m, size_t n, size_t k, const void* a, size_t a_stride, qw_dtype a_dtype, int32_t a_zero_point,
                  const void* packed, const void* requantization, void* y, size_t y_stride, void* workspace) {
  struct qw_output_stage out;
  const struct packed_header* h = (const struct packed_header*)packed;
  const int32_t a_min = a_dtype == QW_QINT8 ? -128 : 0;
  if (!qw_output_stage_of(requantization, n, &out) || packed == NULL || h->magic != PACKED_MAGIC || h->n != n ||
      h->k != k || workspace == NULL ||
      (m != 0 && (a == NULL || y == NULL || a_stride < k || y_stride < n * out.elem_size)) ||
      (a_dtype != QW_QINT8 && a_dtype != QW_QUINT8)) {
    return QW_INVALID_ARGUMENT;
  }
  if (a_zero_point < a_min || a_zero_point > a_min + 255) {
    return QW_INVALID_QPARAMS;
  }
  qw_gemm_run(m, n, k, (const uint8_t*)a, a_stride, a_dtype == QW_QINT8, a_zero_point,
              (const int16_t*)((const char*)packed + HEADER_BYTES), &out, (uint8_t*)y, y_stride, (int32_t*)workspace);
  return QW_OK;
}
