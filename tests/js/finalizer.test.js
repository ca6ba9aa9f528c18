// The FinalizationRegistry safety nets: a tensor, packed weights or a Model dropped without dispose() give their wasm
// memory back after garbage collection. Runs in a child process started with --expose-gc.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

const here = (path) => JSON.stringify(new URL(path, import.meta.url).href);

/**
 * Runs `body` in a child process (qwasm as `qwasm`, the live bytes before it in `before`; it sets `held`), then
 * collects garbage until the live bytes are back; returns { held, after } (after: the bytes still live).
 */
function collect(body) {
  const script = `
import * as qwasm from ${here('../../js/index.js')};
await qwasm.init({ simd: ${process.env.QWASM_SIMD !== '0'} });
const before = qwasm.memoryStats().liveBytes;
let held;
${body}
for (let i = 0; i < 40 && qwasm.memoryStats().liveBytes > before; i++) {
  globalThis.gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
}
console.log(JSON.stringify({ held, after: qwasm.memoryStats().liveBytes - before }));
`;
  return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' }));
}

test('undisposed tensors are freed after garbage collection', () => {
  const { held, after } = collect(`
(() => { for (let i = 0; i < 50; i++) qwasm.quantizePerTensor(new Float32Array(10000), [10000], 1, 0, 'qint32'); })();
held = qwasm.memoryStats().liveBytes - before;
`);
  assert.equal(held, 50 * 40000, 'the tensors held their storage while alive');
  assert.equal(after, 0, 'the registry released every storage');
});

test('undisposed packed weights and models are freed after garbage collection', () => {
  const { held, after } = collect(`
const w = qwasm.fromIntRepr(new Int8Array(64 * 64).fill(1), [64, 64], 0.1, 0, 'qint8');
const wc = qwasm.fromIntRepr(new Int8Array(16 * 16 * 9).fill(1), [16, 16, 3, 3], 0.1, 0, 'qint8');
const x = qwasm.fromIntRepr(new Uint8Array(64 * 64).fill(3), [64, 64], 0.1, 0, 'quint8');
const xc = qwasm.fromIntRepr(new Uint8Array(16 * 64).fill(3), [1, 16, 8, 8], 0.1, 0, 'quint8');
await (async () => {
  for (let i = 0; i < 10; i++) {
    // used once (so the lazily made requantization blob and workspace exist too), never disposed
    qwasm.linear(x, qwasm.packLinear(w, null), { scale: 1, zeroPoint: 0 }).dispose();
    qwasm.conv2d(xc, qwasm.packConv2d(wc, null, { padding: 1 }), { scale: 1, zeroPoint: 0 }).dispose();
    qwasm.matmul(x, qwasm.packMatMul(w), { scale: 1, zeroPoint: 0 }).dispose();
    const model = await qwasm.loadModel(${here('../../models/digits.onnx')});
    await model.run({ input: new Float32Array(64).fill(0.5) });
  }
})();
held = qwasm.memoryStats().liveBytes - before - [w, wc, x, xc].reduce((s, t) => s + t.numel(), 0);
for (const t of [w, wc, x, xc]) t.dispose();
`);
  assert.ok(held > 10 * (64 * 64 * 2), `the packed weights and models held their memory while alive (${held} bytes)`);
  assert.equal(after, 0, 'the registries released every packed weight, blob, workspace, packed layer and arena');
});
