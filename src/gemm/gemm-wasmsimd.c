/* wasm SIMD128 GEMM microkernels over the c2 layout of gemm.h (tiles of 8 columns, kc a multiple of 4)
 * and A packing. */
#include <string.h>

#include "gemm/gemm.h"
#include "simd128.h"

#define NR 8 /* columns per weight tile: two vectors of 4 */

static inline void store_columns(int32_t* c, v128_t v, size_t columns) {
  if (columns >= 4) {
    wasm_v128_store(c, v);
  } else {
    int32_t lanes[4];
    wasm_v128_store(lanes, v);
    memcpy(c, lanes, columns * sizeof(int32_t));
  }
}

static inline void store_row(int32_t* c, v128_t lo, v128_t hi, size_t columns) {
  store_columns(c, lo, columns < 4 ? columns : 4);
  if (columns > 4) store_columns(c + 4, hi, columns - 4);
}

/* One row. Each weight vector is used once, so the loop is bound by instruction count (load, dot,
 * add per 8 multiply-adds; the same speed with the weights in L2 or L3): four k pairs per step
 * amortize the loop overhead (V8 adds a stack check per loop iteration), and two accumulators (the
 * dots summed pairwise first) leave V8 enough of the 16 xmm registers that nothing spills; more
 * accumulators, or two tiles sharing the splats, spilled and ran slower. Pointers, not indices,
 * so that V8 needs no address arithmetic per load. kc % 8 == 4 ends with one half step. */
QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_1x8c2__wasmsimd_dot16x2) {
  QW_ASSERT_GEMM_UKERNEL(1, 4);
  (void)mr;
  (void)c_stride;
  const int16_t* a_row = (const int16_t*)a;
  const int16_t* a_end8 = a_row + (kc & ~(size_t)7);
  const int16_t* wt = (const int16_t*)w;
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
    store_row(c + n0, lo, hi, columns);
  }
}

/* MR rows (aliased beyond mr) x 8 columns, two k pairs per step (kc is a multiple of 4): V8 adds
 * a stack check and a bound check to every loop iteration, and small K (16 to 96 in MobileNet's
 * pointwise layers) leaves few iterations per tile to spread them over. Four pairs per step made
 * V8 spill and ran much slower. */
#define QW_GEMM_WASMSIMD(name, MR)                                                   \
  QW_DECLARE_GEMM_UKERNEL(name) {                                                    \
    QW_ASSERT_GEMM_UKERNEL(MR, 4);                                                   \
    const int16_t* wt = (const int16_t*)w;                                           \
    const int16_t* ap[MR];                                                           \
    int32_t* cp[MR];                                                                 \
    ap[0] = (const int16_t*)a;                                                       \
    cp[0] = c;                                                                       \
    for (size_t r = 1; r < MR; r++) {                                                \
      ap[r] = r < mr ? ap[r - 1] + kc : ap[r - 1];                                   \
      cp[r] = r < mr ? cp[r - 1] + c_stride : cp[r - 1];                             \
    }                                                                                \
    for (size_t n0 = 0; n0 < nc; n0 += NR) {                                         \
      v128_t lo[MR], hi[MR];                                                         \
      for (size_t r = 0; r < MR; r++) {                                              \
        lo[r] = hi[r] = wasm_i32x4_const(0, 0, 0, 0);                                \
      }                                                                              \
      for (size_t kk = 0; kk < kc; kk += 4, wt += 32) {                              \
        const v128_t wl = wasm_v128_load(wt);                                        \
        const v128_t wh = wasm_v128_load(wt + 8);                                    \
        for (size_t r = 0; r < MR; r++) {                                            \
          const v128_t va = wasm_v128_load32_splat(ap[r] + kk);                      \
          lo[r] = wasm_i32x4_add(lo[r], wasm_i32x4_dot_i16x8(va, wl));               \
          hi[r] = wasm_i32x4_add(hi[r], wasm_i32x4_dot_i16x8(va, wh));               \
        }                                                                            \
        const v128_t wl1 = wasm_v128_load(wt + 16);                                  \
        const v128_t wh1 = wasm_v128_load(wt + 24);                                  \
        for (size_t r = 0; r < MR; r++) {                                            \
          const v128_t va = wasm_v128_load32_splat(ap[r] + kk + 2);                  \
          lo[r] = wasm_i32x4_add(lo[r], wasm_i32x4_dot_i16x8(va, wl1));              \
          hi[r] = wasm_i32x4_add(hi[r], wasm_i32x4_dot_i16x8(va, wh1));              \
        }                                                                            \
      }                                                                              \
      const size_t columns = nc - n0 < NR ? nc - n0 : NR;                            \
      /* Highest row first: aliased rows hold the values of the rows they alias. */  \
      for (size_t r = MR; r-- > 0;) {                                                \
        store_row(cp[r] + n0, lo[r], hi[r], columns);                                \
      }                                                                              \
    }                                                                                \
  }

QW_GEMM_WASMSIMD(qw_qs16_gemm_ukernel_2x8c2__wasmsimd_dot16x2, 2)
QW_GEMM_WASMSIMD(qw_qs16_gemm_ukernel_4x8c2__wasmsimd_dot16x2, 4)

/* 16 bytes per step widened to two int16x8 with the zero point subtracted, then 8 (K = 24, or the
 * stem convolution's 27), the rest per element. */
#define QW_PACK_A_WASMSIMD(name, T, EXT_LO, EXT_HI, LOAD8)                           \
  QW_DECLARE_GEMM_PACK_A_UKERNEL(name) {                                             \
    QW_ASSERT_GEMM_PACK_A_UKERNEL();                                                 \
    const v128_t vzp = wasm_i16x8_splat((int16_t)a_zero_point);                      \
    int16_t* out = (int16_t*)panel;                                                  \
    for (size_t r = 0; r < mr; r++, a += a_stride, out += kc) {                      \
      size_t kk = 0;                                                                 \
      for (; kk + 16 <= k; kk += 16) {                                               \
        const v128_t v = wasm_v128_load(a + kk);                                     \
        wasm_v128_store(out + kk, wasm_i16x8_sub(EXT_LO(v), vzp));                   \
        wasm_v128_store(out + kk + 8, wasm_i16x8_sub(EXT_HI(v), vzp));               \
      }                                                                              \
      if (kk + 8 <= k) {                                                             \
        wasm_v128_store(out + kk, wasm_i16x8_sub(LOAD8(a + kk), vzp));               \
        kk += 8;                                                                     \
      }                                                                              \
      for (; kk < k; kk++) out[kk] = (int16_t)(((const T*)a)[kk] - a_zero_point);    \
      for (; kk < kc; kk++) out[kk] = 0;                                             \
    }                                                                                \
  }

QW_PACK_A_WASMSIMD(qw_qu8_gemm_pack_a_ukernel__wasmsimd, uint8_t, wasm_u16x8_extend_low_u8x16,
                   wasm_u16x8_extend_high_u8x16, wasm_u16x8_load8x8)
QW_PACK_A_WASMSIMD(qw_qs8_gemm_pack_a_ukernel__wasmsimd, int8_t, wasm_i16x8_extend_low_i8x16,
                   wasm_i16x8_extend_high_i8x16, wasm_i16x8_load8x8)
