/* wasm SIMD128 depthwise convolution: per block of 8 channels and pair of taps, the two taps' 8
 * inputs (widened to int16) are interleaved and dotted with the interleaved weights: one
 * i32x4.dot_i16x8_s per 4 channels sums both taps. Blocks go two at a time (16 channels) where
 * they can, which halves the indirection loads and loop overhead per multiply-add. */
#include "dwconv/dwconv.h"
#include "simd128.h"

#define QW_DWCONV_WASMSIMD(name, AT, LOAD8)                                                          \
  QW_DECLARE_DWCONV_UKERNEL(name) {                                                                  \
    QW_ASSERT_DWCONV_UKERNEL();                                                                      \
    const int16_t* w16 = (const int16_t*)w;                                                          \
    const size_t taps_padded = qw_round_up(taps, 2);                                                 \
    const size_t pairs = taps_padded / 2;                                                            \
    for (size_t p = 0; p < pixels; p++, input += taps_padded, acc += channels) {                     \
      const int16_t* wb = w16;                                                                       \
      size_t c = 0;                                                                                  \
      /* Two blocks of 8 channels per pass: each tap pointer loaded once for 16 channels. */         \
      for (; c + 16 <= channels; c += 16, wb += 2 * pairs * 16) {                                    \
        v128_t lo0 = wasm_i32x4_const(0, 0, 0, 0), hi0 = lo0, lo1 = lo0, hi1 = lo0;                   \
        const int16_t* w0 = wb;                                                                      \
        const int16_t* w1 = wb + pairs * 16;                                                         \
        for (size_t q = 0; q < pairs; q++, w0 += 16, w1 += 16) {                                     \
          const uint8_t* i0 = input[2 * q] + c;                                                      \
          const uint8_t* i1 = input[2 * q + 1] + c;                                                  \
          const v128_t va0 = LOAD8(i0), vb0 = LOAD8(i1);                                             \
          lo0 = wasm_i32x4_add(lo0, wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(va0, vb0, 0, 8, 1, 9, 2, 10, 3, 11), \
                                                         wasm_v128_load(w0)));                       \
          hi0 = wasm_i32x4_add(hi0, wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(va0, vb0, 4, 12, 5, 13, 6, 14, 7, 15), \
                                                         wasm_v128_load(w0 + 8)));                   \
          const v128_t va1 = LOAD8(i0 + 8), vb1 = LOAD8(i1 + 8);                                     \
          lo1 = wasm_i32x4_add(lo1, wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(va1, vb1, 0, 8, 1, 9, 2, 10, 3, 11), \
                                                         wasm_v128_load(w1)));                       \
          hi1 = wasm_i32x4_add(hi1, wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(va1, vb1, 4, 12, 5, 13, 6, 14, 7, 15), \
                                                         wasm_v128_load(w1 + 8)));                   \
        }                                                                                            \
        wasm_v128_store(acc + c, lo0);                                                               \
        wasm_v128_store(acc + c + 4, hi0);                                                           \
        wasm_v128_store(acc + c + 8, lo1);                                                           \
        wasm_v128_store(acc + c + 12, hi1);                                                          \
      }                                                                                              \
      for (; c + 8 <= channels; c += 8) {                                                            \
        v128_t lo = wasm_i32x4_const(0, 0, 0, 0);                                                    \
        v128_t hi = wasm_i32x4_const(0, 0, 0, 0);                                                    \
        for (size_t q = 0; q < pairs; q++, wb += 16) {                                               \
          const v128_t va = LOAD8(input[2 * q] + c);                                                 \
          const v128_t vb = LOAD8(input[2 * q + 1] + c);                                             \
          lo = wasm_i32x4_add(lo, wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(va, vb, 0, 8, 1, 9, 2, 10, 3, 11), \
                                                       wasm_v128_load(wb)));                         \
          hi = wasm_i32x4_add(hi, wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(va, vb, 4, 12, 5, 13, 6, 14, 7, 15), \
                                                       wasm_v128_load(wb + 8)));                     \
        }                                                                                            \
        wasm_v128_store(acc + c, lo);                                                                \
        wasm_v128_store(acc + c + 4, hi);                                                            \
      }                                                                                              \
      for (; c < channels; c++) {                                                                    \
        int32_t sum = 0;                                                                             \
        for (size_t t = 0; t < taps; t++) {                                                          \
          sum += (int32_t)((const AT*)input[t])[c] * w16[qw_dwconv_x16pairs_index(8, taps_padded, t, c)]; \
        }                                                                                            \
        acc[c] = sum;                                                                                \
      }                                                                                              \
    }                                                                                                \
  }

QW_DWCONV_WASMSIMD(qw_qu8_dwconv_ukernel_c8__wasmsimd_dot16x2, uint8_t, wasm_u16x8_load8x8)
QW_DWCONV_WASMSIMD(qw_qs8_dwconv_ukernel_c8__wasmsimd_dot16x2, int8_t, wasm_i16x8_load8x8)
