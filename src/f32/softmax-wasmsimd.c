/* wasm SIMD128 float32 softmax row (the order of src/f32/softmax.h). */
#include <float.h>

#include "f32/mlas-wasmsimd.h"
#include "f32/softmax.h"

QW_DECLARE_F32_SOFTMAX_UKERNEL(qw_f32_softmax_ukernel_16__wasmsimd) {
  size_t i = 0;
  /* The maximum in any order gives the same bits (f32x4.max orders -0 below +0 and makes any NaN the NaN): four
   * independent accumulators, as f32x4.max is seven instructions in V8. */
  v128_t vmax = QW_SPLAT(-FLT_MAX), vmax1 = vmax, vmax2 = vmax, vmax3 = vmax;
  for (; i + 16 <= n; i += 16) {
    vmax = wasm_f32x4_max(vmax, wasm_v128_load(x + i));
    vmax1 = wasm_f32x4_max(vmax1, wasm_v128_load(x + i + 4));
    vmax2 = wasm_f32x4_max(vmax2, wasm_v128_load(x + i + 8));
    vmax3 = wasm_f32x4_max(vmax3, wasm_v128_load(x + i + 12));
  }
  vmax = wasm_f32x4_max(wasm_f32x4_max(vmax, vmax1), wasm_f32x4_max(vmax2, vmax3));
  for (; i + 4 <= n; i += 4) {
    vmax = wasm_f32x4_max(vmax, wasm_v128_load(x + i));
  }
  float max = qw_wasm_fmaxf(qw_wasm_fmaxf(wasm_f32x4_extract_lane(vmax, 0), wasm_f32x4_extract_lane(vmax, 1)),
                            qw_wasm_fmaxf(wasm_f32x4_extract_lane(vmax, 2), wasm_f32x4_extract_lane(vmax, 3)));
  for (; i < n; i++) {
    max = qw_wasm_fmaxf(max, x[i]);
  }
  const float negative_max = -max;
  const v128_t vnegative_max = QW_SPLAT(negative_max);
  v128_t vsum = QW_SPLAT(0.0f);
  /* four exponentials per step, independent chains (see QW_F32_MAP_WASMSIMD), added to the sum in order */
  for (i = 0; i + 16 <= n; i += 16) {
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
  const v128_t vscale = QW_SPLAT(1.0f / sum);
  for (i = 0; i + 4 <= n; i += 4) {
    wasm_v128_store(y + i, wasm_f32x4_mul(wasm_v128_load(y + i), vscale));
  }
  const float scale = 1.0f / sum;
  for (; i < n; i++) {
    y[i] = y[i] * scale;
  }
}
