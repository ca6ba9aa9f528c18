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

void qw_pack_x8_row_quads_dwconv_weights(size_t cr, size_t channels, size_t kh, size_t kw, const uint8_t* w,
                                         int is_signed, const int32_t* zero_points, int zp_per_channel, void* packed) {
  assert(cr != 0 && channels != 0 && kh != 0 && kw != 0);
  assert(w != NULL && zero_points != NULL && packed != NULL);
  const size_t quads = (kw + 3) / 4, cp = qw_round_up(channels, cr);
  const size_t weight_bytes = cp * kh * quads * 4;
  const int32_t offset = is_signed ? 0 : 128; /* c of dwconv.h: w8 = w - c is always an int8 */
  int8_t* out = (int8_t*)packed;
  uint8_t* masks = (uint8_t*)packed + weight_bytes;
  int32_t* z = (int32_t*)(masks + quads * 16);
  int32_t* sums = z + cp;
  memset(out, 0, weight_bytes);
  for (size_t i = 0; i < quads * 16; i++) {
    masks[i] = i / 16 * 4 + i % 4 < kw; /* group i / 16, tap i % 4 */
  }
  memset(z, 0, cp * sizeof(int32_t));
  for (size_t c = 0; c < channels; c++) {
    const int32_t zp = zero_points[zp_per_channel ? c : 0];
    int32_t sum = 0;
    for (size_t ky = 0; ky < kh; ky++) {
      for (size_t kx = 0; kx < kw; kx++) {
        const uint8_t byte = w[(c * kh + ky) * kw + kx];
        const int32_t v = is_signed ? (int32_t)(int8_t)byte : (int32_t)byte;
        out[qw_dwconv_row_quads_offset(cr, kh, quads, c, ky, kx)] = (int8_t)(v - offset);
        sum += v - zp;
      }
    }
    z[c] = zp - offset;
    sums[c] = sum;
  }
}
