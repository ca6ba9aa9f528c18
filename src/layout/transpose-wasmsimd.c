/* wasm SIMD128 8-bit transpose: 16x16 blocks through four rounds of interleaving shuffles (8, 16,
 * 32, 64-bit lanes); the edges use the scalar kernel. Three rows into contiguous 3-byte columns (RGB planes to
 * pixels, the input of most image models) take their own shuffles. */
#include <assert.h>

#include "layout/transpose.h"
#include "simd128.h"

static inline void transpose16x16(const uint8_t* src, size_t src_stride, uint8_t* dst, size_t dst_stride) {
  v128_t r[16], t[16];
  for (int i = 0; i < 16; i++) r[i] = wasm_v128_load(src + (size_t)i * src_stride);
  for (int i = 0; i < 16; i += 2) {
    t[i] = wasm_i8x16_shuffle(r[i], r[i + 1], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    t[i + 1] = wasm_i8x16_shuffle(r[i], r[i + 1], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  }
  for (int g = 0; g < 16; g += 4) {
    for (int h = 0; h < 2; h++) {
      r[g + 2 * h] = wasm_i16x8_shuffle(t[g + h], t[g + h + 2], 0, 8, 1, 9, 2, 10, 3, 11);
      r[g + 2 * h + 1] = wasm_i16x8_shuffle(t[g + h], t[g + h + 2], 4, 12, 5, 13, 6, 14, 7, 15);
    }
  }
  for (int g = 0; g < 16; g += 8) {
    for (int h = 0; h < 4; h++) {
      t[g + 2 * h] = wasm_i32x4_shuffle(r[g + h], r[g + h + 4], 0, 4, 1, 5);
      t[g + 2 * h + 1] = wasm_i32x4_shuffle(r[g + h], r[g + h + 4], 2, 6, 3, 7);
    }
  }
  for (int h = 0; h < 8; h++) {
    r[2 * h] = wasm_i64x2_shuffle(t[h], t[h + 8], 0, 2);
    r[2 * h + 1] = wasm_i64x2_shuffle(t[h], t[h + 8], 1, 3);
  }
  for (int j = 0; j < 16; j++) wasm_v128_store(dst + (size_t)j * dst_stride, r[j]);
}

/* Three rows into 3-byte columns (an RGB image's planes into channels-last pixels), 16 columns per step: each
 * 16-byte output vector gathers two planes' bytes, then the third's. */
static void interleave3(size_t cols, const uint8_t* src, size_t src_stride, uint8_t* dst) {
  size_t j = 0;
  for (; j + 16 <= cols; j += 16, dst += 48) {
    const v128_t r = wasm_v128_load(src + j);
    const v128_t g = wasm_v128_load(src + src_stride + j);
    const v128_t b = wasm_v128_load(src + 2 * src_stride + j);
    const v128_t rg0 = wasm_i8x16_shuffle(r, g, 0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
    const v128_t rg1 = wasm_i8x16_shuffle(r, g, 21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
    const v128_t rg2 = wasm_i8x16_shuffle(r, g, 0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
    wasm_v128_store(dst, wasm_i8x16_shuffle(rg0, b, 0, 1, 16, 3, 4, 17, 6, 7, 18, 9, 10, 19, 12, 13, 20, 15));
    wasm_v128_store(dst + 16, wasm_i8x16_shuffle(rg1, b, 0, 21, 2, 3, 22, 5, 6, 23, 8, 9, 24, 11, 12, 25, 14, 15));
    wasm_v128_store(dst + 32, wasm_i8x16_shuffle(rg2, b, 26, 1, 2, 27, 4, 5, 28, 7, 8, 29, 10, 11, 30, 13, 14, 31));
  }
  if (j != cols) {
    qw_x8_transpose_ukernel__scalar(3, cols - j, src + j, src_stride, dst, 3);
  }
}

QW_DECLARE_X8_TRANSPOSE_UKERNEL(qw_x8_transpose_ukernel_16x16__wasmsimd) {
  assert(rows != 0 && cols != 0 && src != NULL && dst != NULL);
  if (rows == 3 && dst_stride == 3) {
    interleave3(cols, src, src_stride, dst);
    return;
  }
  const size_t rows16 = rows & ~(size_t)15, cols16 = cols & ~(size_t)15;
  for (size_t i = 0; i < rows16; i += 16) {
    for (size_t j = 0; j < cols16; j += 16) {
      transpose16x16(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
    }
  }
  if (cols16 != cols && rows16 != 0) {
    qw_x8_transpose_ukernel__scalar(rows16, cols - cols16, src + cols16, src_stride, dst + cols16 * dst_stride,
                                    dst_stride);
  }
  if (rows16 != rows) {
    qw_x8_transpose_ukernel__scalar(rows - rows16, cols, src + rows16 * src_stride, src_stride, dst + rows16,
                                    dst_stride);
  }
}
