/* wasm SIMD128 fp32 requantization: 16 outputs per step, then 4, the last n % 4 by the scalar rule. */
#include <assert.h>

#include "requantization/requantize-wasmsimd.h"

/* acc + bias, by the rules of requantize-wasmsimd.h. */
static inline v128_t requantize_i32x4(const int32_t* acc, const int32_t* bias, const float* bias_f32,
                                     const float* multiplier, const struct qw_fp32_constants* k) {
  return qw_requantize_fp32_i32x4(wasm_i32x4_add(wasm_v128_load(acc), wasm_v128_load(bias)), wasm_v128_load(bias_f32),
                                  wasm_v128_load(multiplier), k);
}

static inline v128_t requantize_plain_i32x4(const int32_t* acc, const int32_t* bias, const float* multiplier,
                                           const struct qw_fp32_constants* k) {
  return qw_requantize_fp32_plain_i32x4(wasm_i32x4_add(wasm_v128_load(acc), wasm_v128_load(bias)),
                                        wasm_v128_load(multiplier), k);
}

/* Per row: 16 outputs per step, then 4, then the scalar rule (24-channel layers end in two 4-steps). The
 * arrays are walked by pointers: V8 then addresses each load with a constant offset instead of
 * computing base + 4 * j for every one. Plain parameters (every mode but fbgemm with a bias, for
 * finite scales) take the loop without float bias and NaN handling: half the operations. The
 * constants are splatted once per call, for all its rows. */
#define QW_REQUANTIZE_WASMSIMD(name, T, NARROW)                                                     \
  QW_DECLARE_REQUANTIZATION_UKERNEL(name) {                                                         \
    assert(rows != 0 && n != 0 && acc != NULL && params != NULL && y != NULL);                      \
    const struct qw_fp32_constants k = qw_fp32_constants(params);                                   \
    for (size_t r = 0; r < rows; r++) {                                                             \
      const int32_t* a = acc + r * acc_stride;                                                      \
      T* out = (T*)((char*)y + r * y_stride);                                                       \
      const int32_t* bias = params->bias;                                                           \
      const float* bias_f32 = params->bias_f32;                                                     \
      const float* multiplier = params->multiplier;                                                 \
      size_t j = 0;                                                                                 \
      if (params->fp32_plain) {                                                                     \
        for (; j + 16 <= n; j += 16, a += 16, bias += 16, multiplier += 16) {                       \
          const v128_t q0 = requantize_plain_i32x4(a, bias, multiplier, &k);                        \
          const v128_t q1 = requantize_plain_i32x4(a + 4, bias + 4, multiplier + 4, &k);            \
          const v128_t q2 = requantize_plain_i32x4(a + 8, bias + 8, multiplier + 8, &k);            \
          const v128_t q3 = requantize_plain_i32x4(a + 12, bias + 12, multiplier + 12, &k);         \
          wasm_v128_store(out + j, NARROW(wasm_i16x8_narrow_i32x4(q0, q1), wasm_i16x8_narrow_i32x4(q2, q3))); \
        }                                                                                           \
        bias_f32 += j;                                                                              \
      } else {                                                                                      \
        for (; j + 16 <= n; j += 16, a += 16, bias += 16, bias_f32 += 16, multiplier += 16) {       \
          const v128_t q0 = requantize_i32x4(a, bias, bias_f32, multiplier, &k);                    \
          const v128_t q1 = requantize_i32x4(a + 4, bias + 4, bias_f32 + 4, multiplier + 4, &k);    \
          const v128_t q2 = requantize_i32x4(a + 8, bias + 8, bias_f32 + 8, multiplier + 8, &k);    \
          const v128_t q3 = requantize_i32x4(a + 12, bias + 12, bias_f32 + 12, multiplier + 12, &k); \
          wasm_v128_store(out + j, NARROW(wasm_i16x8_narrow_i32x4(q0, q1), wasm_i16x8_narrow_i32x4(q2, q3))); \
        }                                                                                           \
      }                                                                                             \
      for (; j + 4 <= n; j += 4, a += 4, bias += 4, bias_f32 += 4, multiplier += 4) {               \
        const v128_t q = requantize_i32x4(a, bias, bias_f32, multiplier, &k);                       \
        const v128_t q16 = wasm_i16x8_narrow_i32x4(q, q);                                           \
        wasm_v128_store32_lane(out + j, NARROW(q16, q16), 0);                                       \
      }                                                                                             \
      for (size_t i = 0; j < n; j++, i++) {                                                         \
        out[j] = (T)qw_requantize_fp32_value(qw_requant_input(a[i], j, params), j, params);         \
      }                                                                                             \
    }                                                                                               \
  }

QW_REQUANTIZE_WASMSIMD(qw_qs32_qu8_requantize_fp32_ukernel__wasmsimd, uint8_t, wasm_u8x16_narrow_i16x8)
QW_REQUANTIZE_WASMSIMD(qw_qs32_qs8_requantize_fp32_ukernel__wasmsimd, int8_t, wasm_i8x16_narrow_i16x8)
