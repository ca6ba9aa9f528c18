/* Scalar requantization: loops over the per-element rules of requantization.h. The fixedpoint and
 * onednn modes are scalar in every build: the per-column shifts have no wasm SIMD counterpart, and
 * both cost per output, not per multiply-add. */
#include <assert.h>

#include "requantization/requantization.h"

#define QW_REQUANTIZE_SCALAR(name, T, rule)                                        \
  QW_DECLARE_REQUANTIZATION_UKERNEL(name) {                                        \
    assert(rows != 0 && n != 0 && acc != NULL && params != NULL && y != NULL);     \
    for (size_t r = 0; r < rows; r++, acc += acc_stride, y = (char*)y + y_stride) { \
      T* out = (T*)y;                                                              \
      for (size_t j = 0; j < n; j++) {                                             \
        out[j] = (T)rule(qw_requant_input(acc[j], j, params), j, params);          \
      }                                                                            \
    }                                                                              \
  }

QW_REQUANTIZE_SCALAR(qw_qs32_qu8_requantize_fp32_ukernel__scalar, uint8_t, qw_requantize_fp32_value)
QW_REQUANTIZE_SCALAR(qw_qs32_qs8_requantize_fp32_ukernel__scalar, int8_t, qw_requantize_fp32_value)
QW_REQUANTIZE_SCALAR(qw_qs32_qu8_requantize_fixedpoint_ukernel__scalar, uint8_t, qw_requantize_fixedpoint_value)
QW_REQUANTIZE_SCALAR(qw_qs32_qs8_requantize_fixedpoint_ukernel__scalar, int8_t, qw_requantize_fixedpoint_value)
QW_REQUANTIZE_SCALAR(qw_qs32_qu8_requantize_onednn_ukernel__scalar, uint8_t, qw_requantize_onednn_value)
QW_REQUANTIZE_SCALAR(qw_qs32_qs8_requantize_onednn_ukernel__scalar, int8_t, qw_requantize_onednn_value)

QW_DECLARE_REQUANTIZATION_UKERNEL(qw_qs32_qs32_requantize_none_ukernel__scalar) {
  assert(rows != 0 && n != 0 && acc != NULL && params != NULL && y != NULL);
  for (size_t r = 0; r < rows; r++, acc += acc_stride, y = (char*)y + y_stride) {
    int32_t* out = (int32_t*)y;
    for (size_t j = 0; j < n; j++) {
      out[j] = qw_requant_input(acc[j], j, params);
    }
  }
}
