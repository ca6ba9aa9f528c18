/*
 * float32 ReLU microkernels: y[i] = x[i] > 0 ? x[i] : +0.0f for i < n (NaN and -0.0f give +0.0f:
 * the model loader's float Relu, exactly). x and y may be the same buffer.
 */
#ifndef QWASM_F32_RELU_H
#define QWASM_F32_RELU_H

#include <stddef.h>

typedef void (*qw_f32_relu_ukernel)(size_t n, const float* x, float* y);

#define QW_DECLARE_F32_RELU_UKERNEL(name) void name(size_t n, const float* x, float* y)

QW_DECLARE_F32_RELU_UKERNEL(qw_f32_relu_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_F32_RELU_UKERNEL(qw_f32_relu_ukernel_16__wasmsimd);
#endif

#endif /* QWASM_F32_RELU_H */
