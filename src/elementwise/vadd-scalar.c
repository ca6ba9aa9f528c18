/* ONNX Runtime's QLinearAdd rule, one element at a time (the baseline and the SIMD kernel's tail). */
#include <assert.h>

#include "elementwise/vadd.h"

#define QW_VADD_ONNX_SCALAR(name, T)                                                                     \
  QW_DECLARE_VADD_ONNX_UKERNEL(name) {                                                                   \
    assert(n != 0 && a != NULL && b != NULL && y != NULL && params != NULL);                             \
    const T* pa = (const T*)a;                                                                           \
    const T* pb = (const T*)b;                                                                           \
    T* py = (T*)y;                                                                                       \
    for (size_t i = 0; i < n; i++) {                                                                     \
      py[i] = (T)qw_vadd_onnx_value(pa[i], pb[i], params);                                               \
    }                                                                                                    \
  }

QW_VADD_ONNX_SCALAR(qw_qu8_vadd_onnx_ukernel__scalar, uint8_t)
QW_VADD_ONNX_SCALAR(qw_qs8_vadd_onnx_ukernel__scalar, int8_t)
