/* ONNX Runtime's QLinearAdd rule on wasm SIMD128, 16 elements per step. Each lane performs the
 * scalar rule's float operations in the same order (f32x4.div, not a reciprocal; the final rounding
 * is round-half-even like nearbyintf), so results equal the scalar kernel bit for bit. */
#include <assert.h>

#include "elementwise/vadd.h"
#include "simd128.h"

struct vadd_constants {
  v128_t a_scale, b_scale, y_scale, a_zero_point, b_zero_point, y_zero_point, y_min, y_max, magic, magic_bits;
};

/* Splatted once per call: the output pointer could alias the parameters as far as the compiler
 * knows, so without these locals it reloads and re-splats them for every vector. */
static inline struct vadd_constants vadd_constants(const struct qw_vadd_onnx_params* p) {
  return (struct vadd_constants){
      .a_scale = wasm_f32x4_splat(p->a_scale),
      .b_scale = wasm_f32x4_splat(p->b_scale),
      .y_scale = wasm_f32x4_splat(p->y_scale),
      .a_zero_point = wasm_i32x4_splat(p->a_zero_point),
      .b_zero_point = wasm_i32x4_splat(p->b_zero_point),
      .y_zero_point = wasm_f32x4_splat(p->y_zero_point),
      .y_min = wasm_f32x4_splat(p->y_min),
      .y_max = wasm_f32x4_splat(p->y_max),
      .magic = wasm_f32x4_splat(12582912.0f),
      .magic_bits = wasm_i32x4_splat(0x4B400000),
  };
}

/* The last step, nearbyintf and the conversion to int32, adds 1.5 * 2^23 and subtracts its bit
 * pattern: for |s| < 2^22 (here s is within the clamped output range) that rounds to nearest-even
 * exactly as nearbyintf does, in two operations instead of f32x4.nearest and i32x4.trunc_sat_f32x4
 * (about eight x64 instructions in V8). c is never NaN: the scales are finite and positive. */
static inline v128_t vadd_f32x4(v128_t a_i32, v128_t b_i32, const struct vadd_constants* k) {
  const v128_t va = wasm_f32x4_mul(k->a_scale, wasm_f32x4_convert_i32x4(wasm_i32x4_sub(a_i32, k->a_zero_point)));
  const v128_t vb = wasm_f32x4_mul(k->b_scale, wasm_f32x4_convert_i32x4(wasm_i32x4_sub(b_i32, k->b_zero_point)));
  v128_t c = wasm_f32x4_div(wasm_f32x4_add(va, vb), k->y_scale);
  c = wasm_f32x4_pmax(c, k->y_min); /* pmax(c, lo) = c < lo ? lo : c, as the scalar rule */
  c = wasm_f32x4_pmin(c, k->y_max); /* pmin(c, hi) = hi < c ? hi : c */
  const v128_t s = wasm_f32x4_add(c, k->y_zero_point);
  return wasm_i32x4_sub(wasm_f32x4_add(s, k->magic), k->magic_bits);
}

#define QW_VADD_ONNX_WASMSIMD(name, T, WIDEN_LO, WIDEN_HI, NARROW, SCALAR)                                     \
  QW_DECLARE_VADD_ONNX_UKERNEL(name) {                                                                        \
    assert(n != 0 && a != NULL && b != NULL && y != NULL && params != NULL);                                  \
    const T* pa = (const T*)a;                                                                                \
    const T* pb = (const T*)b;                                                                                \
    T* py = (T*)y;                                                                                            \
    const struct vadd_constants k = vadd_constants(params);                                                   \
    size_t i = 0;                                                                                             \
    for (; i + 16 <= n; i += 16) {                                                                            \
      const v128_t a8 = wasm_v128_load(pa + i), b8 = wasm_v128_load(pb + i);                                  \
      const v128_t a16lo = WIDEN_LO(a8), a16hi = WIDEN_HI(a8), b16lo = WIDEN_LO(b8), b16hi = WIDEN_HI(b8);     \
      const v128_t c0 = vadd_f32x4(wasm_i32x4_extend_low_i16x8(a16lo), wasm_i32x4_extend_low_i16x8(b16lo), &k);   \
      const v128_t c1 = vadd_f32x4(wasm_i32x4_extend_high_i16x8(a16lo), wasm_i32x4_extend_high_i16x8(b16lo), &k); \
      const v128_t c2 = vadd_f32x4(wasm_i32x4_extend_low_i16x8(a16hi), wasm_i32x4_extend_low_i16x8(b16hi), &k);   \
      const v128_t c3 = vadd_f32x4(wasm_i32x4_extend_high_i16x8(a16hi), wasm_i32x4_extend_high_i16x8(b16hi), &k); \
      wasm_v128_store(py + i, NARROW(wasm_i16x8_narrow_i32x4(c0, c1), wasm_i16x8_narrow_i32x4(c2, c3)));     \
    }                                                                                                         \
    if (i != n) SCALAR(n - i, pa + i, pb + i, py + i, params);                                                \
  }

QW_VADD_ONNX_WASMSIMD(qw_qu8_vadd_onnx_ukernel__wasmsimd, uint8_t, wasm_u16x8_extend_low_u8x16,
                      wasm_u16x8_extend_high_u8x16, wasm_u8x16_narrow_i16x8, qw_qu8_vadd_onnx_ukernel__scalar)
QW_VADD_ONNX_WASMSIMD(qw_qs8_vadd_onnx_ukernel__wasmsimd, int8_t, wasm_i16x8_extend_low_i8x16,
                      wasm_i16x8_extend_high_i8x16, wasm_i8x16_narrow_i16x8, qw_qs8_vadd_onnx_ukernel__scalar)
