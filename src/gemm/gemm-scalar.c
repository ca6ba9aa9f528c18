/* Scalar GEMM over the packed c8 layout: the baseline for engines without SIMD and the reference
 * the SIMD kernels are tested against (integer arithmetic: the results are the same by definition). */
#include "gemm/gemm.h"

#define QW_GEMM_SCALAR(name, AT)                                                                 \
  QW_DECLARE_GEMM_UKERNEL(name) {                                                               \
    const size_t kc = qw_round_up(k, QW_GEMM_KR);                                              \
    const int32_t zp = params->a_zero_point;                                                   \
    for (size_t n0 = 0; n0 < nc; n0 += QW_GEMM_NR, w += QW_GEMM_NR * kc) {                     \
      for (size_t m = 0; m < mr; m++) {                                                        \
        const AT* row = (const AT*)(a + m * a_stride);                                         \
        int32_t acc[QW_GEMM_NR] = {0};                                                         \
        for (size_t kk = 0; kk < k; kk++) {                                                    \
          const int32_t av = (int32_t)row[kk] - zp;                                            \
          const int8_t* wb = w + (kk / QW_GEMM_KR) * QW_GEMM_NR * QW_GEMM_KR + kk % QW_GEMM_KR; \
          for (size_t j = 0; j < QW_GEMM_NR; j++) {                                            \
            acc[j] += av * wb[j * QW_GEMM_KR];                                                 \
          }                                                                                    \
        }                                                                                      \
        for (size_t j = 0; j < QW_GEMM_NR && n0 + j < nc; j++) {                               \
          c[m * c_stride + n0 + j] = acc[j];                                                   \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }

QW_GEMM_SCALAR(qw_qu8_qs8_gemm_ukernel_2x4c8__scalar, uint8_t)
QW_GEMM_SCALAR(qw_qs8_qs8_gemm_ukernel_2x4c8__scalar, int8_t)
