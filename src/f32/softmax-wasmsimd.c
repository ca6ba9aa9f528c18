/* wasm SIMD128 float32 softmax row (the order of src/f32/softmax.h). */
#include <float.h>

#include "f32/mlas.h"
#include "f32/softmax.h"
#include "simd128.h"

#define SPLAT(c) wasm_f32x4_splat(c)
#define MULADD(a, b, c) wasm_f32x4_add(wasm_f32x4_mul(a, b), c)

static inline v128_t exp_minus_max4(v128_t x, v128_t negative_max) {
  v128_t v = wasm_f32x4_max(SPLAT(QW_MLAS_EXP_LOWER_RANGE_SUM_EXP), wasm_f32x4_add(x, negative_max));
  const v128_t biased = MULADD(v, SPLAT(QW_MLAS_EXP_LOG2_RECIPROCAL), SPLAT(QW_MLAS_EXP_ROUNDING_BIAS));
  const v128_t m = wasm_f32x4_sub(biased, SPLAT(QW_MLAS_EXP_ROUNDING_BIAS));
  v = MULADD(m, SPLAT(QW_MLAS_EXP_LOG2_HIGH), v);
  v = MULADD(m, SPLAT(QW_MLAS_EXP_LOG2_LOW), v);
  const v128_t normal = wasm_i32x4_add(wasm_i32x4_shl(biased, 23), wasm_i32x4_splat(QW_MLAS_EXP_MAXIMUM_EXPONENT));
  v128_t p = SPLAT(QW_MLAS_EXP_POLY_0);
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_1));
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_2));
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_3));
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_4));
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_56));
  p = MULADD(p, v, SPLAT(QW_MLAS_EXP_POLY_56));
  return wasm_f32x4_mul(p, normal);
}

QW_DECLARE_F32_SOFTMAX_UKERNEL(qw_f32_softmax_ukernel_4__wasmsimd) {
  size_t i = 0;
  v128_t vmax = SPLAT(-FLT_MAX);
  for (; i + 4 <= n; i += 4) {
    vmax = wasm_f32x4_max(vmax, wasm_v128_load(x + i));
  }
  float max = qw_wasm_fmaxf(qw_wasm_fmaxf(wasm_f32x4_extract_lane(vmax, 0), wasm_f32x4_extract_lane(vmax, 1)),
                            qw_wasm_fmaxf(wasm_f32x4_extract_lane(vmax, 2), wasm_f32x4_extract_lane(vmax, 3)));
  for (; i < n; i++) {
    max = qw_wasm_fmaxf(max, x[i]);
  }
  const float negative_max = -max;
  const v128_t vnegative_max = SPLAT(negative_max);
  v128_t vsum = SPLAT(0.0f);
  for (i = 0; i + 4 <= n; i += 4) {
    const v128_t e = exp_minus_max4(wasm_v128_load(x + i), vnegative_max);
    vsum = wasm_f32x4_add(vsum, e);
    wasm_v128_store(y + i, e);
  }
  float sum = n >= 4 ? (wasm_f32x4_extract_lane(vsum, 0) + wasm_f32x4_extract_lane(vsum, 2)) +
                           (wasm_f32x4_extract_lane(vsum, 1) + wasm_f32x4_extract_lane(vsum, 3))
                     : 0.0f;
  for (; i < n; i++) {
    y[i] = qw_mlas_exp_minus_max(x[i], negative_max);
    sum = sum + y[i];
  }
  const v128_t vscale = SPLAT(1.0f / sum);
  for (i = 0; i + 4 <= n; i += 4) {
    wasm_v128_store(y + i, wasm_f32x4_mul(wasm_v128_load(y + i), vscale));
  }
  const float scale = 1.0f / sum;
  for (; i < n; i++) {
    y[i] = y[i] * scale;
  }
}
