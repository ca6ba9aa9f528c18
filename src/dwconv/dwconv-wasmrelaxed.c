/* Depthwise convolution on the relaxed-SIMD dot product over quad rows (dwconv.h): one
 * i32x4.relaxed_dot_i8x16_i7x16_add_s per 4 channels and group of 4 taps, so that a 3x3 kernel's row costs one
 * instruction where the SIMD128 kernels over pair rows take two dots and two adds. The instruction is exact only
 * under the semantics js/runtime/relaxed.js finds (usdot: the quad bytes unsigned; sdot: signed), and qwasm runs
 * these kernels only there, with the quad rows built in that range (dwconv.h: x_offset). For 3x3 at column steps of
 * one stored column (strides 1 and 2) with symmetric weights (every z of dwconv.h 0) and fp32_bounded parameters,
 * each 4-channel block goes along the row eight outputs at a time with the output stage fused; other shapes, weight
 * zero points and parameters take a plain loop through the accumulator row. */
#include "dwconv/dwconv-wasmsimd.h"

enum { QUAD_COL = 16 }; /* bytes per stored column of a 4-channel block */

/* The dot product under the kernel's semantics (the same instruction in the relaxed build). */
#define DOT(w, q, acc) (B_SIGNED ? QW_RELAXED_SDOT(w, q, acc) : QW_RELAXED_USDOT(w, q, acc))

/* The parts of packed weights after the quads (dwconv.h): the groups' tap masks and the int32 z per channel. */
static const uint8_t* quad_masks(const void* w, size_t cp, size_t kh, size_t groups) {
  return (const uint8_t*)w + cp * kh * groups * 4;
}
static const int32_t* quad_zero_points(const void* w, size_t cp, size_t kh, size_t groups) {
  return (const int32_t*)(quad_masks(w, cp, kh, groups) + groups * QUAD_COL);
}

/* Output pairs (dwconv.h): the weights (or masks) of a lane shifted one tap up, (t0, t1, t2, 0) -> (0, t0, t1, t2). */
QW_ALWAYS_INLINE v128_t next_tap(v128_t v) {
  return wasm_i32x4_shl(v, 8);
}

/* The int32 sums of channels c_begin..cp (a multiple of 4) of any shape into acc, output by output: sum_t b w8, minus
 * z sum_t b for a block whose weights have zero points (z not all 0). PAIRED: output pairs (one group). */
QW_ALWAYS_INLINE void quad_sums(size_t c_begin, size_t ow, size_t cp, size_t kh, size_t groups, size_t column_step,
                                size_t group_step, const uint8_t* const* rows, const void* w, int32_t* acc,
                                int B_SIGNED, int PAIRED) {
  const size_t step = PAIRED ? 2 : qw_dwconv_row_step(column_step, group_step);
  const size_t block =
      (PAIRED ? qw_dwconv_pair_columns(ow) : qw_dwconv_row_columns(ow, column_step, groups, group_step)) * QUAD_COL;
  const size_t cs = PAIRED ? QUAD_COL : column_step / step * QUAD_COL, gs = group_step / step * QUAD_COL;
  const uint8_t* masks = quad_masks(w, cp, kh, groups);
  const int32_t* z = quad_zero_points(w, cp, kh, groups);
  const int8_t* wt = (const int8_t*)w + c_begin / 4 * kh * groups * QUAD_COL;
  for (size_t c0 = c_begin; c0 < cp; c0 += 4, wt += kh * groups * QUAD_COL) {
    const v128_t vz = wasm_v128_load(z + c0);
    const int zero_points = wasm_v128_any_true(vz);
    for (size_t ox = 0; ox < ow; ox++) {
      v128_t sum = wasm_i32x4_const(0, 0, 0, 0), bsum = sum;
      const int8_t* wk = wt;
      const int shifted = PAIRED && ox % 2 != 0;
      for (size_t ky = 0; ky < kh; ky++) {
        const uint8_t* q = rows[ky] + c0 / 4 * block + (PAIRED ? ox / 2 : ox) * cs;
        for (size_t j = 0; j < groups; j++, q += gs, wk += QUAD_COL) {
          const v128_t taps = wasm_v128_load(q), wv = wasm_v128_load(wk);
          sum = DOT(shifted ? next_tap(wv) : wv, taps, sum);
          if (zero_points) {
            const v128_t mask = wasm_v128_load(masks + j * QUAD_COL);
            bsum = DOT(shifted ? next_tap(mask) : mask, taps, bsum);
          }
        }
      }
      wasm_v128_store(acc + ox * cp + c0, wasm_i32x4_sub(sum, wasm_i32x4_mul(vz, bsum)));
    }
  }
}

/* One group of g (1 to 8) outputs of one 4-channel block from output ox, 3x3 at one stored column per output, or
 * PAIRED one per two outputs (ox even; dwconv.h output pairs: each quad loaded once for both): q[ky] the block's quad
 * columns of kernel row ky, w its three weight vectors. The kernel rows go in a loop, not unrolled, as in the SIMD128
 * kernel (V8 issues a basic block's loads before its arithmetic). */
QW_ALWAYS_INLINE void quad_group_3x3(size_t g, size_t ox, const uint8_t* const* q, const int8_t* w, v128_t init,
                                     const struct fused_output* f, int y_signed, v128_t m, uint8_t* y, int B_SIGNED,
                                     int PAIRED) {
  v128_t s[8];
  for (size_t i = 0; i < g; i++) s[i] = init;
  NO_UNROLL for (size_t ky = 0; ky < 3; ky++) {
    const uint8_t* r = q[ky] + (PAIRED ? ox / 2 : ox) * QUAD_COL;
    const v128_t wv = wasm_v128_load(w + ky * QUAD_COL);
    const v128_t w_next = PAIRED ? next_tap(wv) : wv;
    for (size_t i = 0; i < g; i++) {
      const v128_t taps = wasm_v128_load(r + (PAIRED ? i / 2 : i) * QUAD_COL);
      s[i] = DOT(PAIRED && i % 2 != 0 ? w_next : wv, taps, s[i]);
    }
  }
  for (size_t i = 0; i < g; i += 4) {
    const size_t n = g - i < 4 ? g - i : 4;
    store_outputs(y + (ox + i) * f->channels, f->channels, output_bytes(f, y_signed, 1, s + i, n, m), n);
  }
}

/* 3x3, the whole blocks of 4 channels below `blocks_end`, fused for fp32_bounded parameters. The output stage is
 * copied into locals: the output stores could overwrite *f as far as the compiler knows. */
QW_ALWAYS_INLINE void quad_rows_3x3(size_t ow, size_t blocks_end, size_t columns, const uint8_t* const* rows,
                                    const int8_t* w, const struct fused_output* f, int y_signed, int B_SIGNED,
                                    int PAIRED) {
  const struct fused_output out = *f;
  const size_t block = columns * QUAD_COL;
  for (size_t c0 = 0; c0 < blocks_end; c0 += 4, w += 3 * QUAD_COL) {
    const uint8_t* q[3] = {rows[0] + c0 / 4 * block, rows[1] + c0 / 4 * block, rows[2] + c0 / 4 * block};
    const v128_t init = wasm_v128_load(out.bias + c0), m = wasm_v128_load(out.multiplier + c0);
    uint8_t* y = out.y + c0;
    size_t ox = 0;
    for (; ox + 8 <= ow; ox += 8) quad_group_3x3(8, ox, q, w, init, &out, y_signed, m, y, B_SIGNED, PAIRED);
    if (ox + 4 <= ow) {
      quad_group_3x3(4, ox, q, w, init, &out, y_signed, m, y, B_SIGNED, PAIRED);
      ox += 4;
    }
    if (ow - ox == 3) {
      quad_group_3x3(3, ox, q, w, init, &out, y_signed, m, y, B_SIGNED, PAIRED);
    } else if (ow - ox == 2) {
      quad_group_3x3(2, ox, q, w, init, &out, y_signed, m, y, B_SIGNED, PAIRED);
    } else if (ow - ox == 1) {
      quad_group_3x3(1, ox, q, w, init, &out, y_signed, m, y, B_SIGNED, PAIRED);
    }
  }
}

/* Whether every weight zero point z of dwconv.h is 0 (symmetric weights: no sum_t b term). */
static int symmetric(const int32_t* z, size_t cp) {
  v128_t any = wasm_i32x4_const(0, 0, 0, 0);
  for (size_t c = 0; c < cp; c += 4) any = wasm_v128_or(any, wasm_v128_load(z + c));
  return !wasm_v128_any_true(any);
}

/* One output row to bytes: 3x3 at one stored column per output (strides 1 and 2) or output pairs (PAIRED), with
 * symmetric weights and fp32_bounded parameters, in quad_rows_3x3 (every real layer of MobileNet), the rest (a last
 * partial block, other shapes) through acc, then requantized output by output. */
QW_ALWAYS_INLINE void quad_fp32_plain(size_t ow, size_t channels, size_t cp, size_t kh, size_t groups,
                                      size_t column_step, size_t group_step, const uint8_t* const* rows, const void* w,
                                      const struct qw_requantization_params* params, int32_t* acc, void* y,
                                      int y_signed, int B_SIGNED, int PAIRED) {
  const struct fused_output f = {.channels = channels, .bias = params->bias, .multiplier = params->multiplier,
                                 .k = qw_fp32_constants(params), .qmin = wasm_i8x16_splat((int8_t)params->qmin),
                                 .qmax = wasm_i8x16_splat((int8_t)params->qmax), .y = (uint8_t*)y};
  size_t done = 0; /* channels written as bytes */
  if (kh == 3 && groups == 1 && (PAIRED || column_step == qw_dwconv_row_step(column_step, group_step)) &&
      params->fp32_bounded && symmetric(quad_zero_points(w, cp, kh, groups), cp)) {
    done = channels / 4 * 4;
    const size_t columns = PAIRED ? qw_dwconv_pair_columns(ow) : qw_dwconv_row_columns(ow, column_step, 1, group_step);
    if (y_signed) {
      quad_rows_3x3(ow, done, columns, rows, (const int8_t*)w, &f, 1, B_SIGNED, PAIRED);
    } else {
      quad_rows_3x3(ow, done, columns, rows, (const int8_t*)w, &f, 0, B_SIGNED, PAIRED);
    }
    if (done == channels) return;
  }
  quad_sums(done, ow, cp, kh, groups, column_step, group_step, rows, w, acc, B_SIGNED, PAIRED);
  for (size_t ox = 0; ox < ow; ox++) {
    for (size_t c0 = done; c0 < channels; c0 += 4) {
      const v128_t sum = wasm_i32x4_add(wasm_v128_load(acc + ox * cp + c0), wasm_v128_load(f.bias + c0));
      uint8_t lanes[16];
      wasm_v128_store(lanes, output_bytes(&f, y_signed, 0, &sum, 1, wasm_v128_load(f.multiplier + c0)));
      memcpy(f.y + ox * channels + c0, lanes, channels - c0 < 4 ? channels - c0 : 4);
    }
  }
}

/* One requantizing entry point: Y_SIGNED the output type, PAIRED the output-pair contract (dwconv.h). */
#define QW_DWCONV_FP32_WASMRELAXED(name, B_SIGNED, Y_SIGNED, PAIRED)                                         \
  QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(name) {                                                             \
    QW_ASSERT_DWCONV_UKERNEL(4);                                                                             \
    assert(!(PAIRED) || (groups == 1 && column_step == 1 && group_step == 4));                               \
    assert(channels != 0 && channels <= channels_padded && params != NULL && params->fp32_plain && y != NULL); \
    quad_fp32_plain(ow, channels, channels_padded, kh, groups, column_step, group_step,                      \
                    (const uint8_t* const*)rows, w, params, acc, y, Y_SIGNED, B_SIGNED, PAIRED);             \
  }

#define QW_DWCONV_WASMRELAXED(SEMANTICS, B_SIGNED)                                                           \
  QW_DECLARE_DWCONV_UKERNEL(qw_qs8_dwconv_ukernel_c4__wasmrelaxed_##SEMANTICS) {                             \
    QW_ASSERT_DWCONV_UKERNEL(4);                                                                             \
    quad_sums(0, ow, channels_padded, kh, groups, column_step, group_step, (const uint8_t* const*)rows, w, acc, \
              B_SIGNED, 0);                                                                                  \
  }                                                                                                          \
  QW_DWCONV_FP32_WASMRELAXED(qw_qs8_qu8_dwconv_fp32_plain_ukernel_c4__wasmrelaxed_##SEMANTICS, B_SIGNED, 0, 0) \
  QW_DWCONV_FP32_WASMRELAXED(qw_qs8_qs8_dwconv_fp32_plain_ukernel_c4__wasmrelaxed_##SEMANTICS, B_SIGNED, 1, 0) \
  QW_DWCONV_FP32_WASMRELAXED(qw_qs8_qu8_dwconv_fp32_plain_pairs_ukernel_c4__wasmrelaxed_##SEMANTICS, B_SIGNED, 0, 1) \
  QW_DWCONV_FP32_WASMRELAXED(qw_qs8_qs8_dwconv_fp32_plain_pairs_ukernel_c4__wasmrelaxed_##SEMANTICS, B_SIGNED, 1, 1)

QW_DWCONV_WASMRELAXED(usdot, 0)
#if !defined(__wasm_relaxed_simd__) /* in wasm both are the one instruction: the sdot table takes the usdot kernels */
QW_DWCONV_WASMRELAXED(sdot, 1)
#endif

/* The quads of 16 channels at one stored column from the four taps' input vectors v[t] (16 channels each): two rounds
 * of byte and 16-bit interleaves give block q's channel 4q + l taps at bytes 4l..4l+3; block q goes to o + q block. */
QW_ALWAYS_INLINE void store_quads(uint8_t* o, size_t block, v128_t v0, v128_t v1, v128_t v2, v128_t v3) {
  const v128_t a0 = wasm_i8x16_shuffle(v0, v1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t a1 = wasm_i8x16_shuffle(v0, v1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const v128_t b0 = wasm_i8x16_shuffle(v2, v3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t b1 = wasm_i8x16_shuffle(v2, v3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  wasm_v128_store(o, wasm_i16x8_shuffle(a0, b0, 0, 8, 1, 9, 2, 10, 3, 11));
  wasm_v128_store(o + block, wasm_i16x8_shuffle(a0, b0, 4, 12, 5, 13, 6, 14, 7, 15));
  wasm_v128_store(o + 2 * block, wasm_i16x8_shuffle(a1, b1, 0, 8, 1, 9, 2, 10, 3, 11));
  wasm_v128_store(o + 3 * block, wasm_i16x8_shuffle(a1, b1, 4, 12, 5, 13, 6, 14, 7, 15));
}

/* Quad rows (dwconv.h) of bytes b = input ^ FLIP, 16 channels (four blocks) at a time along the row: the columns
 * whose four taps all lie inside the row take a loop without tests, at step and dilation 1 loading one input column
 * per stored column (the other three taps are the previous columns'), at step 2 (output pairs) two; the columns at the
 * ends take the flipped zero point for their taps outside the row. The channels past the last 16 go byte by byte
 * (channels past the last: 0). Needs no relaxed instruction. (Column by column with every tap tested, the rows took a third of MobileNetV2's
 * depthwise time in Chromium.) */
#define QW_DWCONV_QUAD_ROW(name, FLIP)                                                                       \
  QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(name) {                                                                  \
    QW_ASSERT_DWCONV_TAP_ROW_UKERNEL();                                                                      \
    uint8_t* out = (uint8_t*)taps;                                                                           \
    const size_t block = columns * QUAD_COL, c16 = channels / 16 * 16, span = 3 * dilation;                  \
    const v128_t vflip = wasm_i8x16_splat((int8_t)(FLIP));                                                   \
    const uint8_t zp = (uint8_t)((uint8_t)zero_point ^ (FLIP));                                              \
    const v128_t vzp = wasm_i8x16_splat((int8_t)zp);                                                         \
    /* the stored columns k whose taps k step - pad_left .. + 3 dilation all lie in [0, in_w) */             \
    size_t k_lo = (pad_left + step - 1) / step;                                                              \
    size_t k_hi = in_w > span ? (pad_left + in_w - span + step - 1) / step : 0;                              \
    if (k_hi > columns) k_hi = columns;                                                                      \
    if (k_lo >= k_hi) k_lo = k_hi = columns;                                                                 \
    for (size_t c = 0; c < c16; c += 16) {                                                                   \
      uint8_t* o = out + c / 4 * block;                                                                      \
      for (size_t k = 0; k < columns; k++) {                                                                 \
        if (k == k_lo) {                                                                                     \
          const uint8_t* a = row + (k * step - pad_left) * channels + c;                                     \
          if (step == 1 && dilation == 1) {                                                                  \
            v128_t v0 = wasm_v128_xor(wasm_v128_load(a), vflip);                                             \
            v128_t v1 = wasm_v128_xor(wasm_v128_load(a + channels), vflip);                                  \
            v128_t v2 = wasm_v128_xor(wasm_v128_load(a + 2 * channels), vflip);                              \
            for (a += 3 * channels; k < k_hi; k++, a += channels) {                                          \
              const v128_t v3 = wasm_v128_xor(wasm_v128_load(a), vflip);                                     \
              store_quads(o + k * QUAD_COL, block, v0, v1, v2, v3);                                          \
              v0 = v1;                                                                                       \
              v1 = v2;                                                                                       \
              v2 = v3;                                                                                       \
            }                                                                                                \
          } else if (step == 2 && dilation == 1) { /* output pairs: two input columns per stored column */   \
            v128_t v0 = wasm_v128_xor(wasm_v128_load(a), vflip);                                             \
            v128_t v1 = wasm_v128_xor(wasm_v128_load(a + channels), vflip);                                  \
            for (a += 2 * channels; k < k_hi; k++, a += 2 * channels) {                                      \
              const v128_t v2 = wasm_v128_xor(wasm_v128_load(a), vflip);                                     \
              const v128_t v3 = wasm_v128_xor(wasm_v128_load(a + channels), vflip);                          \
              store_quads(o + k * QUAD_COL, block, v0, v1, v2, v3);                                          \
              v0 = v2;                                                                                       \
              v1 = v3;                                                                                       \
            }                                                                                                \
          } else {                                                                                           \
            const size_t d = dilation * channels;                                                            \
            for (; k < k_hi; k++, a += step * channels) {                                                    \
              store_quads(o + k * QUAD_COL, block, wasm_v128_xor(wasm_v128_load(a), vflip),                  \
                          wasm_v128_xor(wasm_v128_load(a + d), vflip), wasm_v128_xor(wasm_v128_load(a + 2 * d), vflip), \
                          wasm_v128_xor(wasm_v128_load(a + 3 * d), vflip));                                  \
            }                                                                                                \
          }                                                                                                  \
          if (k == columns) break;                                                                           \
        }                                                                                                    \
        v128_t v[4];                                                                                         \
        for (size_t t = 0; t < 4; t++) {                                                                     \
          const size_t i = k * step - pad_left + t * dilation; /* below pad_left: wraps to >= in_w */        \
          v[t] = i < in_w ? wasm_v128_xor(wasm_v128_load(row + i * channels + c), vflip) : vzp;              \
        }                                                                                                    \
        store_quads(o + k * QUAD_COL, block, v[0], v[1], v[2], v[3]);                                        \
      }                                                                                                      \
    }                                                                                                        \
    for (size_t k = 0; k < columns; k++) {                                                                   \
      for (size_t c = c16; c < channels_padded; c++) {                                                       \
        uint8_t* quad = out + qw_dwconv_tap_offset(4, columns, k, c);                                        \
        for (size_t t = 0; t < 4; t++) {                                                                     \
          const size_t i = k * step - pad_left + t * dilation;                                               \
          quad[t] = c >= channels ? 0 : i < in_w ? (uint8_t)(row[i * channels + c] ^ (FLIP)) : zp;          \
        }                                                                                                    \
      }                                                                                                      \
    }                                                                                                        \
  }

QW_DWCONV_QUAD_ROW(qw_x8_dwconv_quad_row_ukernel_c4__wasmsimd, 0)
QW_DWCONV_QUAD_ROW(qw_x8_flip_dwconv_quad_row_ukernel_c4__wasmsimd, 0x80)
