/*
 * Depthwise convolution microkernels, channels-last, one output row per call:
 *   acc[ox][c] = sum_{ky < kh, kx < kw} x[iy(ky)][ox * sw - pl + kx * dw][c] * w[ky][kx][c]
 * with the RAW 8-bit inputs: the input zero point enters as the per-channel constant a_zp * sum_t w[t][c]
 * that the caller folds into the bias (padding reads a_zp, which then cancels exactly).
 *
 * Pair rows. The kernels read their inputs from rows of tap pairs that a tap-row kernel builds once per input
 * row (and that every output row reading that input row shares: kh of them at stride 1):
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
 *
 * Quad rows (the relaxed-SIMD kernels, dwconv-wasmrelaxed.c): the same with groups of four taps of bytes,
 *   Q[x][c] = (b(x), b(x + dw), b(x + 2 dw), b(x + 3 dw)),  b = the input + x_offset (mod 256),
 * so that one i32x4.relaxed_dot_i8x16_i7x16_add_s sums a 3x3 kernel's whole row for 4 channels. The offset (0, or
 * +-128: the top bit flipped) puts the bytes in the range the engine's relaxed dot multiplies exactly (gemm.h's
 * X8_C4 does the same); the driver folds (zp + x_offset) * sum_t w[t][c] into the bias. A group is 4 bytes per
 * channel and column, as a pair is: both rows have the same size and block structure (qw_dwconv_tap_offset).
 * Layout QW_DWCONV_PACKING_X8_ROW_QUADS: int8 w8 = w - c (c = 0 for qint8, 128 for quint8: always in range); per
 * block of cr channels, per ky, per group j (kx = 4j..4j + 3): channel lane l's four weights at 4 * l, zero past kw
 * and the last channel; then per group j a 16-byte tap mask (byte 4 l + t is 1 where 4 j + t < kw, else 0), int32
 * z = w_zp - c per padded channel (0 past the last) and int32 sum_t w[t][c] per channel. The kernels add
 * sum_t b w8 and, for a block whose z are not all 0, - z sum_t b (the taps' sum of b: a second relaxed dot, with
 * the group's mask), which with the bias's term gives sum_t (a - a_zp)(w - w_zp).
 */
#ifndef QWASM_DWCONV_H
#define QWASM_DWCONV_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm/gemm.h"
#include "requantization/requantization.h"

/* What a config's pack writes (recorded in packed weights' headers). */
enum { QW_DWCONV_PACKING_X16_ROW_PAIRS = 2, QW_DWCONV_PACKING_X8_ROW_QUADS = 3 };

/* Packs depthwise weights w[c * kh * kw + ky * kw + kx] (8-bit, signed or not) minus
 * zero_points[zp_per_channel ? c : 0] for c < channels, then the per-channel sums, into qw_dwconv_packed_bytes. */
typedef void (*qw_dwconv_pack_fn)(size_t cr, size_t channels, size_t kh, size_t kw, const uint8_t* w, int is_signed,
                                  const int32_t* zero_points, int zp_per_channel, void* packed);

/* Builds one tap row (pair row or quad row, the config's) of `columns` stored columns (the layout of
 * qw_dwconv_tap_offset for the config's cr): stored column k holds the taps of padded column k * step for
 * c < channels_padded (the kernels read only columns that are multiples of step: qw_dwconv_row_step), from an input
 * row of in_w pixels of `channels` 8-bit values (row may be NULL when in_w is 0: a padding row). */
typedef void (*qw_dwconv_tap_row_ukernel)(size_t columns, size_t step, size_t channels, size_t channels_padded,
                                          const uint8_t* row, size_t in_w, size_t pad_left, size_t dilation,
                                          int32_t zero_point, void* taps);

/* One output row of ow pixels: acc[ox * channels_padded + c] = sum over ky < kh, j < groups of the taps of
 * rows[ky] at column ox * column_step + j * group_step times the weights of (ky, group j), rows[ky] the kernel rows'
 * tap rows (qw_dwconv_row_columns stored columns of step qw_dwconv_row_step), w the packed weights. */
typedef void (*qw_dwconv_ukernel)(size_t ow, size_t channels_padded, size_t kh, size_t groups, size_t column_step,
                                  size_t group_step, const void* const* rows, const void* w, int32_t* acc);

/* One output row straight to 8-bit outputs ([output signed] in the config): the sums qw_dwconv_ukernel computes,
 * requantized by the fp32 rule for fp32_plain parameters (requantization.h) whose bias and multiplier arrays hold
 * channels_padded entries: y[ox * channels + c] for c < channels. acc is scratch of ow * channels_padded int32 for
 * the shapes the kernel does not fuse. The same bytes as ukernel, then the fp32 requantization kernel. */
typedef void (*qw_dwconv_requantizing_ukernel)(size_t ow, size_t channels, size_t channels_padded, size_t kh,
                                               size_t groups, size_t column_step, size_t group_step,
                                               const void* const* rows, const void* w,
                                               const struct qw_requantization_params* params, int32_t* acc, void* y);

struct qw_dwconv_config {
  uint8_t cr;      /* channels per packed block: tap rows and accumulators hold round_up(channels, cr) */
  uint8_t packing; /* QW_DWCONV_PACKING_*: the layout pack writes and the kernels read */
  uint8_t taps;    /* taps per group: 2 (pair rows of int16) or 4 (quad rows of bytes) */
  int16_t x_offset[2]; /* [activations signed]: what the tap rows add to every input (quad rows: 0 or +-128) */
  qw_dwconv_ukernel ukernel;
  /* [output signed]: ukernel with the fp32_plain output stage fused (no int32 row between them), or NULL */
  qw_dwconv_requantizing_ukernel fp32_plain[2];
  /* [output signed]: fp32_plain over output pairs (below: quad rows, kernel rows of at most 3 taps, stride and
   * dilation 1), or NULL */
  qw_dwconv_requantizing_ukernel fp32_plain_pairs[2];
  qw_dwconv_tap_row_ukernel tap_row[2]; /* [activations signed] */
  qw_dwconv_pack_fn pack;
};

/* Output pairs (quad rows; kernel rows of at most 3 taps, stride 1, dilation 1): the tap rows store every other
 * padded column (step 2, qw_dwconv_pair_columns of them), and outputs 2p and 2p + 1 both read stored column p, whose
 * quads hold the taps of padded columns 2p..2p + 3: output 2p with the weights (w0, w1, w2, 0), output 2p + 1 with them
 * shifted one tap up each 32-bit lane, (0, w0, w1, w2) (the masks of a block with zero points likewise). Half the
 * quad row is built, and each quad loaded serves two outputs. The fp32_plain_pairs kernels take this contract with
 * column_step 1 and group_step 4. */
static inline int qw_dwconv_output_pairs(const struct qw_dwconv_config* config, int y_signed, size_t kernel_w,
                                         size_t stride_w, size_t dilation_w) {
  return config->fp32_plain_pairs[y_signed] != NULL && config->taps == 4 && kernel_w <= 3 && stride_w == 1 &&
         dilation_w == 1;
}

/* Stored columns of output pairs' tap rows for ow outputs. */
static inline size_t qw_dwconv_pair_columns(size_t ow) {
  return (ow + 1) / 2;
}

/* Tap groups per kernel row. */
static inline size_t qw_dwconv_groups(const struct qw_dwconv_config* config, size_t kw) {
  return (kw + config->taps - 1) / config->taps;
}

/* Tap pairs per kernel row (pair rows). */
static inline size_t qw_dwconv_pairs(size_t kw) {
  return (kw + 1) / 2;
}

/* The columns the kernels read, ox * column_step + j * group_step, are multiples of this: the tap rows store only
 * those, column k * step at k (at stride 2, 3x3: every other column, contiguous). */
static inline size_t qw_dwconv_row_step(size_t column_step, size_t group_step) {
  size_t a = column_step, b = group_step;
  while (b != 0) {
    const size_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Stored columns of the tap rows for ow outputs: up to the last column read, (ow - 1) column_step +
 * (groups - 1) group_step. */
static inline size_t qw_dwconv_row_columns(size_t ow, size_t column_step, size_t groups, size_t group_step) {
  return ((ow - 1) * column_step + (groups - 1) * group_step) / qw_dwconv_row_step(column_step, group_step) + 1;
}

/* Byte offset of channel c's group (4 bytes: a pair of int16 or a quad of bytes) at stored column k in a tap row
 * of `columns` stored columns: blocks of cr channels, each block column by column. */
static inline size_t qw_dwconv_tap_offset(size_t cr, size_t columns, size_t k, size_t c) {
  return ((c / cr * columns + k) * cr + c % cr) * 4;
}

/* Index of the int16 pair of channel c at stored column k in a pair row of `columns` stored columns: blocks of
 * cr channels, each block column by column. */
static inline size_t qw_dwconv_pair_index(size_t cr, size_t columns, size_t k, size_t c) {
  return qw_dwconv_tap_offset(cr, columns, k, c) / sizeof(int16_t);
}

/* The pairs of channels c_begin..channels_padded of a pair row's stored columns (the qw_dwconv_tap_row_ukernel
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

/* Bytes of packed depthwise weights (4 bytes per channel, kernel row and group: int16 pairs or int8 quads; the
 * quads' tap masks and int32 zero points; the int32 per-channel sums), in 64 bits. */
static inline uint64_t qw_dwconv_packed_bytes(const struct qw_dwconv_config* config, size_t channels, size_t kh,
                                              size_t kw) {
  const uint64_t cp = qw_round_up(channels, config->cr), groups = qw_dwconv_groups(config, kw);
  return cp * kh * groups * 4 +
         (config->packing == QW_DWCONV_PACKING_X8_ROW_QUADS ? groups * 16 + cp * sizeof(int32_t) : 0) +
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

/* Byte offset of the int8 weight of (channel c, ky, kx) in QW_DWCONV_PACKING_X8_ROW_QUADS. */
static inline size_t qw_dwconv_row_quads_offset(size_t cr, size_t kh, size_t quads, size_t c, size_t ky, size_t kx) {
  return ((c / cr * kh + ky) * quads + kx / 4) * cr * 4 + c % cr * 4 + kx % 4;
}

void qw_pack_x8_row_quads_dwconv_weights(size_t cr, size_t channels, size_t kh, size_t kw, const uint8_t* w,
                                         int is_signed, const int32_t* zero_points, int zp_per_channel, void* packed);

/* The contracts the microkernels assert on entry. */
#define QW_ASSERT_DWCONV_UKERNEL(CR)                                                                      \
  assert(ow != 0 && channels_padded != 0 && channels_padded % (CR) == 0 && kh != 0 && groups != 0 &&      \
         column_step != 0 && rows != NULL && w != NULL && acc != NULL)
#define QW_ASSERT_DWCONV_TAP_ROW_UKERNEL()                                                                   \
  assert(columns != 0 && step != 0 && channels != 0 && channels_padded >= channels && dilation != 0 &&       \
         (row != NULL || in_w == 0) && taps != NULL)

#define QW_DECLARE_DWCONV_UKERNEL(name)                                                                         \
  void name(size_t ow, size_t channels_padded, size_t kh, size_t groups, size_t column_step, size_t group_step, \
            const void* const* rows, const void* w, int32_t* acc)
#define QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(name)                                                           \
  void name(size_t ow, size_t channels, size_t channels_padded, size_t kh, size_t groups, size_t column_step,   \
            size_t group_step, const void* const* rows, const void* w,                                        \
            const struct qw_requantization_params* params, int32_t* acc, void* y)
#define QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(name)                                                              \
  void name(size_t columns, size_t step, size_t channels, size_t channels_padded, const uint8_t* row,        \
            size_t in_w, size_t pad_left, size_t dilation, int32_t zero_point, void* taps)

QW_DECLARE_DWCONV_UKERNEL(qw_qs16_dwconv_ukernel_c4__scalar);
QW_DECLARE_DWCONV_UKERNEL(qw_qs16_dwconv_ukernel_c8__scalar);
QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(qw_qu8_dwconv_pair_row_ukernel_c4__scalar);
QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(qw_qs8_dwconv_pair_row_ukernel_c4__scalar);
QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(qw_qu8_dwconv_pair_row_ukernel_c8__scalar);
QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(qw_qs8_dwconv_pair_row_ukernel_c8__scalar);
#if QW_SIMD
QW_DECLARE_DWCONV_UKERNEL(qw_qs16_dwconv_ukernel_c4__wasmsimd_dot16x2);
QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(qw_qs16_qu8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2);
QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(qw_qs16_qs8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2);
QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(qw_qu8_dwconv_pair_row_ukernel_c4__wasmsimd);
QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(qw_qs8_dwconv_pair_row_ukernel_c4__wasmsimd);
#endif
/* The relaxed-SIMD kernels over quad rows (dwconv-wasmrelaxed.c), per exact semantics of the dot product (gemm.h);
 * the quad rows of bytes copied (x8) or with the top bit flipped (x8_flip). */
#if QW_SIMD && QW_RELAXED
#define QW_DECLARE_RELAXED_DWCONV_UKERNELS(SEMANTICS)                                                     \
  QW_DECLARE_DWCONV_UKERNEL(qw_qs8_dwconv_ukernel_c4__wasmrelaxed_##SEMANTICS);                           \
  QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(qw_qs8_qu8_dwconv_fp32_plain_ukernel_c4__wasmrelaxed_##SEMANTICS); \
  QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(qw_qs8_qs8_dwconv_fp32_plain_ukernel_c4__wasmrelaxed_##SEMANTICS); \
  QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(qw_qs8_qu8_dwconv_fp32_plain_pairs_ukernel_c4__wasmrelaxed_##SEMANTICS); \
  QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(qw_qs8_qs8_dwconv_fp32_plain_pairs_ukernel_c4__wasmrelaxed_##SEMANTICS);
QW_DECLARE_RELAXED_DWCONV_UKERNELS(usdot)
QW_DECLARE_RELAXED_DWCONV_UKERNELS(sdot) /* native builds only: in wasm the sdot table takes the usdot kernels */
QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(qw_x8_dwconv_quad_row_ukernel_c4__wasmsimd);
QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(qw_x8_flip_dwconv_quad_row_ukernel_c4__wasmsimd);
#endif

#endif /* QWASM_DWCONV_H */
