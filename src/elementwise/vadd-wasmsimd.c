/* ONNX Runtime's QLinearAdd rule on wasm SIMD128, 16 elements per step. Each lane performs the
 * scalar rule's float operations in the same order (f32x4.div, not a reciprocal; f32x4.nearest is
 * round-half-even like nearbyintf), so results equal the scalar kernel bit for bit. */
#include "elementwise/vadd.h"
#include "simd128.h"

static inline v128_t vadd_f32x4(v128_t a_i32, v128_t b_i32, const struct qw_vadd_onnx_params* p) {
  const v128_t va = wasm_f32x4_mul(wasm_f32x4_splat(p->a_scale),
                                   wasm_f32x4_convert_i32x4(wasm_i32x4_sub(a_i32, wasm_i32x4_splat(p->a_zero_point))));
  const v128_t vb = wasm_f32x4_mul(wasm_f32x4_splat(p->b_scale),
                                   wasm_f32x4_convert_i32x4(wasm_i32x4_sub(b_i32, wasm_i32x4_splat(p->b_zero_point))));
  v128_t c = wasm_f32x4_div(wasm_f32x4_add(va, vb), wasm_f32x4_splat(p->y_scale));
  c = wasm_f32x4_pmax(c, wasm_f32x4_splat(p->y_min)); /* pmax(c, lo) = c < lo ? lo : c, as the scalar rule */
  c = wasm_f32x4_pmin(c, wasm_f32x4_splat(p->y_max)); /* pmin(c, hi) = hi < c ? hi : c */
  return wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_add(c, wasm_f32x4_splat(p->y_zero_point))));
}

#define QW_VADD_ONNX_WASMSIMD(name, T, WIDEN_LO, WIDEN_HI, NARROW, SCALAR)                                     \
  void name(size_t n, const void* a, const void* b, void* y, const struct qw_vadd_onnx_params* params) {      \
    const T* pa = (const T*)a;                                                                                \
    const T* pb = (const T*)b;                                                                                \
    T* py = (T*)y;                                                                                            \
    size_t i = 0;                                                                                             \
    for (; i + 16 <= n; i += 16) {                                                                            \
      const v128_t a8 = wasm_v128_load(pa + i), b8 = wasm_v128_load(pb + i);                                  \
      const v128_t a16lo = WIDEN_LO(a8), a16hi = WIDEN_HI(a8), b16lo = WIDEN_LO(b8), b16hi = WIDEN_HI(b8);     \
      const v128_t c0 = vadd_f32x4(wasm_i32x4_extend_low_i16x8(a16lo), wasm_i32x4_extend_low_i16x8(b16lo), params);   \
      const v128_t c1 = vadd_f32x4(wasm_i32x4_extend_high_i16x8(a16lo), wasm_i32x4_extend_high_i16x8(b16lo), params); \
      const v128_t c2 = vadd_f32x4(wasm_i32x4_extend_low_i16x8(a16hi), wasm_i32x4_extend_low_i16x8(b16hi), params);   \
      const v128_t c3 = vadd_f32x4(wasm_i32x4_extend_high_i16x8(a16hi), wasm_i32x4_extend_high_i16x8(b16hi), params); \
      wasm_v128_store(py + i, NARROW(wasm_i16x8_narrow_i32x4(c0, c1), wasm_i16x8_narrow_i32x4(c2, c3)));     \
    }                                                                                                         \
    SCALAR(n - i, pa + i, pb + i, py + i, params);                                                            \
  }

QW_VADD_ONNX_WASMSIMD(qw_qu8_vadd_onnx_ukernel__wasmsimd, uint8_t, wasm_u16x8_extend_low_u8x16,
                      wasm_u16x8_extend_high_u8x16, wasm_u8x16_narrow_i16x8, qw_qu8_vadd_onnx_ukernel__scalar)
QW_VADD_ONNX_WASMSIMD(qw_qs8_vadd_onnx_ukernel__wasmsimd, int8_t, wasm_i16x8_extend_low_i8x16,
                      wasm_i16x8_extend_high_i8x16, wasm_i8x16_narrow_i16x8, qw_qs8_vadd_onnx_ukernel__scalar)
