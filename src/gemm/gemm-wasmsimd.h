/* What the wasm SIMD GEMM kernels (SIMD128 and relaxed) share: the row pointers of an MR-row tile, rows past mr
 * aliasing the last real one, and the store of one row's 8 columns, the last tile's cut to the columns left. */
#ifndef QWASM_GEMM_WASMSIMD_H
#define QWASM_GEMM_WASMSIMD_H

#include <string.h>

#include "gemm/gemm.h"
#include "simd128.h"

/* rows[r]: MR output rows of type T `stride` elements apart from out; r >= mr alias row mr - 1. */
#define QW_GEMM_OUTPUT_ROWS(MR, T, rows, out, stride)                \
  T* rows[MR];                                                       \
  rows[0] = (T*)(out);                                               \
  for (size_t r = 1; r < MR; r++) {                                  \
    rows[r] = r < mr ? rows[r - 1] + (stride) : rows[r - 1];         \
  }

/* ap[r]: A panel rows `a_row` elements apart from a0; cp[r]: C rows c_stride apart; r >= mr alias row mr - 1. */
#define QW_GEMM_ROW_POINTERS(MR, T, a0, a_row)                \
  QW_GEMM_OUTPUT_ROWS(MR, const T, ap, a0, a_row)             \
  QW_GEMM_OUTPUT_ROWS(MR, int32_t, cp, c, c_stride)

/* The two accumulator vectors (columns 0-3, 4-7) of each of MR rows, zeroed. */
#define QW_GEMM_ZEROED_ACCUMULATORS(MR) \
  v128_t lo[MR], hi[MR];                \
  for (size_t r = 0; r < MR; r++) {     \
    lo[r] = hi[r] = wasm_i32x4_const(0, 0, 0, 0); \
  }

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

#endif /* QWASM_GEMM_WASMSIMD_H */
