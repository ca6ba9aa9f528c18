/* wasm SIMD128 float32 GELU kernels: the rules of src/f32/vgelu.h four lanes at a time, four vectors per step
 * (src/f32/mlas-wasmsimd.h), the scalar rule for the tail. One pass: the argument, the approximation and the
 * product stay in registers: 2.63 ns per element for the erf form, against 3.03-3.11 for three passes around the
 * erf kernel through stack buffers, the same erf code in both (Node 20, 196608 elements). */
#include "f32/mlas-wasmsimd.h"
#include "f32/vgelu.h"

/* x[i] (+ bias[i]) as a vector */
static inline v128_t load_argument(const float* x, const float* bias, size_t i) {
  const v128_t v = wasm_v128_load(x + i);
  return bias != NULL ? wasm_f32x4_add(v, wasm_v128_load(bias + i)) : v;
}

#define LOAD_ARGUMENT(j) load_argument(x, bias, j)

#define QW_F32_VGELU_WASMSIMD(name, vector_op, element_op)     \
  QW_DECLARE_F32_VGELU_UKERNEL(name) {                         \
    size_t i = 0;                                              \
    QW_F32_MAP_WASMSIMD(i, n, LOAD_ARGUMENT, vector_op, y)     \
    for (; i < n; i++) {                                       \
      y[i] = element_op(bias != NULL ? x[i] + bias[i] : x[i]); \
    }                                                          \
  }

QW_F32_VGELU_WASMSIMD(qw_f32_vgelu_erf_ukernel_16__wasmsimd, qw_gelu_erf_n, qw_gelu_erf)
QW_F32_VGELU_WASMSIMD(qw_f32_vgelu_tanh_ukernel_16__wasmsimd, qw_gelu_tanh_n, qw_gelu_tanh)
