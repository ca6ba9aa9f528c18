/* wasm SIMD128 float32 binary elementwise kernels: 8 floats per iteration, the same IEEE operation per
 * lane as the scalar kernels. */
#include "f32/vbinary.h"
#include "simd128.h"

#define QW_F32_VBINARY_WASMSIMD(op, vop, sexpr)                                             \
  QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_v##op##_ukernel__wasmsimd) {                        \
    size_t i = 0;                                                                           \
    for (; i + 8 <= n; i += 8) {                                                            \
      const v128_t y0 = vop(wasm_v128_load(a + i), wasm_v128_load(b + i));                  \
      const v128_t y1 = vop(wasm_v128_load(a + i + 4), wasm_v128_load(b + i + 4));          \
      wasm_v128_store(y + i, y0);                                                           \
      wasm_v128_store(y + i + 4, y1);                                                       \
    }                                                                                       \
    for (; i < n; i++) {                                                                    \
      const float va = a[i], vb = b[i];                                                     \
      y[i] = sexpr;                                                                         \
    }                                                                                       \
  }                                                                                         \
  QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_v##op##c_ukernel__wasmsimd) {                       \
    const float vb = b[0];                                                                  \
    const v128_t vvb = wasm_f32x4_splat(vb);                                                \
    size_t i = 0;                                                                           \
    for (; i + 8 <= n; i += 8) {                                                            \
      const v128_t y0 = vop(wasm_v128_load(a + i), vvb);                                    \
      const v128_t y1 = vop(wasm_v128_load(a + i + 4), vvb);                                \
      wasm_v128_store(y + i, y0);                                                           \
      wasm_v128_store(y + i + 4, y1);                                                       \
    }                                                                                       \
    for (; i < n; i++) {                                                                    \
      const float va = a[i];                                                                \
      y[i] = sexpr;                                                                         \
    }                                                                                       \
  }                                                                                         \
  QW_DECLARE_F32_VBINARY_UKERNEL(qw_f32_vr##op##c_ukernel__wasmsimd) {                      \
    const float va = a[0];                                                                  \
    const v128_t vva = wasm_f32x4_splat(va);                                                \
    size_t i = 0;                                                                           \
    for (; i + 8 <= n; i += 8) {                                                            \
      const v128_t y0 = vop(vva, wasm_v128_load(b + i));                                    \
      const v128_t y1 = vop(vva, wasm_v128_load(b + i + 4));                                \
      wasm_v128_store(y + i, y0);                                                           \
      wasm_v128_store(y + i + 4, y1);                                                       \
    }                                                                                       \
    for (; i < n; i++) {                                                                    \
      const float vb = b[i];                                                                \
      y[i] = sexpr;                                                                         \
    }                                                                                       \
  }

QW_F32_VBINARY_WASMSIMD(add, wasm_f32x4_add, va + vb)
QW_F32_VBINARY_WASMSIMD(sub, wasm_f32x4_sub, va - vb)
QW_F32_VBINARY_WASMSIMD(mul, wasm_f32x4_mul, va * vb)
QW_F32_VBINARY_WASMSIMD(div, wasm_f32x4_div, va / vb)
