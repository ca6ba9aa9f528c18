/* wasm SIMD128 float32 softmax row (the order of src/f32/softmax.h). */
#include <float.h>

#include "f32/mlas-wasmsimd.h"
#include "f32/softmax.h"

/* The row's maximum with f32x4.pmax (one maxps; f32x4.max, the reference's f32.max, is seven instructions in V8),
 * four independent accumulators. It can differ from f32.max's only where the results cannot: a NaN (f32.max returns
 * it, pmax may skip it) makes exp(x - max) NaN for that element, so the sum and every output are NaN either way; a
 * zero maximum may come out as -0 rather than +0, and x - max is then x itself for every x but a zero, whose
 * exponential is 1 either way (tests/c/test_transformer_ops.c checks such rows against the scalar kernel). Any other
 * maximum is the same value in any order. Rows of 128, the whole
 * softmax: 1.07 -> 0.80 ns per element in Node 24 and in Node 20, 1.15 -> 0.83 in Chromium 156. */
static float row_max(size_t n, const float* x) {
  size_t i = 0;
  v128_t vmax = QW_SPLAT(-FLT_MAX), vmax1 = vmax, vmax2 = vmax, vmax3 = vmax;
  for (; i + 16 <= n; i += 16) {
    vmax = wasm_f32x4_pmax(vmax, wasm_v128_load(x + i));
    vmax1 = wasm_f32x4_pmax(vmax1, wasm_v128_load(x + i + 4));
    vmax2 = wasm_f32x4_pmax(vmax2, wasm_v128_load(x + i + 8));
    vmax3 = wasm_f32x4_pmax(vmax3, wasm_v128_load(x + i + 12));
  }
  vmax = wasm_f32x4_pmax(wasm_f32x4_pmax(vmax, vmax1), wasm_f32x4_pmax(vmax2, vmax3));
  for (; i + 4 <= n; i += 4) {
    vmax = wasm_f32x4_pmax(vmax, wasm_v128_load(x + i));
  }
  float max = wasm_f32x4_extract_lane(vmax, 0);
  max = max < wasm_f32x4_extract_lane(vmax, 1) ? wasm_f32x4_extract_lane(vmax, 1) : max;
  max = max < wasm_f32x4_extract_lane(vmax, 2) ? wasm_f32x4_extract_lane(vmax, 2) : max;
  max = max < wasm_f32x4_extract_lane(vmax, 3) ? wasm_f32x4_extract_lane(vmax, 3) : max;
  for (; i < n; i++) {
    max = max < x[i] ? x[i] : max;
  }
  return max;
}

/* y = exp(x - max) (MLAS's kernel), returning their sum in the reference's order. */
static float exp_row(size_t n, const float* x, float* y, float max) {
  const float negative_max = -max;
  const v128_t vnegative_max = QW_SPLAT(negative_max);
  v128_t vsum = QW_SPLAT(0.0f);
  size_t i = 0;
  /* four exponentials per step, independent chains (see QW_F32_MAP_WASMSIMD), added to the sum in order */
  for (; i + 16 <= n; i += 16) {
    v128_t e[4] = {wasm_v128_load(x + i), wasm_v128_load(x + i + 4), wasm_v128_load(x + i + 8), wasm_v128_load(x + i + 12)};
    qw_mlas_exp_minus_max_n(4, e, vnegative_max);
    vsum = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(vsum, e[0]), e[1]), e[2]), e[3]);
    QW_EACH(j, 4) wasm_v128_store(y + i + 4 * j, e[j]);
  }
  for (; i + 4 <= n; i += 4) {
    v128_t e[1] = {wasm_v128_load(x + i)};
    qw_mlas_exp_minus_max_n(1, e, vnegative_max);
    vsum = wasm_f32x4_add(vsum, e[0]);
    wasm_v128_store(y + i, e[0]);
  }
  float sum = n >= 4 ? (wasm_f32x4_extract_lane(vsum, 0) + wasm_f32x4_extract_lane(vsum, 2)) +
                           (wasm_f32x4_extract_lane(vsum, 1) + wasm_f32x4_extract_lane(vsum, 3))
                     : 0.0f;
  for (; i < n; i++) {
    y[i] = qw_mlas_exp_minus_max(x[i], negative_max);
    sum = sum + y[i];
  }
  return sum;
}

QW_DECLARE_F32_SOFTMAX_UKERNEL(qw_f32_softmax_ukernel_16__wasmsimd) {
  const float sum = exp_row(n, x, y, row_max(n, x));
  const v128_t vscale = QW_SPLAT(1.0f / sum);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    wasm_v128_store(y + i, wasm_f32x4_mul(wasm_v128_load(y + i), vscale));
  }
  const float scale = 1.0f / sum;
  for (; i < n; i++) {
    y[i] = y[i] * scale;
  }
}
