/* wasm SIMD128 fp32 requantization, 16 outputs per step; the tail uses the scalar rule. */
#include "requantization/requantization.h"
#include "simd128.h"

static inline v128_t requantize_i32x4(const int32_t* acc, size_t j, const struct qw_requantization_params* p) {
  const v128_t x = wasm_i32x4_add(wasm_v128_load(acc + j), wasm_v128_load(p->bias + j));
  const v128_t v = wasm_f32x4_mul(wasm_f32x4_add(wasm_f32x4_convert_i32x4(x), wasm_v128_load(p->bias_f32 + j)),
                                  wasm_v128_load(p->multiplier + j));
  const v128_t r = wasm_f32x4_nearest(v);
  const v128_t is_nan = wasm_f32x4_ne(r, r);
  v128_t t = wasm_f32x4_add(r, wasm_f32x4_splat((float)p->zero_point));
  t = wasm_f32x4_pmax(t, wasm_f32x4_splat((float)p->qmin));
  t = wasm_f32x4_pmin(t, wasm_f32x4_splat((float)p->qmax));
  const int32_t nan_value = p->zero_point < p->qmin ? p->qmin : p->zero_point > p->qmax ? p->qmax : p->zero_point;
  return wasm_v128_bitselect(wasm_i32x4_splat(nan_value), wasm_i32x4_trunc_sat_f32x4(t), is_nan);
}

#define QW_REQUANTIZE_WASMSIMD(name, T, NARROW)                                                   \
  QW_DECLARE_REQUANTIZATION_UKERNEL(name) {                                                       \
    T* out = (T*)y;                                                                               \
    size_t j = 0;                                                                                 \
    for (; j + 16 <= n; j += 16) {                                                                \
      const v128_t q0 = requantize_i32x4(acc, j, params);                               \
      const v128_t q1 = requantize_i32x4(acc, j + 4, params);                           \
      const v128_t q2 = requantize_i32x4(acc, j + 8, params);                           \
      const v128_t q3 = requantize_i32x4(acc, j + 12, params);                          \
      wasm_v128_store(out + j, NARROW(wasm_i16x8_narrow_i32x4(q0, q1), wasm_i16x8_narrow_i32x4(q2, q3))); \
    }                                                                                             \
    for (; j < n; j++) {                                                                          \
      out[j] = (T)qw_requantize_fp32_value(qw_requant_input(acc[j], j, params), j, params); \
    }                                                                                             \
  }

QW_REQUANTIZE_WASMSIMD(qw_qs32_qu8_requantize_fp32_ukernel__wasmsimd, uint8_t, wasm_u8x16_narrow_i16x8)
QW_REQUANTIZE_WASMSIMD(qw_qs32_qs8_requantize_fp32_ukernel__wasmsimd, int8_t, wasm_i8x16_narrow_i16x8)
