/*
 * Depthwise convolution microkernels, channels-last, one output row per call:
 *   acc[p][c] = sum_t input[p][t][c] * w[t][c]          (p < pixels, c < channels, t < taps)
 * with the RAW 8-bit inputs: the input zero point enters as the per-channel constant
 * a_zp * sum_t w[t][c] that the caller folds into the bias. input is an indirection list of
 * pixels * taps_padded pointers (pixel-major), each at channel 0 of the tap's input pixel, or at a
 * row of a_zp bytes for padding (which then cancels exactly against the folded constant).
 *
 * Weights are packed once as int16 with the weight zero point subtracted (w - w_zp fits int16):
 * taps padded to an even count with zero weights, and for each block of 8 channels and each pair of
 * taps (t0, t1), two vectors [c0t0 c0t1 c1t0 c1t1 c2t0 c2t1 c3t0 c3t1], [c4t0 ... c7t1], so that
 * i32x4.dot_i16x8_s of the interleaved inputs sums two taps per lane. The channel tail (channels
 * % 8) uses the same layout. After the weights: int32 sum_t w[t][c] per channel.
 */
#ifndef QWASM_DWCONV_H
#define QWASM_DWCONV_H

#include <stddef.h>
#include <stdint.h>

#define QW_DWCONV_CR 8

static inline size_t qw_dwconv_taps_padded(size_t taps) {
  return (taps + 1) & ~(size_t)1;
}

/* Bytes of packed depthwise weights (int16 weights, then int32 per-channel sums). */
static inline size_t qw_dwconv_packed_size(size_t channels, size_t taps) {
  const size_t blocks = (channels + QW_DWCONV_CR - 1) / QW_DWCONV_CR;
  return blocks * qw_dwconv_taps_padded(taps) * QW_DWCONV_CR * sizeof(int16_t) + channels * sizeof(int32_t);
}

/* Index of the int16 weight of (tap t, channel c) in the packed layout. */
static inline size_t qw_dwconv_weight_index(size_t channels, size_t taps, size_t t, size_t c) {
  (void)channels;
  const size_t block = c / QW_DWCONV_CR, lane = c % QW_DWCONV_CR;
  const size_t pair = t / 2;
  return ((block * (qw_dwconv_taps_padded(taps) / 2) + pair) * 2 + lane / 4) * 8 + (lane % 4) * 2 + t % 2;
}

typedef void (*qw_dwconv_ukernel)(size_t pixels, size_t channels, size_t taps, const uint8_t* const* input,
                                  const int16_t* w, int32_t* acc);

#define QW_DECLARE_DWCONV_UKERNEL(name)                                                               \
  void name(size_t pixels, size_t channels, size_t taps, const uint8_t* const* input, const int16_t* w, \
            int32_t* acc)

QW_DECLARE_DWCONV_UKERNEL(qw_qu8_dwconv_ukernel__scalar);
QW_DECLARE_DWCONV_UKERNEL(qw_qs8_dwconv_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_DWCONV_UKERNEL(qw_qu8_dwconv_ukernel_c8__wasmsimd_dot16x2);
QW_DECLARE_DWCONV_UKERNEL(qw_qs8_dwconv_ukernel_c8__wasmsimd_dot16x2);
#endif

#endif /* QWASM_DWCONV_H */
