/* What the wasm SIMD GEMM kernels (SIMD128 and relaxed) share: the row pointers of an MR-row tile, rows past mr
 * aliasing the last real one, the store of one row's 8 columns, the last tile's cut to the columns left, and the
 * fused fp32_plain output stage of the requantizing kernels. */
#ifndef QWASM_GEMM_WASMSIMD_H
#define QWASM_GEMM_WASMSIMD_H

#include <string.h>

#include "gemm/gemm.h"
#include "requantization/requantize-wasmsimd.h"
#include "simd128.h"

/* rows[r]: MR output rows of type T `stride` elements apart from out; r >= count alias row count - 1. */
#define QW_GEMM_OUTPUT_ROWS_OF(MR, T, rows, out, stride, count)      \
  T* rows[MR];                                                       \
  rows[0] = (T*)(out);                                               \
  for (size_t r = 1; r < MR; r++) {                                  \
    rows[r] = r < (count) ? rows[r - 1] + (stride) : rows[r - 1];    \
  }
#define QW_GEMM_OUTPUT_ROWS(MR, T, rows, out, stride) QW_GEMM_OUTPUT_ROWS_OF(MR, T, rows, out, stride, mr)

static inline void qw_store_i32_columns(int32_t* c, v128_t v, size_t columns) {
  if (columns >= 4) {
    wasm_v128_store(c, v);
  } else {
    int32_t lanes[4];
    wasm_v128_store(lanes, v);
    memcpy(c, lanes, columns * sizeof(int32_t));
  }
}

/* Columns [0, columns) of a row held in two vectors of 4. */
static inline void qw_store_i32_row8(int32_t* c, v128_t lo, v128_t hi, size_t columns) {
  qw_store_i32_columns(c, lo, columns < 4 ? columns : 4);
  if (columns > 4) qw_store_i32_columns(c + 4, hi, columns - 4);
}

/* The 4x4 transpose of 32-bit lanes: v[i] lane j becomes v[j] lane i (A panels interleaving 4 rows). */
static inline void qw_transpose_i32x4(v128_t v[4]) {
  const v128_t p01 = wasm_i32x4_shuffle(v[0], v[1], 0, 4, 1, 5), p23 = wasm_i32x4_shuffle(v[2], v[3], 0, 4, 1, 5);
  const v128_t q01 = wasm_i32x4_shuffle(v[0], v[1], 2, 6, 3, 7), q23 = wasm_i32x4_shuffle(v[2], v[3], 2, 6, 3, 7);
  v[0] = wasm_i64x2_shuffle(p01, p23, 0, 2);
  v[1] = wasm_i64x2_shuffle(p01, p23, 1, 3);
  v[2] = wasm_i64x2_shuffle(q01, q23, 0, 2);
  v[3] = wasm_i64x2_shuffle(q01, q23, 1, 3);
}

/* Rows r and r + 1 (x: acc + bias, 4 vectors) as 16 bytes, row r in the low half: requantize-wasmsimd.h's fp32 rule
 * for fp32_plain parameters, or for fp32_bounded ones without the float clamps, the bytes clamped after the
 * saturating narrowings (one min and one max per 16 outputs instead of two per 4). */
static inline v128_t qw_gemm_requantize_rows2(const v128_t x[4], v128_t m_lo, v128_t m_hi,
                                              const struct qw_fp32_constants* k, v128_t qmin, v128_t qmax, int bounded,
                                              int y_signed) {
  v128_t q[4];
  for (int i = 0; i < 4; i++) {
    const v128_t m = i % 2 ? m_hi : m_lo;
    q[i] = bounded ? qw_requantize_fp32_bounded_i32x4(x[i], m, k) : qw_requantize_fp32_plain_i32x4(x[i], m, k);
  }
  const v128_t r0 = wasm_i16x8_narrow_i32x4(q[0], q[1]), r1 = wasm_i16x8_narrow_i32x4(q[2], q[3]);
  if (!bounded) {
    return y_signed ? wasm_i8x16_narrow_i16x8(r0, r1) : wasm_u8x16_narrow_i16x8(r0, r1);
  }
  return y_signed ? wasm_i8x16_max(wasm_i8x16_min(wasm_i8x16_narrow_i16x8(r0, r1), qmax), qmin)
                  : wasm_u8x16_max(wasm_u8x16_min(wasm_u8x16_narrow_i16x8(r0, r1), qmax), qmin);
}

/* Bytes [half * 8, half * 8 + columns) of q to y (columns <= 8). */
static inline void qw_gemm_store_row8(uint8_t* y, v128_t q, int half, size_t columns) {
  if (columns == 8) {
    if (half) {
      wasm_v128_store64_lane(y, q, 1);
    } else {
      wasm_v128_store64_lane(y, q, 0);
    }
  } else {
    uint8_t lanes[16];
    wasm_v128_store(lanes, q);
    memcpy(y, lanes + half * 8, columns);
  }
}

/* The fused output stage of a requantizing kernel (QW_DECLARE_GEMM_REQUANTIZING_UKERNEL) with tiles of 8 columns:
 * QW_GEMM_FP32_BEGIN once per call, QW_GEMM_FP32_TILE_PARAMS per tile (bias and multiplier: the 8 columns' entries,
 * from a zero-padded copy for a last partial tile, as the arrays hold only nc entries), QW_GEMM_FP32_STORE_ROWS once
 * the tile's sums (acc + bias) are in lo[r] / hi[r]. The constants stay in memory (a stack block the compiler must
 * assume escaped) and are loaded per tile, so that V8 does not hold them in registers across the K loop; the sums
 * are requantized from their registers, two rows narrowed together, highest rows first (aliased rows hold the values
 * of the rows they alias). */
#define QW_GEMM_FP32_BEGIN()                                                                  \
  assert(params != NULL && params->fp32_plain && y != NULL && (mr == 1 || y_stride >= nc));   \
  const int bounded = params->fp32_bounded;                                                   \
  struct {                                                                                    \
    struct qw_fp32_constants k;                                                               \
    v128_t qmin, qmax;                                                                        \
    int32_t bias_tail[8];                                                                     \
    float multiplier_tail[8];                                                                 \
  } f; /* not zero-initialized: clang would clear it with a memset call per kernel call */    \
  f.k = qw_fp32_constants(params);                                                            \
  f.qmin = wasm_i8x16_splat((int8_t)params->qmin); /* the byte pattern, signed or not */      \
  f.qmax = wasm_i8x16_splat((int8_t)params->qmax);                                            \
  __asm__ __volatile__("" : : "r"(&f) : "memory");

#define QW_GEMM_FP32_TILE_PARAMS(n0, columns)                                                 \
  const int32_t* bias = params->bias + (n0);                                                  \
  const float* multiplier = params->multiplier + (n0);                                        \
  if ((columns) < 8) {                                                                        \
    memcpy(f.bias_tail, bias, (columns) * sizeof(int32_t));                                   \
    memcpy(f.multiplier_tail, multiplier, (columns) * sizeof(float));                         \
    bias = f.bias_tail;                                                                       \
    multiplier = f.multiplier_tail;                                                           \
  }

#define QW_GEMM_FP32_STORE_ROWS(MR, yp, n0, columns, Y_SIGNED)                                \
  __asm__ __volatile__("" : : "r"(&f) : "memory"); /* the constants reloaded per tile */      \
  {                                                                                           \
    const v128_t m_lo = wasm_v128_load(multiplier), m_hi = wasm_v128_load(multiplier + 4);    \
    for (size_t r = (MR); r > 0; r -= 2) {                                                    \
      const v128_t x[4] = {lo[r - 2], hi[r - 2], lo[r - 1], hi[r - 1]};                       \
      const v128_t q = qw_gemm_requantize_rows2(x, m_lo, m_hi, &f.k, f.qmin, f.qmax, bounded, Y_SIGNED); \
      qw_gemm_store_row8(yp[r - 1] + (n0), q, 1, columns);                                    \
      qw_gemm_store_row8(yp[r - 2] + (n0), q, 0, columns);                                    \
    }                                                                                         \
  }

/* The float output stage of the dynamic int8 matmul fused (QW_DECLARE_GEMM_REQUANTIZING_UKERNEL with float y, rows
 * y_stride bytes apart): the rule of scale-output-wasmsimd.c, (float)acc * multiplier (+ bias_f32), applied to the
 * sums in lo[r] / hi[r] of a tile of 8 columns instead of an int32 block read back. The multipliers and biases are
 * loaded once per tile for all its rows, from a zero-padded copy for a last partial tile (the arrays hold nc
 * entries); highest rows first (aliased rows hold the values of the rows they alias). */
#define QW_GEMM_F32_BEGIN(MR)                                                                 \
  assert(params != NULL && params->multiplier != NULL && y != NULL && y_stride % sizeof(float) == 0); \
  float tail[16];                                                                             \
  QW_GEMM_OUTPUT_ROWS(MR, float, yp, y, y_stride / sizeof(float))

#define QW_GEMM_F32_STORE_ROWS(MR, n0, columns)                                               \
  {                                                                                           \
    const float* multiplier = params->multiplier + (n0);                                      \
    const float* bias = params->bias_f32 != NULL ? params->bias_f32 + (n0) : NULL;            \
    if ((columns) < 8) {                                                                      \
      memset(tail, 0, sizeof tail);                                                           \
      memcpy(tail, multiplier, (columns) * sizeof(float));                                    \
      multiplier = tail;                                                                      \
      if (bias != NULL) {                                                                     \
        memcpy(tail + 8, bias, (columns) * sizeof(float));                                    \
        bias = tail + 8;                                                                      \
      }                                                                                       \
    }                                                                                         \
    const v128_t m_lo = wasm_v128_load(multiplier), m_hi = wasm_v128_load(multiplier + 4);    \
    for (size_t r = (MR); r-- > 0;) {                                                         \
      v128_t f_lo = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(lo[r]), m_lo);                    \
      v128_t f_hi = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(hi[r]), m_hi);                    \
      if (bias != NULL) {                                                                     \
        f_lo = wasm_f32x4_add(f_lo, wasm_v128_load(bias));                                    \
        f_hi = wasm_f32x4_add(f_hi, wasm_v128_load(bias + 4));                                \
      }                                                                                       \
      float* out = yp[r] + (n0);                                                              \
      if ((columns) == 8) {                                                                   \
        wasm_v128_store(out, f_lo);                                                           \
        wasm_v128_store(out + 4, f_hi);                                                       \
      } else {                                                                                \
        float lanes[8];                                                                       \
        wasm_v128_store(lanes, f_lo);                                                         \
        wasm_v128_store(lanes + 4, f_hi);                                                     \
        memcpy(out, lanes, (columns) * sizeof(float));                                        \
      }                                                                                       \
    }                                                                                         \
  }

#endif /* QWASM_GEMM_WASMSIMD_H */
