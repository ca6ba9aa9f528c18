/* wasm SIMD128 float32 unary kernels: MLAS's vector code four lanes at a time, four vectors per step
 * (src/f32/mlas-wasmsimd.h), the per-element rule of src/f32/mlas.h for the tail. */
#include "f32/mlas-wasmsimd.h"
#include "f32/vunary.h"

#define LOAD_X(j) wasm_v128_load(x + (j))

#define QW_F32_VUNARY_WASMSIMD(name, vector_op, element_op) \
  QW_DECLARE_F32_VUNARY_UKERNEL(name) {                     \
    size_t i = 0;                                           \
    QW_F32_MAP_WASMSIMD(i, n, LOAD_X, vector_op, y)         \
    for (; i < n; i++) {                                    \
      y[i] = element_op(x[i]);                              \
    }                                                       \
  }

QW_F32_VUNARY_WASMSIMD(qw_f32_vexp_ukernel_16__wasmsimd, qw_mlas_exp_n, qw_mlas_exp)
QW_F32_VUNARY_WASMSIMD(qw_f32_verf_ukernel_16__wasmsimd, qw_mlas_erf_n, qw_mlas_erf)
QW_F32_VUNARY_WASMSIMD(qw_f32_vtanh_ukernel_16__wasmsimd, qw_mlas_tanh_n, qw_mlas_tanh)

QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vsqrt_ukernel_8__wasmsimd) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t v0 = wasm_f32x4_sqrt(wasm_v128_load(x + i));
    const v128_t v1 = wasm_f32x4_sqrt(wasm_v128_load(x + i + 4));
    wasm_v128_store(y + i, v0);
    wasm_v128_store(y + i + 4, v1);
  }
  for (; i < n; i++) {
    y[i] = __builtin_sqrtf(x[i]);
  }
}
