/* Weight packing for the GEMM layouts of gemm.h. Runs once per weight tensor. */
#include <assert.h>
#include <string.h>

#include "gemm/gemm.h"

/* QW_GEMM_PACKING_X16_C2: column j's pair (kk, kk + 1) at 2 * (j % nr) of pair block kk / 2 of its tile. */
void qw_pack_x16c2_gemm_weights(size_t nr, size_t kr, size_t n, size_t k, const struct qw_gemm_weights* weights,
                                void* packed) {
  assert(nr != 0 && kr % 2 == 0 && n != 0 && k != 0);
  assert(weights != NULL && weights->w != NULL && weights->zero_points != NULL && weights->k_inner != 0);
  assert(packed != NULL);
  const size_t kc = qw_round_up(k, kr);
  int16_t* out = (int16_t*)packed;
  memset(out, 0, qw_round_up(n, nr) * kc * sizeof(int16_t));
  for (size_t j = 0; j < n; j++) {
    const int32_t zp = weights->zero_points[weights->zp_per_column ? j : 0];
    const uint8_t* column = weights->w + j * weights->n_stride;
    int16_t* dst = out + (j / nr) * nr * kc + (j % nr) * 2;
    size_t inner = 0, outer = 0; /* kk % k_inner, kk / k_inner */
    for (size_t kk = 0; kk < k; kk++) {
      const uint8_t byte = column[inner * weights->k_stride + outer * weights->k_outer_stride];
      const int32_t v = weights->is_signed ? (int32_t)(int8_t)byte : (int32_t)byte;
      dst[(kk / 2) * 2 * nr + kk % 2] = (int16_t)(v - zp);
      if (++inner == weights->k_inner) {
        inner = 0;
        outer++;
      }
    }
  }
}

/* QW_GEMM_PACKING_X8_C4: int8 w8 = w - c with c = 128 for quint8 (so that every weight is in range), then per
 * tile the column terms K z - sum_k w8 and the zero points z = w_zp - c (gemm.h). */
void qw_pack_x8c4_gemm_weights(size_t nr, size_t kr, size_t n, size_t k, const struct qw_gemm_weights* weights,
                               void* packed) {
  assert(nr != 0 && kr % 4 == 0 && n != 0 && k != 0);
  assert(weights != NULL && weights->w != NULL && weights->zero_points != NULL && weights->k_inner != 0);
  assert(packed != NULL);
  const size_t kc = qw_round_up(k, kr);
  const size_t tile_bytes = nr * (kc + 8);
  const int32_t c = weights->is_signed ? 0 : 128;
  uint8_t* out = (uint8_t*)packed;
  memset(out, 0, qw_round_up(n, nr) / nr * tile_bytes);
  for (size_t j = 0; j < n; j++) {
    const uint8_t* column = weights->w + j * weights->n_stride;
    uint8_t* tile = out + j / nr * tile_bytes;
    uint32_t sum = 0;
    size_t inner = 0, outer = 0; /* kk % k_inner, kk / k_inner */
    for (size_t kk = 0; kk < k; kk++) {
      const uint8_t byte = column[inner * weights->k_stride + outer * weights->k_outer_stride];
      const int32_t w8 = (weights->is_signed ? (int32_t)(int8_t)byte : (int32_t)byte) - c;
      tile[(kk / 4) * 4 * nr + (j % nr) * 4 + kk % 4] = (uint8_t)(int8_t)w8;
      sum += (uint32_t)w8;
      if (++inner == weights->k_inner) {
        inner = 0;
        outer++;
      }
    }
    const int32_t z = weights->zero_points[weights->zp_per_column ? j : 0] - c;
    int32_t* trailer = (int32_t*)(tile + nr * kc);
    trailer[j % nr] = (int32_t)((uint32_t)k * (uint32_t)z - sum); /* wrapping: the kernels' sum is exact */
    trailer[nr + j % nr] = z;
  }
}
