/* wasm SIMD128 depthwise convolution over pair rows (dwconv.h): one i32x4.dot_i16x8_s per 4 channels and tap
 * pair, reading the pair rows directly. For 3x3 kernels (every depthwise layer of MobileNet v1 / v2) the six
 * weight vectors of a 4-channel block stay in registers while the block sweeps the output row, and outputs go
 * four (stride 1) or two (stride 2) at a time so that the pair columns they share are loaded once: at stride 1
 * outputs ox..ox+3 read columns ox..ox+5 of each row (6 loads, not 8). The dots of one output are summed as a
 * tree, not a chain, so that no output waits on six dependent additions. Other shapes take a plain loop. */
#include "dwconv/dwconv.h"
#include "simd128.h"

#define DOT(p, w) wasm_i32x4_dot_i16x8(wasm_v128_load(p), w)

/* Sum of one output's six dots for 3x3: columns at a and a + 2 (pair step 2) of the three rows. */
#define SUM3X3(r0, r1, r2, a)                                                                                    \
  wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_add(DOT(r0 + (a), w00), DOT(r0 + (a) + 2 * col, w01)),               \
                                wasm_i32x4_add(DOT(r1 + (a), w10), DOT(r1 + (a) + 2 * col, w11))),              \
                 wasm_i32x4_add(DOT(r2 + (a), w20), DOT(r2 + (a) + 2 * col, w21)))

/* One kernel row's two dots for outputs ox..ox+3 at stride 1: they read columns ox..ox+5, each loaded once. */
static inline void row_4_outputs(const int16_t* r, size_t col, v128_t w0, v128_t w1, v128_t s[4]) {
  const v128_t p0 = wasm_v128_load(r), p1 = wasm_v128_load(r + col), p2 = wasm_v128_load(r + 2 * col);
  const v128_t p3 = wasm_v128_load(r + 3 * col), p4 = wasm_v128_load(r + 4 * col), p5 = wasm_v128_load(r + 5 * col);
  s[0] = wasm_i32x4_add(s[0], wasm_i32x4_add(wasm_i32x4_dot_i16x8(p0, w0), wasm_i32x4_dot_i16x8(p2, w1)));
  s[1] = wasm_i32x4_add(s[1], wasm_i32x4_add(wasm_i32x4_dot_i16x8(p1, w0), wasm_i32x4_dot_i16x8(p3, w1)));
  s[2] = wasm_i32x4_add(s[2], wasm_i32x4_add(wasm_i32x4_dot_i16x8(p2, w0), wasm_i32x4_dot_i16x8(p4, w1)));
  s[3] = wasm_i32x4_add(s[3], wasm_i32x4_add(wasm_i32x4_dot_i16x8(p3, w0), wasm_i32x4_dot_i16x8(p5, w1)));
}

/* The same for outputs ox, ox+1 at stride 2: columns 2ox, 2ox+2, 2ox+4. */
static inline void row_2_outputs_stride2(const int16_t* r, size_t col, v128_t w0, v128_t w1, v128_t s[2]) {
  const v128_t p0 = wasm_v128_load(r), p2 = wasm_v128_load(r + 2 * col), p4 = wasm_v128_load(r + 4 * col);
  s[0] = wasm_i32x4_add(s[0], wasm_i32x4_add(wasm_i32x4_dot_i16x8(p0, w0), wasm_i32x4_dot_i16x8(p2, w1)));
  s[1] = wasm_i32x4_add(s[1], wasm_i32x4_add(wasm_i32x4_dot_i16x8(p2, w0), wasm_i32x4_dot_i16x8(p4, w1)));
}

static void dwconv_3x3(size_t ow, size_t cp, size_t column_step, const int16_t* const* rows, const int16_t* w,
                       int32_t* acc) {
  const size_t col = cp * 2; /* int16 per pair column */
  for (size_t c0 = 0; c0 < cp; c0 += 4, w += 48) {
    const v128_t w00 = wasm_v128_load(w), w01 = wasm_v128_load(w + 8);
    const v128_t w10 = wasm_v128_load(w + 16), w11 = wasm_v128_load(w + 24);
    const v128_t w20 = wasm_v128_load(w + 32), w21 = wasm_v128_load(w + 40);
    const int16_t* r0 = rows[0] + 2 * c0;
    const int16_t* r1 = rows[1] + 2 * c0;
    const int16_t* r2 = rows[2] + 2 * c0;
    int32_t* out = acc + c0;
    const size_t step = column_step * col;
    size_t ox = 0;
    if (column_step == 1) {
      for (; ox + 4 <= ow; ox += 4, r0 += 4 * col, r1 += 4 * col, r2 += 4 * col, out += 4 * cp) {
        v128_t s[4] = {wasm_i32x4_const(0, 0, 0, 0), wasm_i32x4_const(0, 0, 0, 0), wasm_i32x4_const(0, 0, 0, 0),
                       wasm_i32x4_const(0, 0, 0, 0)};
        row_4_outputs(r0, col, w00, w01, s);
        row_4_outputs(r1, col, w10, w11, s);
        row_4_outputs(r2, col, w20, w21, s);
        for (size_t i = 0; i < 4; i++) {
          wasm_v128_store(out + i * cp, s[i]);
        }
      }
    } else if (column_step == 2) {
      for (; ox + 2 <= ow; ox += 2, r0 += 4 * col, r1 += 4 * col, r2 += 4 * col, out += 2 * cp) {
        v128_t s[2] = {wasm_i32x4_const(0, 0, 0, 0), wasm_i32x4_const(0, 0, 0, 0)};
        row_2_outputs_stride2(r0, col, w00, w01, s);
        row_2_outputs_stride2(r1, col, w10, w11, s);
        row_2_outputs_stride2(r2, col, w20, w21, s);
        wasm_v128_store(out, s[0]);
        wasm_v128_store(out + cp, s[1]);
      }
    }
    for (; ox < ow; ox++, r0 += step, r1 += step, r2 += step, out += cp) {
      wasm_v128_store(out, SUM3X3(r0, r1, r2, 0));
    }
  }
}

QW_DECLARE_DWCONV_UKERNEL(qw_qs16_dwconv_ukernel_c4__wasmsimd_dot16x2) {
  QW_ASSERT_DWCONV_UKERNEL(4);
  const int16_t* wt = (const int16_t*)w;
  if (kh == 3 && pairs == 2 && pair_step == 2) {
    dwconv_3x3(ow, channels_padded, column_step, rows, wt, acc);
    return;
  }
  const size_t col = channels_padded * 2;
  for (size_t c0 = 0; c0 < channels_padded; c0 += 4, wt += kh * pairs * 8) {
    for (size_t ox = 0; ox < ow; ox++) {
      v128_t sum = wasm_i32x4_const(0, 0, 0, 0);
      const int16_t* wk = wt;
      for (size_t ky = 0; ky < kh; ky++) {
        const int16_t* p = rows[ky] + ox * column_step * col + 2 * c0;
        for (size_t j = 0; j < pairs; j++, p += pair_step * col, wk += 8) {
          sum = wasm_i32x4_add(sum, DOT(p, wasm_v128_load(wk)));
        }
      }
      wasm_v128_store(acc + ox * channels_padded + c0, sum);
    }
  }
}

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
