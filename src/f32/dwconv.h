/*
 * float32 depthwise convolution microkernels (src/operators/conv2d-f32.c, groups with one input
 * channel): one output row of one channel per call,
 *   out[j] = w[0] + sum_t w[QW_F32_GEMM_MR * (t + 1)] * rows[t][j]      (j < n, t = 0 .. taps - 1)
 * accumulated in float32 in the order bias, t = 0, 1, ..., one rounding per multiply and per add (no
 * FMA): the bits of the GEMM path. w points at the channel's lane of its tile as the GEMM weights
 * are packed (bias, then per tap MR weights: stride MR). rows[t] is the input row of tap t, already
 * zero-padded and offset so that output j reads rows[t][j] (for strided convolutions, a plane of the
 * input columns of one phase). Kernels read n floats of each row and write n outputs, nothing else.
 */
#ifndef QWASM_F32_DWCONV_H
#define QWASM_F32_DWCONV_H

#include <stddef.h>

#include "f32/gemm.h"

typedef void (*qw_f32_dwconv_ukernel)(size_t n, size_t taps, const float* const* rows, const float* w, float* out);

#define QW_DECLARE_F32_DWCONV_UKERNEL(name) \
  void name(size_t n, size_t taps, const float* const* rows, const float* w, float* out)

QW_DECLARE_F32_DWCONV_UKERNEL(qw_f32_dwconv_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_F32_DWCONV_UKERNEL(qw_f32_dwconv_ukernel_16__wasmsimd);
#endif

#endif /* QWASM_F32_DWCONV_H */
