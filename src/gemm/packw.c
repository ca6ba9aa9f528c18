/* Packing for the two GEMM layouts of gemm.h (weights once; A panels per call). */
#include <string.h>

#include "gemm/gemm.h"

void qw_pack_gemm_c8(size_t n, size_t k, const uint8_t* w, size_t n_stride, size_t k_stride, uint8_t flip,
                     const int32_t* w_zero_points, size_t zp_count, int8_t* packed) {
  const size_t kc = qw_round_up(k, QW_GEMM_C8_KR);
  const size_t weights = qw_round_up(n, QW_GEMM_C8_NR) * kc;
  memset(packed, 0, qw_gemm_c8_size(n, k));
  int32_t* colsum = (int32_t*)(packed + weights);
  for (size_t j = 0; j < n; j++) {
    int8_t* tile = packed + (j / QW_GEMM_C8_NR) * QW_GEMM_C8_NR * kc;
    const int32_t zp = w_zero_points[zp_count == 1 ? 0 : j] - (flip ? 128 : 0);
    int32_t sum = 0;
    for (size_t kk = 0; kk < k; kk++) {
      const int8_t v = (int8_t)(uint8_t)(w[j * n_stride + kk * k_stride] ^ flip);
      tile[((kk / QW_GEMM_C8_KR) * QW_GEMM_C8_NR + j % QW_GEMM_C8_NR) * QW_GEMM_C8_KR + kk % QW_GEMM_C8_KR] = v;
      sum += v - zp;
    }
    colsum[j] = sum;
  }
}

void qw_pack_gemm_c2(size_t n, size_t k, const uint8_t* w, size_t n_stride, size_t k_stride, int is_signed,
                     const int32_t* w_zero_points, size_t zp_count, int16_t* packed) {
  memset(packed, 0, qw_gemm_c2_size(n, k));
  for (size_t j = 0; j < n; j++) {
    const int32_t zp = w_zero_points[zp_count == 1 ? 0 : j];
    for (size_t kk = 0; kk < k; kk++) {
      const uint8_t byte = w[j * n_stride + kk * k_stride];
      const int32_t v = is_signed ? (int32_t)(int8_t)byte : (int32_t)byte;
      packed[qw_gemm_c2_index(k, j, kk)] = (int16_t)(v - zp);
    }
  }
}

void qw_pack_gemm_a(size_t mr, size_t k, const uint8_t* a, size_t a_stride, int is_signed, int32_t a_zero_point,
                    int16_t* panel) {
  const size_t kc = qw_round_up(k, QW_GEMM_C2_KR);
  for (size_t r = 0; r < mr; r++, a += a_stride, panel += kc) {
    if (is_signed) {
      for (size_t kk = 0; kk < k; kk++) panel[kk] = (int16_t)((int8_t)a[kk] - a_zero_point);
    } else {
      for (size_t kk = 0; kk < k; kk++) panel[kk] = (int16_t)(a[kk] - a_zero_point);
    }
    if (kc != k) panel[k] = 0;
  }
}
