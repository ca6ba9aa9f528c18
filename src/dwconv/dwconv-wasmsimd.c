/* wasm SIMD128 depthwise convolution over pair rows (dwconv.h): one i32x4.dot_i16x8_s per 4 channels and tap
 * pair, reading the pair rows directly. For 3x3 kernels (every depthwise layer of MobileNet v1 / v2) each
 * 4-channel block goes along the row on its own (its pair columns contiguous), outputs four at a time at strides
 * 1 and 2, so that the pair columns they share are loaded once: at stride 1 outputs ox..ox+3 read columns
 * ox..ox+5 of each row (6 loads, not 8), at stride 2 (every other column stored) ox..ox+4. The requantizing
 * kernels start the sums from the bias and requantize them in registers. Other shapes take a plain loop.
 * (XNNPACK's wasmsimd qs8 depthwise kernels, src/qs8-dwconv/unipass-wasmsimd-mul16.c.in, read each tap's input
 * through an indirection pointer and widen and multiply it per tap and output; the pair rows here widen each
 * input once per row, and one dot takes two taps.) */
#include <string.h>

#include "dwconv/dwconv-wasmsimd.h"

/* The helpers below are inlined into each entry point (QW_ALWAYS_INLINE), so that every kernel is compiled for its own
 * output stage and signedness (one function for both kept the stage's constants in memory and branched on them in
 * the loops). */

#define DOT(p, w) wasm_i32x4_dot_i16x8(wasm_v128_load(p), w)

enum { COL = 8 }; /* int16 per pair column of a 4-channel block */

/* One group of g outputs of one block from output ox: p[ky] the block's stored pair columns of kernel row ky, w
 * its weight pair vectors (two per kernel row); output i reads stored columns i CS and i CS + PS of each row (3x3:
 * CS 1, PS 2 at stride 1, PS 1 at stride 2). The columns the outputs share (at stride 1 outputs ox..ox+3 read
 * ox..ox+5: 6 loads, not 8) are loaded once, all at fixed offsets from the row pointers. The kernel rows go in a
 * loop, not unrolled: V8 issues a basic block's loads before its arithmetic, and one row's 6 columns and 2 weights
 * fit in the registers beside the sums where all three rows' spill. A block of all 4 channels leaves as bytes
 * (f, y its first channel of output 0), else as int32 into acc. */
QW_ALWAYS_INLINE void block_group(size_t g, size_t CS, size_t PS, size_t ox, const int16_t* const* p, const int16_t* w,
                               v128_t init, const struct fused_output* f, int y_signed, int bounded, v128_t m,
                               uint8_t* y, size_t c0, int32_t* acc, size_t cp) {
  v128_t s[4] = {init, init, init, init};
  NO_UNROLL for (size_t ky = 0; ky < 3; ky++) {
    const int16_t* r = p[ky] + ox * CS * COL;
    const v128_t w0 = wasm_v128_load(w + 2 * ky * COL), w1 = wasm_v128_load(w + (2 * ky + 1) * COL);
    for (size_t i = 0; i < g; i++) {
      s[i] = wasm_i32x4_add(s[i], wasm_i32x4_add(DOT(r + i * CS * COL, w0), DOT(r + (i * CS + PS) * COL, w1)));
    }
  }
  if (f != NULL) {
    store_outputs(y + ox * f->channels, f->channels, output_bytes(f, y_signed, bounded, s, g, m), g);
  } else {
    for (size_t i = 0; i < g; i++) wasm_v128_store(acc + (ox + i) * cp + c0, s[i]);
  }
}

/* One 4-channel block along the row, 4 outputs per group (strides 1 and 2), the last 1 to 3 in one group. The
 * output stage is copied into locals: the output stores could overwrite *f as far as the compiler knows. */
QW_ALWAYS_INLINE void block_3x3(size_t ow, size_t CS, size_t PS, const int16_t* const* p, const int16_t* w,
                             v128_t init, const struct fused_output* f, int y_signed, int bounded, v128_t m,
                             size_t c0, int32_t* acc, size_t cp) {
  struct fused_output out;
  if (f != NULL) out = *f;
  const struct fused_output* o = f != NULL ? &out : NULL;
  uint8_t* y = f != NULL ? out.y + c0 : NULL;
  if (CS == 1) {
    size_t ox = 0;
    for (; ox + 4 <= ow; ox += 4) block_group(4, CS, PS, ox, p, w, init, o, y_signed, bounded, m, y, c0, acc, cp);
    if (ow - ox == 3) {
      block_group(3, CS, PS, ox, p, w, init, o, y_signed, bounded, m, y, c0, acc, cp);
    } else if (ow - ox == 2) {
      block_group(2, CS, PS, ox, p, w, init, o, y_signed, bounded, m, y, c0, acc, cp);
    } else if (ow - ox == 1) {
      block_group(1, CS, PS, ox, p, w, init, o, y_signed, bounded, m, y, c0, acc, cp);
    }
  } else {
    for (size_t ox = 0; ox < ow; ox++) block_group(1, CS, PS, ox, p, w, init, o, y_signed, bounded, m, y, c0, acc, cp);
  }
}

/* The channels past the last whole block of 4: their sums (from the bias) through acc, requantized output by
 * output. Out of line: the block loop keeps no call. */
static __attribute__((noinline)) void last_block_3x3(size_t ow, size_t CS, size_t PS, const int16_t* const* p,
                                                      const int16_t* w, const struct fused_output* f, int y_signed,
                                                      int bounded, size_t c0, int32_t* acc, size_t cp) {
  const v128_t m = wasm_v128_load(f->multiplier + c0);
  block_3x3(ow, CS, PS, p, w, wasm_v128_load(f->bias + c0), NULL, 0, 0, m, c0, acc, cp);
  const size_t n = f->channels - c0;
  for (size_t ox = 0; ox < ow; ox++) {
    const v128_t sum = wasm_v128_load(acc + ox * cp + c0);
    uint8_t lanes[16];
    wasm_v128_store(lanes, output_bytes(f, y_signed, bounded, &sum, 1, m));
    memcpy(f->y + ox * f->channels + c0, lanes, n);
  }
}

/* 3x3, block by block: each block's three pair-row segments (a few KiB for a whole row) stream from the cache
 * once per output row. With f, the sums start from the bias and leave as bytes; without, as int32 into acc. */
QW_ALWAYS_INLINE void dwconv_3x3(size_t ow, size_t cp, size_t CS, size_t PS, size_t columns,
                              const int16_t* const* rows, const int16_t* w, int32_t* acc,
                              const struct fused_output* f, int y_signed, int bounded) {
  const size_t block = columns * COL;
  for (size_t c0 = 0; c0 < cp; c0 += 4, w += 6 * COL) {
    const int16_t* p[3] = {rows[0] + c0 / 4 * block, rows[1] + c0 / 4 * block, rows[2] + c0 / 4 * block};
    if (f == NULL) {
      block_3x3(ow, CS, PS, p, w, wasm_i32x4_const(0, 0, 0, 0), NULL, 0, 0, wasm_i32x4_const(0, 0, 0, 0), c0,
                acc, cp);
    } else if (c0 + 4 <= f->channels) {
      block_3x3(ow, CS, PS, p, w, wasm_v128_load(f->bias + c0), f, y_signed, bounded,
                wasm_v128_load(f->multiplier + c0), c0, acc, cp);
    } else {
      last_block_3x3(ow, CS, PS, p, w, f, y_signed, bounded, c0, acc, cp);
    }
  }
}

/* 3x3 at strides 1 and 2 (stored columns i and i + 2, or i and i + 1, for output i), each stride its own function
 * (inlined into one, the compiler merges the two strides' loops into one that keeps the pair offset in a register):
 * to int32 sums (f NULL), or fused for fp32_bounded parameters. */
#define QW_DWCONV_3X3_STRIDE(name, S, PS)                                                                      \
  static __attribute__((noinline)) void name(size_t ow, size_t cp, const int16_t* const* rows, const int16_t* w, \
                                             int32_t* acc, const struct fused_output* f, int y_signed) {        \
    const size_t columns = qw_dwconv_row_columns(ow, S, 2, 2);                                                 \
    if (f == NULL) {                                                                                            \
      dwconv_3x3(ow, cp, 1, PS, columns, rows, w, acc, NULL, 0, 0);                                             \
    } else if (y_signed) {                                                                                      \
      dwconv_3x3(ow, cp, 1, PS, columns, rows, w, acc, f, 1, 1);                                                \
    } else {                                                                                                    \
      dwconv_3x3(ow, cp, 1, PS, columns, rows, w, acc, f, 0, 1);                                                \
    }                                                                                                           \
  }

QW_DWCONV_3X3_STRIDE(dwconv_3x3_s1, 1, 2)
QW_DWCONV_3X3_STRIDE(dwconv_3x3_s2, 2, 1)

/* Other strides: int32 sums only. */
static void dwconv_3x3_sn(size_t ow, size_t cp, size_t column_step, const int16_t* const* rows, const int16_t* w,
                          int32_t* acc) {
  const size_t step = qw_dwconv_row_step(column_step, 2);
  dwconv_3x3(ow, cp, column_step / step, 2 / step, qw_dwconv_row_columns(ow, column_step, 2, 2), rows, w, acc, NULL,
             0, 0);
}

/* Any shape: one output and 4 channels at a time, the taps in a loop. */
static void dwconv_any(size_t ow, size_t cp, size_t kh, size_t pairs, size_t column_step, size_t pair_step,
                       const int16_t* const* rows, const int16_t* wt, int32_t* acc) {
  const size_t block = qw_dwconv_row_columns(ow, column_step, pairs, pair_step) * COL;
  const size_t step = qw_dwconv_row_step(column_step, pair_step);
  const size_t cs = column_step / step * COL, ps = pair_step / step * COL;
  for (size_t c0 = 0; c0 < cp; c0 += 4, wt += kh * pairs * 8) {
    for (size_t ox = 0; ox < ow; ox++) {
      v128_t sum = wasm_i32x4_const(0, 0, 0, 0);
      const int16_t* wk = wt;
      for (size_t ky = 0; ky < kh; ky++) {
        const int16_t* p = rows[ky] + c0 / 4 * block + ox * cs;
        for (size_t j = 0; j < pairs; j++, p += ps, wk += 8) {
          sum = wasm_i32x4_add(sum, DOT(p, wasm_v128_load(wk)));
        }
      }
      wasm_v128_store(acc + ox * cp + c0, sum);
    }
  }
}

static int is_3x3(size_t kh, size_t pairs, size_t pair_step) {
  return kh == 3 && pairs == 2 && pair_step == 2;
}

/* The int32 sums of any shape into acc. */
static void dwconv_sums(size_t ow, size_t cp, size_t kh, size_t pairs, size_t column_step, size_t pair_step,
                        const int16_t* const* rows, const int16_t* w, int32_t* acc) {
  if (!is_3x3(kh, pairs, pair_step)) {
    dwconv_any(ow, cp, kh, pairs, column_step, pair_step, rows, w, acc);
  } else if (column_step == 1) {
    dwconv_3x3_s1(ow, cp, rows, w, acc, NULL, 0);
  } else if (column_step == 2) {
    dwconv_3x3_s2(ow, cp, rows, w, acc, NULL, 0);
  } else {
    dwconv_3x3_sn(ow, cp, column_step, rows, w, acc);
  }
}

QW_DECLARE_DWCONV_UKERNEL(qw_qs16_dwconv_ukernel_c4__wasmsimd_dot16x2) {
  QW_ASSERT_DWCONV_UKERNEL(4);
  dwconv_sums(ow, channels_padded, kh, groups, column_step, group_step, (const int16_t* const*)rows, (const int16_t*)w,
              acc);
}

/* 3x3 at strides 1 and 2 with fp32_bounded parameters fused (every real layer: the bound fails only for
 * multipliers or biases far outside any trained network's); the rest through the accumulator row, then
 * requantized output by output. */
QW_ALWAYS_INLINE void dwconv_fp32_plain(size_t ow, size_t channels, size_t cp, size_t kh, size_t pairs,
                                     size_t column_step, size_t pair_step, const int16_t* const* rows,
                                     const int16_t* w, const struct qw_requantization_params* params, int32_t* acc,
                                     void* y, int y_signed) {
  const struct fused_output f = {.channels = channels, .bias = params->bias, .multiplier = params->multiplier,
                                 .k = qw_fp32_constants(params), .qmin = wasm_i8x16_splat((int8_t)params->qmin),
                                 .qmax = wasm_i8x16_splat((int8_t)params->qmax), .y = (uint8_t*)y};
  if (is_3x3(kh, pairs, pair_step) && params->fp32_bounded && column_step <= 2) {
    (column_step == 1 ? dwconv_3x3_s1 : dwconv_3x3_s2)(ow, cp, rows, w, acc, &f, y_signed);
    return;
  }
  dwconv_sums(ow, cp, kh, pairs, column_step, pair_step, rows, w, acc);
  for (size_t ox = 0; ox < ow; ox++) {
    for (size_t c0 = 0; c0 < channels; c0 += 4) {
      const v128_t sum = wasm_i32x4_add(wasm_v128_load(acc + ox * cp + c0), wasm_v128_load(f.bias + c0));
      uint8_t lanes[16];
      wasm_v128_store(lanes, output_bytes(&f, y_signed, 0, &sum, 1, wasm_v128_load(f.multiplier + c0)));
      memcpy(f.y + ox * channels + c0, lanes, channels - c0 < 4 ? channels - c0 : 4);
    }
  }
}

#define QW_DWCONV_FP32_PLAIN_WASMSIMD(name, Y_SIGNED)                                                         \
  QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(name) {                                                              \
    QW_ASSERT_DWCONV_UKERNEL(4);                                                                              \
    assert(channels != 0 && channels <= channels_padded && params != NULL && params->fp32_plain && y != NULL); \
    dwconv_fp32_plain(ow, channels, channels_padded, kh, groups, column_step, group_step,                  \
                      (const int16_t* const*)rows, (const int16_t*)w, params, acc, y, Y_SIGNED);             \
  }

QW_DWCONV_FP32_PLAIN_WASMSIMD(qw_qs16_qu8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2, 0)
QW_DWCONV_FP32_PLAIN_WASMSIMD(qw_qs16_qs8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2, 1)

/* The pairs of 8 channels' inputs a and b (widened) into two blocks' columns: out, and out + block. */
QW_ALWAYS_INLINE void store_pairs(int16_t* out, size_t block, v128_t a, v128_t b) {
  wasm_v128_store(out, wasm_i16x8_shuffle(a, b, 0, 8, 1, 9, 2, 10, 3, 11));
  wasm_v128_store(out + block, wasm_i16x8_shuffle(a, b, 4, 12, 5, 13, 6, 14, 7, 15));
}

/* One pair row's stored columns k_lo..k_hi (inputs all inside the row) of H * 8 channels from c: at dilation 1 and
 * step 1 each input column loaded once (the second of one pair, the first of the next). */
#define QW_DWCONV_PAIR_COLUMNS_INNER(T, LOAD8, H)                                                           \
  QW_ALWAYS_INLINE void pair_columns_inner_##T##_##H(const T* a, size_t channels, size_t step, size_t dilation, \
                                                  size_t k, size_t k_hi, int16_t* out, size_t block) {      \
    if (step == 1 && dilation == 1) {                                                                       \
      v128_t va[H];                                                                                         \
      for (size_t h = 0; h < H; h++) va[h] = LOAD8(a + 8 * h);                                              \
      for (; k < k_hi; k++, a += channels) {                                                                \
        for (size_t h = 0; h < H; h++) {                                                                    \
          const v128_t vb = LOAD8(a + channels + 8 * h);                                                    \
          store_pairs(out + 2 * h * block + k * COL, block, va[h], vb);                                     \
          va[h] = vb;                                                                                       \
        }                                                                                                   \
      }                                                                                                     \
    } else {                                                                                                \
      for (; k < k_hi; k++, a += step * channels) {                                                         \
        for (size_t h = 0; h < H; h++) {                                                                    \
          store_pairs(out + 2 * h * block + k * COL, block, LOAD8(a + 8 * h), LOAD8(a + dilation * channels + 8 * h)); \
        }                                                                                                   \
      }                                                                                                     \
    }                                                                                                       \
  }

QW_DWCONV_PAIR_COLUMNS_INNER(uint8_t, wasm_u16x8_load8x8, 1)
QW_DWCONV_PAIR_COLUMNS_INNER(uint8_t, wasm_u16x8_load8x8, 2)
QW_DWCONV_PAIR_COLUMNS_INNER(int8_t, wasm_i16x8_load8x8, 1)
QW_DWCONV_PAIR_COLUMNS_INNER(int8_t, wasm_i16x8_load8x8, 2)

/* 8 channels (two blocks) per step. Long rows go 16 channels (four blocks) at a time along the row, so that the
 * stores stream along the blocks, and the columns whose inputs both lie inside the row take a loop without the
 * padding tests; short rows (deep layers: few columns, many channels) column by column, all channels each. The
 * channels past the last 8 one at a time. */
#define QW_DWCONV_PAIR_ROW_WASMSIMD(name, T, LOAD8, IS_SIGNED)                                                          \
  QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(name) {                                                                 \
    QW_ASSERT_DWCONV_TAP_ROW_UKERNEL();                                                                     \
    int16_t* pairs = (int16_t*)taps;                                                                        \
    const v128_t vzp = wasm_i16x8_splat((int16_t)zero_point);                                              \
    const T* in = (const T*)row;                                                                            \
    const size_t block = columns * COL, c8 = channels / 8 * 8;                                              \
    if (columns >= 16) {                                                                                    \
      /* the stored columns k whose inputs k step - pad_left and + dilation both lie in [0, in_w) */        \
      size_t k_lo = (pad_left + step - 1) / step;                                                           \
      size_t k_hi = in_w > dilation ? (pad_left + in_w - dilation + step - 1) / step : 0;                   \
      if (k_hi > columns) k_hi = columns;                                                                   \
      if (k_lo >= k_hi) k_lo = k_hi = columns;                                                              \
      for (size_t c = 0; c < c8;) {                                                                         \
        const size_t n = c + 16 <= c8 ? 16 : 8;                                                             \
        int16_t* out = pairs + c / 4 * block;                                                               \
        for (size_t k = 0; k < columns; k++) {                                                              \
          if (k == k_lo) {                                                                                  \
            const T* a = in + (k * step - pad_left) * channels + c;                                         \
            if (n == 16) {                                                                                  \
              pair_columns_inner_##T##_2(a, channels, step, dilation, k, k_hi, out, block);                \
            } else {                                                                                        \
              pair_columns_inner_##T##_1(a, channels, step, dilation, k, k_hi, out, block);                \
            }                                                                                               \
            k = k_hi;                                                                                       \
            if (k == columns) break;                                                                        \
          }                                                                                                 \
          const size_t ia = k * step - pad_left, ib = ia + dilation; /* below pad_left: wrap to >= in_w */   \
          for (size_t h = 0; h < n; h += 8) {                                                               \
            store_pairs(out + h / 4 * block + k * COL, block, ia < in_w ? LOAD8(in + ia * channels + c + h) : vzp, \
                        ib < in_w ? LOAD8(in + ib * channels + c + h) : vzp);                               \
          }                                                                                                 \
        }                                                                                                   \
        c += n;                                                                                             \
      }                                                                                                     \
    } else {                                                                                                \
      for (size_t k = 0; k < columns; k++) {                                                                \
        const size_t ia = k * step - pad_left, ib = ia + dilation;                                          \
        const T* a = ia < in_w ? in + ia * channels : NULL;                                                 \
        const T* b = ib < in_w ? in + ib * channels : NULL;                                                 \
        int16_t* out = pairs + k * COL;                                                                     \
        if (a != NULL && b != NULL) {                                                                       \
          for (size_t c = 0; c < c8; c += 8) store_pairs(out + c / 4 * block, block, LOAD8(a + c), LOAD8(b + c)); \
        } else {                                                                                            \
          for (size_t c = 0; c < c8; c += 8) {                                                              \
            store_pairs(out + c / 4 * block, block, a != NULL ? LOAD8(a + c) : vzp, b != NULL ? LOAD8(b + c) : vzp); \
          }                                                                                                 \
        }                                                                                                   \
      }                                                                                                     \
    }                                                                                                       \
    qw_dwconv_pair_channels(4, columns, step, c8, channels, channels_padded, row, IS_SIGNED, in_w, pad_left,     \
                            dilation, zero_point, pairs);                                                   \
  }

QW_DWCONV_PAIR_ROW_WASMSIMD(qw_qu8_dwconv_pair_row_ukernel_c4__wasmsimd, uint8_t, wasm_u16x8_load8x8, 0)
QW_DWCONV_PAIR_ROW_WASMSIMD(qw_qs8_dwconv_pair_row_ukernel_c4__wasmsimd, int8_t, wasm_i16x8_load8x8, 1)
