// qwasm through a bundler: webpack 5 builds a page that imports 'qwasm' as an installed package
// (node_modules/qwasm -> this repository), emits the .wasm files from their
// new URL('../dist/...', import.meta.url) references and protobufjs as a lazily loaded chunk; the
// built folder is served statically and run in Debian's Chromium: quantize, then the bundled digits model.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import webpack from 'webpack';
import { serve } from '../../tools/serve.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'];
let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'qwasm-webpack-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(repo, join(dir, 'node_modules', 'qwasm'), 'dir');
  cpSync(join(repo, 'models/digits.onnx'), join(dir, 'digits.onnx'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const ENTRY = `
import * as qwasm from 'qwasm';
import digits from 'qwasm/models/digits.json';
try {
  const info = await qwasm.init();
  const t = qwasm.quantizePerTensor([-1, 0, 0.25, 1, 200], [5], 0.5, 2, 'quint8');
  const ints = Array.from(t.intRepr());
  t.dispose();
  const model = await qwasm.loadModel(new URL('./digits.onnx', import.meta.url));
  const img = digits.test_images[0];
  const { output } = await model.run({ input: Float32Array.from(img.image) });
  model.dispose();
  window.result = { isa: info.isa, ints, logits: Array.from(output.data), expected: img.logits, liveBytes: qwasm.memoryStats().liveBytes };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
`;

test('webpack 5 bundles qwasm (wasm assets, lazy protobufjs) and the page runs it in Chromium', async () => {
  writeFileSync(join(dir, 'entry.js'), ENTRY);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script src="bundle.js"></script>');
  const stats = await new Promise((resolve, reject) => {
    const compiler = webpack({
      mode: 'production', target: 'web', context: dir, entry: './entry.js',
      output: { path: join(dir, 'out'), filename: 'bundle.js', publicPath: 'auto' },
      experiments: { topLevelAwait: true },
      performance: { hints: false },
    });
    compiler.run((err, s) => compiler.close(() => (err ? reject(err) : resolve(s))));
  });
  assert.equal(stats.hasErrors(), false, stats.toString({ colors: false }));
  const assets = Object.keys(stats.compilation.assets);
  assert.equal(assets.filter((a) => a.endsWith('.wasm')).length, 2, `assets: ${assets}`);
  cpSync(join(dir, 'index.html'), join(dir, 'out', 'index.html'));
  const { server, url } = await serve(join(dir, 'out'));
  const browser = await chromium.launch({ executablePath: process.env.QWASM_CHROMIUM ?? '/usr/bin/chromium', args: ARGS });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(url);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30000 });
    const r = await page.evaluate(() => window.result);
    assert.equal(r.error, undefined, r.error);
    assert.deepEqual(errors, []);
    assert.equal(r.isa, 'wasmsimd');
    assert.deepEqual(r.ints, [0, 2, 2, 4, 255]); // 0.25 / 0.5 = 0.5 rounds to even
    assert.deepEqual(r.logits, r.expected.map(Math.fround));
    assert.equal(r.liveBytes, 0);
  } finally {
    await browser.close();
    server.close();
  }
});
