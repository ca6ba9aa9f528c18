/* The fp32 rule in wasm SIMD128 (requantization.h), shared by the requantization kernels and the kernels that
 * requantize their own accumulators (dwconv-wasmsimd.c). */
#ifndef QWASM_REQUANTIZE_WASMSIMD_H
#define QWASM_REQUANTIZE_WASMSIMD_H

#include "requantization/requantization.h"
#include "simd128.h"

struct qw_fp32_constants {
  v128_t lower, upper, magic, magic_bits_minus_zp;
  /* Lanes with |v| > finite_limit (and NaN lanes) are replaced by fill: 0 (the zero point) normally,
   * the lower bound for FBGEMM, whose conversion turns |v| >= 2^31 into INT32_MIN. */
  v128_t finite_limit, fill;
};

/* Everything splatted once per call: the output pointer could alias the parameters as far as the
 * compiler knows, so without these locals it reloads and re-splats them for every vector. */
static inline struct qw_fp32_constants qw_fp32_constants(const struct qw_requantization_params* p) {
  return (struct qw_fp32_constants){
      .lower = wasm_f32x4_splat((float)(p->qmin - p->zero_point)),
      .upper = wasm_f32x4_splat((float)(p->qmax - p->zero_point)),
      .magic = wasm_f32x4_splat(12582912.0f),
      .magic_bits_minus_zp = wasm_i32x4_splat(0x4B400000 - p->zero_point),
      .finite_limit = wasm_f32x4_splat(p->overflow_to_min ? 2147483520.0f : INFINITY),
      .fill = wasm_f32x4_splat(p->overflow_to_min ? (float)(p->qmin - p->zero_point) : 0.0f),
  };
}

/* The scalar rule reordered for fewer vector operations, with the same results: clamping to the
 * integer bounds [qmin - zp, qmax - zp] before rounding equals clamping after it (rounding is
 * monotonic and keeps integers), and the clamped value (|v| <= 510) is rounded to nearest-even and
 * converted to int32 at once by adding 1.5 * 2^23 and subtracting the float's bit pattern. This
 * replaces f32x4.nearest and i32x4.trunc_sat_f32x4 (about seven x64 instructions in V8). NaN lanes
 * (only from non-finite multipliers or float biases) are zeroed first, so they clamp to where the
 * scalar rule puts NaN: the zero point, clamped; with overflow_to_min, NaN lanes and lanes beyond
 * int32 take the lower bound instead. x is acc + bias. */
static inline v128_t qw_requantize_fp32_i32x4(v128_t x, v128_t bias_f32, v128_t multiplier,
                                              const struct qw_fp32_constants* k) {
  v128_t v = wasm_f32x4_mul(wasm_f32x4_add(wasm_f32x4_convert_i32x4(x), bias_f32), multiplier);
  v = wasm_v128_bitselect(v, k->fill, wasm_f32x4_le(wasm_f32x4_abs(v), k->finite_limit));
  const v128_t t = wasm_f32x4_add(wasm_f32x4_pmin(wasm_f32x4_pmax(v, k->lower), k->upper), k->magic);
  return wasm_i32x4_sub(t, k->magic_bits_minus_zp);
}

/* The same for fp32_plain parameters: no float bias, no NaN lanes. */
static inline v128_t qw_requantize_fp32_plain_i32x4(v128_t x, v128_t multiplier, const struct qw_fp32_constants* k) {
  const v128_t v = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(x), multiplier);
  const v128_t t = wasm_f32x4_add(wasm_f32x4_pmin(wasm_f32x4_pmax(v, k->lower), k->upper), k->magic);
  return wasm_i32x4_sub(t, k->magic_bits_minus_zp);
}

/* The plain rule without the upper clamp, for kernels that narrow with saturation and then clamp the bytes to qmax
 * (one 8-bit min per 16 outputs instead of a float min per 4): the float bits of t grow with v, so every v past
 * qmax - zp (even past 2^22, where the addition no longer rounds to an integer, or +inf) gives an int32 above qmax
 * that the saturating narrowings and the min turn into qmax, as the scalar rule clamps it. The lower clamp stays:
 * it keeps t positive. */
static inline v128_t qw_requantize_fp32_plain_above_i32x4(v128_t x, v128_t multiplier,
                                                         const struct qw_fp32_constants* k) {
  const v128_t v = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(x), multiplier);
  return wasm_i32x4_sub(wasm_f32x4_add(wasm_f32x4_pmax(v, k->lower), k->magic), k->magic_bits_minus_zp);
}

/* The plain rule with neither clamp, for fp32_bounded parameters, for kernels that narrow with saturation and then
 * clamp the bytes to [qmin, qmax]: |v| < 2^22 keeps t = v + 1.5 * 2^23 in [2^22, 2^24), so the float bits of t still
 * grow with v and every v below qmin - zp gives an int32 below qmin (the narrowings and the byte max make it qmin,
 * as the scalar rule clamps it); within range the rounding is the same as with the clamp. */
static inline v128_t qw_requantize_fp32_bounded_i32x4(v128_t x, v128_t multiplier, const struct qw_fp32_constants* k) {
  const v128_t v = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(x), multiplier);
  return wasm_i32x4_sub(wasm_f32x4_add(v, k->magic), k->magic_bits_minus_zp);
}

#endif /* QWASM_REQUANTIZE_WASMSIMD_H */
