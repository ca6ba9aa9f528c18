/* onnxruntime's MLAS approximations (src/f32/mlas.h) four lanes at a time with wasm SIMD128: the vector code of
 * compute.cpp, erf.cpp and tanh.cpp step for step (MlasMultiplyAddFloat32x4 = f32x4.mul then f32x4.add). Each
 * lane computes what the per-element function of src/f32/mlas.h computes. */
#ifndef QWASM_F32_MLAS_WASMSIMD_H
#define QWASM_F32_MLAS_WASMSIMD_H

#include "f32/mlas.h"
#include "simd128.h"

#define QW_SPLAT(c) wasm_f32x4_splat(c)
#define QW_MULADD(a, b, c) wasm_f32x4_add(wasm_f32x4_mul(a, b), c)

/* f32x4.min(c, v) and f32x4.max(c, v) for a constant c that is neither NaN nor zero: the same value for every v
 * (a NaN v gives a NaN, with v's payload rather than the canonical one), as pmin / pmax (v, c) = (c < v ? c : v) /
 * (v < c ? c : v): one minps / maxps in V8, where f32x4.min and max take seven instructions (NaN and signed-zero
 * fix-ups). Measured with the four-vector steps below: exp 0.82 instead of 1.24 ns per element, tanh 0.66 instead of
 * 1.10, erf 2.07 instead of 2.46. */
static inline v128_t qw_min_const(v128_t c, v128_t v) {
  return wasm_f32x4_pmin(v, c);
}

static inline v128_t qw_max_const(v128_t c, v128_t v) {
  return wasm_f32x4_pmax(v, c);
}

/* y[j] = vector_op(LOAD(j)) four lanes at a time for j from i while j + 4 <= n, leaving i at the first element not
 * done. Four vectors per step: each approximation is a chain of dependent multiply-adds (erf: three polynomials, two
 * in series), and neither clang nor V8 overlaps the chains of consecutive loop steps enough. With four independent
 * chains per step (Node 20, AMD EPYC, 196608 elements) erf ran in 2.46 instead of 4.24 ns per element, exp 1.24
 * instead of 1.71, tanh 1.11 instead of 1.54; two vectors gave 3.2 / 1.5 / 1.33, eight spilled (erf 5.0). */
#define QW_F32_MAP_WASMSIMD(i, n, LOAD, vector_op, y)  \
  for (; i + 16 <= n; i += 16) {                       \
    const v128_t v0_ = vector_op(LOAD(i));             \
    const v128_t v1_ = vector_op(LOAD(i + 4));         \
    const v128_t v2_ = vector_op(LOAD(i + 8));         \
    const v128_t v3_ = vector_op(LOAD(i + 12));        \
    wasm_v128_store(y + i, v0_);                       \
    wasm_v128_store(y + i + 4, v1_);                   \
    wasm_v128_store(y + i + 8, v2_);                   \
    wasm_v128_store(y + i + 12, v3_);                  \
  }                                                    \
  for (; i + 4 <= n; i += 4) {                         \
    wasm_v128_store(y + i, vector_op(LOAD(i)));        \
  }

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
      qw_min_const(QW_SPLAT(QW_MLAS_EXP_UPPER_RANGE), qw_max_const(QW_SPLAT(QW_MLAS_EXP_LOWER_RANGE), x)), &biased);
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
      qw_mlas_exp_reduce4(qw_max_const(QW_SPLAT(QW_MLAS_EXP_LOWER_RANGE_SUM_EXP), wasm_f32x4_add(x, negative_max)), &biased);
  const v128_t normal = wasm_i32x4_add(wasm_i32x4_shl(biased, 23), wasm_i32x4_splat(QW_MLAS_EXP_MAXIMUM_EXPONENT));
  return wasm_f32x4_mul(qw_horner4(qw_mlas_exp_poly, 7, v), normal);
}

static inline v128_t qw_mlas_erf4(v128_t x) {
  const v128_t sign = wasm_v128_and(x, QW_SPLAT(-0.0f));
  v128_t a = qw_min_const(QW_SPLAT(QW_MLAS_ERF_UPPER_ABS_RANGE), wasm_v128_andnot(x, QW_SPLAT(-0.0f)));
  v128_t small = QW_MULADD(qw_horner4(qw_mlas_erf_small_poly, 6, wasm_f32x4_mul(a, a)), a, a);
  const v128_t big = wasm_f32x4_gt(a, QW_SPLAT(QW_MLAS_ERF_SPLIT_BOUNDARY));
  small = wasm_v128_andnot(small, big);
  a = wasm_v128_and(a, big);
  v128_t r_big = QW_MULADD(qw_horner4(qw_mlas_erf_big_poly, 7, a), a, a);
  r_big = qw_max_const(QW_SPLAT(QW_MLAS_ERF_EXP_LOWER_RANGE), wasm_v128_xor(r_big, QW_SPLAT(-0.0f)));
  const v128_t biased = QW_MULADD(QW_SPLAT(QW_MLAS_ERF_EXP_LOG2_RECIPROCAL), r_big, QW_SPLAT(QW_MLAS_ERF_EXP_C));
  const v128_t r = wasm_f32x4_sub(biased, QW_SPLAT(QW_MLAS_ERF_EXP_C));
  v128_t fx = QW_MULADD(r, QW_SPLAT(QW_MLAS_ERF_EXP_LOG2_HI), r_big);
  fx = QW_MULADD(r, QW_SPLAT(QW_MLAS_ERF_EXP_LOG2_LO), fx);
  /* 2^r as (r + 127) << 23 with r = trunc(r), MLAS's way, costs seven instructions in V8 (i32x4.trunc_sat_f32x4 is
   * five). r is an integer in [-128, 0] and biased = r + 1.5 * 2^23 lies where floats are one apart, so the low bits
   * of biased's representation are those of r + 2^22 and the shift drops the rest: the same word in two (erf 1.99
   * instead of 2.07 ns per element). */
  const v128_t pow2 = wasm_i32x4_shl(wasm_i32x4_add(biased, wasm_i32x4_splat(127)), 23);
  const v128_t y = wasm_f32x4_sub(QW_SPLAT(1.0f), wasm_f32x4_mul(qw_horner4(qw_mlas_erf_exp_poly, 7, fx), pow2));
  return wasm_v128_or(wasm_v128_or(small, y), sign);
}

static inline v128_t qw_mlas_tanh4(v128_t x) {
  const v128_t v = qw_min_const(QW_SPLAT(QW_MLAS_TANH_UPPER_RANGE), qw_max_const(QW_SPLAT(QW_MLAS_TANH_LOWER_RANGE), x));
  const v128_t v2 = wasm_f32x4_mul(v, v);
  return wasm_f32x4_div(wasm_f32x4_mul(qw_horner4(qw_mlas_tanh_p, 7, v2), v), qw_horner4(qw_mlas_tanh_q, 4, v2));
}

/* qw_gelu_erf and qw_gelu_tanh (src/f32/mlas.h) per lane. */
static inline v128_t qw_gelu_erf4(v128_t v) {
  const v128_t t = qw_mlas_erf4(wasm_f32x4_mul(v, QW_SPLAT(QW_GELU_SQRT1_2)));
  return wasm_f32x4_mul(wasm_f32x4_mul(v, QW_SPLAT(0.5f)), wasm_f32x4_add(t, QW_SPLAT(1.0f)));
}

static inline v128_t qw_gelu_tanh4(v128_t v) {
  const v128_t inner = QW_MULADD(wasm_f32x4_mul(QW_SPLAT(QW_GELU_TANH_C), v), v, QW_SPLAT(QW_GELU_TANH_B));
  const v128_t t = qw_mlas_tanh4(wasm_f32x4_mul(v, inner));
  return wasm_f32x4_mul(wasm_f32x4_mul(v, QW_SPLAT(0.5f)), wasm_f32x4_add(t, QW_SPLAT(1.0f)));
}

#endif /* QWASM_F32_MLAS_WASMSIMD_H */
