/*
 * Depthwise convolution microkernels, channels-last, one output row per call:
 *   acc[ox][c] = sum_{ky < kh, kx < kw} x[iy(ky)][ox * sw - pl + kx * dw][c] * w[ky][kx][c]
 * with the RAW 8-bit inputs: the input zero point enters as the per-channel constant a_zp * sum_t w[t][c]
 * that the caller folds into the bias (padding reads a_zp, which then cancels exactly).
 *
 * Pair rows. The kernels read their inputs from rows of tap pairs that qw_dwconv_pair_row_ukernel builds once
 * per input row (and that every output row reading that input row shares: kh of them at stride 1):
 *   P[x][c] = (v(x), v(x + dw)) as two int16, v(x) = the input at column x - pl, the zero point outside it,
 * x a column of the padded row. Output ox's taps (kx, kx + 1) are then the 32-bit lane c of column
 * ox * sw + kx * dw, so one i32x4.dot_i16x8_s of 4 channels' pairs with their weight pairs sums two taps with
 * no shuffle in the kernel (the indirection-list kernel this replaces interleaved two taps' inputs for every
 * output: two shuffles and two widening loads per dot). An odd last tap pairs with a zero weight. Channels
 * are padded to a multiple of cr in the pair rows and the accumulator row (zero lanes). A pair row is stored
 * in blocks of cr channels, each block all its columns (qw_dwconv_pair_index): a kernel sweeping one block
 * along the row reads consecutive columns at fixed offsets and only that block's bytes.
 *
 * A depthwise configuration (struct qw_dwconv_config, chosen in src/config.c) carries the layout with the
 * kernels and the packing. Packed weights record (packing, cr) in their header (src/operators/conv2d.c).
 * Layout QW_DWCONV_PACKING_X16_ROW_PAIRS: int16 weights with the weight zero point subtracted (w - w_zp fits
 * int16); per block of cr channels, per kernel row ky, per tap pair j (kx = 2j, 2j + 1): channel lane l's two
 * weights at 2 * l, zero for kx >= kw and for channels past the last:
 *   [c0k0 c0k1 c1k0 c1k1 c2k0 c2k1 c3k0 c3k1]   (cr 4: one vector per pair)
 * then int32 sum_t w[t][c] per channel.
 */
#ifndef QWASM_DWCONV_H
#define QWASM_DWCONV_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm/gemm.h"
#include "requantization/requantization.h"

/* What a config's pack writes (recorded in packed weights' headers). */
enum { QW_DWCONV_PACKING_X16_ROW_PAIRS = 2 };

/* Packs depthwise weights w[c * kh * kw + ky * kw + kx] (8-bit, signed or not) minus
 * zero_points[zp_per_channel ? c : 0] for c < channels, then the per-channel sums, into qw_dwconv_packed_bytes. */
typedef void (*qw_dwconv_pack_fn)(size_t cr, size_t channels, size_t kh, size_t kw, const uint8_t* w, int is_signed,
                                  const int32_t* zero_points, int zp_per_channel, void* packed);

/* Builds one pair row of `columns` stored columns (the layout of qw_dwconv_pair_index for the config's cr):
 * stored column k holds the pairs of padded column k * step, P[k step][c] for c < channels_padded (the kernels
 * read only columns that are multiples of step: qw_dwconv_pair_step), from an input row of in_w pixels of
 * `channels` 8-bit values (row may be NULL when in_w is 0: a padding row). */
typedef void (*qw_dwconv_pair_row_ukernel)(size_t columns, size_t step, size_t channels, size_t channels_padded,
                                          const uint8_t* row, size_t in_w, size_t pad_left, size_t dilation,
                                          int32_t zero_point, int16_t* pairs);

/* One output row of ow pixels: acc[ox * channels_padded + c] = sum over ky < kh, j < pairs of
 * P_ky[ox * column_step + j * pair_step][c] . (w[ky][2j][c], w[ky][2j + 1][c]), rows[ky] the kernel rows'
 * pair rows (qw_dwconv_pair_columns stored columns of step qw_dwconv_pair_step), w the packed weights. */
typedef void (*qw_dwconv_ukernel)(size_t ow, size_t channels_padded, size_t kh, size_t pairs, size_t column_step,
                                  size_t pair_step, const int16_t* const* rows, const void* w, int32_t* acc);

/* One output row straight to 8-bit outputs ([output signed] in the config): the sums qw_dwconv_ukernel computes,
 * requantized by the fp32 rule for fp32_plain parameters (requantization.h) whose bias and multiplier arrays hold
 * channels_padded entries: y[ox * channels + c] for c < channels. acc is scratch of ow * channels_padded int32 for
 * the shapes the kernel does not fuse. The same bytes as ukernel, then the fp32 requantization kernel. */
typedef void (*qw_dwconv_requantizing_ukernel)(size_t ow, size_t channels, size_t channels_padded, size_t kh,
                                               size_t pairs, size_t column_step, size_t pair_step,
                                               const int16_t* const* rows, const void* w,
                                               const struct qw_requantization_params* params, int32_t* acc, void* y);

struct qw_dwconv_config {
  uint8_t cr;      /* channels per packed block: pair rows and accumulators hold round_up(channels, cr) */
  uint8_t packing; /* QW_DWCONV_PACKING_*: the layout pack writes and the kernels read */
  qw_dwconv_ukernel ukernel;
  /* [output signed]: ukernel with the fp32_plain output stage fused (no int32 row between them), or NULL */
  qw_dwconv_requantizing_ukernel fp32_plain[2];
  qw_dwconv_pair_row_ukernel pair_row[2]; /* [activations signed] */
  qw_dwconv_pack_fn pack;
};

/* Tap pairs per kernel row. */
static inline size_t qw_dwconv_pairs(size_t kw) {
  return (kw + 1) / 2;
}

/* The columns the kernels read, ox * column_step + j * pair_step, are multiples of this: the pair rows store only
 * those, column k * step at k (at stride 2, 3x3: every other column, contiguous). */
static inline size_t qw_dwconv_pair_step(size_t column_step, size_t pair_step) {
  size_t a = column_step, b = pair_step;
  while (b != 0) {
    const size_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Stored columns of the pair rows for ow outputs: up to the last column read, (ow - 1) column_step +
 * (pairs - 1) pair_step. */
static inline size_t qw_dwconv_pair_columns(size_t ow, size_t column_step, size_t pairs, size_t pair_step) {
  return ((ow - 1) * column_step + (pairs - 1) * pair_step) / qw_dwconv_pair_step(column_step, pair_step) + 1;
}

/* Index of the int16 pair of channel c at stored column k in a pair row of `columns` stored columns: blocks of
 * cr channels, each block column by column. */
static inline size_t qw_dwconv_pair_index(size_t cr, size_t columns, size_t k, size_t c) {
  return ((c / cr * columns + k) * cr + c % cr) * 2;
}

/* The pairs of channels c_begin..channels_padded of a pair row's stored columns (the qw_dwconv_pair_row_ukernel
 * contract), one value at a time: the scalar kernels' whole row, the SIMD kernels' last channels. */
static inline void qw_dwconv_pair_channels(size_t cr, size_t columns, size_t step, size_t c_begin, size_t channels,
                                           size_t channels_padded, const uint8_t* row, int is_signed, size_t in_w,
                                           size_t pad_left, size_t dilation, int32_t zero_point, int16_t* pairs) {
  for (size_t k = 0; k < columns; k++) {
    const size_t ia = k * step - pad_left, ib = ia + dilation; /* below pad_left these wrap to >= in_w */
    for (size_t c = c_begin; c < channels_padded; c++) {
      int16_t* pair = pairs + qw_dwconv_pair_index(cr, columns, k, c);
      const size_t i[2] = {ia, ib};
      for (size_t j = 0; j < 2; j++) {
        const uint8_t byte = c < channels && i[j] < in_w ? row[i[j] * channels + c] : 0;
        pair[j] = (int16_t)(c >= channels ? 0 : i[j] >= in_w ? zero_point : is_signed ? (int8_t)byte : byte);
      }
    }
  }
}

/* Bytes of packed depthwise weights (int16 weight pairs, then int32 per-channel sums), in 64 bits. */
static inline uint64_t qw_dwconv_packed_bytes(const struct qw_dwconv_config* config, size_t channels, size_t kh,
                                              size_t kw) {
  return (uint64_t)qw_round_up(channels, config->cr) * kh * qw_dwconv_pairs(kw) * 2 * sizeof(int16_t) +
         (uint64_t)channels * sizeof(int32_t);
}

/* The layout word packed-weight headers record. */
static inline uint32_t qw_dwconv_layout(const struct qw_dwconv_config* config) {
  return (uint32_t)config->packing | (uint32_t)config->cr << 8;
}

/* Index of the int16 weight of (channel c, ky, kx) in QW_DWCONV_PACKING_X16_ROW_PAIRS. */
static inline size_t qw_dwconv_row_pairs_index(size_t cr, size_t kh, size_t pairs, size_t c, size_t ky, size_t kx) {
  return ((c / cr * kh + ky) * pairs + kx / 2) * cr * 2 + c % cr * 2 + kx % 2;
}

void qw_pack_x16_row_pairs_dwconv_weights(size_t cr, size_t channels, size_t kh, size_t kw, const uint8_t* w,
                                          int is_signed, const int32_t* zero_points, int zp_per_channel, void* packed);

/* The contracts the microkernels assert on entry. */
#define QW_ASSERT_DWCONV_UKERNEL(CR)                                                                      \
  assert(ow != 0 && channels_padded != 0 && channels_padded % (CR) == 0 && kh != 0 && pairs != 0 &&       \
         column_step != 0 && rows != NULL && w != NULL && acc != NULL)
#define QW_ASSERT_DWCONV_PAIR_ROW_UKERNEL()                                                                  \
  assert(columns != 0 && step != 0 && channels != 0 && channels_padded >= channels && dilation != 0 &&       \
         (row != NULL || in_w == 0) && pairs != NULL)

#define QW_DECLARE_DWCONV_UKERNEL(name)                                                                       \
  void name(size_t ow, size_t channels_padded, size_t kh, size_t pairs, size_t column_step, size_t pair_step, \
            const int16_t* const* rows, const void* w, int32_t* acc)
#define QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(name)                                                           \
  void name(size_t ow, size_t channels, size_t channels_padded, size_t kh, size_t pairs, size_t column_step,   \
            size_t pair_step, const int16_t* const* rows, const void* w,                                      \
            const struct qw_requantization_params* params, int32_t* acc, void* y)
#define QW_DECLARE_DWCONV_PAIR_ROW_UKERNEL(name)                                                             \
  void name(size_t columns, size_t step, size_t channels, size_t channels_padded, const uint8_t* row,        \
            size_t in_w, size_t pad_left, size_t dilation, int32_t zero_point, int16_t* pairs)

QW_DECLARE_DWCONV_UKERNEL(qw_qs16_dwconv_ukernel_c4__scalar);
QW_DECLARE_DWCONV_UKERNEL(qw_qs16_dwconv_ukernel_c8__scalar);
QW_DECLARE_DWCONV_PAIR_ROW_UKERNEL(qw_qu8_dwconv_pair_row_ukernel_c4__scalar);
QW_DECLARE_DWCONV_PAIR_ROW_UKERNEL(qw_qs8_dwconv_pair_row_ukernel_c4__scalar);
QW_DECLARE_DWCONV_PAIR_ROW_UKERNEL(qw_qu8_dwconv_pair_row_ukernel_c8__scalar);
QW_DECLARE_DWCONV_PAIR_ROW_UKERNEL(qw_qs8_dwconv_pair_row_ukernel_c8__scalar);
#if QW_SIMD
QW_DECLARE_DWCONV_UKERNEL(qw_qs16_dwconv_ukernel_c4__wasmsimd_dot16x2);
QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(qw_qs16_qu8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2);
QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(qw_qs16_qs8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2);
QW_DECLARE_DWCONV_PAIR_ROW_UKERNEL(qw_qu8_dwconv_pair_row_ukernel_c4__wasmsimd);
QW_DECLARE_DWCONV_PAIR_ROW_UKERNEL(qw_qs8_dwconv_pair_row_ukernel_c4__wasmsimd);
#endif

#endif /* QWASM_DWCONV_H */
