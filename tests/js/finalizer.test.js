// The FinalizationRegistry safety net: a tensor dropped without dispose() gives its wasm memory
// back after garbage collection. Runs in a child process started with --expose-gc.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

const script = `
import * as qwasm from ${JSON.stringify(new URL('../../js/index.js', import.meta.url).href)};
await qwasm.init({ simd: ${process.env.QWASM_SIMD !== '0'} });
const before = qwasm.memoryStats().liveBytes;
(() => { for (let i = 0; i < 50; i++) qwasm.quantizePerTensor(new Float32Array(10000), [10000], 1, 0, 'qint32'); })();
const held = qwasm.memoryStats().liveBytes - before;
for (let i = 0; i < 20 && qwasm.memoryStats().liveBytes > before; i++) {
  globalThis.gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
}
console.log(JSON.stringify({ held, after: qwasm.memoryStats().liveBytes - before }));
`;

test('undisposed tensors are freed after garbage collection', () => {
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const { held, after } = JSON.parse(out);
  assert.equal(held, 50 * 40000, 'the tensors held their storage while alive');
  assert.equal(after, 0, 'the registry released every storage');
});
