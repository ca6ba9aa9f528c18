/* Scalar depthwise convolution over an indirection list (see dwconv.h): blocks of CR channels, taps
 * padded to a multiple of TR. c8t2 is the scalar build's layout; c16t4 a second one the C tests run
 * the convolution driver with, so that no driver can depend on a fixed layout. */
#include "dwconv/dwconv.h"

#define QW_DWCONV_SCALAR(name, AT, CR, TR)                                                      \
  QW_DECLARE_DWCONV_UKERNEL(name) {                                                             \
    QW_ASSERT_DWCONV_UKERNEL();                                                                 \
    const int16_t* wt = (const int16_t*)w;                                                      \
    const size_t taps_padded = qw_round_up(taps, TR);                                           \
    for (size_t p = 0; p < pixels; p++, input += taps_padded, acc += channels) {                \
      for (size_t c = 0; c < channels; c++) {                                                   \
        int32_t sum = 0;                                                                        \
        for (size_t t = 0; t < taps; t++) {                                                     \
          sum += (int32_t)((const AT*)input[t])[c] * wt[qw_dwconv_x16pairs_index(CR, taps_padded, t, c)]; \
        }                                                                                       \
        acc[c] = sum;                                                                           \
      }                                                                                         \
    }                                                                                           \
  }

QW_DWCONV_SCALAR(qw_qu8_dwconv_ukernel_c8t2__scalar, uint8_t, 8, 2)
QW_DWCONV_SCALAR(qw_qs8_dwconv_ukernel_c8t2__scalar, int8_t, 8, 2)
QW_DWCONV_SCALAR(qw_qu8_dwconv_ukernel_c16t4__scalar, uint8_t, 16, 4)
QW_DWCONV_SCALAR(qw_qs8_dwconv_ukernel_c16t4__scalar, int8_t, 16, 4)
