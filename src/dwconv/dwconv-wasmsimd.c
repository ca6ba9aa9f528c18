/* wasm SIMD128 depthwise convolution over pair rows (dwconv.h): one i32x4.dot_i16x8_s per 4 channels and tap
 * pair, reading the pair rows directly. For 3x3 kernels (every depthwise layer of MobileNet v1 / v2) outputs go
 * four (stride 1) or two (stride 2) at a time, every 4-channel block of the row passing over them, so that the
 * pair columns they share are loaded once: at stride 1 outputs ox..ox+3 read columns ox..ox+5 of each row (6
 * loads, not 8). The dots of one output are summed as a tree, not a chain, so that no output waits on six
 * dependent additions. The requantizing kernels start the sums from the bias and requantize them in registers.
 * Other shapes take a plain loop. (XNNPACK's wasmsimd qs8 depthwise kernels, src/qs8-dwconv/unipass-wasmsimd-
 * mul16.c.in, read each tap's input through an indirection pointer and widen and multiply it per tap and output;
 * the pair rows here widen each input once per row, and one dot takes two taps.) */
#include <string.h>

#include "dwconv/dwconv.h"
#include "requantization/requantize-wasmsimd.h"

/* Inlined into each entry point, so that every kernel is compiled for its own output stage and signedness (one
 * function for both kept the stage's constants in memory and branched on them in the loops). */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

#define DOT(p, w) wasm_i32x4_dot_i16x8(wasm_v128_load(p), w)

/* One kernel row's two dots for g outputs S columns apart: output i reads columns i S and i S + 2. Outputs
 * share columns (at stride 1, outputs ox..ox+3 read columns ox..ox+5: 6 loads, not 8); the compiler loads each
 * once. */
ALWAYS_INLINE void row_outputs(size_t g, size_t S, const int16_t* r, size_t col, v128_t w0, v128_t w1, v128_t* s) {
  for (size_t i = 0; i < g; i++) {
    const int16_t* p = r + i * S * col;
    s[i] = wasm_i32x4_add(s[i], wasm_i32x4_add(DOT(p, w0), DOT(p + 2 * col, w1)));
  }
}

/* The output stage of the requantizing kernels: the fp32 rule for fp32_plain parameters, straight to bytes. */
struct fused_output {
  size_t channels;
  const int32_t* bias;     /* [channels_padded]: the accumulators start from it */
  const float* multiplier; /* [channels_padded] */
  struct qw_fp32_constants k;
  v128_t qmax; /* 16 bytes */
  uint8_t* y;
};

/* Bytes 4i..4i+3 of `bytes` (output i's channels c0..c0+3) to y + i * stride, n <= 4 channels of them. */
ALWAYS_INLINE void store_output_bytes(uint8_t* y, size_t stride, v128_t bytes, size_t outputs, size_t n) {
  if (n == 4) {
    wasm_v128_store32_lane(y, bytes, 0);
    if (outputs > 1) wasm_v128_store32_lane(y + stride, bytes, 1);
    if (outputs > 2) wasm_v128_store32_lane(y + 2 * stride, bytes, 2);
    if (outputs > 3) wasm_v128_store32_lane(y + 3 * stride, bytes, 3);
  } else {
    uint8_t lanes[16];
    wasm_v128_store(lanes, bytes);
    for (size_t i = 0; i < outputs; i++) memcpy(y + i * stride, lanes + 4 * i, n);
  }
}

/* Requantizes 1, 2 or 4 outputs' sums of channels c0..c0+3 and stores their bytes: values at least qmin, narrowed
 * with saturation, then clamped to qmax as bytes (requantize-wasmsimd.h). */
ALWAYS_INLINE void finish_outputs(const struct fused_output* f, int y_signed, const v128_t* s, size_t outputs,
                                  size_t ox, size_t c0) {
  const v128_t m = wasm_v128_load(f->multiplier + c0);
  v128_t q[4];
  for (size_t i = 0; i < outputs; i++) q[i] = qw_requantize_fp32_plain_above_i32x4(s[i], m, &f->k);
  const v128_t lo = wasm_i16x8_narrow_i32x4(q[0], outputs > 1 ? q[1] : q[0]);
  const v128_t hi = outputs > 2 ? wasm_i16x8_narrow_i32x4(q[2], q[3]) : lo;
  const v128_t bytes = y_signed ? wasm_i8x16_min(wasm_i8x16_narrow_i16x8(lo, hi), f->qmax)
                                : wasm_u8x16_min(wasm_u8x16_narrow_i16x8(lo, hi), f->qmax);
  const size_t n = f->channels - c0 < 4 ? f->channels - c0 : 4;
  store_output_bytes(f->y + ox * f->channels + c0, f->channels, bytes, outputs, n);
}

/* Outputs ox, ox + g, ... while g of them are left, at stride S: every channel block passes over each group. */
ALWAYS_INLINE size_t output_groups(size_t g, size_t S, size_t ox, size_t ow, size_t cp, const int16_t* const* rows,
                                   const int16_t* w, int32_t* acc, const struct fused_output* f, int y_signed) {
  const size_t col = cp * 2; /* int16 per pair column */
  for (; ox + g <= ow; ox += g) {
    const int16_t* r0 = rows[0] + ox * S * col;
    const int16_t* r1 = rows[1] + ox * S * col;
    const int16_t* r2 = rows[2] + ox * S * col;
    const int16_t* wb = w;
    for (size_t c0 = 0; c0 < cp; c0 += 4, wb += 48, r0 += 8, r1 += 8, r2 += 8) {
      const v128_t init = f != NULL ? wasm_v128_load(f->bias + c0) : wasm_i32x4_const(0, 0, 0, 0);
      v128_t s[4] = {init, init, init, init};
      row_outputs(g, S, r0, col, wasm_v128_load(wb), wasm_v128_load(wb + 8), s);
      row_outputs(g, S, r1, col, wasm_v128_load(wb + 16), wasm_v128_load(wb + 24), s);
      row_outputs(g, S, r2, col, wasm_v128_load(wb + 32), wasm_v128_load(wb + 40), s);
      if (f != NULL) {
        finish_outputs(f, y_signed, s, g, ox, c0);
      } else {
        for (size_t i = 0; i < g; i++) wasm_v128_store(acc + (ox + i) * cp + c0, s[i]);
      }
    }
  }
  return ox;
}

/* 3x3 at stride 1 (4 outputs per group) and 2 (2 per group), then one at a time. Groups of outputs outside,
 * channel blocks inside: the pair columns a group reads (a few KiB) stay in L1 while all blocks pass over them,
 * where sweeping the row per block re-read every row's cache lines once per block from L2 (3 pair rows of a
 * 64-channel layer at 56 columns are 44 KiB); the weight vectors are reloaded per block instead (L1 hits, on
 * the load ports). With f, the sums start from the bias and leave as bytes; without, as int32 into acc. */
ALWAYS_INLINE void dwconv_3x3(size_t ow, size_t cp, size_t column_step, const int16_t* const* rows,
                              const int16_t* w, int32_t* acc, const struct fused_output* f, int y_signed) {
  size_t ox = 0;
  if (column_step == 1) {
    ox = output_groups(4, 1, ox, ow, cp, rows, w, acc, f, y_signed);
    output_groups(1, 1, ox, ow, cp, rows, w, acc, f, y_signed);
  } else if (column_step == 2) {
    ox = output_groups(2, 2, ox, ow, cp, rows, w, acc, f, y_signed);
    output_groups(1, 2, ox, ow, cp, rows, w, acc, f, y_signed);
  } else {
    output_groups(1, column_step, ox, ow, cp, rows, w, acc, f, y_signed);
  }
}

/* Any shape: one output and 4 channels at a time, the taps in a loop. */
static void dwconv_any(size_t ow, size_t cp, size_t kh, size_t pairs, size_t column_step, size_t pair_step,
                       const int16_t* const* rows, const int16_t* wt, int32_t* acc) {
  const size_t col = cp * 2;
  for (size_t c0 = 0; c0 < cp; c0 += 4, wt += kh * pairs * 8) {
    for (size_t ox = 0; ox < ow; ox++) {
      v128_t sum = wasm_i32x4_const(0, 0, 0, 0);
      const int16_t* wk = wt;
      for (size_t ky = 0; ky < kh; ky++) {
        const int16_t* p = rows[ky] + ox * column_step * col + 2 * c0;
        for (size_t j = 0; j < pairs; j++, p += pair_step * col, wk += 8) {
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

QW_DECLARE_DWCONV_UKERNEL(qw_qs16_dwconv_ukernel_c4__wasmsimd_dot16x2) {
  QW_ASSERT_DWCONV_UKERNEL(4);
  if (is_3x3(kh, pairs, pair_step)) {
    dwconv_3x3(ow, channels_padded, column_step, rows, (const int16_t*)w, acc, NULL, 0);
  } else {
    dwconv_any(ow, channels_padded, kh, pairs, column_step, pair_step, rows, (const int16_t*)w, acc);
  }
}

/* 3x3 fused; other shapes through the accumulator row, then requantized output by output. */
ALWAYS_INLINE void dwconv_fp32_plain(size_t ow, size_t channels, size_t cp, size_t kh, size_t pairs,
                                     size_t column_step, size_t pair_step, const int16_t* const* rows,
                                     const int16_t* w, const struct qw_requantization_params* params, int32_t* acc,
                                     void* y, int y_signed) {
  const struct fused_output f = {.channels = channels, .bias = params->bias, .multiplier = params->multiplier,
                                 .k = qw_fp32_constants(params), .qmax = wasm_i8x16_splat((int8_t)params->qmax),
                                 .y = (uint8_t*)y};
  if (is_3x3(kh, pairs, pair_step)) {
    dwconv_3x3(ow, cp, column_step, rows, w, NULL, &f, y_signed);
    return;
  }
  dwconv_any(ow, cp, kh, pairs, column_step, pair_step, rows, w, acc);
  for (size_t ox = 0; ox < ow; ox++) {
    for (size_t c0 = 0; c0 < cp; c0 += 4) {
      const v128_t sum = wasm_i32x4_add(wasm_v128_load(acc + ox * cp + c0), wasm_v128_load(f.bias + c0));
      finish_outputs(&f, y_signed, &sum, 1, ox, c0);
    }
  }
}

#define QW_DWCONV_FP32_PLAIN_WASMSIMD(name, Y_SIGNED)                                                         \
  QW_DECLARE_DWCONV_REQUANTIZING_UKERNEL(name) {                                                              \
    QW_ASSERT_DWCONV_UKERNEL(4);                                                                              \
    assert(channels != 0 && channels <= channels_padded && params != NULL && params->fp32_plain && y != NULL); \
    dwconv_fp32_plain(ow, channels, channels_padded, kh, pairs, column_step, pair_step, rows, (const int16_t*)w, \
                      params, acc, y, Y_SIGNED);                                                              \
  }

QW_DWCONV_FP32_PLAIN_WASMSIMD(qw_qs16_qu8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2, 0)
QW_DWCONV_FP32_PLAIN_WASMSIMD(qw_qs16_qs8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2, 1)

/* 8 channels per step: the two inputs widened and interleaved into the pairs of 4 + 4 channels. */
#define QW_DWCONV_PAIR_ROW_WASMSIMD(name, T, LOAD8)                                               \
  QW_DECLARE_DWCONV_PAIR_ROW_UKERNEL(name) {                                                            \
    QW_ASSERT_DWCONV_PAIR_ROW_UKERNEL();                                                                \
    const v128_t vzp = wasm_i16x8_splat((int16_t)zero_point);                                          \
    for (size_t x = 0; x < columns; x += step) {                                                        \
      int16_t* out = pairs + x * channels_padded * 2;                                                   \
      const size_t ia = x - pad_left, ib = ia + dilation; /* below pad_left these wrap to >= in_w */     \
      const T* a = ia < in_w ? (const T*)row + ia * channels : NULL;                                    \
      const T* b = ib < in_w ? (const T*)row + ib * channels : NULL;                                    \
      size_t c = 0;                                                                                     \
      for (; c + 8 <= channels; c += 8) {                                                               \
        const v128_t va = a != NULL ? LOAD8(a + c) : vzp;                                               \
        const v128_t vb = b != NULL ? LOAD8(b + c) : vzp;                                               \
        wasm_v128_store(out + 2 * c, wasm_i16x8_shuffle(va, vb, 0, 8, 1, 9, 2, 10, 3, 11));             \
        wasm_v128_store(out + 2 * c + 8, wasm_i16x8_shuffle(va, vb, 4, 12, 5, 13, 6, 14, 7, 15));       \
      }                                                                                                 \
      for (; c < channels; c++) {                                                                       \
        out[2 * c] = (int16_t)(a != NULL ? a[c] : zero_point);                                          \
        out[2 * c + 1] = (int16_t)(b != NULL ? b[c] : zero_point);                                      \
      }                                                                                                 \
      for (; c < channels_padded; c++) {                                                                \
        out[2 * c] = out[2 * c + 1] = 0;                                                                \
      }                                                                                                 \
    }                                                                                                   \
  }

QW_DWCONV_PAIR_ROW_WASMSIMD(qw_qu8_dwconv_pair_row_ukernel__wasmsimd, uint8_t, wasm_u16x8_load8x8)
QW_DWCONV_PAIR_ROW_WASMSIMD(qw_qs8_dwconv_pair_row_ukernel__wasmsimd, int8_t, wasm_i16x8_load8x8)
