/* Portable float32 GEMM in the accumulation order of the SIMD kernels: 4 rows x 8 columns (the
 * scalar build's config), and 2 x 16 for a second layout the C tests run the float convolution with. */
#include "f32/gemm.h"

#define QW_F32_GEMM_SCALAR(name, MR, NR)                                  \
  QW_DECLARE_F32_GEMM_UKERNEL(name) {                                     \
    QW_ASSERT_F32_GEMM_UKERNEL(MR, NR);                                   \
    float acc[MR][NR];                                                    \
    for (size_t m = 0; m < mr; m++) {                                     \
      for (size_t j = 0; j < NR; j++) {                                   \
        acc[m][j] = w[m];                                                 \
      }                                                                   \
    }                                                                     \
    w += MR;                                                              \
    for (size_t k = 0; k < kc; k++, w += MR, a += a_stride) {             \
      for (size_t m = 0; m < mr; m++) {                                   \
        const float wm = w[m];                                            \
        for (size_t j = 0; j < NR; j++) {                                 \
          acc[m][j] = acc[m][j] + wm * a[j];                              \
        }                                                                 \
      }                                                                   \
    }                                                                     \
    for (size_t m = 0; m < mr; m++) {                                     \
      for (size_t j = 0; j < nc; j++) {                                   \
        c[m * c_stride + j] = alpha != 1.0f ? acc[m][j] * alpha : acc[m][j]; \
      }                                                                   \
    }                                                                     \
  }

QW_F32_GEMM_SCALAR(qw_f32_gemm_ukernel_4x8__scalar, 4, 8)
QW_F32_GEMM_SCALAR(qw_f32_gemm_ukernel_2x16__scalar, 2, 16)

/* The rows read in place (gemm.h qw_f32_gemm_rows_ukernel), in the same order. */
QW_DECLARE_F32_GEMM_ROWS_UKERNEL(qw_f32_gemm_rows_ukernel_4x8__scalar) {
  assert(mr >= 1 && mr <= 4 && nc >= 1 && nc <= 8 && kc != 0 && x != NULL && a != NULL && c != NULL);
  float acc[4][8];
  for (size_t m = 0; m < mr; m++) {
    for (size_t j = 0; j < 8; j++) {
      acc[m][j] = 0.0f;
    }
  }
  for (size_t k = 0; k < kc; k++, a += a_stride) {
    for (size_t m = 0; m < mr; m++) {
      const float xm = x[m * x_stride + k];
      for (size_t j = 0; j < 8; j++) {
        acc[m][j] = acc[m][j] + xm * a[j];
      }
    }
  }
  for (size_t m = 0; m < mr; m++) {
    for (size_t j = 0; j < nc; j++) {
      c[m * c_stride + j] = alpha != 1.0f ? acc[m][j] * alpha : acc[m][j];
    }
  }
}
