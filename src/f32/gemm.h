/*
 * float32 GEMM microkernels for the float convolution (src/operators/conv2d-f32.c):
 *   C[m][j] = bias[m] + sum_k W[m][k] * A[k][j]   for m < mr (<= 4), j < nc (<= 8)
 * accumulated in float32 in the order bias, k = 0, 1, ..., one rounding per multiply and per add
 * (no FMA), so the scalar and the SIMD kernels give the same bits.
 *
 * Weights are packed once per tile of QW_F32_GEMM_MR output channels: 4 biases, then kc groups of
 * 4 weights [k][m] (channels past the end are zeros). A holds QW_F32_GEMM_NR consecutive columns per
 * k, a_stride floats apart: an im2col panel [k][8] (a_stride 8, columns past the end zeros), or, for
 * a 1x1 stride-1 unpadded convolution, the NCHW input itself (a_stride the plane size, nc == 8).
 * Kernels read 8 columns of each k whatever nc is; they write nc.
 */
#ifndef QWASM_F32_GEMM_H
#define QWASM_F32_GEMM_H

#include <stddef.h>

#define QW_F32_GEMM_MR 4
#define QW_F32_GEMM_NR 8

/* Floats of one packed tile of MR output channels with depth kc (biases included). */
static inline size_t qw_f32_gemm_tile_size(size_t kc) {
  return QW_F32_GEMM_MR * (kc + 1);
}

typedef void (*qw_f32_gemm_ukernel)(size_t mr, size_t nc, size_t kc, const float* w, const float* a, size_t a_stride,
                                    float* c, size_t c_stride);

#define QW_DECLARE_F32_GEMM_UKERNEL(name) \
  void name(size_t mr, size_t nc, size_t kc, const float* w, const float* a, size_t a_stride, float* c, size_t c_stride)

QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_4x8__scalar);
#if QW_SIMD
QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_1x8__wasmsimd);
QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_2x8__wasmsimd);
QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_4x8__wasmsimd);
#endif

#endif /* QWASM_F32_GEMM_H */
