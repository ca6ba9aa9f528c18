/* wasm SIMD128 GEMM microkernels, MRx4c8 layout, i32x4.dot_i16x8_s ("dot16x2": each lane sums two
 * 16-bit products). Per 8-k block and row: the row's 8 activations are loaded widened to int16 with
 * the zero point subtracted; the tile's 4 columns x 8 k come in two v128 loads, sign-extended to
 * four int16x8; one dot per (row, column) accumulates into that pair's i32x4. The 4 lanes of each
 * accumulator are summed once per tile. */
#include <string.h>

#include "gemm/gemm.h"
#include "simd128.h"

/* lanes (sum x0, sum x1, sum x2, sum x3) of four column accumulators */
static inline v128_t reduce4(v128_t x0, v128_t x1, v128_t x2, v128_t x3) {
  const v128_t t01 = wasm_i32x4_add(wasm_i32x4_shuffle(x0, x1, 0, 4, 1, 5), wasm_i32x4_shuffle(x0, x1, 2, 6, 3, 7));
  const v128_t t23 = wasm_i32x4_add(wasm_i32x4_shuffle(x2, x3, 0, 4, 1, 5), wasm_i32x4_shuffle(x2, x3, 2, 6, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(t01, t23, 0, 1, 4, 5), wasm_i32x4_shuffle(t01, t23, 2, 3, 6, 7));
}

static inline void store_columns(int32_t* c, v128_t v, size_t columns) {
  if (columns >= 4) {
    wasm_v128_store(c, v);
  } else {
    int32_t lanes[4];
    wasm_v128_store(lanes, v);
    memcpy(c, lanes, columns * sizeof(int32_t));
  }
}

/* The last k % 8 activations of a row, zero-filled to 8 (their weights are zero-padded anyway). */
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

/* ROW(r) stamps per-row code; MR rows a0..a{MR-1}: rows beyond mr alias the previous one. */
#define QW_GEMM_WASMSIMD(name, MR, LOAD8, LOAD_TAIL)                                                \
  QW_DECLARE_GEMM_UKERNEL(name) {                                                                   \
    const uint8_t* ap[MR];                                                                          \
    int32_t* cp[MR];                                                                                \
    ap[0] = a;                                                                                      \
    cp[0] = c;                                                                                      \
    for (size_t r = 1; r < MR; r++) {                                                               \
      ap[r] = r < mr ? ap[r - 1] + a_stride : ap[r - 1];                                            \
      cp[r] = r < mr ? cp[r - 1] + c_stride : cp[r - 1];                                            \
    }                                                                                               \
    const v128_t vzp = wasm_i16x8_splat(params->a_zero_point);                                      \
    const size_t k_main = k & ~(size_t)7;                                                           \
    const size_t k_tail = k & 7;                                                                    \
    for (size_t n0 = 0; n0 < nc; n0 += QW_GEMM_NR) {                                                \
      v128_t acc[MR][4];                                                                            \
      for (size_t r = 0; r < MR; r++) {                                                             \
        acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = wasm_i32x4_const(0, 0, 0, 0);                \
      }                                                                                             \
      size_t kk = 0;                                                                                \
      for (; kk < k_main; kk += 8, w += 32) {                                                       \
        const v128_t w01 = wasm_v128_load(w);                                                       \
        const v128_t w23 = wasm_v128_load(w + 16);                                                  \
        const v128_t vw0 = wasm_i16x8_extend_low_i8x16(w01);                                        \
        const v128_t vw1 = wasm_i16x8_extend_high_i8x16(w01);                                       \
        const v128_t vw2 = wasm_i16x8_extend_low_i8x16(w23);                                        \
        const v128_t vw3 = wasm_i16x8_extend_high_i8x16(w23);                                       \
        for (size_t r = 0; r < MR; r++) {                                                           \
          const v128_t va = wasm_i16x8_sub(LOAD8(ap[r] + kk), vzp);                                 \
          acc[r][0] = wasm_i32x4_add(acc[r][0], wasm_i32x4_dot_i16x8(va, vw0));                     \
          acc[r][1] = wasm_i32x4_add(acc[r][1], wasm_i32x4_dot_i16x8(va, vw1));                     \
          acc[r][2] = wasm_i32x4_add(acc[r][2], wasm_i32x4_dot_i16x8(va, vw2));                     \
          acc[r][3] = wasm_i32x4_add(acc[r][3], wasm_i32x4_dot_i16x8(va, vw3));                     \
        }                                                                                           \
      }                                                                                             \
      if (k_tail != 0) {                                                                            \
        const v128_t w01 = wasm_v128_load(w);                                                       \
        const v128_t w23 = wasm_v128_load(w + 16);                                                  \
        w += 32;                                                                                    \
        const v128_t vw0 = wasm_i16x8_extend_low_i8x16(w01);                                        \
        const v128_t vw1 = wasm_i16x8_extend_high_i8x16(w01);                                       \
        const v128_t vw2 = wasm_i16x8_extend_low_i8x16(w23);                                        \
        const v128_t vw3 = wasm_i16x8_extend_high_i8x16(w23);                                       \
        for (size_t r = 0; r < MR; r++) {                                                           \
          const v128_t va = wasm_i16x8_sub(LOAD_TAIL(ap[r] + kk, k_tail), vzp);                     \
          acc[r][0] = wasm_i32x4_add(acc[r][0], wasm_i32x4_dot_i16x8(va, vw0));                     \
          acc[r][1] = wasm_i32x4_add(acc[r][1], wasm_i32x4_dot_i16x8(va, vw1));                     \
          acc[r][2] = wasm_i32x4_add(acc[r][2], wasm_i32x4_dot_i16x8(va, vw2));                     \
          acc[r][3] = wasm_i32x4_add(acc[r][3], wasm_i32x4_dot_i16x8(va, vw3));                     \
        }                                                                                           \
      }                                                                                             \
      const size_t columns = nc - n0 < QW_GEMM_NR ? nc - n0 : QW_GEMM_NR;                           \
      /* Highest row first: an aliased row then gets overwritten by the real one. */                \
      for (size_t r = MR; r-- > 0;) {                                                               \
        store_columns(cp[r] + n0, reduce4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]), columns);    \
      }                                                                                             \
    }                                                                                               \
  }

QW_GEMM_WASMSIMD(qw_qu8_qs8_gemm_ukernel_1x4c8__wasmsimd_dot16x2, 1, wasm_u16x8_load8x8, load_tail_u8)
QW_GEMM_WASMSIMD(qw_qu8_qs8_gemm_ukernel_2x4c8__wasmsimd_dot16x2, 2, wasm_u16x8_load8x8, load_tail_u8)
QW_GEMM_WASMSIMD(qw_qu8_qs8_gemm_ukernel_3x4c8__wasmsimd_dot16x2, 3, wasm_u16x8_load8x8, load_tail_u8)
QW_GEMM_WASMSIMD(qw_qu8_qs8_gemm_ukernel_4x4c8__wasmsimd_dot16x2, 4, wasm_u16x8_load8x8, load_tail_u8)
QW_GEMM_WASMSIMD(qw_qs8_qs8_gemm_ukernel_2x4c8__wasmsimd_dot16x2, 2, wasm_i16x8_load8x8, load_tail_s8)
