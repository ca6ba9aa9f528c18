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

/* i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c) under the two exact semantics the relaxed kernels run on
 * (js/runtime/relaxed.js): usdot, b unsigned (x86 AVX-VNNI's vpdpbusd); sdot, b signed (ARM's sdot, vpdpbssd). The
 * relaxed build has the instruction itself (qwasm picks the kernels of the engine's semantics); elsewhere each
 * semantics is emulated, so that the native tests check the kernels under both. */
#if defined(__wasm_relaxed_simd__)
#define QW_RELAXED_USDOT(a, b, c) \
  ((v128_t)__builtin_wasm_relaxed_dot_i8x16_i7x16_add_s_i32x4((__i8x16)(a), (__i8x16)(b), (__i32x4)(c)))
#define QW_RELAXED_SDOT QW_RELAXED_USDOT
#else
/* The native tests: the instruction as each exact semantics computes it (a signed; b unsigned or signed). */
static inline v128_t qw_relaxed_dot(v128_t a, v128_t b, v128_t c, int b_signed) {
  int8_t av[16];
  uint8_t bv[16];
  int32_t cv[4];
  wasm_v128_store(av, a);
  wasm_v128_store(bv, b);
  wasm_v128_store(cv, c);
  for (int lane = 0; lane < 4; lane++) {
    uint32_t sum = (uint32_t)cv[lane];
    for (int i = 4 * lane; i < 4 * lane + 4; i++) {
      sum += (uint32_t)((int32_t)av[i] * (b_signed ? (int32_t)(int8_t)bv[i] : (int32_t)bv[i]));
    }
    cv[lane] = (int32_t)sum;
  }
  return wasm_v128_load(cv);
}
#define QW_RELAXED_USDOT(a, b, c) qw_relaxed_dot(a, b, c, 0)
#define QW_RELAXED_SDOT(a, b, c) qw_relaxed_dot(a, b, c, 1)
#endif

#endif /* QWASM_SIMD128_H */
