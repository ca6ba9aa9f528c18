/* onnxruntime's MLAS approximations (src/f32/mlas.h) four lanes at a time with wasm SIMD128: the vector code of
 * compute.cpp, erf.cpp and tanh.cpp step for step (MlasMultiplyAddFloat32x4 = f32x4.mul then f32x4.add). Each
 * lane computes what the per-element function of src/f32/mlas.h computes. */
#ifndef QWASM_F32_MLAS_WASMSIMD_H
#define QWASM_F32_MLAS_WASMSIMD_H

#include <stdint.h>
#include <string.h>

#include "f32/mlas.h"
#include "simd128.h"

/* The approximations' constants (two to three dozen per kernel) do not fit in the registers beside four vectors in
 * flight. As v128.const, the V8 of Chromium 14x rebuilds each one inside the loop at every use it cannot keep in a
 * register (movabs, vmovq, vpunpcklqdq: three instructions), where Node 20's V8 spills it once before the loop and
 * reloads it (one). Splatted from bits xor'ed with a zero the compiler cannot see (qw_opaque_zero, defined in
 * src/config.c), they are loop-invariant values instead: clang computes them once before the loop, and both engines
 * spill and reload them. The same bits: x ^ 0 = x. In Chromium 156 (196608 elements, with the interleaving below):
 * exp 1.05 -> 0.88 ns per element, tanh 0.80 -> 0.72, erf 2.25 -> 2.04; Node unchanged. */
extern const uint32_t qw_opaque_zero;

static inline v128_t qw_splat_bits(uint32_t bits) {
  return wasm_i32x4_splat((int32_t)(bits ^ qw_opaque_zero));
}

static inline v128_t qw_splat_f32(float c) {
  uint32_t bits;
  memcpy(&bits, &c, sizeof bits);
  return qw_splat_bits(bits);
}

#define QW_SPLAT(c) qw_splat_f32(c)
#define QW_SPLAT_I32(c) qw_splat_bits((uint32_t)(c))
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

/* The approximations below work on n <= 4 independent vectors at once, step by step: each approximation is a chain
 * of dependent multiply-adds (erf: three polynomials, two in series), and four independent chains per loop step hide
 * their latency. Four chains gave (Node 20, 196608 elements) erf 2.46 instead of 4.24 ns per element, exp 1.24
 * instead of 1.71, tanh 1.11 instead of 1.54; two gave 3.2 / 1.5 / 1.33, eight spilled (erf 5.0).
 * The chains must also be interleaved in the wasm code. Written vector after vector, clang emits each chain as one
 * expression tree; Node 20's V8 reorders them, but the V8 of Chromium 14x compiles the code in wasm order, one chain
 * after the other. qw_interleave ends a step: an empty asm statement that takes and returns the n values, so that
 * every chain's step is computed before any chain's next one. It emits no instruction. (Binaryen's optimizer would
 * nest the chains again: CMakeLists.txt links without it.) Per element the operations are those of the one-vector
 * code, so the bits are too. Chromium 156, with the constants above: erf 3.6 -> 2.0 ns per element, GELU 3.8 -> 2.3,
 * exp 1.31 -> 0.87, tanh 1.03 -> 0.72, softmax 1.65 -> 1.33, now level with Node. */
#define QW_EACH(j, n) for (size_t j = 0; j < (n); j++)

QW_ALWAYS_INLINE void qw_interleave(size_t n, v128_t* v) {
#if defined(__wasm_simd128__)
  if (n == 4) {
    __asm__ volatile("" : "+r"(v[0]), "+r"(v[1]), "+r"(v[2]), "+r"(v[3]));
  } else {
    for (size_t j = 0; j < n; j++) __asm__ volatile("" : "+r"(v[j]));
  }
#else
  (void)n;
  (void)v;
#endif
}

/* y[j] = vector_op(LOAD(j)) four lanes at a time for j from i while j + 4 <= n, leaving i at the first element not
 * done: four vectors per step, vector_op(count, v) the in-place n-vector form of an approximation. */
#define QW_F32_MAP_WASMSIMD(i, n, LOAD, vector_op, y)                 \
  for (; i + 16 <= n; i += 16) {                                      \
    v128_t v_[4] = {LOAD(i), LOAD(i + 4), LOAD(i + 8), LOAD(i + 12)}; \
    vector_op(4, v_);                                                 \
    QW_EACH(j_, 4) wasm_v128_store(y + i + 4 * j_, v_[j_]);           \
  }                                                                   \
  for (; i + 4 <= n; i += 4) {                                        \
    v128_t v_[1] = {LOAD(i)};                                         \
    vector_op(1, v_);                                                 \
    wasm_v128_store(y + i, v_[0]);                                    \
  }

/* p[j] = c[0] x[j]^(terms-1) + ... + c[terms-1] by Horner's rule (MLAS's order), the n chains interleaved. */
QW_ALWAYS_INLINE void qw_horner_n(size_t n, const float* c, size_t terms, const v128_t* x, v128_t* p) {
  QW_EACH(j, n) p[j] = QW_SPLAT(c[0]);
  for (size_t i = 1; i < terms; i++) {
    QW_EACH(j, n) p[j] = QW_MULADD(p[j], x[j], QW_SPLAT(c[i]));
    qw_interleave(n, p);
  }
}

/* MLAS's range reduction for exp: v = x - m ln 2 (two parts), biased = x / ln 2 + rounding bias (m in its low bits). */
QW_ALWAYS_INLINE void qw_mlas_exp_reduce_n(size_t n, v128_t* v, v128_t* biased) {
  QW_EACH(j, n) {
    biased[j] = QW_MULADD(v[j], QW_SPLAT(QW_MLAS_EXP_LOG2_RECIPROCAL), QW_SPLAT(QW_MLAS_EXP_ROUNDING_BIAS));
    const v128_t m = wasm_f32x4_sub(biased[j], QW_SPLAT(QW_MLAS_EXP_ROUNDING_BIAS));
    v[j] = QW_MULADD(m, QW_SPLAT(QW_MLAS_EXP_LOG2_HIGH), v[j]);
    v[j] = QW_MULADD(m, QW_SPLAT(QW_MLAS_EXP_LOG2_LOW), v[j]);
  }
  qw_interleave(n, v);
}

QW_ALWAYS_INLINE void qw_mlas_exp_n(size_t n, v128_t* x) {
  v128_t biased[4], overflow[4], normal[4], p[4];
  QW_EACH(j, n) x[j] = qw_min_const(QW_SPLAT(QW_MLAS_EXP_UPPER_RANGE), qw_max_const(QW_SPLAT(QW_MLAS_EXP_LOWER_RANGE), x[j]));
  qw_mlas_exp_reduce_n(n, x, biased);
  const v128_t max_exponent = QW_SPLAT_I32(QW_MLAS_EXP_MAXIMUM_EXPONENT);
  QW_EACH(j, n) {
    overflow[j] = wasm_i32x4_shl(biased[j], 23);
    normal[j] = wasm_i32x4_max(wasm_i32x4_min(overflow[j], max_exponent), QW_SPLAT_I32(QW_MLAS_EXP_MINIMUM_EXPONENT));
    overflow[j] = wasm_i32x4_add(wasm_i32x4_sub(overflow[j], normal[j]), max_exponent);
    normal[j] = wasm_i32x4_add(normal[j], max_exponent);
  }
  qw_horner_n(n, qw_mlas_exp_poly, 6, x, p);
  QW_EACH(j, n) {
    const v128_t v = wasm_f32x4_mul(x[j], overflow[j]);
    x[j] = wasm_f32x4_mul(QW_MULADD(p[j], v, overflow[j]), normal[j]);
  }
}

/* exp(x[j] + negative_max) for softmax (MLAS's MlasComputeSumExpF32Kernel). */
QW_ALWAYS_INLINE void qw_mlas_exp_minus_max_n(size_t n, v128_t* x, v128_t negative_max) {
  v128_t biased[4], p[4];
  QW_EACH(j, n) x[j] = qw_max_const(QW_SPLAT(QW_MLAS_EXP_LOWER_RANGE_SUM_EXP), wasm_f32x4_add(x[j], negative_max));
  qw_mlas_exp_reduce_n(n, x, biased);
  qw_horner_n(n, qw_mlas_exp_poly, 7, x, p);
  QW_EACH(j, n) {
    const v128_t normal = wasm_i32x4_add(wasm_i32x4_shl(biased[j], 23), QW_SPLAT_I32(QW_MLAS_EXP_MAXIMUM_EXPONENT));
    x[j] = wasm_f32x4_mul(p[j], normal);
  }
}

QW_ALWAYS_INLINE void qw_mlas_erf_n(size_t n, v128_t* x) {
  v128_t sign[4], a[4], a2[4], ab[4], small[4], p[4], r_big[4], biased[4], fx[4];
  QW_EACH(j, n) {
    sign[j] = wasm_v128_and(x[j], QW_SPLAT(-0.0f));
    a[j] = qw_min_const(QW_SPLAT(QW_MLAS_ERF_UPPER_ABS_RANGE), wasm_v128_andnot(x[j], QW_SPLAT(-0.0f)));
    a2[j] = wasm_f32x4_mul(a[j], a[j]);
    ab[j] = wasm_v128_and(a[j], wasm_f32x4_gt(a[j], QW_SPLAT(QW_MLAS_ERF_SPLIT_BOUNDARY)));
  }
  /* The two polynomials are independent: their chains interleaved, eight in flight (GELU 1.84 -> 1.70 ns per element
   * in Chromium 156, 1.80 -> 1.69 in Node 24; Node 20, which reorders the code itself, 1.68 -> 1.78) */
  QW_EACH(j, n) {
    p[j] = QW_SPLAT(qw_mlas_erf_big_poly[0]);
    small[j] = QW_SPLAT(qw_mlas_erf_small_poly[0]);
  }
  for (size_t i = 1; i < 7; i++) {
    QW_EACH(j, n) p[j] = QW_MULADD(p[j], ab[j], QW_SPLAT(qw_mlas_erf_big_poly[i]));
    if (i < 6) {
      QW_EACH(j, n) small[j] = QW_MULADD(small[j], a2[j], QW_SPLAT(qw_mlas_erf_small_poly[i]));
    }
    qw_interleave(n, p);
    qw_interleave(n, small);
  }
  QW_EACH(j, n) {
    const v128_t big = wasm_f32x4_gt(a[j], QW_SPLAT(QW_MLAS_ERF_SPLIT_BOUNDARY));
    small[j] = wasm_v128_andnot(QW_MULADD(small[j], a[j], a[j]), big);
    a[j] = ab[j];
  }
  QW_EACH(j, n) {
    r_big[j] = QW_MULADD(p[j], a[j], a[j]);
    r_big[j] = qw_max_const(QW_SPLAT(QW_MLAS_ERF_EXP_LOWER_RANGE), wasm_v128_xor(r_big[j], QW_SPLAT(-0.0f)));
    biased[j] = QW_MULADD(QW_SPLAT(QW_MLAS_ERF_EXP_LOG2_RECIPROCAL), r_big[j], QW_SPLAT(QW_MLAS_ERF_EXP_C));
    const v128_t r = wasm_f32x4_sub(biased[j], QW_SPLAT(QW_MLAS_ERF_EXP_C));
    fx[j] = QW_MULADD(r, QW_SPLAT(QW_MLAS_ERF_EXP_LOG2_HI), r_big[j]);
    fx[j] = QW_MULADD(r, QW_SPLAT(QW_MLAS_ERF_EXP_LOG2_LO), fx[j]);
  }
  qw_interleave(n, fx);
  qw_horner_n(n, qw_mlas_erf_exp_poly, 7, fx, p);
  QW_EACH(j, n) {
    /* 2^r as (r + 127) << 23 with r = trunc(r), MLAS's way, costs seven instructions in V8 (i32x4.trunc_sat_f32x4 is
     * five). r is an integer in [-128, 0] and biased = r + 1.5 * 2^23 lies where floats are one apart, so the low
     * bits of biased's representation are those of r + 2^22 and the shift drops the rest: the same word in two (erf
     * 1.99 instead of 2.07 ns per element). */
    const v128_t pow2 = wasm_i32x4_shl(wasm_i32x4_add(biased[j], QW_SPLAT_I32(127)), 23);
    const v128_t y = wasm_f32x4_sub(QW_SPLAT(1.0f), wasm_f32x4_mul(p[j], pow2));
    x[j] = wasm_v128_or(wasm_v128_or(small[j], y), sign[j]);
  }
}

QW_ALWAYS_INLINE void qw_mlas_tanh_n(size_t n, v128_t* x) {
  v128_t v2[4], p[4], q[4];
  QW_EACH(j, n) {
    x[j] = qw_min_const(QW_SPLAT(QW_MLAS_TANH_UPPER_RANGE), qw_max_const(QW_SPLAT(QW_MLAS_TANH_LOWER_RANGE), x[j]));
    v2[j] = wasm_f32x4_mul(x[j], x[j]);
  }
  qw_horner_n(n, qw_mlas_tanh_p, 7, v2, p);
  qw_horner_n(n, qw_mlas_tanh_q, 4, v2, q);
  QW_EACH(j, n) x[j] = wasm_f32x4_div(wasm_f32x4_mul(p[j], x[j]), q[j]);
}

/* qw_gelu_erf and qw_gelu_tanh (src/f32/mlas.h) per lane. */
QW_ALWAYS_INLINE void qw_gelu_erf_n(size_t n, v128_t* v) {
  v128_t t[4];
  QW_EACH(j, n) t[j] = wasm_f32x4_mul(v[j], QW_SPLAT(QW_GELU_SQRT1_2));
  qw_mlas_erf_n(n, t);
  QW_EACH(j, n) v[j] = wasm_f32x4_mul(wasm_f32x4_mul(v[j], QW_SPLAT(0.5f)), wasm_f32x4_add(t[j], QW_SPLAT(1.0f)));
}

QW_ALWAYS_INLINE void qw_gelu_tanh_n(size_t n, v128_t* v) {
  v128_t t[4];
  QW_EACH(j, n) {
    const v128_t inner = QW_MULADD(wasm_f32x4_mul(QW_SPLAT(QW_GELU_TANH_C), v[j]), v[j], QW_SPLAT(QW_GELU_TANH_B));
    t[j] = wasm_f32x4_mul(v[j], inner);
  }
  qw_mlas_tanh_n(n, t);
  QW_EACH(j, n) v[j] = wasm_f32x4_mul(wasm_f32x4_mul(v[j], QW_SPLAT(0.5f)), wasm_f32x4_add(t[j], QW_SPLAT(1.0f)));
}

#endif /* QWASM_F32_MLAS_WASMSIMD_H */
