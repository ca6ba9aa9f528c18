#include <assert.h>

#include "elementwise/lut.h"

QW_DECLARE_U8_LUT_UKERNEL(qw_u8_lut_ukernel__scalar) {
  assert(n != 0 && x != NULL && table != NULL && y != NULL);
  for (size_t i = 0; i < n; i++) {
    y[i] = table[x[i]];
  }
}
