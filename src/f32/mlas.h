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

/* compute.cpp MlasExpConstants (MLAS_ROUNDING_BIAS_MAGIC is 1.5 * 2^23). */
#define QW_MLAS_EXP_LOWER_RANGE (-103.9720840454f)
#define QW_MLAS_EXP_UPPER_RANGE 88.7762626647950f
#define QW_MLAS_EXP_LOWER_RANGE_SUM_EXP (-88.3762626647949f)
#define QW_MLAS_EXP_ROUNDING_BIAS 12582912.0f
#define QW_MLAS_EXP_LOG2_RECIPROCAL 1.44269504088896341f
#define QW_MLAS_EXP_LOG2_HIGH (-6.93145752e-1f)
#define QW_MLAS_EXP_LOG2_LOW (-1.42860677e-6f)
#define QW_MLAS_EXP_POLY_0 0x1.694000p-10f
#define QW_MLAS_EXP_POLY_1 0x1.125edcp-7f
#define QW_MLAS_EXP_POLY_2 0x1.555b5ap-5f
#define QW_MLAS_EXP_POLY_3 0x1.555450p-3f
#define QW_MLAS_EXP_POLY_4 0x1.fffff6p-2f
#define QW_MLAS_EXP_POLY_56 0x1.000000p+0f
#define QW_MLAS_EXP_MINIMUM_EXPONENT ((int32_t)0xC1000000)
#define QW_MLAS_EXP_MAXIMUM_EXPONENT ((int32_t)0x3F800000)

/* erf.cpp MlasErfConstants. */
#define QW_MLAS_ERF_UPPER_ABS_RANGE 3.925f
#define QW_MLAS_ERF_SPLIT_BOUNDARY 0.921875f
#define QW_MLAS_ERF_SMALL_P0 (-5.99104969e-4f)
#define QW_MLAS_ERF_SMALL_P1 4.99339588e-3f
#define QW_MLAS_ERF_SMALL_P2 (-2.67667342e-2f)
#define QW_MLAS_ERF_SMALL_P3 1.12818025e-1f
#define QW_MLAS_ERF_SMALL_P4 (-3.76124859e-1f)
#define QW_MLAS_ERF_SMALL_P5_MINUS_ONE 1.28379151e-1f
#define QW_MLAS_ERF_BIG_P0 1.72948930e-5f
#define QW_MLAS_ERF_BIG_P1 (-3.83208680e-4f)
#define QW_MLAS_ERF_BIG_P2 3.88393435e-3f
#define QW_MLAS_ERF_BIG_P3 (-2.42545605e-2f)
#define QW_MLAS_ERF_BIG_P4 1.06777847e-1f
#define QW_MLAS_ERF_BIG_P5 6.34846687e-1f
#define QW_MLAS_ERF_BIG_P6_MINUS_ONE 1.28717512e-1f
#define QW_MLAS_ERF_EXP_LOWER_RANGE (-88.3762626647949f)
#define QW_MLAS_ERF_EXP_LOG2_RECIPROCAL 1.44269504088896341f
#define QW_MLAS_ERF_EXP_LOG2_HI (-6.93145752e-1f)
#define QW_MLAS_ERF_EXP_LOG2_LO (-1.42860677e-6f)
#define QW_MLAS_ERF_EXP_P0 1.38319808e-3f
#define QW_MLAS_ERF_EXP_P1 8.37550033e-3f
#define QW_MLAS_ERF_EXP_P2 4.16689515e-2f
#define QW_MLAS_ERF_EXP_P3 1.66664466e-1f
#define QW_MLAS_ERF_EXP_P4 4.99999851e-1f
#define QW_MLAS_ERF_EXP_P5 1.00000000e+0f
#define QW_MLAS_ERF_EXP_P6 1.00000000e+0f
#define QW_MLAS_ERF_EXP_C 1.25829120e+7f

/* tanh.cpp MlasTanhConstants (Eigen's rational approximation on [-9, 9]). */
#define QW_MLAS_TANH_LOWER_RANGE (-9.0f)
#define QW_MLAS_TANH_UPPER_RANGE 9.0f
#define QW_MLAS_TANH_ALPHA_13 (-2.76076847742355e-16f)
#define QW_MLAS_TANH_ALPHA_11 2.00018790482477e-13f
#define QW_MLAS_TANH_ALPHA_9 (-8.60467152213735e-11f)
#define QW_MLAS_TANH_ALPHA_7 5.12229709037114e-08f
#define QW_MLAS_TANH_ALPHA_5 1.48572235717979e-05f
#define QW_MLAS_TANH_ALPHA_3 6.37261928875436e-04f
#define QW_MLAS_TANH_ALPHA_1 4.89352455891786e-03f
#define QW_MLAS_TANH_BETA_6 1.19825839466702e-06f
#define QW_MLAS_TANH_BETA_4 1.18534705686654e-04f
#define QW_MLAS_TANH_BETA_2 2.26843463243900e-03f
#define QW_MLAS_TANH_BETA_0 4.89352518554385e-03f

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

/* The exponent of 2^m, as MlasComputeExpVector splits it into two scale factors so that results in
 * [2^-150, 2^128) need no special cases: biased holds m + 1.5 * 2^23 in its low mantissa bits. */
static inline float qw_mlas_exp(float x) {
  float v = qw_wasm_fminf(QW_MLAS_EXP_UPPER_RANGE, qw_wasm_fmaxf(QW_MLAS_EXP_LOWER_RANGE, x));
  const float biased = v * QW_MLAS_EXP_LOG2_RECIPROCAL + QW_MLAS_EXP_ROUNDING_BIAS;
  const float m = biased - QW_MLAS_EXP_ROUNDING_BIAS;
  v = m * QW_MLAS_EXP_LOG2_HIGH + v;
  v = m * QW_MLAS_EXP_LOG2_LOW + v;
  int32_t overflow = (int32_t)(qw_f32_bits(biased) << 23);
  int32_t normal = overflow;
  normal = normal < QW_MLAS_EXP_MAXIMUM_EXPONENT ? normal : QW_MLAS_EXP_MAXIMUM_EXPONENT;
  normal = normal > QW_MLAS_EXP_MINIMUM_EXPONENT ? normal : QW_MLAS_EXP_MINIMUM_EXPONENT;
  overflow = (int32_t)((uint32_t)overflow - (uint32_t)normal + (uint32_t)QW_MLAS_EXP_MAXIMUM_EXPONENT);
  normal = (int32_t)((uint32_t)normal + (uint32_t)QW_MLAS_EXP_MAXIMUM_EXPONENT);
  float p = QW_MLAS_EXP_POLY_0;
  p = p * v + QW_MLAS_EXP_POLY_1;
  p = p * v + QW_MLAS_EXP_POLY_2;
  p = p * v + QW_MLAS_EXP_POLY_3;
  p = p * v + QW_MLAS_EXP_POLY_4;
  p = p * v + QW_MLAS_EXP_POLY_56;
  const float overflow_scale = qw_f32_from_bits((uint32_t)overflow);
  v = v * overflow_scale;
  p = p * v + overflow_scale;
  return p * qw_f32_from_bits((uint32_t)normal);
}

/* MlasComputeSumExpVector: exp(x - max) for softmax, with the narrower range [-88.38, 0] (one scale
 * factor, the polynomial's last coefficient applied twice). */
static inline float qw_mlas_exp_minus_max(float x, float negative_max) {
  float v = qw_wasm_fmaxf(QW_MLAS_EXP_LOWER_RANGE_SUM_EXP, x + negative_max);
  const float biased = v * QW_MLAS_EXP_LOG2_RECIPROCAL + QW_MLAS_EXP_ROUNDING_BIAS;
  const float m = biased - QW_MLAS_EXP_ROUNDING_BIAS;
  v = m * QW_MLAS_EXP_LOG2_HIGH + v;
  v = m * QW_MLAS_EXP_LOG2_LOW + v;
  const uint32_t normal = (qw_f32_bits(biased) << 23) + (uint32_t)QW_MLAS_EXP_MAXIMUM_EXPONENT;
  float p = QW_MLAS_EXP_POLY_0;
  p = p * v + QW_MLAS_EXP_POLY_1;
  p = p * v + QW_MLAS_EXP_POLY_2;
  p = p * v + QW_MLAS_EXP_POLY_3;
  p = p * v + QW_MLAS_EXP_POLY_4;
  p = p * v + QW_MLAS_EXP_POLY_56;
  p = p * v + QW_MLAS_EXP_POLY_56;
  return p * qw_f32_from_bits(normal);
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
  const float a2 = a * a;
  float small = QW_MLAS_ERF_SMALL_P0;
  small = small * a2 + QW_MLAS_ERF_SMALL_P1;
  small = small * a2 + QW_MLAS_ERF_SMALL_P2;
  small = small * a2 + QW_MLAS_ERF_SMALL_P3;
  small = small * a2 + QW_MLAS_ERF_SMALL_P4;
  small = small * a2 + QW_MLAS_ERF_SMALL_P5_MINUS_ONE;
  small = small * a + a;
  const int big = a > QW_MLAS_ERF_SPLIT_BOUNDARY;
  if (!big) {
    a = 0.0f; /* the vector code clears the small lanes before the big polynomial */
  }
  float r_big = QW_MLAS_ERF_BIG_P0;
  r_big = r_big * a + QW_MLAS_ERF_BIG_P1;
  r_big = r_big * a + QW_MLAS_ERF_BIG_P2;
  r_big = r_big * a + QW_MLAS_ERF_BIG_P3;
  r_big = r_big * a + QW_MLAS_ERF_BIG_P4;
  r_big = r_big * a + QW_MLAS_ERF_BIG_P5;
  r_big = r_big * a + QW_MLAS_ERF_BIG_P6_MINUS_ONE;
  r_big = r_big * a + a;
  r_big = qw_wasm_fmaxf(QW_MLAS_ERF_EXP_LOWER_RANGE, -r_big);
  float r = QW_MLAS_ERF_EXP_LOG2_RECIPROCAL * r_big + QW_MLAS_ERF_EXP_C;
  r = r - QW_MLAS_ERF_EXP_C;
  float fx = r * QW_MLAS_ERF_EXP_LOG2_HI + r_big;
  fx = r * QW_MLAS_ERF_EXP_LOG2_LO + fx;
  float y = QW_MLAS_ERF_EXP_P0;
  y = y * fx + QW_MLAS_ERF_EXP_P1;
  y = y * fx + QW_MLAS_ERF_EXP_P2;
  y = y * fx + QW_MLAS_ERF_EXP_P3;
  y = y * fx + QW_MLAS_ERF_EXP_P4;
  y = y * fx + QW_MLAS_ERF_EXP_P5;
  y = y * fx + QW_MLAS_ERF_EXP_P6;
  y = y * qw_mlas_pow2(r);
  y = 1.0f - y;
  const uint32_t merged = (big ? qw_f32_bits(y) : qw_f32_bits(small) | qw_f32_bits(y)) | sign;
  return qw_f32_from_bits(merged);
}

/* MlasTanhKernel, one lane: x clamped to [-9, 9], then p(x) / q(x). */
static inline float qw_mlas_tanh(float x) {
  const float v = qw_wasm_fminf(QW_MLAS_TANH_UPPER_RANGE, qw_wasm_fmaxf(QW_MLAS_TANH_LOWER_RANGE, x));
  const float v2 = v * v;
  float p = v2 * QW_MLAS_TANH_ALPHA_13 + QW_MLAS_TANH_ALPHA_11;
  p = p * v2 + QW_MLAS_TANH_ALPHA_9;
  p = p * v2 + QW_MLAS_TANH_ALPHA_7;
  p = p * v2 + QW_MLAS_TANH_ALPHA_5;
  p = p * v2 + QW_MLAS_TANH_ALPHA_3;
  p = p * v2 + QW_MLAS_TANH_ALPHA_1;
  p = p * v;
  float q = v2 * QW_MLAS_TANH_BETA_6 + QW_MLAS_TANH_BETA_4;
  q = q * v2 + QW_MLAS_TANH_BETA_2;
  q = q * v2 + QW_MLAS_TANH_BETA_0;
  return p / q;
}

#endif /* QWASM_F32_MLAS_H */
