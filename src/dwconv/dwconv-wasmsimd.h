/* What the wasm SIMD depthwise kernels (SIMD128 over pair rows, relaxed SIMD over quad rows) share: the fused
 * fp32_plain output stage of 4 channels of 1 to 4 outputs. */
#ifndef QWASM_DWCONV_WASMSIMD_H
#define QWASM_DWCONV_WASMSIMD_H

#include <string.h>

#include "dwconv/dwconv.h"
#include "requantization/requantize-wasmsimd.h"

/* A loop the compiler must not unroll (clang; the native test build's gcc unrolls as it likes). */
#if defined(__clang__)
#define NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define NO_UNROLL
#endif

/* The output stage of the requantizing kernels: the fp32 rule for fp32_plain parameters, straight to bytes. */
struct fused_output {
  size_t channels;
  const int32_t* bias;     /* [channels_padded]: the accumulators start from it */
  const float* multiplier; /* [channels_padded] */
  struct qw_fp32_constants k;
  v128_t qmin, qmax; /* 16 bytes each */
  uint8_t* y;
};

/* Requantizes 1, 2 or 4 outputs' sums of channels c0..c0+3 to bytes 4i..4i+3 (output i): narrowed with saturation,
 * then clamped to qmax as bytes (requantize-wasmsimd.h); the values clamped to at least qmin before rounding, or,
 * for fp32_bounded parameters (bounded), as bytes after. */
QW_ALWAYS_INLINE v128_t output_bytes(const struct fused_output* f, int y_signed, int bounded, const v128_t* s,
                                  size_t outputs, v128_t m) {
  v128_t q[4];
  for (size_t i = 0; i < outputs; i++) {
    q[i] = bounded ? qw_requantize_fp32_bounded_i32x4(s[i], m, &f->k)
                   : qw_requantize_fp32_plain_above_i32x4(s[i], m, &f->k);
  }
  const v128_t lo = wasm_i16x8_narrow_i32x4(q[0], outputs > 1 ? q[1] : q[0]);
  const v128_t hi = outputs > 2 ? wasm_i16x8_narrow_i32x4(q[2], outputs > 3 ? q[3] : q[2]) : lo;
  if (y_signed) {
    const v128_t bytes = wasm_i8x16_min(wasm_i8x16_narrow_i16x8(lo, hi), f->qmax);
    return bounded ? wasm_i8x16_max(bytes, f->qmin) : bytes;
  }
  const v128_t bytes = wasm_u8x16_min(wasm_u8x16_narrow_i16x8(lo, hi), f->qmax);
  return bounded ? wasm_u8x16_max(bytes, f->qmin) : bytes;
}

/* Stores the 4 bytes of each of g (1 to 4) outputs, output i from bytes 4i..4i+3, outputs `stride` bytes apart. */
QW_ALWAYS_INLINE void store_outputs(uint8_t* y, size_t stride, v128_t bytes, size_t g) {
  wasm_v128_store32_lane(y, bytes, 0);
  if (g > 1) wasm_v128_store32_lane(y + stride, bytes, 1);
  if (g > 2) wasm_v128_store32_lane(y + 2 * stride, bytes, 2);
  if (g > 3) wasm_v128_store32_lane(y + 3 * stride, bytes, 3);
}

#endif /* QWASM_DWCONV_WASMSIMD_H */
