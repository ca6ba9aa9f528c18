// Relaxed SIMD, exact only: what this engine's i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c) computes. The proposal
// leaves the result implementation-defined when b has its top bit set; qwasm's relaxed GEMM kernels
// (src/gemm/gemm-wasmrelaxed.c) are exact under two of the real semantics and are used only there:
//   'usdot'  b unsigned, no saturation (V8 on x86 with AVX-VNNI: vpdpbusd)
//   'sdot'   b signed, no saturation (ARM's sdot; V8 on x86 with AVX-VNNI-INT8: vpdpbssd)
// V8 on x86 without AVX-VNNI (this includes AVX512-VNNI-only CPUs such as AMD Zen 4) lowers it to vpmaddubsw +
// vpmaddwd, which saturates pairs of products to int16: neither, so the SIMD128 kernels run there (they are also
// faster: the lowering costs more than two i32x4.dot_i16x8_s). onnxruntime (MLAS HasUSDot) and XNNPACK (its
// hardware config) probe the engine the same way.

// (func (param i32 i32) (result i32)): lane 0 of relaxed_dot(i8x16.splat(a), i8x16.splat(b), 0).
const PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3, 100, 111, 116, 0, 0, 10, 36, 1,
  34, 0, 32, 0, 253, 15, 32, 1, 253, 15, 253, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 253, 147, 2, 253, 27, 0,
  11,
]);

// (a, b as a byte) -> the lane's value under each exact semantics (4 products of a * b).
const CASES = [
  [-128, 255], // usdot -130560, sdot 512, saturating pairs -65536
  [127, 200], // usdot 101600, sdot -28448, saturating 65534
  [-1, 127], // -508 everywhere
  [-128, 128], // usdot -65536, sdot 65536
];
const EXPECTED = {
  usdot: CASES.map(([a, b]) => 4 * a * b),
  sdot: CASES.map(([a, b]) => 4 * a * ((b << 24) >> 24)),
};

/**
 * The exact semantics of this engine's relaxed dot: { semantics: 'usdot' | 'sdot' } or { semantics: null, reason }.
 * Every case runs many times, so that code from more than one compiler tier is checked (V8 compiles wasm with its
 * baseline compiler first and optimizes hot functions later; Node 20's baseline compiler got this instruction wrong).
 */
export function relaxedDotSemantics() {
  let dot;
  try {
    if (!WebAssembly.validate(PROBE)) return { semantics: null, reason: 'this engine does not support relaxed SIMD' };
    dot = new WebAssembly.Instance(new WebAssembly.Module(PROBE)).exports.dot;
  } catch (error) {
    return { semantics: null, reason: `the relaxed SIMD probe failed: ${error.message}` };
  }
  let seen = null;
  for (let round = 0; round < 2000; round++) {
    const got = CASES.map(([a, b]) => dot(a, b));
    const semantics = Object.keys(EXPECTED).find((s) => EXPECTED[s].every((v, i) => v === got[i])) ?? null;
    if (semantics === null || (seen !== null && semantics !== seen)) {
      return {
        semantics: null,
        reason: `its relaxed dot product is not exact for full bytes (got ${got.join(', ')} where vpdpbusd gives ` +
          `${EXPECTED.usdot.join(', ')}; x86 without AVX-VNNI saturates pairs of products)`,
      };
    }
    seen = semantics;
  }
  return { semantics: seen };
}
