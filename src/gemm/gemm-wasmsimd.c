/* wasm SIMD128 GEMM microkernels for the two layouts of gemm.h, all on i32x4.dot_i16x8_s. */
#include <string.h>

#include "gemm/gemm.h"
#include "simd128.h"

static inline void store_columns(int32_t* c, v128_t v, size_t columns) {
  if (columns >= 4) {
    wasm_v128_store(c, v);
  } else {
    int32_t lanes[4];
    wasm_v128_store(lanes, v);
    memcpy(c, lanes, columns * sizeof(int32_t));
  }
}

/* ---- c8: raw 8-bit rows x int8 weights, widened in the loop (M < 4) ----------------------------- */

/* lanes (sum x0, sum x1, sum x2, sum x3) of four column accumulators */
static inline v128_t reduce4(v128_t x0, v128_t x1, v128_t x2, v128_t x3) {
  const v128_t t01 = wasm_i32x4_add(wasm_i32x4_shuffle(x0, x1, 0, 4, 1, 5), wasm_i32x4_shuffle(x0, x1, 2, 6, 3, 7));
  const v128_t t23 = wasm_i32x4_add(wasm_i32x4_shuffle(x2, x3, 0, 4, 1, 5), wasm_i32x4_shuffle(x2, x3, 2, 6, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(t01, t23, 0, 1, 4, 5), wasm_i32x4_shuffle(t01, t23, 2, 3, 6, 7));
}

/* The last k % 8 bytes of a row, zero-filled (their weights are zero-padded anyway). */
static inline v128_t load_tail_u8(const uint8_t* a, size_t n) {
  uint8_t buf[8] = {0};
  memcpy(buf, a, n);
  return wasm_u16x8_load8x8(buf);
}
static inline v128_t load_tail_s8(const uint8_t* a, size_t n) {
  uint8_t buf[8] = {0};
  memcpy(buf, a, n);
  return wasm_i16x8_load8x8(buf);
}

#define C8_STEP(MR, LOADED_A)                                                             \
  {                                                                                       \
    const v128_t w01 = wasm_v128_load(w);                                                 \
    const v128_t w23 = wasm_v128_load(w + 16);                                            \
    const v128_t vw0 = wasm_i16x8_extend_low_i8x16(w01);                                  \
    const v128_t vw1 = wasm_i16x8_extend_high_i8x16(w01);                                 \
    const v128_t vw2 = wasm_i16x8_extend_low_i8x16(w23);                                  \
    const v128_t vw3 = wasm_i16x8_extend_high_i8x16(w23);                                 \
    for (size_t r = 0; r < MR; r++) {                                                     \
      const v128_t va = LOADED_A;                                                         \
      acc[r][0] = wasm_i32x4_add(acc[r][0], wasm_i32x4_dot_i16x8(va, vw0));               \
      acc[r][1] = wasm_i32x4_add(acc[r][1], wasm_i32x4_dot_i16x8(va, vw1));               \
      acc[r][2] = wasm_i32x4_add(acc[r][2], wasm_i32x4_dot_i16x8(va, vw2));               \
      acc[r][3] = wasm_i32x4_add(acc[r][3], wasm_i32x4_dot_i16x8(va, vw3));               \
    }                                                                                     \
    w += 32;                                                                              \
  }

/* MR (1 or 2) rows; with MR 2 the second aliases the first when mr == 1. */
#define QW_GEMM_C8_WASMSIMD(name, MR, LOAD8, LOAD_TAIL)                                      \
  QW_DECLARE_GEMM_C8_UKERNEL(name) {                                                         \
    const uint8_t* ap[2] = {a, mr > 1 ? a + a_stride : a};                                   \
    int32_t* cp[2] = {c, mr > 1 ? c + c_stride : c};                                         \
    const size_t k_main = k & ~(size_t)7;                                                    \
    const size_t k_tail = k & 7;                                                             \
    for (size_t n0 = 0; n0 < nc; n0 += QW_GEMM_C8_NR) {                                      \
      v128_t acc[MR][4];                                                                     \
      for (size_t r = 0; r < MR; r++) {                                                      \
        acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = wasm_i32x4_const(0, 0, 0, 0);         \
      }                                                                                      \
      size_t kk = 0;                                                                         \
      for (; kk < k_main; kk += 8) C8_STEP(MR, LOAD8(ap[r] + kk))                            \
      if (k_tail != 0) C8_STEP(MR, LOAD_TAIL(ap[r] + kk, k_tail))                            \
      const size_t columns = nc - n0 < QW_GEMM_C8_NR ? nc - n0 : QW_GEMM_C8_NR;              \
      for (size_t r = MR; r-- > 0;) {                                                        \
        store_columns(cp[r] + n0, reduce4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]), columns); \
      }                                                                                      \
    }                                                                                        \
  }

QW_GEMM_C8_WASMSIMD(qw_qu8_qs8_gemm_ukernel_1x4c8__wasmsimd_dot16x2, 1, wasm_u16x8_load8x8, load_tail_u8)
QW_GEMM_C8_WASMSIMD(qw_qu8_qs8_gemm_ukernel_2x4c8__wasmsimd_dot16x2, 2, wasm_u16x8_load8x8, load_tail_u8)
QW_GEMM_C8_WASMSIMD(qw_qs8_qs8_gemm_ukernel_1x4c8__wasmsimd_dot16x2, 1, wasm_i16x8_load8x8, load_tail_s8)
QW_GEMM_C8_WASMSIMD(qw_qs8_qs8_gemm_ukernel_2x4c8__wasmsimd_dot16x2, 2, wasm_i16x8_load8x8, load_tail_s8)

/* ---- c2: int16 A panel x int16 weights, 4 rows x 8 columns ---------------------------------------- */

/* MR rows (aliased beyond mr) x 8 columns; per k pair, one 32-bit splat of each row's A pair and
 * two dots per row. */
#define QW_GEMM_C2_WASMSIMD(name, MR)                                                            \
  QW_DECLARE_GEMM_C2_UKERNEL(name) {                                                             \
    const int16_t* ap[MR];                                                                       \
    int32_t* cp[MR];                                                                             \
    ap[0] = a;                                                                                   \
    cp[0] = c;                                                                                   \
    for (size_t r = 1; r < MR; r++) {                                                            \
      ap[r] = r < mr ? ap[r - 1] + kc : ap[r - 1];                                               \
      cp[r] = r < mr ? cp[r - 1] + c_stride : cp[r - 1];                                         \
    }                                                                                            \
    for (size_t n0 = 0; n0 < nc; n0 += QW_GEMM_C2_NR) {                                          \
      v128_t lo[MR], hi[MR];                                                                     \
      for (size_t r = 0; r < MR; r++) {                                                          \
        lo[r] = hi[r] = wasm_i32x4_const(0, 0, 0, 0);                                            \
      }                                                                                          \
      for (size_t kk = 0; kk < kc; kk += 2, w += 16) {                                           \
        const v128_t wl = wasm_v128_load(w);                                                     \
        const v128_t wh = wasm_v128_load(w + 8);                                                 \
        for (size_t r = 0; r < MR; r++) {                                                        \
          const v128_t va = wasm_v128_load32_splat(ap[r] + kk);                                  \
          lo[r] = wasm_i32x4_add(lo[r], wasm_i32x4_dot_i16x8(va, wl));                           \
          hi[r] = wasm_i32x4_add(hi[r], wasm_i32x4_dot_i16x8(va, wh));                           \
        }                                                                                        \
      }                                                                                          \
      const size_t columns = nc - n0 < QW_GEMM_C2_NR ? nc - n0 : QW_GEMM_C2_NR;                  \
      /* Highest row first: aliased rows hold the same values as the rows they alias. */         \
      for (size_t r = MR; r-- > 0;) {                                                            \
        store_columns(cp[r] + n0, lo[r], columns < 4 ? columns : 4);                             \
        if (columns > 4) store_columns(cp[r] + n0 + 4, hi[r], columns - 4);                      \
      }                                                                                          \
    }                                                                                            \
  }

QW_GEMM_C2_WASMSIMD(qw_qs16_gemm_ukernel_1x8c2__wasmsimd_dot16x2, 1)
QW_GEMM_C2_WASMSIMD(qw_qs16_gemm_ukernel_2x8c2__wasmsimd_dot16x2, 2)
QW_GEMM_C2_WASMSIMD(qw_qs16_gemm_ukernel_4x8c2__wasmsimd_dot16x2, 4)
