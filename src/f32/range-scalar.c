/* Portable float32 range (src/f32/range.h). */
#include <math.h>

#include "f32/range.h"

QW_DECLARE_F32_RANGE_UKERNEL(qw_f32_range_ukernel__scalar) {
  float l = *lo, h = *hi;
  for (size_t i = 0; i < n; i++) {
    const float v = x[i];
    if (!isfinite(v)) {
      return 0;
    }
    l = v < l ? v : l;
    h = v > h ? v : h;
  }
  *lo = l;
  *hi = h;
  return 1;
}
