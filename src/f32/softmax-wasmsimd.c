/* wasm SIMD128 float32 softmax row (the order of src/f32/softmax.h). */
#include <float.h>

#include "f32/mlas-wasmsimd.h"
#include "f32/softmax.h"

QW_DECLARE_F32_SOFTMAX_UKERNEL(qw_f32_softmax_ukernel_4__wasmsimd) {
  size_t i = 0;
  v128_t vmax = QW_SPLAT(-FLT_MAX);
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
  for (i = 0; i + 4 <= n; i += 4) {
    const v128_t e = qw_mlas_exp_minus_max4(wasm_v128_load(x + i), vnegative_max);
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
  const v128_t vscale = QW_SPLAT(1.0f / sum);
  for (i = 0; i + 4 <= n; i += 4) {
    wasm_v128_store(y + i, wasm_f32x4_mul(wasm_v128_load(y + i), vscale));
  }
  const float scale = 1.0f / sum;
  for (; i < n; i++) {
    y[i] = y[i] * scale;
  }
}
