/* wasm SIMD128 dequantize kernels: widen to i32, subtract zp (wrapping), convert, scale. */
#include "quantize.h"
#include "simd128.h"

static inline void dequantize_i32x4(v128_t q, float* y, const struct qw_dequantize_params* p) {
  const v128_t d = wasm_i32x4_sub(q, wasm_i32x4_splat(p->zero_point));
  wasm_v128_store(y, wasm_f32x4_mul(wasm_f32x4_splat(p->scale), wasm_f32x4_convert_i32x4(d)));
}

QW_DECLARE_DEQUANTIZE_UKERNEL(qw_qu8_f32_dequantize_ukernel__wasmsimd) {
  const uint8_t* in = (const uint8_t*)q;
  for (; n >= 16; n -= 16, in += 16, y += 16) {
    const v128_t v = wasm_v128_load(in);
    const v128_t lo = wasm_u16x8_extend_low_u8x16(v);
    const v128_t hi = wasm_u16x8_extend_high_u8x16(v);
    dequantize_i32x4(wasm_u32x4_extend_low_u16x8(lo), y, params);
    dequantize_i32x4(wasm_u32x4_extend_high_u16x8(lo), y + 4, params);
    dequantize_i32x4(wasm_u32x4_extend_low_u16x8(hi), y + 8, params);
    dequantize_i32x4(wasm_u32x4_extend_high_u16x8(hi), y + 12, params);
  }
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_dequantize_value(in[i], params);
  }
}

QW_DECLARE_DEQUANTIZE_UKERNEL(qw_qs8_f32_dequantize_ukernel__wasmsimd) {
  const int8_t* in = (const int8_t*)q;
  for (; n >= 16; n -= 16, in += 16, y += 16) {
    const v128_t v = wasm_v128_load(in);
    const v128_t lo = wasm_i16x8_extend_low_i8x16(v);
    const v128_t hi = wasm_i16x8_extend_high_i8x16(v);
    dequantize_i32x4(wasm_i32x4_extend_low_i16x8(lo), y, params);
    dequantize_i32x4(wasm_i32x4_extend_high_i16x8(lo), y + 4, params);
    dequantize_i32x4(wasm_i32x4_extend_low_i16x8(hi), y + 8, params);
    dequantize_i32x4(wasm_i32x4_extend_high_i16x8(hi), y + 12, params);
  }
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_dequantize_value(in[i], params);
  }
}

QW_DECLARE_DEQUANTIZE_UKERNEL(qw_qs32_f32_dequantize_ukernel__wasmsimd) {
  const int32_t* in = (const int32_t*)q;
  for (; n >= 4; n -= 4, in += 4, y += 4) {
    dequantize_i32x4(wasm_v128_load(in), y, params);
  }
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_dequantize_value(in[i], params);
  }
}

/* float64-scale variant (per-channel): (float)q - zp in f32, times the scale in f64x2, demoted. */
static inline void dequantize_f64_i32x4(v128_t q, float* y, const struct qw_dequantize_f64_params* p) {
  const v128_t d = wasm_f32x4_sub(wasm_f32x4_convert_i32x4(q), wasm_f32x4_splat(p->zero_point_f));
  const v128_t scale = wasm_f64x2_splat(p->scale);
  const v128_t lo = wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(d), scale);
  const v128_t hi = wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(d, d, 2, 3, 2, 3)), scale);
  wasm_v128_store(y, wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi), 0, 1, 4, 5));
}

QW_DECLARE_DEQUANTIZE_F64_UKERNEL(qw_qu8_f32_dequantize_f64scale_ukernel__wasmsimd) {
  const uint8_t* in = (const uint8_t*)q;
  for (; n >= 16; n -= 16, in += 16, y += 16) {
    const v128_t v = wasm_v128_load(in);
    const v128_t lo = wasm_u16x8_extend_low_u8x16(v);
    const v128_t hi = wasm_u16x8_extend_high_u8x16(v);
    dequantize_f64_i32x4(wasm_u32x4_extend_low_u16x8(lo), y, params);
    dequantize_f64_i32x4(wasm_u32x4_extend_high_u16x8(lo), y + 4, params);
    dequantize_f64_i32x4(wasm_u32x4_extend_low_u16x8(hi), y + 8, params);
    dequantize_f64_i32x4(wasm_u32x4_extend_high_u16x8(hi), y + 12, params);
  }
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_dequantize_f64_value(in[i], params);
  }
}

QW_DECLARE_DEQUANTIZE_F64_UKERNEL(qw_qs8_f32_dequantize_f64scale_ukernel__wasmsimd) {
  const int8_t* in = (const int8_t*)q;
  for (; n >= 16; n -= 16, in += 16, y += 16) {
    const v128_t v = wasm_v128_load(in);
    const v128_t lo = wasm_i16x8_extend_low_i8x16(v);
    const v128_t hi = wasm_i16x8_extend_high_i8x16(v);
    dequantize_f64_i32x4(wasm_i32x4_extend_low_i16x8(lo), y, params);
    dequantize_f64_i32x4(wasm_i32x4_extend_high_i16x8(lo), y + 4, params);
    dequantize_f64_i32x4(wasm_i32x4_extend_low_i16x8(hi), y + 8, params);
    dequantize_f64_i32x4(wasm_i32x4_extend_high_i16x8(hi), y + 12, params);
  }
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_dequantize_f64_value(in[i], params);
  }
}

QW_DECLARE_DEQUANTIZE_F64_UKERNEL(qw_qs32_f32_dequantize_f64scale_ukernel__wasmsimd) {
  const int32_t* in = (const int32_t*)q;
  for (; n >= 4; n -= 4, in += 4, y += 4) {
    dequantize_f64_i32x4(wasm_v128_load(in), y, params);
  }
  for (size_t i = 0; i < n; i++) {
    y[i] = qw_dequantize_f64_value(in[i], params);
  }
}
