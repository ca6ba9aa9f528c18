/* Scalar GEMM and A packing over the c2 layout of gemm.h: the baseline for engines without SIMD
 * (integer arithmetic: equal to the SIMD kernels' results by definition, and tested to be). The
 * 16-column tile is the same loop for a config with nr 16 (tests/c/kernel_tables.h runs the drivers
 * with it, so that no driver can depend on a fixed tile). */
#include "gemm/gemm.h"

#define QW_GEMM_SCALAR(name, MR, NR)                                                 \
  QW_DECLARE_GEMM_UKERNEL(name) {                                                    \
    QW_ASSERT_GEMM_UKERNEL(MR, 2);                                                   \
    const int16_t* wt = (const int16_t*)w;                                           \
    for (size_t n0 = 0; n0 < nc; n0 += NR, wt += NR * kc) {                          \
      for (size_t m = 0; m < mr; m++) {                                              \
        const int16_t* row = (const int16_t*)a + m * kc;                             \
        int32_t acc[NR] = {0};                                                       \
        for (size_t kk = 0; kk < kc; kk += 2) {                                      \
          const int16_t* wb = wt + (kk / 2) * 2 * NR;                                \
          for (size_t j = 0; j < NR; j++) {                                          \
            acc[j] += (int32_t)row[kk] * wb[2 * j] + (int32_t)row[kk + 1] * wb[2 * j + 1]; \
          }                                                                          \
        }                                                                            \
        for (size_t j = 0; j < NR && n0 + j < nc; j++) {                             \
          c[m * c_stride + n0 + j] = acc[j];                                         \
        }                                                                            \
      }                                                                              \
    }                                                                                \
  }

QW_GEMM_SCALAR(qw_qs16_gemm_ukernel_4x8c2__scalar, 4, 8)
QW_GEMM_SCALAR(qw_qs16_gemm_ukernel_4x16c2__scalar, 4, 16)

#define QW_PACK_A_SCALAR(name, T)                                                    \
  QW_DECLARE_GEMM_PACK_A_UKERNEL(name) {                                             \
    QW_ASSERT_GEMM_PACK_A_UKERNEL();                                                 \
    int16_t* out = (int16_t*)panel;                                                  \
    for (size_t r = 0; r < mr; r++, a += a_stride, out += kc) {                      \
      for (size_t kk = 0; kk < k; kk++) out[kk] = (int16_t)(((const T*)a)[kk] - a_zero_point); \
      for (size_t kk = k; kk < kc; kk++) out[kk] = 0;                                \
    }                                                                                \
  }

QW_PACK_A_SCALAR(qw_qu8_gemm_pack_a_ukernel__scalar, uint8_t)
QW_PACK_A_SCALAR(qw_qs8_gemm_pack_a_ukernel__scalar, int8_t)
