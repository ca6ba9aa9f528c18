/* wasm SIMD128 float32 ReLU: x AND (x > 0), 16 floats per iteration (NaN and -0.0f give +0.0f, the
 * scalar kernel's bits). */
#include <assert.h>

#include "f32/relu.h"
#include "simd128.h"

QW_DECLARE_F32_RELU_UKERNEL(qw_f32_relu_ukernel_16__wasmsimd) {
  assert(n != 0 && x != NULL && y != NULL);
  const v128_t zero = wasm_f32x4_splat(0.0f);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t v0 = wasm_v128_load(x + i), v1 = wasm_v128_load(x + i + 4);
    const v128_t v2 = wasm_v128_load(x + i + 8), v3 = wasm_v128_load(x + i + 12);
    wasm_v128_store(y + i, wasm_v128_and(v0, wasm_f32x4_gt(v0, zero)));
    wasm_v128_store(y + i + 4, wasm_v128_and(v1, wasm_f32x4_gt(v1, zero)));
    wasm_v128_store(y + i + 8, wasm_v128_and(v2, wasm_f32x4_gt(v2, zero)));
    wasm_v128_store(y + i + 12, wasm_v128_and(v3, wasm_f32x4_gt(v3, zero)));
  }
  for (; i + 4 <= n; i += 4) {
    const v128_t v = wasm_v128_load(x + i);
    wasm_v128_store(y + i, wasm_v128_and(v, wasm_f32x4_gt(v, zero)));
  }
  for (; i < n; i++) {
    const float v = x[i];
    y[i] = v > 0.0f ? v : 0.0f;
  }
}
