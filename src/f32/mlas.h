/*
 * onnxruntime's float approximations as its wasm build computes them (MLAS, onnxruntime/core/mlas/lib:
 * compute.cpp MlasComputeExpVector / MlasComputeSumExpVector, erf.cpp MlasErfKernel, tanh.cpp
 * MlasTanhKernel, mlasi.h for the wasm SIMD128 primitives). onnxruntime-web compiles MLAS with
 * MLAS_WASM_SIMD_INTRINSICS: MlasMultiplyAddFloat32x4 is f32x4.mul then f32x4.add (wasm has no fused
 * multiply-add), min / max are f32x4.min / f32x4.max, the float -> int conversion truncates. Its x86
 * builds (the Python wheel) run AVX2 / FMA3 assembly instead, so their last bits differ.
 *
 * The per-element functions here ARE the reference: each is one SIMD lane, operation for operation, so the
 * scalar kernels loop over them and the SIMD kernels (which follow the same steps four lanes at a time)
 * use them for tails. Build with -ffp-contract=off: every product and sum is rounded on its own.
 */
#ifndef QWASM_F32_MLAS_H
#define QWASM_F32_MLAS_H

#include <stdint.h>
#include <string.h>

#include <stddef.h>

/* compute.cpp MlasExpConstants (MLAS_ROUNDING_BIAS_MAGIC is 1.5 * 2^23). */
#define QW_MLAS_EXP_LOWER_RANGE (-103.9720840454f)
#define QW_MLAS_EXP_UPPER_RANGE 88.7762626647950f
#define QW_MLAS_EXP_LOWER_RANGE_SUM_EXP (-88.3762626647949f)
#define QW_MLAS_EXP_ROUNDING_BIAS 12582912.0f
#define QW_MLAS_EXP_LOG2_RECIPROCAL 1.44269504088896341f
#define QW_MLAS_EXP_LOG2_HIGH (-6.93145752e-1f)
#define QW_MLAS_EXP_LOG2_LOW (-1.42860677e-6f)
#define QW_MLAS_EXP_MINIMUM_EXPONENT ((int32_t)0xC1000000)
#define QW_MLAS_EXP_MAXIMUM_EXPONENT ((int32_t)0x3F800000)
/* exp's polynomial poly_0 .. poly_4, poly_56; MlasComputeSumExpVector applies poly_56 twice */
static const float qw_mlas_exp_poly[7] = {0x1.694000p-10f, 0x1.125edcp-7f, 0x1.555b5ap-5f, 0x1.555450p-3f,
                                          0x1.fffff6p-2f,  0x1.000000p+0f, 0x1.000000p+0f};

/* erf.cpp MlasErfConstants. */
#define QW_MLAS_ERF_UPPER_ABS_RANGE 3.925f
#define QW_MLAS_ERF_SPLIT_BOUNDARY 0.921875f
static const float qw_mlas_erf_small_poly[6] = {-5.99104969e-4f, 4.99339588e-3f, -2.67667342e-2f,
                                                1.12818025e-1f,  -3.76124859e-1f, 1.28379151e-1f};
static const float qw_mlas_erf_big_poly[7] = {1.72948930e-5f,  -3.83208680e-4f, 3.88393435e-3f, -2.42545605e-2f,
                                              1.06777847e-1f,  6.34846687e-1f,  1.28717512e-1f};
#define QW_MLAS_ERF_EXP_LOWER_RANGE (-88.3762626647949f)
#define QW_MLAS_ERF_EXP_LOG2_RECIPROCAL 1.44269504088896341f
#define QW_MLAS_ERF_EXP_LOG2_HI (-6.93145752e-1f)
#define QW_MLAS_ERF_EXP_LOG2_LO (-1.42860677e-6f)
#define QW_MLAS_ERF_EXP_C 1.25829120e+7f
static const float qw_mlas_erf_exp_poly[7] = {1.38319808e-3f, 8.37550033e-3f, 4.16689515e-2f, 1.66664466e-1f,
                                              4.99999851e-1f, 1.00000000e+0f, 1.00000000e+0f};

/* tanh.cpp MlasTanhConstants (Eigen's rational approximation on [-9, 9]): p = alpha_13 .. alpha_1,
 * q = beta_6 .. beta_0, both in x^2. */
#define QW_MLAS_TANH_LOWER_RANGE (-9.0f)
#define QW_MLAS_TANH_UPPER_RANGE 9.0f
static const float qw_mlas_tanh_p[7] = {-2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f,
                                        5.12229709037114e-08f,  1.48572235717979e-05f, 6.37261928875436e-04f,
                                        4.89352455891786e-03f};
static const float qw_mlas_tanh_q[4] = {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f,
                                        4.89352518554385e-03f};

/* GELU constants of onnxruntime's Gelu / BiasGelu / FastGelu kernels (M_SQRT1_2 and
 * sqrt(2 / pi), 0.044715 * sqrt(2 / pi) as float). */
#define QW_GELU_SQRT1_2 0.70710678118654752440f
#define QW_GELU_TANH_B 0.7978845608028654f
#define QW_GELU_TANH_C 0.035677408136300125f

static inline uint32_t qw_f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline float qw_f32_from_bits(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* wasm's f32.max / f32.min (what f32x4.max / f32x4.min do per lane): NaN if either operand is NaN, and
 * -0 < +0. C's fmaxf and the usual ternaries differ on both. */
static inline float qw_wasm_fmaxf(float a, float b) {
  if (a != a || b != b) {
    return a + b;
  }
  if (a == b) {
    return qw_f32_from_bits(qw_f32_bits(a) & qw_f32_bits(b)); /* +0 wins over -0 */
  }
  return a > b ? a : b;
}

static inline float qw_wasm_fminf(float a, float b) {
  if (a != a || b != b) {
    return a + b;
  }
  if (a == b) {
    return qw_f32_from_bits(qw_f32_bits(a) | qw_f32_bits(b)); /* -0 wins over +0 */
  }
  return a < b ? a : b;
}

/* p = c[0], then p = p * x + c[i]: a chain of MlasMultiplyAddFloat32x4 (each product rounded, then the sum). */
static inline float qw_horner(const float* c, size_t n, float x) {
  float p = c[0];
  for (size_t i = 1; i < n; i++) {
    p = p * x + c[i];
  }
  return p;
}

/* exp's range reduction: x = m ln 2 + r with m = round(x / ln 2) found by adding 1.5 * 2^23 (biased keeps m in
 * its low mantissa bits), ln 2 split in two parts. Returns r. */
static inline float qw_mlas_exp_reduce(float v, float* biased) {
  *biased = v * QW_MLAS_EXP_LOG2_RECIPROCAL + QW_MLAS_EXP_ROUNDING_BIAS;
  const float m = *biased - QW_MLAS_EXP_ROUNDING_BIAS;
  v = m * QW_MLAS_EXP_LOG2_HIGH + v;
  return m * QW_MLAS_EXP_LOG2_LOW + v;
}

/* MlasComputeExpVector: 2^m applied as two scale factors so that results down to 2^-150 need no special
 * case (the overflow factor multiplies in before the last polynomial step). */
static inline float qw_mlas_exp(float x) {
  float biased;
  float v = qw_mlas_exp_reduce(qw_wasm_fminf(QW_MLAS_EXP_UPPER_RANGE, qw_wasm_fmaxf(QW_MLAS_EXP_LOWER_RANGE, x)), &biased);
  int32_t overflow = (int32_t)(qw_f32_bits(biased) << 23);
  int32_t normal = overflow;
  normal = normal < QW_MLAS_EXP_MAXIMUM_EXPONENT ? normal : QW_MLAS_EXP_MAXIMUM_EXPONENT;
  normal = normal > QW_MLAS_EXP_MINIMUM_EXPONENT ? normal : QW_MLAS_EXP_MINIMUM_EXPONENT;
  overflow = (int32_t)((uint32_t)overflow - (uint32_t)normal + (uint32_t)QW_MLAS_EXP_MAXIMUM_EXPONENT);
  normal = (int32_t)((uint32_t)normal + (uint32_t)QW_MLAS_EXP_MAXIMUM_EXPONENT);
  float p = qw_horner(qw_mlas_exp_poly, 6, v);
  const float overflow_scale = qw_f32_from_bits((uint32_t)overflow);
  v = v * overflow_scale;
  p = p * v + overflow_scale;
  return p * qw_f32_from_bits((uint32_t)normal);
}

/* MlasComputeSumExpVector: exp(x - max) for softmax, with the narrower range [-88.38, 0] (one scale
 * factor, the polynomial's last coefficient applied twice). */
static inline float qw_mlas_exp_minus_max(float x, float negative_max) {
  float biased;
  const float v = qw_mlas_exp_reduce(qw_wasm_fmaxf(QW_MLAS_EXP_LOWER_RANGE_SUM_EXP, x + negative_max), &biased);
  const uint32_t normal = (qw_f32_bits(biased) << 23) + (uint32_t)QW_MLAS_EXP_MAXIMUM_EXPONENT;
  return qw_horner(qw_mlas_exp_poly, 7, v) * qw_f32_from_bits(normal);
}

/* 2^(int)r as MlasPowerOf2Float32x4 builds it: truncate, add the bias 127, shift into the exponent. */
static inline float qw_mlas_pow2(float r) {
  const int32_t i = r != r ? 0 : r >= 2147483648.0f ? INT32_MAX : r <= -2147483648.0f ? INT32_MIN : (int32_t)r;
  return qw_f32_from_bits(((uint32_t)i + 127u) << 23);
}

/* MlasErfKernel, one lane: an odd polynomial below 0.921875, 1 - exp(-poly(|x|)) above (|x| clamped to
 * 3.925), the sign restored at the end. */
static inline float qw_mlas_erf(float x) {
  const uint32_t sign = qw_f32_bits(x) & 0x80000000u;
  float a = qw_wasm_fminf(QW_MLAS_ERF_UPPER_ABS_RANGE, qw_f32_from_bits(qw_f32_bits(x) & 0x7FFFFFFFu));
  const float small = qw_horner(qw_mlas_erf_small_poly, 6, a * a) * a + a;
  const int big = a > QW_MLAS_ERF_SPLIT_BOUNDARY;
  if (!big) {
    a = 0.0f; /* the vector code clears the small lanes before the big polynomial */
  }
  const float r_big = qw_wasm_fmaxf(QW_MLAS_ERF_EXP_LOWER_RANGE, -(qw_horner(qw_mlas_erf_big_poly, 7, a) * a + a));
  float r = QW_MLAS_ERF_EXP_LOG2_RECIPROCAL * r_big + QW_MLAS_ERF_EXP_C;
  r = r - QW_MLAS_ERF_EXP_C;
  float fx = r * QW_MLAS_ERF_EXP_LOG2_HI + r_big;
  fx = r * QW_MLAS_ERF_EXP_LOG2_LO + fx;
  const float y = 1.0f - qw_horner(qw_mlas_erf_exp_poly, 7, fx) * qw_mlas_pow2(r);
  const uint32_t merged = (big ? qw_f32_bits(y) : qw_f32_bits(small) | qw_f32_bits(y)) | sign;
  return qw_f32_from_bits(merged);
}

/* MlasTanhKernel, one lane: x clamped to [-9, 9], then p(x^2) x / q(x^2). */
static inline float qw_mlas_tanh(float x) {
  const float v = qw_wasm_fminf(QW_MLAS_TANH_UPPER_RANGE, qw_wasm_fmaxf(QW_MLAS_TANH_LOWER_RANGE, x));
  const float v2 = v * v;
  return qw_horner(qw_mlas_tanh_p, 7, v2) * v / qw_horner(qw_mlas_tanh_q, 4, v2);
}

/* GELU of v, onnxruntime's formulas (src/f32/vgelu.h): the erf form and the tanh form. */
static inline float qw_gelu_erf(float v) {
  return (v * 0.5f) * (qw_mlas_erf(v * QW_GELU_SQRT1_2) + 1.0f);
}

static inline float qw_gelu_tanh(float v) {
  return (v * 0.5f) * (qw_mlas_tanh(v * (QW_GELU_TANH_C * v * v + QW_GELU_TANH_B)) + 1.0f);
}

#endif /* QWASM_F32_MLAS_H */
