/* Transposes of 8-bit matrices: dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows,
 * j < cols (strides in bytes). The layout changes between NCHW and channels-last go through here. */
#ifndef QWASM_TRANSPOSE_H
#define QWASM_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

typedef void (*qw_x8_transpose_ukernel)(size_t rows, size_t cols, const uint8_t* src, size_t src_stride, uint8_t* dst,
                                        size_t dst_stride);

#define QW_DECLARE_X8_TRANSPOSE_UKERNEL(name) \
  void name(size_t rows, size_t cols, const uint8_t* src, size_t src_stride, uint8_t* dst, size_t dst_stride)

QW_DECLARE_X8_TRANSPOSE_UKERNEL(qw_x8_transpose_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_X8_TRANSPOSE_UKERNEL(qw_x8_transpose_ukernel_16x16__wasmsimd);
#endif

#endif /* QWASM_TRANSPOSE_H */
