/* Weight packing for the float GEMM layout of f32/gemm.h. Runs once per weight tensor. */
#include <assert.h>

#include "f32/gemm.h"

void qw_pack_f32_gemm_weights(size_t mr, size_t n, size_t k, const float* w, const float* bias, float* packed) {
  assert(mr != 0 && n != 0 && k != 0 && w != NULL && packed != NULL);
  const size_t tile_size = mr * (k + 1);
  for (size_t t = 0; t * mr < n; t++) {
    float* tile = packed + t * tile_size;
    for (size_t m = 0; m < mr; m++) {
      const size_t row = t * mr + m;
      const int real = row < n;
      tile[m] = real && bias != NULL ? bias[row] : 0.0f;
      for (size_t kk = 0; kk < k; kk++) {
        tile[mr * (kk + 1) + m] = real ? w[row * k + kk] : 0.0f;
      }
    }
  }
}
