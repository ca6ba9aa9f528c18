/* wasm SIMD128 fp32 requantization: 16 outputs per step, then 4, the last n % 4 by the scalar rule. */
#include <assert.h>

#include "requantization/requantization.h"
#include "simd128.h"

struct fp32_constants {
  const int32_t* bias;
  const float* bias_f32;
  const float* multiplier;
  v128_t lower, upper, magic, magic_bits_minus_zp;
  /* Lanes with |v| > finite_limit (and NaN lanes) are replaced by fill: 0 (the zero point) normally,
   * the lower bound for FBGEMM, whose conversion turns |v| >= 2^31 into INT32_MIN. */
  v128_t finite_limit, fill;
};

/* Everything loaded once per call: the output pointer could alias the parameters as far as the
 * compiler knows, so without these locals it reloads and re-splats them for every vector. */
static inline struct fp32_constants fp32_constants(const struct qw_requantization_params* p) {
  return (struct fp32_constants){
      .bias = p->bias,
      .bias_f32 = p->bias_f32,
      .multiplier = p->multiplier,
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
 * int32 take the lower bound instead. */
static inline v128_t requantize_i32x4(const int32_t* acc, const int32_t* bias, const float* bias_f32,
                                     const float* multiplier, const struct fp32_constants* k) {
  const v128_t x = wasm_i32x4_add(wasm_v128_load(acc), wasm_v128_load(bias));
  v128_t v = wasm_f32x4_mul(wasm_f32x4_add(wasm_f32x4_convert_i32x4(x), wasm_v128_load(bias_f32)),
                            wasm_v128_load(multiplier));
  v = wasm_v128_bitselect(v, k->fill, wasm_f32x4_le(wasm_f32x4_abs(v), k->finite_limit));
  const v128_t t = wasm_f32x4_add(wasm_f32x4_pmin(wasm_f32x4_pmax(v, k->lower), k->upper), k->magic);
  return wasm_i32x4_sub(t, k->magic_bits_minus_zp);
}

/* The same for fp32_plain parameters: no float bias, no NaN lanes. */
static inline v128_t requantize_plain_i32x4(const int32_t* acc, const int32_t* bias, const float* multiplier,
                                           const struct fp32_constants* k) {
  const v128_t x = wasm_i32x4_add(wasm_v128_load(acc), wasm_v128_load(bias));
  const v128_t v = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(x), wasm_v128_load(multiplier));
  const v128_t t = wasm_f32x4_add(wasm_f32x4_pmin(wasm_f32x4_pmax(v, k->lower), k->upper), k->magic);
  return wasm_i32x4_sub(t, k->magic_bits_minus_zp);
}

/* 16 outputs per step, then 4, then the scalar rule (24-channel layers end in two 4-steps). The
 * arrays are walked by pointers: V8 then addresses each load with a constant offset instead of
 * computing base + 4 * j for every one. Plain parameters (every mode but fbgemm with a bias, for
 * finite scales) take the loop without float bias and NaN handling: half the operations. */
#define QW_REQUANTIZE_WASMSIMD(name, T, NARROW)                                                   \
  QW_DECLARE_REQUANTIZATION_UKERNEL(name) {                                                       \
    assert(n != 0 && acc != NULL && params != NULL && y != NULL);                                 \
    T* out = (T*)y;                                                                               \
    const struct fp32_constants k = fp32_constants(params);                                      \
    const int32_t* bias = k.bias;                                                                 \
    const float* bias_f32 = k.bias_f32;                                                           \
    const float* multiplier = k.multiplier;                                                       \
    size_t j = 0;                                                                                 \
    if (params->fp32_plain) {                                                                     \
      for (; j + 16 <= n; j += 16, acc += 16, bias += 16, multiplier += 16) {                     \
        const v128_t q0 = requantize_plain_i32x4(acc, bias, multiplier, &k);                     \
        const v128_t q1 = requantize_plain_i32x4(acc + 4, bias + 4, multiplier + 4, &k);         \
        const v128_t q2 = requantize_plain_i32x4(acc + 8, bias + 8, multiplier + 8, &k);         \
        const v128_t q3 = requantize_plain_i32x4(acc + 12, bias + 12, multiplier + 12, &k);      \
        wasm_v128_store(out + j, NARROW(wasm_i16x8_narrow_i32x4(q0, q1), wasm_i16x8_narrow_i32x4(q2, q3))); \
      }                                                                                           \
      bias_f32 += j;                                                                              \
    } else {                                                                                      \
      for (; j + 16 <= n; j += 16, acc += 16, bias += 16, bias_f32 += 16, multiplier += 16) {     \
        const v128_t q0 = requantize_i32x4(acc, bias, bias_f32, multiplier, &k);                 \
        const v128_t q1 = requantize_i32x4(acc + 4, bias + 4, bias_f32 + 4, multiplier + 4, &k); \
        const v128_t q2 = requantize_i32x4(acc + 8, bias + 8, bias_f32 + 8, multiplier + 8, &k); \
        const v128_t q3 = requantize_i32x4(acc + 12, bias + 12, bias_f32 + 12, multiplier + 12, &k); \
        wasm_v128_store(out + j, NARROW(wasm_i16x8_narrow_i32x4(q0, q1), wasm_i16x8_narrow_i32x4(q2, q3))); \
      }                                                                                           \
    }                                                                                             \
    for (; j + 4 <= n; j += 4, acc += 4, bias += 4, bias_f32 += 4, multiplier += 4) {            \
      const v128_t q = requantize_i32x4(acc, bias, bias_f32, multiplier, &k);                    \
      const v128_t q16 = wasm_i16x8_narrow_i32x4(q, q);                                          \
      wasm_v128_store32_lane(out + j, NARROW(q16, q16), 0);                                      \
    }                                                                                             \
    for (size_t i = 0; j < n; j++, i++) {                                                         \
      out[j] = (T)qw_requantize_fp32_value(qw_requant_input(acc[i], j, params), j, params);     \
    }                                                                                             \
  }

QW_REQUANTIZE_WASMSIMD(qw_qs32_qu8_requantize_fp32_ukernel__wasmsimd, uint8_t, wasm_u8x16_narrow_i16x8)
QW_REQUANTIZE_WASMSIMD(qw_qs32_qs8_requantize_fp32_ukernel__wasmsimd, int8_t, wasm_i8x16_narrow_i16x8)
