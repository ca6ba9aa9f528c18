/* wasm SIMD128 float32 unary kernels: MLAS's vector code four lanes at a time (src/f32/mlas.h gives
 * each step), the per-element rule for the tail. */
#include "f32/mlas.h"
#include "f32/vunary.h"
#include "simd128.h"

#define SPLAT(c) wasm_f32x4_splat(c)
/* MlasMultiplyAddFloat32x4 on wasm: a * b, rounded, then + c. */
#define MULADD(a, b, c) wasm_f32x4_add(wasm_f32x4_mul(a, b), c)

static inline v128_t exp4(v128_t v) {
  v = wasm_f32x4_min(SPLAT(QW_MLAS_EXP_UPPER_RANGE), wasm_f32x4_max(SPLAT(QW_MLAS_EXP_LOWER_RANGE), v));
  const v128_t biased = MULADD(v, SPLAT(QW_MLAS_EXP_LOG2_RECIPROCAL), SPLAT(QW_MLAS_EXP_ROUNDING_BIAS));
  const v128_t m = wasm_f32x4_sub(biased, SPLAT(QW_MLAS_EXP_ROUNDING_BIAS));
  v = MULADD(m, SPLAT(QW_MLAS_EXP_LOG2_HIGH), v);
  v = MULADD(m, SPLAT(QW_MLAS_EXP_LOG2_LOW), v);
  const v128_t max_exponent = wasm_i32x4_splat(QW_MLAS_EXP_MAXIMUM_EXPONENT);
  v128_t overflow = wasm_i32x4_shl(biased, 23);
  v128_t normal = wasm_i32x4_max(wasm_i32x4_min(overflow, max_exponent), wasm_i32x4_splat(QW_MLAS_EXP_MINIMUM_EXPONENT));
  overflow = wasm_i32x4_add(wasm_i32x4_sub(overflow, normal), max_exponent);
  normal = wasm_i32x4_add(normal, max_exponent);
  v128_t p = SPLAT(QW_MLAS_EXP_POLY_0);
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_1));
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_2));
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_3));
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_4));
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_56));
  v = wasm_f32x4_mul(v, overflow);
  p = MULADD(p, v, overflow);
  return wasm_f32x4_mul(p, normal);
}

static inline v128_t erf4(v128_t x) {
  const v128_t sign = wasm_v128_and(x, SPLAT(-0.0f));
  v128_t a = wasm_f32x4_min(SPLAT(QW_MLAS_ERF_UPPER_ABS_RANGE), wasm_v128_andnot(x, SPLAT(-0.0f)));
  const v128_t a2 = wasm_f32x4_mul(a, a);
  v128_t small = SPLAT(QW_MLAS_ERF_SMALL_P0);
  small = MULADD(small, a2, SPLAT(QW_MLAS_ERF_SMALL_P1));
  small = MULADD(small, a2, SPLAT(QW_MLAS_ERF_SMALL_P2));
  small = MULADD(small, a2, SPLAT(QW_MLAS_ERF_SMALL_P3));
  small = MULADD(small, a2, SPLAT(QW_MLAS_ERF_SMALL_P4));
  small = MULADD(small, a2, SPLAT(QW_MLAS_ERF_SMALL_P5_MINUS_ONE));
  small = MULADD(small, a, a);
  const v128_t big = wasm_f32x4_gt(a, SPLAT(QW_MLAS_ERF_SPLIT_BOUNDARY));
  small = wasm_v128_andnot(small, big);
  a = wasm_v128_and(a, big);
  v128_t r_big = SPLAT(QW_MLAS_ERF_BIG_P0);
  r_big = MULADD(r_big, a, SPLAT(QW_MLAS_ERF_BIG_P1));
  r_big = MULADD(r_big, a, SPLAT(QW_MLAS_ERF_BIG_P2));
  r_big = MULADD(r_big, a, SPLAT(QW_MLAS_ERF_BIG_P3));
  r_big = MULADD(r_big, a, SPLAT(QW_MLAS_ERF_BIG_P4));
  r_big = MULADD(r_big, a, SPLAT(QW_MLAS_ERF_BIG_P5));
  r_big = MULADD(r_big, a, SPLAT(QW_MLAS_ERF_BIG_P6_MINUS_ONE));
  r_big = MULADD(r_big, a, a);
  r_big = wasm_f32x4_max(SPLAT(QW_MLAS_ERF_EXP_LOWER_RANGE), wasm_v128_xor(r_big, SPLAT(-0.0f)));
  v128_t r = MULADD(SPLAT(QW_MLAS_ERF_EXP_LOG2_RECIPROCAL), r_big, SPLAT(QW_MLAS_ERF_EXP_C));
  r = wasm_f32x4_sub(r, SPLAT(QW_MLAS_ERF_EXP_C));
  v128_t fx = MULADD(r, SPLAT(QW_MLAS_ERF_EXP_LOG2_HI), r_big);
  fx = MULADD(r, SPLAT(QW_MLAS_ERF_EXP_LOG2_LO), fx);
  v128_t y = SPLAT(QW_MLAS_ERF_EXP_P0);
  y = MULADD(y, fx, SPLAT(QW_MLAS_ERF_EXP_P1));
  y = MULADD(y, fx, SPLAT(QW_MLAS_ERF_EXP_P2));
  y = MULADD(y, fx, SPLAT(QW_MLAS_ERF_EXP_P3));
  y = MULADD(y, fx, SPLAT(QW_MLAS_ERF_EXP_P4));
  y = MULADD(y, fx, SPLAT(QW_MLAS_ERF_EXP_P5));
  y = MULADD(y, fx, SPLAT(QW_MLAS_ERF_EXP_P6));
  const v128_t pow2 = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(r), wasm_i32x4_splat(127)), 23);
  y = wasm_f32x4_sub(SPLAT(1.0f), wasm_f32x4_mul(y, pow2));
  return wasm_v128_or(wasm_v128_or(small, y), sign);
}

static inline v128_t tanh4(v128_t x) {
  const v128_t v = wasm_f32x4_min(SPLAT(QW_MLAS_TANH_UPPER_RANGE), wasm_f32x4_max(SPLAT(QW_MLAS_TANH_LOWER_RANGE), x));
  const v128_t v2 = wasm_f32x4_mul(v, v);
  v128_t p = MULADD(v2, SPLAT(QW_MLAS_TANH_ALPHA_13), SPLAT(QW_MLAS_TANH_ALPHA_11));
  p = MULADD(p, v2, SPLAT(QW_MLAS_TANH_ALPHA_9));
  p = MULADD(p, v2, SPLAT(QW_MLAS_TANH_ALPHA_7));
  p = MULADD(p, v2, SPLAT(QW_MLAS_TANH_ALPHA_5));
  p = MULADD(p, v2, SPLAT(QW_MLAS_TANH_ALPHA_3));
  p = MULADD(p, v2, SPLAT(QW_MLAS_TANH_ALPHA_1));
  p = wasm_f32x4_mul(p, v);
  v128_t q = MULADD(v2, SPLAT(QW_MLAS_TANH_BETA_6), SPLAT(QW_MLAS_TANH_BETA_4));
  q = MULADD(q, v2, SPLAT(QW_MLAS_TANH_BETA_2));
  q = MULADD(q, v2, SPLAT(QW_MLAS_TANH_BETA_0));
  return wasm_f32x4_div(p, q);
}

#define QW_F32_VUNARY_WASMSIMD(name, vector_op, element_op) \
  QW_DECLARE_F32_VUNARY_UKERNEL(name) {                     \
    size_t i = 0;                                           \
    for (; i + 4 <= n; i += 4) {                            \
      wasm_v128_store(y + i, vector_op(wasm_v128_load(x + i))); \
    }                                                       \
    for (; i < n; i++) {                                    \
      y[i] = element_op(x[i]);                              \
    }                                                       \
  }

QW_F32_VUNARY_WASMSIMD(qw_f32_vexp_ukernel_4__wasmsimd, exp4, qw_mlas_exp)
QW_F32_VUNARY_WASMSIMD(qw_f32_verf_ukernel_4__wasmsimd, erf4, qw_mlas_erf)
QW_F32_VUNARY_WASMSIMD(qw_f32_vtanh_ukernel_4__wasmsimd, tanh4, qw_mlas_tanh)

QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vsqrt_ukernel_8__wasmsimd) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t v0 = wasm_f32x4_sqrt(wasm_v128_load(x + i));
    const v128_t v1 = wasm_f32x4_sqrt(wasm_v128_load(x + i + 4));
    wasm_v128_store(y + i, v0);
    wasm_v128_store(y + i + 4, v1);
  }
  for (; i < n; i++) {
    y[i] = __builtin_sqrtf(x[i]);
  }
}
