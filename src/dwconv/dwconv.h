/*
 * Depthwise convolution microkernels, channels-last, one output row per call:
 *   acc[p][c] = sum_t input[p][t][c] * w[t][c]          (p < pixels, c < channels, t < taps)
 * with the RAW 8-bit inputs: the input zero point enters as the per-channel constant
 * a_zp * sum_t w[t][c] that the caller folds into the bias. input is an indirection list of
 * pixels * round_up(taps, tr) pointers (pixel-major), each at channel 0 of the tap's input pixel, or at
 * a row of a_zp bytes for padding (which then cancels exactly against the folded constant).
 *
 * A depthwise configuration (struct qw_dwconv_config, chosen in src/config.c) carries the layout
 * with the kernels and the packing: cr channels per packed block, taps padded to a multiple of tr.
 * Packed weights record (packing, cr, tr) in their header (src/operators/conv2d.c).
 *
 * The layout of today's configs, QW_DWCONV_PACKING_X16_PAIRS (cr 8, tr 2): int16 weights with the
 * weight zero point subtracted (w - w_zp fits int16), taps padded to an even count with zero weights;
 * for each block of cr channels and each pair of taps (t0, t1), channel lane l's two weights at 2 * l:
 *   [c0t0 c0t1 c1t0 c1t1 c2t0 c2t1 c3t0 c3t1][c4t0 ... c7t1]   (cr 8: two vectors per pair)
 * so that i32x4.dot_i16x8_s of the interleaved inputs sums two taps per lane. The channel tail
 * (channels % cr) uses the same layout. After the weights: int32 sum_t w[t][c] per channel.
 */
#ifndef QWASM_DWCONV_H
#define QWASM_DWCONV_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm/gemm.h"

/* What a config's pack writes (recorded in packed weights' headers). */
enum { QW_DWCONV_PACKING_X16_PAIRS = 1 };

/* Packs depthwise weights w[c * taps + t] (8-bit, signed or not) minus zero_points[zp_per_channel ? c : 0]
 * for c < channels, then the per-channel sums, into qw_dwconv_packed_bytes. */
typedef void (*qw_dwconv_pack_fn)(size_t cr, size_t tr, size_t channels, size_t taps, const uint8_t* w, int is_signed,
                                  const int32_t* zero_points, int zp_per_channel, void* packed);

typedef void (*qw_dwconv_ukernel)(size_t pixels, size_t channels, size_t taps, const uint8_t* const* input,
                                  const void* w, int32_t* acc);

struct qw_dwconv_config {
  uint8_t cr, tr;
  uint8_t packing; /* QW_DWCONV_PACKING_*: the layout pack writes and the kernels read */
  qw_dwconv_ukernel ukernel[2]; /* [activations signed] */
  qw_dwconv_pack_fn pack;
};

/* Taps of the packed weights and of each pixel's indirection list. */
static inline size_t qw_dwconv_taps_padded(const struct qw_dwconv_config* config, size_t taps) {
  return qw_round_up(taps, config->tr);
}

/* Bytes of packed depthwise weights (int16 weights, then int32 per-channel sums), in 64 bits. */
static inline uint64_t qw_dwconv_packed_bytes(const struct qw_dwconv_config* config, size_t channels, size_t taps) {
  return (uint64_t)qw_round_up(channels, config->cr) * qw_dwconv_taps_padded(config, taps) * sizeof(int16_t) +
         (uint64_t)channels * sizeof(int32_t);
}

/* The layout word packed-weight headers record. */
static inline uint32_t qw_dwconv_layout(const struct qw_dwconv_config* config) {
  return (uint32_t)config->packing | (uint32_t)config->cr << 8 | (uint32_t)config->tr << 16;
}

/* Index of the int16 weight of (tap t, channel c) in QW_DWCONV_PACKING_X16_PAIRS with taps_padded taps. */
static inline size_t qw_dwconv_x16pairs_index(size_t cr, size_t taps_padded, size_t t, size_t c) {
  return (c / cr) * taps_padded * cr + (t / 2) * 2 * cr + (c % cr) * 2 + t % 2;
}

void qw_pack_x16pairs_dwconv_weights(size_t cr, size_t tr, size_t channels, size_t taps, const uint8_t* w,
                                     int is_signed, const int32_t* zero_points, int zp_per_channel, void* packed);

/* The contract a depthwise microkernel asserts on entry. */
#define QW_ASSERT_DWCONV_UKERNEL() \
  assert(pixels != 0 && channels != 0 && taps != 0 && input != NULL && w != NULL && acc != NULL)

#define QW_DECLARE_DWCONV_UKERNEL(name)                                                               \
  void name(size_t pixels, size_t channels, size_t taps, const uint8_t* const* input, const void* w,  \
            int32_t* acc)

QW_DECLARE_DWCONV_UKERNEL(qw_qu8_dwconv_ukernel_c8t2__scalar);
QW_DECLARE_DWCONV_UKERNEL(qw_qs8_dwconv_ukernel_c8t2__scalar);
QW_DECLARE_DWCONV_UKERNEL(qw_qu8_dwconv_ukernel_c16t4__scalar);
QW_DECLARE_DWCONV_UKERNEL(qw_qs8_dwconv_ukernel_c16t4__scalar);
#if QW_SIMD
QW_DECLARE_DWCONV_UKERNEL(qw_qu8_dwconv_ukernel_c8__wasmsimd_dot16x2);
QW_DECLARE_DWCONV_UKERNEL(qw_qs8_dwconv_ukernel_c8__wasmsimd_dot16x2);
#endif

#endif /* QWASM_DWCONV_H */
