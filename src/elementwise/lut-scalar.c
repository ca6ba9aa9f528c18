#include "elementwise/lut.h"

void qw_u8_lut_ukernel__scalar(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y) {
  for (size_t i = 0; i < n; i++) {
    y[i] = table[x[i]];
  }
}
