/* wasm SIMD128 fp32 requantization, 16 outputs per step; the tail uses the scalar rule. */
#include "requantization/requantization.h"
#include "simd128.h"

/* The scalar rule reordered for fewer vector operations, with the same results: clamping to the
 * integer bounds [qmin - zp, qmax - zp] before rounding equals clamping after it (rounding is
 * monotonic and keeps integers), and the clamped value (|v| <= 510) is rounded to nearest-even and
 * converted to int32 at once by adding 1.5 * 2^23 and subtracting the float's bit pattern. This
 * replaces f32x4.nearest and i32x4.trunc_sat_f32x4 (about seven x64 instructions in V8). NaN lanes
 * (only from non-finite multipliers or float biases) pass pmin / pmax unchanged and are replaced. */
static inline v128_t requantize_i32x4(const int32_t* acc, size_t j, const struct qw_requantization_params* p) {
  const v128_t x = wasm_i32x4_add(wasm_v128_load(acc + j), wasm_v128_load(p->bias + j));
  const v128_t v = wasm_f32x4_mul(wasm_f32x4_add(wasm_f32x4_convert_i32x4(x), wasm_v128_load(p->bias_f32 + j)),
                                  wasm_v128_load(p->multiplier + j));
  const v128_t is_nan = wasm_f32x4_ne(v, v);
  v128_t t = wasm_f32x4_pmax(v, wasm_f32x4_splat((float)(p->qmin - p->zero_point)));
  t = wasm_f32x4_pmin(t, wasm_f32x4_splat((float)(p->qmax - p->zero_point)));
  t = wasm_f32x4_add(t, wasm_f32x4_splat(12582912.0f));
  const v128_t q = wasm_i32x4_sub(t, wasm_i32x4_splat(0x4B400000 - p->zero_point));
  const int32_t nan_value = p->zero_point < p->qmin ? p->qmin : p->zero_point > p->qmax ? p->qmax : p->zero_point;
  return wasm_v128_bitselect(wasm_i32x4_splat(nan_value), q, is_nan);
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
