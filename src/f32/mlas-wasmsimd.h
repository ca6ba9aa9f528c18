/* onnxruntime's MLAS approximations (src/f32/mlas.h) four lanes at a time with wasm SIMD128: the vector code of
 * compute.cpp, erf.cpp and tanh.cpp step for step (MlasMultiplyAddFloat32x4 = f32x4.mul then f32x4.add). Each
 * lane computes what the per-element function of src/f32/mlas.h computes. */
#ifndef QWASM_F32_MLAS_WASMSIMD_H
#define QWASM_F32_MLAS_WASMSIMD_H

#include "f32/mlas.h"
#include "simd128.h"

#define QW_SPLAT(c) wasm_f32x4_splat(c)
#define QW_MULADD(a, b, c) wasm_f32x4_add(wasm_f32x4_mul(a, b), c)

static inline v128_t qw_horner4(const float* c, size_t n, v128_t x) {
  v128_t p = QW_SPLAT(c[0]);
  for (size_t i = 1; i < n; i++) {
    p = QW_MULADD(p, x, QW_SPLAT(c[i]));
  }
  return p;
}

static inline v128_t qw_mlas_exp_reduce4(v128_t v, v128_t* biased) {
  *biased = QW_MULADD(v, QW_SPLAT(QW_MLAS_EXP_LOG2_RECIPROCAL), QW_SPLAT(QW_MLAS_EXP_ROUNDING_BIAS));
  const v128_t m = wasm_f32x4_sub(*biased, QW_SPLAT(QW_MLAS_EXP_ROUNDING_BIAS));
  v = QW_MULADD(m, QW_SPLAT(QW_MLAS_EXP_LOG2_HIGH), v);
  return QW_MULADD(m, QW_SPLAT(QW_MLAS_EXP_LOG2_LOW), v);
}

static inline v128_t qw_mlas_exp4(v128_t x) {
  v128_t biased;
  v128_t v = qw_mlas_exp_reduce4(
      wasm_f32x4_min(QW_SPLAT(QW_MLAS_EXP_UPPER_RANGE), wasm_f32x4_max(QW_SPLAT(QW_MLAS_EXP_LOWER_RANGE), x)), &biased);
  const v128_t max_exponent = wasm_i32x4_splat(QW_MLAS_EXP_MAXIMUM_EXPONENT);
  v128_t overflow = wasm_i32x4_shl(biased, 23);
  v128_t normal = wasm_i32x4_max(wasm_i32x4_min(overflow, max_exponent), wasm_i32x4_splat(QW_MLAS_EXP_MINIMUM_EXPONENT));
  overflow = wasm_i32x4_add(wasm_i32x4_sub(overflow, normal), max_exponent);
  normal = wasm_i32x4_add(normal, max_exponent);
  v128_t p = qw_horner4(qw_mlas_exp_poly, 6, v);
  v = wasm_f32x4_mul(v, overflow);
  p = QW_MULADD(p, v, overflow);
  return wasm_f32x4_mul(p, normal);
}

static inline v128_t qw_mlas_exp_minus_max4(v128_t x, v128_t negative_max) {
  v128_t biased;
  const v128_t v =
      qw_mlas_exp_reduce4(wasm_f32x4_max(QW_SPLAT(QW_MLAS_EXP_LOWER_RANGE_SUM_EXP), wasm_f32x4_add(x, negative_max)), &biased);
  const v128_t normal = wasm_i32x4_add(wasm_i32x4_shl(biased, 23), wasm_i32x4_splat(QW_MLAS_EXP_MAXIMUM_EXPONENT));
  return wasm_f32x4_mul(qw_horner4(qw_mlas_exp_poly, 7, v), normal);
}

static inline v128_t qw_mlas_erf4(v128_t x) {
  const v128_t sign = wasm_v128_and(x, QW_SPLAT(-0.0f));
  v128_t a = wasm_f32x4_min(QW_SPLAT(QW_MLAS_ERF_UPPER_ABS_RANGE), wasm_v128_andnot(x, QW_SPLAT(-0.0f)));
  v128_t small = QW_MULADD(qw_horner4(qw_mlas_erf_small_poly, 6, wasm_f32x4_mul(a, a)), a, a);
  const v128_t big = wasm_f32x4_gt(a, QW_SPLAT(QW_MLAS_ERF_SPLIT_BOUNDARY));
  small = wasm_v128_andnot(small, big);
  a = wasm_v128_and(a, big);
  v128_t r_big = QW_MULADD(qw_horner4(qw_mlas_erf_big_poly, 7, a), a, a);
  r_big = wasm_f32x4_max(QW_SPLAT(QW_MLAS_ERF_EXP_LOWER_RANGE), wasm_v128_xor(r_big, QW_SPLAT(-0.0f)));
  v128_t r = QW_MULADD(QW_SPLAT(QW_MLAS_ERF_EXP_LOG2_RECIPROCAL), r_big, QW_SPLAT(QW_MLAS_ERF_EXP_C));
  r = wasm_f32x4_sub(r, QW_SPLAT(QW_MLAS_ERF_EXP_C));
  v128_t fx = QW_MULADD(r, QW_SPLAT(QW_MLAS_ERF_EXP_LOG2_HI), r_big);
  fx = QW_MULADD(r, QW_SPLAT(QW_MLAS_ERF_EXP_LOG2_LO), fx);
  const v128_t pow2 = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(r), wasm_i32x4_splat(127)), 23);
  const v128_t y = wasm_f32x4_sub(QW_SPLAT(1.0f), wasm_f32x4_mul(qw_horner4(qw_mlas_erf_exp_poly, 7, fx), pow2));
  return wasm_v128_or(wasm_v128_or(small, y), sign);
}

static inline v128_t qw_mlas_tanh4(v128_t x) {
  const v128_t v = wasm_f32x4_min(QW_SPLAT(QW_MLAS_TANH_UPPER_RANGE), wasm_f32x4_max(QW_SPLAT(QW_MLAS_TANH_LOWER_RANGE), x));
  const v128_t v2 = wasm_f32x4_mul(v, v);
  return wasm_f32x4_div(wasm_f32x4_mul(qw_horner4(qw_mlas_tanh_p, 7, v2), v), qw_horner4(qw_mlas_tanh_q, 4, v2));
}

#endif /* QWASM_F32_MLAS_WASMSIMD_H */
