/* Scalar depthwise convolution over an indirection list (see dwconv.h). */
#include "dwconv/dwconv.h"

#define QW_DWCONV_SCALAR(name, AT)                                                              \
  QW_DECLARE_DWCONV_UKERNEL(name) {                                                             \
    const size_t taps_padded = qw_dwconv_taps_padded(taps);                                     \
    for (size_t p = 0; p < pixels; p++, input += taps_padded, acc += channels) {                \
      for (size_t c = 0; c < channels; c++) {                                                   \
        int32_t sum = 0;                                                                        \
        for (size_t t = 0; t < taps; t++) {                                                     \
          sum += (int32_t)((const AT*)input[t])[c] * w[qw_dwconv_weight_index(channels, taps, t, c)]; \
        }                                                                                       \
        acc[c] = sum;                                                                           \
      }                                                                                         \
    }                                                                                           \
  }

QW_DWCONV_SCALAR(qw_qu8_dwconv_ukernel__scalar, uint8_t)
QW_DWCONV_SCALAR(qw_qs8_dwconv_ukernel__scalar, int8_t)
