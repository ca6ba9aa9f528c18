/* wasm SIMD128 transposing pack for the float GEMM (f32/gemm.h): four rows at a time, four k per step, each 4x4
 * block transposed in registers (unpcklps / unpckhps / movlhps / movhlps in V8) and stored as four lane groups;
 * the same floats as the scalar kernel, which also takes a lane count that is not a multiple of 4. */
#include "f32/gemm.h"
#include "simd128.h"

QW_DECLARE_X32_PACKX_UKERNEL(qw_x32_packx_ukernel_4x__wasmsimd) {
  QW_ASSERT_X32_PACKX_UKERNEL();
  if (lanes % 4 != 0) {
    qw_x32_packx_ukernel__scalar(rows, lanes, kc, x, ldx, out);
    return;
  }
  const v128_t zero = wasm_f32x4_const(0, 0, 0, 0);
  for (size_t r0 = 0; r0 < lanes; r0 += 4) {
    float* o = out + r0;
    const size_t n = rows > r0 ? (rows - r0 < 4 ? rows - r0 : 4) : 0; /* rows of this group; the rest zeros */
    if (n == 0) {
      for (size_t k = 0; k < kc; k++) wasm_v128_store(o + k * lanes, zero);
      continue;
    }
    /* a missing row reads row 0 and is masked to zeros: the loop keeps one shape */
    const float* p0 = x + r0 * ldx;
    const float* p1 = n > 1 ? p0 + ldx : p0;
    const float* p2 = n > 2 ? p0 + 2 * ldx : p0;
    const float* p3 = n > 3 ? p0 + 3 * ldx : p0;
    const v128_t keep = wasm_i32x4_make(-1, n > 1 ? -1 : 0, n > 2 ? -1 : 0, n > 3 ? -1 : 0);
    size_t k = 0;
    for (; k + 4 <= kc; k += 4) {
      const v128_t v0 = wasm_v128_load(p0 + k), v1 = wasm_v128_load(p1 + k);
      const v128_t v2 = wasm_v128_load(p2 + k), v3 = wasm_v128_load(p3 + k);
      const v128_t t0 = wasm_i32x4_shuffle(v0, v1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(v2, v3, 0, 4, 1, 5);
      const v128_t t2 = wasm_i32x4_shuffle(v0, v1, 2, 6, 3, 7), t3 = wasm_i32x4_shuffle(v2, v3, 2, 6, 3, 7);
      wasm_v128_store(o + k * lanes, wasm_v128_and(wasm_i64x2_shuffle(t0, t1, 0, 2), keep));
      wasm_v128_store(o + (k + 1) * lanes, wasm_v128_and(wasm_i64x2_shuffle(t0, t1, 1, 3), keep));
      wasm_v128_store(o + (k + 2) * lanes, wasm_v128_and(wasm_i64x2_shuffle(t2, t3, 0, 2), keep));
      wasm_v128_store(o + (k + 3) * lanes, wasm_v128_and(wasm_i64x2_shuffle(t2, t3, 1, 3), keep));
    }
    for (; k < kc; k++) {
      const v128_t v = wasm_f32x4_make(p0[k], p1[k], p2[k], p3[k]);
      wasm_v128_store(o + k * lanes, wasm_v128_and(v, keep));
    }
  }
}
