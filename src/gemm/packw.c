/* Weight packing for the GEMM layout of gemm.h. Runs once per weight tensor. */
#include <string.h>

#include "gemm/gemm.h"

void qw_pack_gemm_weights(size_t n, size_t k, const uint8_t* w, size_t n_stride, size_t k_stride, int is_signed,
                          const int32_t* w_zero_points, size_t zp_count, int16_t* packed) {
  memset(packed, 0, qw_gemm_packed_size(n, k));
  for (size_t j = 0; j < n; j++) {
    const int32_t zp = w_zero_points[zp_count == 1 ? 0 : j];
    for (size_t kk = 0; kk < k; kk++) {
      const uint8_t byte = w[j * n_stride + kk * k_stride];
      const int32_t v = is_signed ? (int32_t)(int8_t)byte : (int32_t)byte;
      packed[qw_gemm_packed_index(k, j, kk)] = (int16_t)(v - zp);
    }
  }
}
