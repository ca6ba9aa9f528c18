// The SIMD128 and scalar builds run the same C sources; their outputs must be identical bytes,
// including odd lengths, tails and hostile values (NaN, Inf, huge, subnormal, -0.0, exact ties).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { loadBackend } from '../../js/wasm.js';

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
              b.call('qw_quantize', n, px + 4 * offset, py + bytes * offset, code, rounding, scale, zp);
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
          b.call('qw_dequantize', n, pq, py, code, 0.0123, zp);
          const a = b.u8(py, 4 * n).slice();
          const scales = b.view(Float64Array, pw, 1);
          scales[0] = 0.1; // not a float32: exercises the float64 path
          b.i32(pw + 8, 1)[0] = zp;
          b.call('qw_dequantize_per_channel', 1, 1, n, pq, py, code, pw, pw + 8);
          const c = b.u8(py, 4 * n).slice();
          b.call('qw_requantize', n, pq, code, 0.0123, zp, py, 0, 0.05, 100, 0);
          return [a, c, b.u8(py, n).slice()];
        }),
      );
      assert.deepEqual(outs[0], outs[1], `dtype ${code} n ${n}`);
    }
  }
});
