/* Scalar GEMM over both packed layouts: the baseline for engines without SIMD (integer arithmetic,
 * so the results equal the SIMD kernels' by definition; the tests check it anyway). */
#include "gemm/gemm.h"

#define QW_GEMM_C8_SCALAR(name, AT)                                                                       \
  QW_DECLARE_GEMM_C8_UKERNEL(name) {                                                                      \
    const size_t kc = qw_round_up(k, QW_GEMM_C8_KR);                                                      \
    for (size_t n0 = 0; n0 < nc; n0 += QW_GEMM_C8_NR, w += QW_GEMM_C8_NR * kc) {                          \
      for (size_t m = 0; m < mr; m++) {                                                                   \
        const AT* row = (const AT*)(a + m * a_stride);                                                    \
        int32_t acc[QW_GEMM_C8_NR] = {0};                                                                 \
        for (size_t kk = 0; kk < k; kk++) {                                                               \
          const int8_t* wb = w + (kk / QW_GEMM_C8_KR) * QW_GEMM_C8_NR * QW_GEMM_C8_KR + kk % QW_GEMM_C8_KR; \
          for (size_t j = 0; j < QW_GEMM_C8_NR; j++) {                                                    \
            acc[j] += (int32_t)row[kk] * wb[j * QW_GEMM_C8_KR];                                           \
          }                                                                                               \
        }                                                                                                 \
        for (size_t j = 0; j < QW_GEMM_C8_NR && n0 + j < nc; j++) {                                       \
          c[m * c_stride + n0 + j] = acc[j];                                                              \
        }                                                                                                 \
      }                                                                                                   \
    }                                                                                                     \
  }

QW_GEMM_C8_SCALAR(qw_qu8_qs8_gemm_ukernel_2x4c8__scalar, uint8_t)
QW_GEMM_C8_SCALAR(qw_qs8_qs8_gemm_ukernel_2x4c8__scalar, int8_t)

QW_DECLARE_GEMM_C2_UKERNEL(qw_qs16_gemm_ukernel_4x8c2__scalar) {
  for (size_t n0 = 0; n0 < nc; n0 += QW_GEMM_C2_NR, w += QW_GEMM_C2_NR * kc) {
    for (size_t m = 0; m < mr; m++) {
      const int16_t* row = a + m * kc;
      int32_t acc[QW_GEMM_C2_NR] = {0};
      for (size_t kk = 0; kk < kc; kk += 2) {
        const int16_t* wb = w + (kk / 2) * 16;
        for (size_t j = 0; j < QW_GEMM_C2_NR; j++) {
          const int16_t* pair = wb + (j / 4) * 8 + (j % 4) * 2;
          acc[j] += (int32_t)row[kk] * pair[0] + (int32_t)row[kk + 1] * pair[1];
        }
      }
      for (size_t j = 0; j < QW_GEMM_C2_NR && n0 + j < nc; j++) {
        c[m * c_stride + n0 + j] = acc[j];
      }
    }
  }
}
