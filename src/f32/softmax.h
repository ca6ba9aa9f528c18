/*
 * float32 softmax of one contiguous row, as onnxruntime's MlasComputeSoftmax computes it (compute.cpp,
 * the portable kernels the wasm build uses):
 *   max    = the row's maximum, starting from -FLT_MAX;
 *   e[i]   = exp(x[i] - max) by MlasComputeSumExpVector (src/f32/mlas.h), stored in y;
 *   sum    = the e[i] of whole groups of four added lane by lane into one f32x4 accumulator
 *            (groups in order), reduced as (l0 + l2) + (l1 + l3), then the tail elements added one by one;
 *   y[i]   = e[i] * (1.0f / sum).
 * x == y allowed.
 */
#ifndef QWASM_F32_SOFTMAX_H
#define QWASM_F32_SOFTMAX_H

#include <stddef.h>

typedef void (*qw_f32_softmax_ukernel)(size_t n, const float* x, float* y);

#define QW_DECLARE_F32_SOFTMAX_UKERNEL(name) void name(size_t n, const float* x, float* y)

QW_DECLARE_F32_SOFTMAX_UKERNEL(qw_f32_softmax_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_F32_SOFTMAX_UKERNEL(qw_f32_softmax_ukernel_16__wasmsimd);
#endif

#endif /* QWASM_F32_SOFTMAX_H */
