/* Scalar depthwise convolution over pair rows (dwconv.h): the same sums as the SIMD kernels (integers, so
 * equal by definition, and tested to be). c4 is the scalar build's layout; c8 a second one the C tests run the
 * convolution driver with, so that no driver can depend on a fixed layout. */
#include "dwconv/dwconv.h"

#define QW_DWCONV_SCALAR(name, CR)                                                                      \
  QW_DECLARE_DWCONV_UKERNEL(name) {                                                                     \
    QW_ASSERT_DWCONV_UKERNEL(CR);                                                                       \
    const int16_t* wt = (const int16_t*)w;                                                              \
    const size_t columns = qw_dwconv_row_columns(ow, column_step, groups, group_step);                  \
    const size_t step = qw_dwconv_row_step(column_step, group_step);                                    \
    for (size_t c0 = 0; c0 < channels_padded; c0 += CR, wt += kh * groups * 2 * CR) {                   \
      for (size_t ox = 0; ox < ow; ox++) {                                                              \
        for (size_t l = 0; l < CR; l++) {                                                               \
          int32_t sum = 0;                                                                              \
          for (size_t ky = 0; ky < kh; ky++) {                                                          \
            for (size_t j = 0; j < groups; j++) {                                                       \
              const size_t k = (ox * column_step + j * group_step) / step;                              \
              const int16_t* p = (const int16_t*)rows[ky] + qw_dwconv_pair_index(CR, columns, k, c0 + l); \
              const int16_t* wp = wt + (ky * groups + j) * 2 * CR + 2 * l;                              \
              sum += (int32_t)p[0] * wp[0] + (int32_t)p[1] * wp[1];                                     \
            }                                                                                           \
          }                                                                                             \
          acc[ox * channels_padded + c0 + l] = sum;                                                     \
        }                                                                                               \
      }                                                                                                 \
    }                                                                                                   \
  }

QW_DWCONV_SCALAR(qw_qs16_dwconv_ukernel_c4__scalar, 4)
QW_DWCONV_SCALAR(qw_qs16_dwconv_ukernel_c8__scalar, 8)

#define QW_DWCONV_PAIR_ROW_SCALAR(name, IS_SIGNED, CR)                                                   \
  QW_DECLARE_DWCONV_TAP_ROW_UKERNEL(name) {                                                             \
    QW_ASSERT_DWCONV_TAP_ROW_UKERNEL();                                                                 \
    qw_dwconv_pair_channels(CR, columns, step, 0, channels, channels_padded, row, IS_SIGNED, in_w, pad_left, \
                            dilation, zero_point, (int16_t*)taps);                                      \
  }

QW_DWCONV_PAIR_ROW_SCALAR(qw_qu8_dwconv_pair_row_ukernel_c4__scalar, 0, 4)
QW_DWCONV_PAIR_ROW_SCALAR(qw_qs8_dwconv_pair_row_ukernel_c4__scalar, 1, 4)
QW_DWCONV_PAIR_ROW_SCALAR(qw_qu8_dwconv_pair_row_ukernel_c8__scalar, 0, 8)
QW_DWCONV_PAIR_ROW_SCALAR(qw_qs8_dwconv_pair_row_ukernel_c8__scalar, 1, 8)
