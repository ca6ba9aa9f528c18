/*
 * float32 GELU microkernels with onnxruntime's arithmetic (Gelu / BiasGelu / FastGelu, src/f32/mlas.h's erf and
 * tanh): for i < n, v = x[i] (+ bias[i] when bias is not NULL), then
 *   erf form:   y[i] = (v * 0.5f) * (erf(v * M_SQRT1_2) + 1.0f)
 *   tanh form:  y[i] = (v * 0.5f) * (tanh(v * ((C * v) * v + B)) + 1.0f)   (QW_GELU_TANH_B / _C)
 * one rounding per operation, in this order. Each SIMD lane computes what the scalar kernel computes, so results
 * do not depend on an element's position or on n. x == y allowed.
 */
#ifndef QWASM_F32_VGELU_H
#define QWASM_F32_VGELU_H

#include <stddef.h>

typedef void (*qw_f32_vgelu_ukernel)(size_t n, const float* x, const float* bias, float* y);

#define QW_DECLARE_F32_VGELU_UKERNEL(name) void name(size_t n, const float* x, const float* bias, float* y)

QW_DECLARE_F32_VGELU_UKERNEL(qw_f32_vgelu_erf_ukernel__scalar);
QW_DECLARE_F32_VGELU_UKERNEL(qw_f32_vgelu_tanh_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_F32_VGELU_UKERNEL(qw_f32_vgelu_erf_ukernel_16__wasmsimd);
QW_DECLARE_F32_VGELU_UKERNEL(qw_f32_vgelu_tanh_ukernel_16__wasmsimd);
#endif

#endif /* QWASM_F32_VGELU_H */
