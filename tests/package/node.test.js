// qwasm installed from its npm pack tarball into fresh projects, run by Node: plain ESM (the model found through
// qwasm/models and through import.meta.resolve), and TypeScript compiling against the shipped declarations under
// the default DOM libs and under Node-only libs, both without skipLibCheck, the output then run.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { SAMPLE, installProject, node, packQwasm } from './install.js';

let tarball;
before(() => {
  ({ tarball } = packQwasm());
});

const expected = SAMPLE.logits.map(Math.fround);

test('Node ESM: import \'qwasm\', \'qwasm/models\', \'qwasm/reference\'; the digits model runs from the installed files', async () => {
  const dir = installProject('node', tarball, { 'main.mjs': './app/node-main.mjs' });
  const r = JSON.parse((await node(['main.mjs'], dir)).out);
  assert.equal(r.isa, 'wasmsimd');
  assert.equal(r.source, `${join(dir, 'node_modules/qwasm/dist/qwasm-simd.wasm').replace(/^/, 'file://')}`);
  assert.equal(r.modelUrl, `file://${join(dir, 'node_modules/qwasm/models/digits.onnx')}`);
  assert.deepEqual(r.expected, SAMPLE.logits);
  assert.deepEqual(r.logits, [expected, expected]);
  assert.equal(r.tie, 2);
  assert.equal(r.liveBytes, 0);
});

test('TypeScript: the declarations compile under DOM + ES2022 and under ES2022 + @types/node, and the output runs', async () => {
  const dir = installProject('typescript', tarball, {
    src: './projects/typescript/src', 'tsconfig.dom.json': './projects/typescript/tsconfig.dom.json', 'tsconfig.node.json': './projects/typescript/tsconfig.node.json',
  });
  for (const config of ['tsconfig.dom.json', 'tsconfig.node.json']) {
    await node(['node_modules/typescript/bin/tsc', '-p', config], dir); // rejects with tsc's errors
  }
  const r = JSON.parse((await node(['out-node/node-main.js'], dir)).out);
  assert.equal(r.isa, 'wasmsimd');
  assert.deepEqual(r.logits, expected);
  assert.deepEqual(r.ints, [0, 2, 2, 4, 255]);
  assert.equal(r.reference, 2);
  assert.equal(r.layers, 12);
  assert.equal(r.liveBytes, 0);
  const dom = `import { classify } from './out-dom/digits.js';
    console.log(JSON.stringify(await classify(Float32Array.from(${JSON.stringify(SAMPLE.image)}))));`;
  const d = JSON.parse((await node(['--input-type=module', '-e', dom], dir)).out);
  assert.deepEqual(d.logits, expected);
});
