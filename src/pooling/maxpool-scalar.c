/* Scalar max pooling over a list of input pixels (see maxpool.h). */
#include <assert.h>

#include "pooling/maxpool.h"

#define QW_MAXPOOL_SCALAR(name, T)                       \
  QW_DECLARE_MAXPOOL_UKERNEL(name) {                     \
    assert(channels != 0 && count != 0);                 \
    assert(input != NULL && output != NULL);             \
    for (size_t c = 0; c < channels; c++) {              \
      T m = ((const T*)input[0])[c];                     \
      for (size_t t = 1; t < count; t++) {               \
        const T v = ((const T*)input[t])[c];             \
        m = v > m ? v : m;                               \
      }                                                  \
      ((T*)output)[c] = m;                               \
    }                                                    \
  }

QW_MAXPOOL_SCALAR(qw_u8_maxpool_ukernel__scalar, uint8_t)
QW_MAXPOOL_SCALAR(qw_s8_maxpool_ukernel__scalar, int8_t)
