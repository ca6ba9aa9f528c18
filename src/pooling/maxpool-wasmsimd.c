/* wasm SIMD128 max pooling, 16 channels per step; the channel tail per element. */
#include <assert.h>

#include "pooling/maxpool.h"
#include "simd128.h"

#define QW_MAXPOOL_WASMSIMD(name, T, MAX)                                  \
  QW_DECLARE_MAXPOOL_UKERNEL(name) {                                       \
    assert(channels != 0 && count != 0);                                   \
    assert(input != NULL && output != NULL);                               \
    size_t c = 0;                                                          \
    for (; c + 16 <= channels; c += 16) {                                  \
      v128_t m = wasm_v128_load(input[0] + c);                             \
      for (size_t t = 1; t < count; t++) {                                 \
        m = MAX(m, wasm_v128_load(input[t] + c));                          \
      }                                                                    \
      wasm_v128_store(output + c, m);                                      \
    }                                                                      \
    for (; c < channels; c++) {                                            \
      T m = ((const T*)input[0])[c];                                       \
      for (size_t t = 1; t < count; t++) {                                 \
        const T v = ((const T*)input[t])[c];                               \
        m = v > m ? v : m;                                                 \
      }                                                                    \
      ((T*)output)[c] = m;                                                 \
    }                                                                      \
  }

QW_MAXPOOL_WASMSIMD(qw_u8_maxpool_ukernel_c16__wasmsimd, uint8_t, wasm_u8x16_max)
QW_MAXPOOL_WASMSIMD(qw_s8_maxpool_ukernel_c16__wasmsimd, int8_t, wasm_i8x16_max)
