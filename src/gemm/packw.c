/* Weight packing for the c8 GEMM layout of gemm.h. Runs once per weight tensor. */
#include <string.h>

#include "gemm/gemm.h"

void qw_pack_gemm_weights(size_t n, size_t k, const uint8_t* w, size_t n_stride, size_t k_stride, uint8_t flip,
                          int8_t* packed) {
  const size_t kc = qw_round_up(k, QW_GEMM_KR);
  memset(packed, 0, qw_gemm_packed_size(n, k));
  for (size_t n0 = 0; n0 < n; n0 += QW_GEMM_NR) {
    int8_t* tile = packed + n0 * kc;
    for (size_t j = 0; j < QW_GEMM_NR && n0 + j < n; j++) {
      for (size_t kk = 0; kk < k; kk++) {
        const size_t block = kk / QW_GEMM_KR;
        tile[(block * QW_GEMM_NR + j) * QW_GEMM_KR + kk % QW_GEMM_KR] =
            (int8_t)(uint8_t)(w[(n0 + j) * n_stride + kk * k_stride] ^ flip);
      }
    }
  }
}
