/* Scalar GEMM and A packing over the layout of gemm.h: the baseline for engines without SIMD
 * (integer arithmetic: equal to the SIMD kernels' results by definition, and tested to be). */
#include "gemm/gemm.h"

QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_4x8c2__scalar) {
  for (size_t n0 = 0; n0 < nc; n0 += QW_GEMM_NR, w += QW_GEMM_NR * kc) {
    for (size_t m = 0; m < mr; m++) {
      const int16_t* row = a + m * kc;
      int32_t acc[QW_GEMM_NR] = {0};
      for (size_t kk = 0; kk < kc; kk += 2) {
        const int16_t* wb = w + (kk / 2) * 16;
        for (size_t j = 0; j < QW_GEMM_NR; j++) {
          const int16_t* pair = wb + (j / 4) * 8 + (j % 4) * 2;
          acc[j] += (int32_t)row[kk] * pair[0] + (int32_t)row[kk + 1] * pair[1];
        }
      }
      for (size_t j = 0; j < QW_GEMM_NR && n0 + j < nc; j++) {
        c[m * c_stride + n0 + j] = acc[j];
      }
    }
  }
}

#define QW_PACK_A_SCALAR(name, T)                                                    \
  QW_DECLARE_GEMM_PACK_A_UKERNEL(name) {                                             \
    const size_t kc = qw_round_up(k, QW_GEMM_KR);                                    \
    for (size_t r = 0; r < mr; r++, a += a_stride, panel += kc) {                    \
      for (size_t kk = 0; kk < k; kk++) panel[kk] = (int16_t)(((const T*)a)[kk] - a_zero_point); \
      for (size_t kk = k; kk < kc; kk++) panel[kk] = 0;                              \
    }                                                                                \
  }

QW_PACK_A_SCALAR(qw_qu8_gemm_pack_a_ukernel__scalar, uint8_t)
QW_PACK_A_SCALAR(qw_qs8_gemm_pack_a_ukernel__scalar, int8_t)
