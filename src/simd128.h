/* wasm SIMD128 intrinsics: the real ones under emscripten, SIMDe's portable emulation in native
 * builds, so the SIMD kernels also run natively under AddressSanitizer and UBSan. */
#ifndef QWASM_SIMD128_H
#define QWASM_SIMD128_H

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#else
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/wasm/simd128.h>
#endif

/* For helpers that must be inlined into each kernel (the count of vectors or rows a constant there, so that loops
 * over it unroll and arrays become values; or a kernel specialized per output stage). */
#define QW_ALWAYS_INLINE static inline __attribute__((always_inline))

#endif /* QWASM_SIMD128_H */
