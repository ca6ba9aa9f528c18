/* Weight packing for the depthwise layouts of dwconv.h. Runs once per weight tensor. */
#include <assert.h>
#include <string.h>

#include "dwconv/dwconv.h"

void qw_pack_x16_row_pairs_dwconv_weights(size_t cr, size_t channels, size_t kh, size_t kw, const uint8_t* w,
                                          int is_signed, const int32_t* zero_points, int zp_per_channel, void* packed) {
  assert(cr != 0 && channels != 0 && kh != 0 && kw != 0);
  assert(w != NULL && zero_points != NULL && packed != NULL);
  const size_t pairs = qw_dwconv_pairs(kw);
  const size_t weight_bytes = qw_round_up(channels, cr) * kh * pairs * 2 * sizeof(int16_t);
  int16_t* out = (int16_t*)packed;
  int32_t* sums = (int32_t*)((char*)packed + weight_bytes);
  memset(out, 0, weight_bytes);
  for (size_t c = 0; c < channels; c++) {
    const int32_t zp = zero_points[zp_per_channel ? c : 0];
    int32_t sum = 0;
    for (size_t ky = 0; ky < kh; ky++) {
      for (size_t kx = 0; kx < kw; kx++) {
        const uint8_t byte = w[(c * kh + ky) * kw + kx];
        const int32_t v = (is_signed ? (int32_t)(int8_t)byte : (int32_t)byte) - zp;
        out[qw_dwconv_row_pairs_index(cr, kh, pairs, c, ky, kx)] = (int16_t)v;
        sum += v;
      }
    }
    sums[c] = sum;
  }
}
