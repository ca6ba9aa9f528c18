/* Portable transposing pack for the float GEMM (f32/gemm.h): rows of a matrix into lane-interleaved k order. */
#include "f32/gemm.h"

QW_DECLARE_X32_PACKX_UKERNEL(qw_x32_packx_ukernel__scalar) {
  QW_ASSERT_X32_PACKX_UKERNEL();
  for (size_t k = 0; k < kc; k++) {
    for (size_t r = 0; r < lanes; r++) {
      out[k * lanes + r] = r < rows ? x[r * ldx + k] : 0.0f;
    }
  }
}
