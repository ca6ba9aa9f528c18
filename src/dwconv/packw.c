/* Weight packing for the depthwise layouts of dwconv.h. Runs once per weight tensor. */
#include <assert.h>
#include <string.h>

#include "dwconv/dwconv.h"

void qw_pack_x16pairs_dwconv_weights(size_t cr, size_t tr, size_t channels, size_t taps, const uint8_t* w,
                                     int is_signed, const int32_t* zero_points, int zp_per_channel, void* packed) {
  assert(cr != 0 && tr % 2 == 0 && channels != 0 && taps != 0);
  assert(w != NULL && zero_points != NULL && packed != NULL);
  const size_t taps_padded = qw_round_up(taps, tr);
  const size_t weight_bytes = qw_round_up(channels, cr) * taps_padded * sizeof(int16_t);
  int16_t* out = (int16_t*)packed;
  int32_t* sums = (int32_t*)((char*)packed + weight_bytes);
  memset(out, 0, weight_bytes);
  for (size_t c = 0; c < channels; c++) {
    const int32_t zp = zero_points[zp_per_channel ? c : 0];
    int32_t sum = 0;
    for (size_t t = 0; t < taps; t++) {
      const uint8_t byte = w[c * taps + t];
      const int32_t v = (is_signed ? (int32_t)(int8_t)byte : (int32_t)byte) - zp;
      out[qw_dwconv_x16pairs_index(cr, taps_padded, t, c)] = (int16_t)v;
      sum += v;
    }
    sums[c] = sum;
  }
}
