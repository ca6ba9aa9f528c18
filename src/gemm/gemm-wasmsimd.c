/* wasm SIMD128 GEMM microkernels over the c2 layout of gemm.h (tiles of 8 columns, kc a multiple of 4)
 * and A packing. */
#include "gemm/gemm-wasmsimd.h"

#define NR 8 /* columns per weight tile: two vectors of 4 */

/* The two accumulator vectors (columns 0-3, 4-7) of each of MR rows, zeroed. */
#define QW_GEMM_ZEROED_ACCUMULATORS(MR) \
  v128_t lo[MR], hi[MR];                \
  for (size_t r = 0; r < MR; r++) {     \
    lo[r] = hi[r] = wasm_i32x4_const(0, 0, 0, 0); \
  }

/* One row, one tile: the columns the four-tile loop below leaves (fewer than 4 tiles). Four k pairs
 * per step amortize the loop overhead (V8 adds a stack check per loop iteration); the dots are summed
 * pairwise before the two accumulators. kc % 8 == 4 ends with one half step. */
static void gemm_1x8_tiles(size_t nc, size_t kc, const int16_t* a_row, const int16_t* wt, int32_t* c) {
  const int16_t* a_end8 = a_row + (kc & ~(size_t)7);
  for (size_t n0 = 0; n0 < nc; n0 += NR) {
    v128_t lo = wasm_i32x4_const(0, 0, 0, 0), hi = lo;
    const int16_t* ak = a_row;
    for (; ak != a_end8; ak += 8, wt += 64) {
      const v128_t v0 = wasm_v128_load32_splat(ak);
      const v128_t v1 = wasm_v128_load32_splat(ak + 2);
      const v128_t v2 = wasm_v128_load32_splat(ak + 4);
      const v128_t v3 = wasm_v128_load32_splat(ak + 6);
      lo = wasm_i32x4_add(lo, wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_dot_i16x8(v0, wasm_v128_load(wt)),
                                                            wasm_i32x4_dot_i16x8(v1, wasm_v128_load(wt + 16))),
                                             wasm_i32x4_add(wasm_i32x4_dot_i16x8(v2, wasm_v128_load(wt + 32)),
                                                            wasm_i32x4_dot_i16x8(v3, wasm_v128_load(wt + 48)))));
      hi = wasm_i32x4_add(hi, wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_dot_i16x8(v0, wasm_v128_load(wt + 8)),
                                                            wasm_i32x4_dot_i16x8(v1, wasm_v128_load(wt + 24))),
                                             wasm_i32x4_add(wasm_i32x4_dot_i16x8(v2, wasm_v128_load(wt + 40)),
                                                            wasm_i32x4_dot_i16x8(v3, wasm_v128_load(wt + 56)))));
    }
    if (ak != a_row + kc) { /* kc % 8 == 4 */
      const v128_t v0 = wasm_v128_load32_splat(ak);
      const v128_t v1 = wasm_v128_load32_splat(ak + 2);
      lo = wasm_i32x4_add(lo, wasm_i32x4_add(wasm_i32x4_dot_i16x8(v0, wasm_v128_load(wt)),
                                             wasm_i32x4_dot_i16x8(v1, wasm_v128_load(wt + 16))));
      hi = wasm_i32x4_add(hi, wasm_i32x4_add(wasm_i32x4_dot_i16x8(v0, wasm_v128_load(wt + 8)),
                                             wasm_i32x4_dot_i16x8(v1, wasm_v128_load(wt + 24))));
      wt += 32;
    }
    const size_t columns = nc - n0 < NR ? nc - n0 : NR;
    qw_store_i32_row8(c + n0, lo, hi, columns);
  }
}

#define GEMV_TILES 4 /* tiles per pass of the one-row kernel: 32 columns, 8 accumulators */

/* One row (GEMV). Each weight vector is used once, so the loop is bound by instructions, not by memory
 * (the same speed with the weights in L2 or L3; int8 weights widened by i16x8.load8x8_s ran 5-25% slower,
 * gemm.h): per 8 multiply-adds a load, a dot and an add, plus the A splats and the loop overhead, which
 * four tiles per pass share: two splats per 16 dots instead of one per 4, one stack check per 16 dots.
 * The compiler barrier between tiles keeps each tile's four weight loads next to their dots: without it
 * clang hoists all 16 loads to the top of the step, V8 then needs 2 + 16 + 8 xmm registers and spills
 * (measured: 38 us against 28.5 us for 1x1024x1024; the barrier emits no instruction). More tiles or
 * more pairs per step spilled; the columns after the last four-tile pass take one tile at a time.
 * kc is a multiple of 4: two k pairs per step. */
QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_1x8c2__wasmsimd_dot16x2) {
  QW_ASSERT_GEMM_UKERNEL(1, 4);
  (void)mr;
  (void)c_stride;
  const int16_t* a_row = (const int16_t*)a;
  const int16_t* a_end = a_row + kc;
  const int16_t* wt = (const int16_t*)w;
  size_t n0 = 0;
  for (; n0 + (GEMV_TILES - 1) * NR < nc; n0 += GEMV_TILES * NR) {
    v128_t lo[GEMV_TILES], hi[GEMV_TILES];
    for (int t = 0; t < GEMV_TILES; t++) lo[t] = hi[t] = wasm_i32x4_const(0, 0, 0, 0);
    const int16_t* wk = wt;
    for (const int16_t* ak = a_row; ak != a_end; ak += 4, wk += 32) {
      const v128_t v0 = wasm_v128_load32_splat(ak);
      const v128_t v1 = wasm_v128_load32_splat(ak + 2);
      for (int t = 0; t < GEMV_TILES; t++) {
        __asm__ __volatile__("" ::: "memory");
        v128_t l = wasm_i32x4_dot_i16x8(v0, wasm_v128_load(wk + t * NR * kc));
        v128_t h = wasm_i32x4_dot_i16x8(v0, wasm_v128_load(wk + t * NR * kc + 8));
        l = wasm_i32x4_add(l, wasm_i32x4_dot_i16x8(v1, wasm_v128_load(wk + t * NR * kc + 16)));
        h = wasm_i32x4_add(h, wasm_i32x4_dot_i16x8(v1, wasm_v128_load(wk + t * NR * kc + 24)));
        lo[t] = wasm_i32x4_add(lo[t], l);
        hi[t] = wasm_i32x4_add(hi[t], h);
      }
    }
    wt += GEMV_TILES * NR * kc;
    for (int t = 0; t < GEMV_TILES; t++) {
      const size_t left = nc - n0 - t * NR;
      qw_store_i32_row8(c + n0 + t * NR, lo[t], hi[t], left < NR ? left : NR);
    }
  }
  if (n0 < nc) {
    gemm_1x8_tiles(nc - n0, kc, a_row, wt, c + n0);
  }
}

/* The sums of one tile: MR rows x 8 columns into lo[r] / hi[r], one k pair per step, from the interleaved A panel
 * a16 (gemm.h: the MR rows' pairs of one k pair side by side, rows past mr copies of the last). Each step keeps 8
 * sums, 2 weight vectors and one A splat and product in registers (12 of the 15 xmm registers V8 allocates), and
 * reads the A pairs at fixed offsets from one pointer. With the rows kc apart, V8 computed each row's address (an
 * lea per row and step): 31 machine instructions per k pair in Node 20 against 28 now (16 dots and adds, 6 loads),
 * 256x1024x1024 at 84% of the dot peak against 92%.
 * Two pairs per step (4 weight vectors) fit in Node 20's V8 11.3 and ran MobileNetV2's pointwise layers
 * 1-7% faster there, but Chromium's V8 schedules both pairs' loads ahead of their arithmetic and then stores and
 * reloads one sum every step: 256x1024x1024 ran 13-17% slower in Chromium than in Node (the machine code as
 * tools/bench/jitdump.py shows it). One pair per step: 15% less time in Chromium 156. Advances wt past the tile. */
#define QW_GEMM_TILE_SUMS(MR)                                                        \
  QW_GEMM_ZEROED_ACCUMULATORS(MR)                                                    \
  QW_GEMM_TILE_LOOP(MR)
#define QW_GEMM_TILE_LOOP(MR)                                                        \
  for (const int16_t* ak = a16; ak != a16_end; ak += 2 * (MR), wt += 16) {           \
    const v128_t wl = wasm_v128_load(wt);                                            \
    const v128_t wh = wasm_v128_load(wt + 8);                                        \
    for (size_t r = 0; r < MR; r++) {                                                \
      const v128_t va = wasm_v128_load32_splat(ak + 2 * r);                          \
      lo[r] = wasm_i32x4_add(lo[r], wasm_i32x4_dot_i16x8(va, wl));                   \
      hi[r] = wasm_i32x4_add(hi[r], wasm_i32x4_dot_i16x8(va, wh));                   \
    }                                                                                \
  }

/* The interleaved panel of an MR-row kernel (start, end) and its output rows (gemm-wasmsimd.h). */
#define QW_GEMM_PANEL_AND_ROWS(MR, T, out, out_stride)                               \
  const int16_t* a16 = (const int16_t*)a;                                            \
  const int16_t* a16_end = a16 + (MR) * kc;                                          \
  QW_GEMM_OUTPUT_ROWS(MR, T, out##p, out, out_stride)

#define QW_GEMM_WASMSIMD(name, MR)                                                   \
  QW_DECLARE_GEMM_UKERNEL(name) {                                                    \
    QW_ASSERT_GEMM_UKERNEL(MR, 4);                                                   \
    const int16_t* wt = (const int16_t*)w;                                           \
    QW_GEMM_PANEL_AND_ROWS(MR, int32_t, c, c_stride)                                 \
    for (size_t n0 = 0; n0 < nc; n0 += NR) {                                         \
      QW_GEMM_TILE_SUMS(MR)                                                          \
      const size_t columns = nc - n0 < NR ? nc - n0 : NR;                            \
      /* Highest row first: aliased rows hold the values of the rows they alias. */  \
      for (size_t r = MR; r-- > 0;) {                                                \
        qw_store_i32_row8(cp[r] + n0, lo[r], hi[r], columns);                        \
      }                                                                              \
    }                                                                                \
  }

QW_GEMM_WASMSIMD(qw_qs16_gemm_ukernel_2x8c2__wasmsimd_dot16x2, 2)
QW_GEMM_WASMSIMD(qw_qs16_gemm_ukernel_4x8c2__wasmsimd_dot16x2, 4)

/* The tile sums of QW_GEMM_TILE_SUMS, started from the bias vectors instead of zero. */
#define QW_GEMM_TILE_SUMS_FROM(MR, B_LO, B_HI)                                       \
  v128_t lo[MR], hi[MR];                                                             \
  for (size_t r = 0; r < MR; r++) {                                                  \
    lo[r] = B_LO;                                                                    \
    hi[r] = B_HI;                                                                    \
  }                                                                                  \
  QW_GEMM_TILE_LOOP(MR)

/* QW_GEMM_WASMSIMD with the output stage fused (gemm-wasmsimd.h): the sums start from the bias and go to bytes in the
 * same call, the tile's multipliers loaded once for all its rows and two rows narrowed together, instead of through an
 * int32 block that the requantization kernel reads back row by row. For K of 16 to 32 (MobileNet's early pointwise
 * layers, one output per 16 to 32 multiply-adds) the output stage is a third of the layer. (With two k pairs per step
 * the sums had to pass through a memory block: V8 spilled them inside the K loop, every layer 20% slower. With one
 * pair per step, requantizing from the registers made the K 16 layer 16 -> 96 at 112x112 4% faster in Chromium 156
 * and in Node 20, the others 0% to 2%.) */
#define QW_GEMM_FP32_PLAIN_WASMSIMD(name, MR, Y_SIGNED)                                       \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(name) {                                                \
    assert(mr >= 1 && mr <= (MR) && nc != 0 && kc != 0 && kc % 4 == 0 && a != NULL && w != NULL); \
    QW_GEMM_FP32_BEGIN()                                                                      \
    const int16_t* wt = (const int16_t*)w;                                                    \
    QW_GEMM_PANEL_AND_ROWS(MR, uint8_t, y, y_stride)                                          \
    for (size_t n0 = 0; n0 < nc; n0 += NR) {                                                  \
      const size_t columns = nc - n0 < NR ? nc - n0 : NR;                                     \
      QW_GEMM_FP32_TILE_PARAMS(n0, columns)                                                   \
      QW_GEMM_TILE_SUMS_FROM(MR, wasm_v128_load(bias), wasm_v128_load(bias + 4))              \
      QW_GEMM_FP32_STORE_ROWS(MR, yp, n0, columns, Y_SIGNED)                                  \
    }                                                                                         \
  }

QW_GEMM_FP32_PLAIN_WASMSIMD(qw_qs16_qu8_gemm_fp32_plain_ukernel_2x8c2__wasmsimd_dot16x2, 2, 0)
QW_GEMM_FP32_PLAIN_WASMSIMD(qw_qs16_qu8_gemm_fp32_plain_ukernel_4x8c2__wasmsimd_dot16x2, 4, 0)
QW_GEMM_FP32_PLAIN_WASMSIMD(qw_qs16_qs8_gemm_fp32_plain_ukernel_2x8c2__wasmsimd_dot16x2, 2, 1)
QW_GEMM_FP32_PLAIN_WASMSIMD(qw_qs16_qs8_gemm_fp32_plain_ukernel_4x8c2__wasmsimd_dot16x2, 4, 1)

/* The dynamic matmul's float output (gemm-wasmsimd.h's QW_GEMM_F32_STORE_ROWS) fused, the sums from zero. */
#define QW_GEMM_F32_WASMSIMD(name, MR)                                                        \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(name) {                                                \
    assert(mr >= 1 && mr <= (MR) && nc != 0 && kc != 0 && kc % 4 == 0 && a != NULL && w != NULL); \
    QW_GEMM_F32_BEGIN(MR)                                                                     \
    const int16_t* wt = (const int16_t*)w;                                                    \
    const int16_t* a16 = (const int16_t*)a;                                                   \
    const int16_t* a16_end = a16 + (MR) * kc;                                                 \
    for (size_t n0 = 0; n0 < nc; n0 += NR) {                                                  \
      const size_t columns = nc - n0 < NR ? nc - n0 : NR;                                     \
      QW_GEMM_TILE_SUMS(MR)                                                                   \
      QW_GEMM_F32_STORE_ROWS(MR, n0, columns)                                                 \
    }                                                                                         \
  }

QW_GEMM_F32_WASMSIMD(qw_qs16_f32_gemm_ukernel_2x8c2__wasmsimd_dot16x2, 2)
QW_GEMM_F32_WASMSIMD(qw_qs16_f32_gemm_ukernel_4x8c2__wasmsimd_dot16x2, 4)

/* The interleaved A panel (gemm.h): rows = qw_gemm_panel_rows(mr) rows, row r's pair (k, k + 1) at (k / 2) * 2 rows
 * + 2 r, rows past mr copies of row mr - 1. One row is a plain row (16 bytes per step widened to two int16x8);
 * two or four rows take 8 bytes of each per step, widened with the zero point subtracted, then interleaved by
 * 32-bit lanes (a 2x2 or 4x4 transpose of pairs); the rest element by element. */
#define QW_PACK_A_WASMSIMD(name, T, EXT_LO, EXT_HI, LOAD8)                                     \
  QW_DECLARE_GEMM_PACK_A_UKERNEL(name) {                                                       \
    QW_ASSERT_GEMM_PACK_A_UKERNEL();                                                           \
    const v128_t vzp = wasm_i16x8_splat((int16_t)a_zero_point);                                \
    const size_t rows = qw_gemm_panel_rows(mr);                                                \
    int16_t* out = (int16_t*)panel;                                                            \
    const T* src[QW_GEMM_MR_LIMIT];                                                            \
    for (size_t r = 0; r < rows; r++) src[r] = (const T*)(a + (r < mr ? r : mr - 1) * a_stride); \
    size_t kk = 0;                                                                             \
    if (rows == 1) {                                                                           \
      for (; kk + 16 <= k; kk += 16) {                                                         \
        const v128_t v = wasm_v128_load(src[0] + kk);                                          \
        wasm_v128_store(out + kk, wasm_i16x8_sub(EXT_LO(v), vzp));                             \
        wasm_v128_store(out + kk + 8, wasm_i16x8_sub(EXT_HI(v), vzp));                         \
      }                                                                                        \
      if (kk + 8 <= k) { /* K 24, or the stem convolution's 27 */                              \
        wasm_v128_store(out + kk, wasm_i16x8_sub(LOAD8(src[0] + kk), vzp));                    \
        kk += 8;                                                                               \
      }                                                                                        \
    } else if (rows == 2) {                                                                    \
      for (; kk + 8 <= k; kk += 8) {                                                           \
        const v128_t v0 = wasm_i16x8_sub(LOAD8(src[0] + kk), vzp);                             \
        const v128_t v1 = wasm_i16x8_sub(LOAD8(src[1] + kk), vzp);                             \
        wasm_v128_store(out + 2 * kk, wasm_i32x4_shuffle(v0, v1, 0, 4, 1, 5));                 \
        wasm_v128_store(out + 2 * kk + 8, wasm_i32x4_shuffle(v0, v1, 2, 6, 3, 7));             \
      }                                                                                        \
    } else if (rows == 4) {                                                                    \
      for (; kk + 8 <= k; kk += 8) {                                                           \
        v128_t v[4]; /* 4 pairs of each row, transposed to each pair of the 4 rows */          \
        for (size_t r = 0; r < 4; r++) v[r] = wasm_i16x8_sub(LOAD8(src[r] + kk), vzp);         \
        qw_transpose_i32x4(v);                                                                 \
        for (size_t i = 0; i < 4; i++) wasm_v128_store(out + 4 * kk + 8 * i, v[i]);            \
      }                                                                                        \
    }                                                                                          \
    for (; kk < kc; kk++) {                                                                    \
      for (size_t r = 0; r < rows; r++) {                                                      \
        out[kk / 2 * 2 * rows + 2 * r + kk % 2] = kk < k ? (int16_t)(src[r][kk] - a_zero_point) : 0; \
      }                                                                                        \
    }                                                                                          \
  }

QW_PACK_A_WASMSIMD(qw_qu8_gemm_pack_a_ukernel__wasmsimd, uint8_t, wasm_u16x8_extend_low_u8x16,
                   wasm_u16x8_extend_high_u8x16, wasm_u16x8_load8x8)
QW_PACK_A_WASMSIMD(qw_qs8_gemm_pack_a_ukernel__wasmsimd, int8_t, wasm_i16x8_extend_low_i8x16,
                   wasm_i16x8_extend_high_i8x16, wasm_i16x8_load8x8)
