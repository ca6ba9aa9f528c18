/*
 * float32 depthwise convolution microkernels (src/operators/conv2d-f32.c, groups with one input
 * channel): one output channel per call, `rows` output rows of n pixels, stored contiguously:
 *   out[oy * n + j] = w[0] + sum_t w[w_stride * (t + 1)] * input[offsets[t] + oy * row_stride + j]
 * for oy < rows, j < n, t = 0 .. taps - 1, accumulated in float32 in the order bias, t = 0, 1, ...,
 * one rounding per multiply and per add (no FMA): the bits of the GEMM path. w points at the
 * channel's lane of its tile as the GEMM weights are packed (bias, then per tap mr weights: w_stride
 * is the float GEMM config's mr). input is the channel zero-padded (for strided convolutions, the
 * planes of the input columns of each phase), offsets[t] the position of tap t's input for output (0, 0).
 * Kernels write exactly rows * n outputs; they may read up to QW_F32_DWCONV_SLACK floats past the
 * last input each tap uses (the caller allocates them).
 */
#ifndef QWASM_F32_DWCONV_H
#define QWASM_F32_DWCONV_H

#include <assert.h>
#include <stddef.h>

#include "f32/gemm.h"

#define QW_F32_DWCONV_SLACK 4

typedef void (*qw_f32_dwconv_ukernel)(size_t rows, size_t n, size_t taps, const float* input, const size_t* offsets,
                                      size_t row_stride, const float* w, size_t w_stride, float* out);

/* The contract a float depthwise microkernel asserts on entry. */
#define QW_ASSERT_F32_DWCONV_UKERNEL()                            \
  assert(rows != 0 && n != 0 && taps != 0 && w_stride != 0);     \
  assert(input != NULL && offsets != NULL && w != NULL && out != NULL)

#define QW_DECLARE_F32_DWCONV_UKERNEL(name)                                                               \
  void name(size_t rows, size_t n, size_t taps, const float* input, const size_t* offsets, size_t row_stride, \
            const float* w, size_t w_stride, float* out)

QW_DECLARE_F32_DWCONV_UKERNEL(qw_f32_dwconv_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_F32_DWCONV_UKERNEL(qw_f32_dwconv_ukernel_16__wasmsimd);
#endif

#endif /* QWASM_F32_DWCONV_H */
