/* Portable float32 GEMM: up to 4 rows x 8 columns, the accumulation order of the SIMD kernels. */
#include "f32/gemm.h"

QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_4x8__scalar) {
  float acc[QW_F32_GEMM_MR][QW_F32_GEMM_NR];
  for (size_t m = 0; m < mr; m++) {
    for (size_t j = 0; j < QW_F32_GEMM_NR; j++) {
      acc[m][j] = w[m];
    }
  }
  w += QW_F32_GEMM_MR;
  for (size_t k = 0; k < kc; k++, w += QW_F32_GEMM_MR, a += a_stride) {
    for (size_t m = 0; m < mr; m++) {
      const float wm = w[m];
      for (size_t j = 0; j < QW_F32_GEMM_NR; j++) {
        acc[m][j] = acc[m][j] + wm * a[j];
      }
    }
  }
  for (size_t m = 0; m < mr; m++) {
    for (size_t j = 0; j < nc; j++) {
      c[m * c_stride + j] = acc[m][j];
    }
  }
}
