/* Max pooling microkernels, channels-last: out[c] = max over `count` input pixels of in[t][c].
 * Integers compare directly: max pooling keeps the input's qparams (PyTorch's quantized max_pool2d). */
#ifndef QWASM_MAXPOOL_H
#define QWASM_MAXPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef void (*qw_maxpool_ukernel)(size_t channels, size_t count, const uint8_t* const* input, uint8_t* output);

#define QW_DECLARE_MAXPOOL_UKERNEL(name) \
  void name(size_t channels, size_t count, const uint8_t* const* input, uint8_t* output)

QW_DECLARE_MAXPOOL_UKERNEL(qw_u8_maxpool_ukernel__scalar);
QW_DECLARE_MAXPOOL_UKERNEL(qw_s8_maxpool_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_MAXPOOL_UKERNEL(qw_u8_maxpool_ukernel_c16__wasmsimd);
QW_DECLARE_MAXPOOL_UKERNEL(qw_s8_maxpool_ukernel_c16__wasmsimd);
#endif

#endif /* QWASM_MAXPOOL_H */
