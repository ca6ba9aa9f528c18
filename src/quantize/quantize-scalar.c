/* Scalar quantize kernels: plain loops over the per-element rules of quantize.h. */
#include <assert.h>

#include "quantize.h"

#define QW_QUANTIZE_SCALAR(name, T, rule)                                          \
  QW_DECLARE_QUANTIZE_UKERNEL(name) {                                              \
    assert(n != 0 && x != NULL && y != NULL && params != NULL);                    \
    T* out = (T*)y;                                                                \
    for (size_t i = 0; i < n; i++) {                                               \
      out[i] = (T)rule(x[i], params);                                              \
    }                                                                              \
  }

QW_QUANTIZE_SCALAR(qw_f32_qu8_quantize_torch_ukernel__scalar, uint8_t, qw_quantize_torch)
QW_QUANTIZE_SCALAR(qw_f32_qs8_quantize_torch_ukernel__scalar, int8_t, qw_quantize_torch)
QW_QUANTIZE_SCALAR(qw_f32_qs32_quantize_torch_ukernel__scalar, int32_t, qw_quantize_torch)
QW_QUANTIZE_SCALAR(qw_f32_qu8_quantize_onnx_ukernel__scalar, uint8_t, qw_quantize_onnx)
QW_QUANTIZE_SCALAR(qw_f32_qs8_quantize_onnx_ukernel__scalar, int8_t, qw_quantize_onnx)
QW_QUANTIZE_SCALAR(qw_f32_qs32_quantize_onnx_ukernel__scalar, int32_t, qw_quantize_onnx)
QW_QUANTIZE_SCALAR(qw_f32_qu8_quantize_fbgemm_ukernel__scalar, uint8_t, qw_quantize_fbgemm)
QW_QUANTIZE_SCALAR(qw_f32_qs8_quantize_fbgemm_ukernel__scalar, int8_t, qw_quantize_fbgemm)
QW_QUANTIZE_SCALAR(qw_f32_qu8_quantize_fbgemm_scalar_ukernel__scalar, uint8_t, qw_quantize_fbgemm_scalar)
QW_QUANTIZE_SCALAR(qw_f32_qs8_quantize_fbgemm_scalar_ukernel__scalar, int8_t, qw_quantize_fbgemm_scalar)
QW_QUANTIZE_SCALAR(qw_f32_qs32_quantize_fbgemm_scalar_ukernel__scalar, int32_t, qw_quantize_fbgemm_scalar)
