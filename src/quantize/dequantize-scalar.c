/* Scalar dequantize kernels: real = scale * (float)(q - zero_point). */
#include "quantize.h"

#define QW_DEQUANTIZE_SCALAR(name, T)                                              \
  QW_DECLARE_DEQUANTIZE_UKERNEL(name) {                                            \
    const T* in = (const T*)q;                                                     \
    for (size_t i = 0; i < n; i++) {                                               \
      y[i] = qw_dequantize_value((int32_t)in[i], params);                          \
    }                                                                              \
  }

QW_DEQUANTIZE_SCALAR(qw_qu8_f32_dequantize_ukernel__scalar, uint8_t)
QW_DEQUANTIZE_SCALAR(qw_qs8_f32_dequantize_ukernel__scalar, int8_t)
QW_DEQUANTIZE_SCALAR(qw_qs32_f32_dequantize_ukernel__scalar, int32_t)

#define QW_DEQUANTIZE_F64_SCALAR(name, T)                                          \
  QW_DECLARE_DEQUANTIZE_F64_UKERNEL(name) {                                        \
    const T* in = (const T*)q;                                                     \
    for (size_t i = 0; i < n; i++) {                                               \
      y[i] = qw_dequantize_f64_value((int32_t)in[i], params);                      \
    }                                                                              \
  }

QW_DEQUANTIZE_F64_SCALAR(qw_qu8_f32_dequantize_f64scale_ukernel__scalar, uint8_t)
QW_DEQUANTIZE_F64_SCALAR(qw_qs8_f32_dequantize_f64scale_ukernel__scalar, int8_t)
QW_DEQUANTIZE_F64_SCALAR(qw_qs32_f32_dequantize_f64scale_ukernel__scalar, int32_t)
