/* Scalar 8-bit transpose, in 8x8 blocks for locality. */
#include <assert.h>

#include "layout/transpose.h"

QW_DECLARE_X8_TRANSPOSE_UKERNEL(qw_x8_transpose_ukernel__scalar) {
  assert(rows != 0 && cols != 0 && src != NULL && dst != NULL);
  for (size_t i0 = 0; i0 < rows; i0 += 8) {
    const size_t i1 = rows - i0 < 8 ? rows : i0 + 8;
    for (size_t j0 = 0; j0 < cols; j0 += 8) {
      const size_t j1 = cols - j0 < 8 ? cols : j0 + 8;
      for (size_t i = i0; i < i1; i++) {
        for (size_t j = j0; j < j1; j++) {
          dst[j * dst_stride + i] = src[i * src_stride + j];
        }
      }
    }
  }
}
