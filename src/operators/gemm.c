/* The GEMM driver: blocks the output, runs the GEMM microkernel into an int32 row block, then the
 * requantization microkernel row by row. Shared by fully-connected layers and convolutions. */
#include "operators/operators.h"

#include <string.h>

#include "config.h"
#include "qwasm.h"

/* Columns per cache block: keeps K x NC packed weights near 128 KiB so they stay in L2 while the
 * rows of A stream past them. */
static size_t column_block(size_t k) {
  const size_t kc = qw_round_up(k, QW_GEMM_KR);
  size_t nc = (128 * 1024 / kc) / QW_GEMM_NR * QW_GEMM_NR;
  return nc < QW_GEMM_NR ? QW_GEMM_NR : nc;
}

size_t qw_gemm_pack_size(size_t n, size_t k) {
  return qw_gemm_packed_size(n, k);
}

qw_status qw_gemm_pack(size_t n, size_t k, const void* w, qw_dtype w_dtype, size_t n_stride, size_t k_stride,
                       void* packed) {
  if (w == NULL || packed == NULL || n == 0 || k == 0 || (w_dtype != QW_QINT8 && w_dtype != QW_QUINT8)) {
    return QW_INVALID_ARGUMENT;
  }
  qw_pack_gemm_weights(n, k, (const uint8_t*)w, n_stride, k_stride, w_dtype == QW_QUINT8 ? 0x80 : 0,
                       (int8_t*)packed);
  return QW_OK;
}

qw_status qw_gemm(size_t m, size_t n, size_t k, const void* a, size_t a_stride, qw_dtype a_dtype,
                  int32_t a_zero_point, const void* packed, const void* requantization, void* y, size_t y_stride,
                  void* workspace) {
  struct qw_output_stage out;
  const int32_t a_min = a_dtype == QW_QINT8 ? -128 : 0;
  if (!qw_output_stage_of(requantization, n, &out) || packed == NULL || workspace == NULL || n == 0 || k == 0 || k >= 65536 ||
      (m != 0 && (a == NULL || y == NULL || a_stride < k || y_stride < n * out.elem_size)) ||
      (a_dtype != QW_QINT8 && a_dtype != QW_QUINT8)) {
    return QW_INVALID_ARGUMENT;
  }
  if (a_zero_point < a_min || a_zero_point > a_min + 255) {
    return QW_INVALID_QPARAMS;
  }
  qw_gemm_run(m, n, k, (const uint8_t*)a, a_stride, a_dtype == QW_QINT8, a_zero_point, (const int8_t*)packed, &out,
              (uint8_t*)y, y_stride, (int32_t*)workspace);
  return QW_OK;
}

size_t qw_gemm_workspace_size(size_t n) {
  return (size_t)QW_GEMM_MR_MAX * qw_round_up(n, QW_GEMM_NR) * sizeof(int32_t);
}

/* sum_k (a[k] - zp) for one row. */
static int32_t row_sum(const uint8_t* a, size_t k, int is_signed, int32_t zp) {
  int32_t s = 0;
  if (is_signed) {
    for (size_t i = 0; i < k; i++) s += (int8_t)a[i];
  } else {
    for (size_t i = 0; i < k; i++) s += a[i];
  }
  return s - (int32_t)k * zp;
}

qw_requantization_ukernel qw_output_kernel(const struct qw_output_stage* out) {
  if (out->kernel == QW_REQUANT_KERNEL_NONE) {
    return qw_qs32_qs32_requantize_none_ukernel__scalar;
  }
  return qw_kernels()->requantize[out->kernel][out->y_signed];
}

void qw_gemm_run(size_t m, size_t n, size_t k, const uint8_t* a, size_t a_stride, int a_signed, int32_t a_zero_point,
                 const int8_t* packed, const struct qw_output_stage* out, uint8_t* y, size_t y_stride,
                 int32_t* workspace) {
  const struct qw_kernels* kernels = qw_kernels();
  const struct qw_gemm_config* gemm = &kernels->gemm[a_signed];
  const qw_requantization_ukernel requantize = qw_output_kernel(out);
  const struct qw_requantization_params* rq = out->params;
  const struct qw_gemm_params params = {(int16_t)a_zero_point};
  const size_t kc = qw_round_up(k, QW_GEMM_KR);
  const size_t nc_block = column_block(k);
  int need_row_sums = 0;
  for (size_t j = 0; j < n; j++) {
    need_row_sums |= rq->w_zero_point[j] != 0;
  }
  for (size_t n0 = 0; n0 < n; n0 += nc_block) {
    const size_t nc = n - n0 < nc_block ? n - n0 : nc_block;
    struct qw_requantization_params block_rq = *rq; /* every array is allocated for all n */
    block_rq.bias += n0;
    block_rq.bias_f32 += n0;
    block_rq.w_zero_point += n0;
    block_rq.multiplier += n0;
    block_rq.m0 += n0;
    block_rq.shift += n0;
    for (size_t m0 = 0; m0 < m; m0 += gemm->mr) {
      const size_t mr = m - m0 < gemm->mr ? m - m0 : gemm->mr;
      const uint8_t* a_block = a + m0 * a_stride;
      const qw_gemm_ukernel ukernel = mr == 1 ? gemm->ukernel_1 : gemm->ukernel;
      ukernel(mr, nc, k, a_block, a_stride, packed + n0 * kc, workspace, nc, &params);
      for (size_t r = 0; r < mr; r++) {
        const int32_t sum = need_row_sums ? row_sum(a_block + r * a_stride, k, a_signed, a_zero_point) : 0;
        requantize(nc, workspace + r * nc, sum, &block_rq, y + (m0 + r) * y_stride + n0 * out->elem_size);
      }
    }
  }
}
