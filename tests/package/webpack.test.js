// qwasm in a webpack 5 production build, installed from its npm pack tarball, with webpack's defaults (only the
// entry and output folder given): the .wasm files and the bundled model become assets through their
// new URL(..., import.meta.url) references, protobufjs's CommonJS is bundled, the Worker is its own chunk. The
// page runs the digits model on the main thread and in a module Worker, in Chromium.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { serve } from '../../tools/serve.mjs';
import { assertDigits, launch, runPage } from './browser.js';
import { installProject, node, packQwasm } from './install.js';

let browser;
let dir;
before(async () => {
  const { tarball } = packQwasm();
  dir = installProject('webpack5', tarball, {
    'main.js': './app/main.js', 'worker.js': './app/worker.js', 'digits.js': './app/digits.js', 'build.mjs': './projects/webpack5/build.mjs',
  });
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('webpack 5 bundles qwasm with its defaults (wasm and model assets, protobufjs, a Worker chunk) and the page runs it', async () => {
  const { out } = await node(['build.mjs'], dir);
  const stats = JSON.parse(out.trim().split('\n').at(-1));
  assert.deepEqual(stats.errors, []);
  assert.deepEqual(stats.warnings, []);
  assert.equal(stats.assets.filter((a) => a.endsWith('.wasm')).length, 2, `assets: ${stats.assets}`);
  assert.equal(stats.assets.filter((a) => a.endsWith('.onnx')).length, 2, `assets: ${stats.assets}`);
  const { server, url } = await serve(join(dir, 'dist'));
  try {
    assertDigits(await runPage(browser, url), 'webpack 5');
  } finally {
    server.close();
  }
});
