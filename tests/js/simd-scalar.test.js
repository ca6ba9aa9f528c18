// The SIMD128 and scalar builds run the same C sources; their outputs must be identical bytes,
// including odd lengths, tails and hostile values (NaN, Inf, huge, subnormal, -0.0, exact ties).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { loadBackend } from '../../js/runtime/wasm.js';

let simd;
let scalar;
before(async () => {
  simd = await loadBackend({ simd: true });
  scalar = await loadBackend({ simd: false });
});

// Deterministic hostile floats: random bit patterns mixed with ordinary values and ties.
function hostile(n, seed, scale) {
  let s = seed >>> 0 || 1;
  const next = () => ((s = (s ^ (s << 13)) >>> 0), (s = (s ^ (s >>> 17)) >>> 0), (s = (s ^ (s << 5)) >>> 0));
  const out = new Float32Array(n);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < n; i++) {
    const r = next() % 5;
    if (r === 0) bits[i] = next();
    else if (r === 1) out[i] = (((next() % 600) | 0) - 300 + 0.5) * scale;
    else if (r === 2) out[i] = ((next() / 2 ** 32) * 2 - 1) * 1e10;
    else out[i] = ((next() / 2 ** 32) * 2 - 1) * 300 * scale;
  }
  return out;
}

function run(b, fn) {
  return b.withBuffers([4096 * 4, 4096 * 4, 4096 * 4], fn);
}

const LENGTHS = [0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 255, 256, 257, 1023, 4096];
const DTYPES = [[0, 1], [1, 1], [2, 4]]; // [code, bytes]

test('quantize: identical bytes for both rounding rules, every dtype, odd lengths and offsets', () => {
  for (const [code, bytes] of DTYPES) {
    for (const rounding of [0, 1]) {
      for (const scale of [1, 0.1, 1 / 3, 0.00214854861, 1e-5]) {
        for (const n of LENGTHS) {
          const x = hostile(n, n * 31 + code * 7 + rounding + 1, scale);
          const outs = [simd, scalar].map((b) =>
            run(b, (px, py) => {
              const offset = n % 3; // misaligned starts
              b.f32(px + 4 * offset, n).set(x);
              const zp = code === 0 ? 128 : code === 1 ? -3 : 12345;
              b.call('test', 'qw_quantize', n, px + 4 * offset, py + bytes * offset, code, rounding, scale, zp);
              return b.u8(py + bytes * offset, n * bytes).slice();
            }),
          );
          assert.deepEqual(outs[0], outs[1], `dtype ${code} rounding ${rounding} scale ${scale} n ${n}`);
        }
      }
    }
  }
});

test('dequantize (per-tensor and per-channel float64 scales) and requantize: identical bytes', () => {
  for (const [code, bytes] of DTYPES) {
    for (const n of LENGTHS) {
      const raw = new Uint8Array(n * bytes).map((_, i) => (i * 2654435761) >>> 24);
      const outs = [simd, scalar].map((b) =>
        run(b, (pq, py, pw) => {
          b.u8(pq, raw.length).set(raw);
          const zp = code === 0 ? 77 : code === 1 ? -9 : -1000;
          b.call('test', 'qw_dequantize', n, pq, py, code, 0.0123, zp);
          const a = b.u8(py, 4 * n).slice();
          const scales = b.view(Float64Array, pw, 1);
          scales[0] = 0.1; // not a float32: exercises the float64 path
          b.i32(pw + 8, 1)[0] = zp;
          b.call('test', 'qw_dequantize_per_channel', 1, 1, n, pq, py, code, pw, pw + 8);
          const c = b.u8(py, 4 * n).slice();
          b.call('test', 'qw_requantize', n, pq, code, 0.0123, zp, py, 0, 0.05, 100, 0);
          return [a, c, b.u8(py, n).slice()];
        }),
      );
      assert.deepEqual(outs[0], outs[1], `dtype ${code} n ${n}`);
    }
  }
});

test('QLinearAdd (qw_add_onnx): identical bytes for every pair of input bytes, both dtypes, tie-prone scales', () => {
  const n = 65536 + 13; // every (a, b) pair, then a tail shorter than a vector step
  const a = new Uint8Array(n).map((_, i) => i & 255);
  const b = new Uint8Array(n).map((_, i) => (i >> 8) & 255);
  const scaleSets = [[0.02, 0.03, 0.05], [0.5, 0.25, 1], [1, 1, 2], [0.0117, 0.0093, 0.0311], [1e-3, 2e-3, 1e-6], [3, 5, 1e-30]];
  for (const code of [0, 1]) {
    for (const [as, bs, ys] of scaleSets) {
      const zps = code === 0 ? [128, 0, 255] : [0, -128, 127];
      for (const yz of zps) {
        const outs = [simd, scalar].map((be) =>
          be.withBuffers([n, n, n], (pa, pb, py) => {
            be.u8(pa, n).set(a);
            be.u8(pb, n).set(b);
            be.call('test', 'qw_add_onnx', n, pa, 0, as, zps[0], pb, 0, bs, zps[1], code, py, ys, yz);
            return be.u8(py, n).slice();
          }),
        );
        assert.deepEqual(outs[0], outs[1], `dtype ${code} scales ${as} ${bs} ${ys} y_zp ${yz}`);
      }
    }
  }
});

test('GEMM (qw_gemm): identical bytes for 1 to 6 rows, odd K and N, every requantization mode', () => {
  let seed = 99;
  const next = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) >>> 24);
  for (const [m, k, n] of [[1, 1, 1], [1, 7, 9], [1, 20, 17], [1, 36, 40], [2, 13, 8], [3, 29, 23], [4, 64, 16], [5, 100, 33], [6, 4, 7]]) {
    const a = Uint8Array.from({ length: m * k }, next);
    const w = Uint8Array.from({ length: n * k }, next);
    const bias = Int32Array.from({ length: n }, () => (next() << 4) - 2048);
    for (const mode of [0, 1, 2, 3, 4]) {
      const outDtype = mode === 4 ? 2 : 0;
      const ySize = outDtype === 2 ? 4 : 1;
      const outs = [simd, scalar].map((be) => {
        const e = be.exports;
        return be.withBuffers([m * k, n * k, 4, 8, 4 * n, e.qw_gemm_pack_size(n, k), e.qw_requantization_size(n), m * n * ySize,
          e.qw_gemm_workspace_size(n, k)], (pa, pw, pz, ps, pb, packed, blob, py, ws) => {
          be.u8(pa, m * k).set(a);
          be.u8(pw, n * k).set(w);
          be.i32(pz, 1)[0] = 3;
          be.view(Float64Array, ps, 1)[0] = 0.0123;
          be.i32(pb, n).set(bias);
          be.call('test', 'qw_gemm_pack', n, k, pw, 1, k, 1, pz, 1, packed);
          const useFloatBias = mode === 1;
          if (useFloatBias) be.f32(pb, n).set(Float32Array.from(bias, (v) => v * 1e-4));
          be.call('test', 'qw_requantization_init', blob, n, mode, 0.021, ps, 1, pz, 1, useFloatBias ? pb : 0, useFloatBias || mode === 4 ? 0 : pb,
            mode === 4 ? 1 : 0.05, mode === 4 ? 0 : 117, outDtype, -Infinity, Infinity);
          be.call('test', 'qw_gemm', m, n, k, pa, k, 0, 125, packed, blob, py, n * ySize, ws);
          return be.u8(py, m * n * ySize).slice();
        });
      });
      assert.deepEqual(outs[0], outs[1], `gemm ${m}x${k}x${n} mode ${mode}`);
    }
  }
});
