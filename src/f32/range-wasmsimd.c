/* wasm SIMD128 float32 range (src/f32/range.h): four lanes of pmin / pmax (the scalar kernel's selects), 16
 * values per iteration in four accumulators, NaN and infinity caught by |v| <= FLT_MAX. */
#include <float.h>

#include "f32/range.h"
#include "simd128.h"

QW_DECLARE_F32_RANGE_UKERNEL(qw_f32_range_ukernel_16__wasmsimd) {
  const v128_t vmax = wasm_f32x4_splat(FLT_MAX);
  v128_t lo0 = wasm_f32x4_splat(*lo), lo1 = lo0, hi0 = wasm_f32x4_splat(*hi), hi1 = hi0;
  v128_t finite = wasm_i32x4_splat(-1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t a = wasm_v128_load(x + i), b = wasm_v128_load(x + i + 4);
    finite = wasm_v128_and(finite, wasm_v128_and(wasm_f32x4_le(wasm_f32x4_abs(a), vmax), wasm_f32x4_le(wasm_f32x4_abs(b), vmax)));
    lo0 = wasm_f32x4_pmin(lo0, a); /* a < lo0 ? a : lo0 */
    lo1 = wasm_f32x4_pmin(lo1, b);
    hi0 = wasm_f32x4_pmax(hi0, a); /* hi0 < a ? a : hi0 */
    hi1 = wasm_f32x4_pmax(hi1, b);
  }
  if (!wasm_i32x4_all_true(finite)) {
    return 0;
  }
  lo0 = wasm_f32x4_pmin(lo0, lo1);
  hi0 = wasm_f32x4_pmax(hi0, hi1);
  float l = *lo, h = *hi;
  for (int k = 0; k < 4; k++) {
    const float a = wasm_f32x4_extract_lane(lo0, 0), b = wasm_f32x4_extract_lane(hi0, 0);
    l = a < l ? a : l;
    h = b > h ? b : h;
    lo0 = wasm_i32x4_shuffle(lo0, lo0, 1, 2, 3, 0);
    hi0 = wasm_i32x4_shuffle(hi0, hi0, 1, 2, 3, 0);
  }
  *lo = l;
  *hi = h;
  return qw_f32_range_ukernel__scalar(n - i, x + i, lo, hi); /* the tail */
}
