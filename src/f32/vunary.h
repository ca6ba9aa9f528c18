/*
 * float32 unary microkernels with onnxruntime's arithmetic (src/f32/mlas.h): y[i] = f(x[i]) for i < n,
 * x == y allowed. exp is MlasComputeExp, erf MlasComputeErf (the Erf operator), tanh MlasComputeTanh
 * (Tanh), sqrt the IEEE square root (Sqrt). Each SIMD lane computes what the scalar kernel computes, so
 * results do not depend on an element's position or on n.
 */
#ifndef QWASM_F32_VUNARY_H
#define QWASM_F32_VUNARY_H

#include <stddef.h>

typedef void (*qw_f32_vunary_ukernel)(size_t n, const float* x, float* y);

#define QW_DECLARE_F32_VUNARY_UKERNEL(name) void name(size_t n, const float* x, float* y)

QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vexp_ukernel__scalar);
QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_verf_ukernel__scalar);
QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vtanh_ukernel__scalar);
QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vsqrt_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vexp_ukernel_16__wasmsimd);
QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_verf_ukernel_16__wasmsimd);
QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vtanh_ukernel_16__wasmsimd);
QW_DECLARE_F32_VUNARY_UKERNEL(qw_f32_vsqrt_ukernel_8__wasmsimd);
#endif

#endif /* QWASM_F32_VUNARY_H */
