/* wasm SIMD128 dequantize kernels: widen to i32, subtract zp, convert, scale. Two arithmetic
 * variants: per-tensor float scale (int subtraction, f32 multiply) and PyTorch's per-channel
 * float64 scale (f32 subtraction, f64 multiply, demote). */
#include <assert.h>

#include "quantize.h"
#include "simd128.h"

static inline void dequantize_i32x4(v128_t q, float* y, const struct qw_dequantize_params* p) {
  const v128_t d = wasm_i32x4_sub(q, wasm_i32x4_splat(p->zero_point));
  wasm_v128_store(y, wasm_f32x4_mul(wasm_f32x4_splat(p->scale), wasm_f32x4_convert_i32x4(d)));
}

static inline void dequantize_f64_i32x4(v128_t q, float* y, const struct qw_dequantize_f64_params* p) {
  const v128_t d = wasm_f32x4_sub(wasm_f32x4_convert_i32x4(q), wasm_f32x4_splat(p->zero_point_f));
  const v128_t scale = wasm_f64x2_splat(p->scale);
  const v128_t lo = wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(d), scale);
  const v128_t hi = wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(d, d, 2, 3, 2, 3)), scale);
  wasm_v128_store(y, wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi), 0, 1, 4, 5));
}

/* 16 bytes at a time, widened 8 -> 16 -> 32 bits by the given extends; the tail per element. */
#define QW_DEQUANTIZE_8BIT_WASMSIMD(name, T, P, vector_fn, value_fn, ext16_lo, ext16_hi, ext32_lo, ext32_hi) \
  void name(size_t n, const void* q, float* y, const P* params) {                                             \
    assert(n != 0 && q != NULL && y != NULL && params != NULL);                                              \
    const T* in = (const T*)q;                                                                               \
    for (; n >= 16; n -= 16, in += 16, y += 16) {                                                            \
      const v128_t v = wasm_v128_load(in);                                                                   \
      const v128_t lo = ext16_lo(v);                                                                         \
      const v128_t hi = ext16_hi(v);                                                                         \
      vector_fn(ext32_lo(lo), y, params);                                                                    \
      vector_fn(ext32_hi(lo), y + 4, params);                                                                \
      vector_fn(ext32_lo(hi), y + 8, params);                                                                \
      vector_fn(ext32_hi(hi), y + 12, params);                                                               \
    }                                                                                                        \
    for (size_t i = 0; i < n; i++) {                                                                         \
      y[i] = value_fn(in[i], params);                                                                        \
    }                                                                                                        \
  }

#define QW_DEQUANTIZE_32BIT_WASMSIMD(name, P, vector_fn, value_fn) \
  void name(size_t n, const void* q, float* y, const P* params) {  \
    assert(n != 0 && q != NULL && y != NULL && params != NULL);    \
    const int32_t* in = (const int32_t*)q;                         \
    for (; n >= 4; n -= 4, in += 4, y += 4) {                      \
      vector_fn(wasm_v128_load(in), y, params);                    \
    }                                                              \
    for (size_t i = 0; i < n; i++) {                               \
      y[i] = value_fn(in[i], params);                              \
    }                                                              \
  }

QW_DEQUANTIZE_8BIT_WASMSIMD(qw_qu8_f32_dequantize_ukernel__wasmsimd, uint8_t, struct qw_dequantize_params,
                            dequantize_i32x4, qw_dequantize_value, wasm_u16x8_extend_low_u8x16,
                            wasm_u16x8_extend_high_u8x16, wasm_u32x4_extend_low_u16x8, wasm_u32x4_extend_high_u16x8)
QW_DEQUANTIZE_8BIT_WASMSIMD(qw_qs8_f32_dequantize_ukernel__wasmsimd, int8_t, struct qw_dequantize_params,
                            dequantize_i32x4, qw_dequantize_value, wasm_i16x8_extend_low_i8x16,
                            wasm_i16x8_extend_high_i8x16, wasm_i32x4_extend_low_i16x8, wasm_i32x4_extend_high_i16x8)
QW_DEQUANTIZE_32BIT_WASMSIMD(qw_qs32_f32_dequantize_ukernel__wasmsimd, struct qw_dequantize_params, dequantize_i32x4,
                             qw_dequantize_value)

QW_DEQUANTIZE_8BIT_WASMSIMD(qw_qu8_f32_dequantize_f64scale_ukernel__wasmsimd, uint8_t, struct qw_dequantize_f64_params,
                            dequantize_f64_i32x4, qw_dequantize_f64_value, wasm_u16x8_extend_low_u8x16,
                            wasm_u16x8_extend_high_u8x16, wasm_u32x4_extend_low_u16x8, wasm_u32x4_extend_high_u16x8)
QW_DEQUANTIZE_8BIT_WASMSIMD(qw_qs8_f32_dequantize_f64scale_ukernel__wasmsimd, int8_t, struct qw_dequantize_f64_params,
                            dequantize_f64_i32x4, qw_dequantize_f64_value, wasm_i16x8_extend_low_i8x16,
                            wasm_i16x8_extend_high_i8x16, wasm_i32x4_extend_low_i16x8, wasm_i32x4_extend_high_i16x8)
QW_DEQUANTIZE_32BIT_WASMSIMD(qw_qs32_f32_dequantize_f64scale_ukernel__wasmsimd, struct qw_dequantize_f64_params,
                             dequantize_f64_i32x4, qw_dequantize_f64_value)
