/* Scalar dequantize kernels: loops over the per-element rules of quantize.h. */
#include <assert.h>

#include "quantize.h"

#define QW_DEQUANTIZE_SCALAR(name, T, P, value_fn)                \
  void name(size_t n, const void* q, float* y, const P* params) { \
    assert(n != 0 && q != NULL && y != NULL && params != NULL);   \
    const T* in = (const T*)q;                                    \
    for (size_t i = 0; i < n; i++) {                              \
      y[i] = value_fn((int32_t)in[i], params);                    \
    }                                                             \
  }

QW_DEQUANTIZE_SCALAR(qw_qu8_f32_dequantize_ukernel__scalar, uint8_t, struct qw_dequantize_params, qw_dequantize_value)
QW_DEQUANTIZE_SCALAR(qw_qs8_f32_dequantize_ukernel__scalar, int8_t, struct qw_dequantize_params, qw_dequantize_value)
QW_DEQUANTIZE_SCALAR(qw_qs32_f32_dequantize_ukernel__scalar, int32_t, struct qw_dequantize_params, qw_dequantize_value)
QW_DEQUANTIZE_SCALAR(qw_qu8_f32_dequantize_f64scale_ukernel__scalar, uint8_t, struct qw_dequantize_f64_params,
                     qw_dequantize_f64_value)
QW_DEQUANTIZE_SCALAR(qw_qs8_f32_dequantize_f64scale_ukernel__scalar, int8_t, struct qw_dequantize_f64_params,
                     qw_dequantize_f64_value)
QW_DEQUANTIZE_SCALAR(qw_qs32_f32_dequantize_f64scale_ukernel__scalar, int32_t, struct qw_dequantize_f64_params,
                     qw_dequantize_f64_value)
