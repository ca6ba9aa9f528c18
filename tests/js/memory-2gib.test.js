// Wasm memory past 2 GiB (the builds allow 4 GiB: -sMAXIMUM_MEMORY in CMakeLists.txt): pointers above 2^31 come
// back from wasm as negative i32 and must be read unsigned everywhere. In a child process (wasm memory never
// shrinks): the same computations run at low addresses, then again with every buffer above 2^31, and must give the
// same bytes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

const here = (path) => JSON.stringify(new URL(path, import.meta.url).href);

const script = `
import * as qwasm from ${here('../../js/index.js')};
import { backend } from ${here('../../js/runtime/runtime.js')};
import { rawTensor } from ${here('../../js/tensor/qtensor.js')};
await qwasm.init({ simd: ${process.env.QWASM_SIMD !== '0'} });
const model = await qwasm.loadModel(${here('../../models/digits.onnx')});
const seq = (n, f) => Array.from({ length: n }, (_, i) => f(i));
const pointers = [];
async function compute() {
  const keep = (t) => { pointers.push(rawTensor(t, 'test').ptr); return t; };
  const x = keep(qwasm.quantizePerTensor(seq(2 * 8 * 9 * 9, (i) => Math.sin(i)), [2, 8, 9, 9], 0.02, 128, 'quint8'));
  const w = keep(qwasm.quantizePerChannel(seq(16 * 8 * 9, (i) => Math.cos(i) / 4), [16, 8, 3, 3], seq(16, (i) => 0.002 * (i + 1)), new Array(16).fill(0), 0, 'qint8'));
  const packed = qwasm.packConv2d(w, seq(16, (i) => i / 10), { padding: 1, stride: 2 });
  const y = keep(qwasm.conv2d(x, packed, { scale: 0.05, zeroPoint: 100 }));
  const dw = keep(qwasm.fromIntRepr(seq(8 * 9, (i) => (i % 13) - 6), [8, 1, 3, 3], 0.01, 0, 'qint8'));
  const pdw = qwasm.packConv2d(dw, null, { padding: 1, groups: 8 });
  const ydw = keep(qwasm.conv2d(x, pdw, { scale: 0.03, zeroPoint: 120 }));
  const a = keep(qwasm.fromIntRepr(seq(40 * 64, (i) => (i * 7) % 256), [40, 64], 0.02, 128, 'quint8'));
  const b = keep(qwasm.fromIntRepr(seq(64 * 24, (i) => ((i * 5) % 255) - 127), [64, 24], 0.01, 0, 'qint8'));
  const mm = keep(qwasm.matmul(a, b, { scale: 0.1, zeroPoint: 128 }));
  const lw = keep(qwasm.fromIntRepr(seq(24 * 64, (i) => ((i * 3) % 200) - 100), [24, 64], 0.01, 0, 'qint8'));
  const pl = qwasm.packLinear(lw, seq(24, (i) => i / 3));
  const lin = keep(qwasm.linear(a, pl, { scale: 0.1, zeroPoint: 128 }));
  const sum = keep(qwasm.add(y, y, { scale: 0.1, zeroPoint: 100 }));
  const pool = keep(qwasm.maxPool2d(x, { kernelSize: 3, stride: 2, padding: 1 }));
  const view = x.transpose(1, 3);
  const t = keep(view.contiguous());
  view.dispose();
  const out = {
    x: Array.from(x.dequantize()), y: Array.from(y.intRepr()), ydw: Array.from(ydw.intRepr()), mm: Array.from(mm.intRepr()),
    lin: Array.from(lin.intRepr()), sum: Array.from(sum.intRepr()), pool: Array.from(pool.intRepr()), t: Array.from(t.intRepr()),
    digits: Array.from((await model.run({ input: Float32Array.from(seq(64, (i) => (i % 17) / 16)) })).output.data),
  };
  for (const v of [x, w, y, dw, ydw, a, b, mm, lw, lin, sum, pool, t, packed, pdw, pl]) v.dispose();
  return out;
}
const low = await compute();
const lowPointers = pointers.splice(0);
const be = backend();
const ballast = be.alloc(2 ** 31 - 4096);
const fillers = []; // fill every hole below the ballast, largest first, so that later buffers come from above 2^31
for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 8, 16]) {
  for (let n = 0; n < 1e5; n++) {
    fillers.push(be.alloc(size));
    if (fillers.at(-1) >= 2 ** 31) break;
  }
}
const high = await compute();
const result = {
  same: JSON.stringify(low) === JSON.stringify(high),
  lowMax: Math.max(...lowPointers), highMin: Math.min(...pointers), memory: qwasm.memoryStats().wasmMemoryBytes,
};
for (const p of [ballast, ...fillers]) be.free(p);
model.dispose();
result.live = qwasm.memoryStats().liveBytes;
console.log(JSON.stringify(result));
`;

test('tensors, packed weights and a model run above 2 GiB of wasm memory give the same bytes as below it', () => {
  const r = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120000 }));
  assert.ok(r.memory > 2 ** 31, `wasm memory grew to ${r.memory} bytes`);
  assert.ok(r.lowMax < 2 ** 31 && r.highMin >= 2 ** 31, `the first run's buffers were below 2^31 (up to ${r.lowMax}), the second's above (from ${r.highMin})`);
  assert.equal(r.same, true, 'every result is the same above 2 GiB');
  assert.equal(r.live, 0);
});
