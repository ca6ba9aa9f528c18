// qwasm in Vite 7 and Vite 8, installed from its npm pack tarball, with no Vite configuration file at all: the
// production build (its .wasm files and the bundled model emitted as assets, no Node built-in seen) served
// statically, and the dev server (which pre-bundles dependencies: protobufjs's CommonJS must be converted, the
// .wasm URLs must survive the move to node_modules/.vite/deps/). Each page runs the digits model on the main
// thread and in a module Worker, in Chromium.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { serve } from '../../tools/serve.mjs';
import { assertDigits, launch, runPage } from './browser.js';
import { installProject, node, packQwasm, startServer } from './install.js';

const APP_FILES = { 'index.html': './app/index.html', 'main.js': './app/main.js', 'worker.js': './app/worker.js', 'digits.js': './app/digits.js' };

let browser;
let pack;
before(async () => {
  pack = packQwasm();
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

for (const name of ['vite7', 'vite8']) {
  describe(name, () => {
    let dir;
    before(() => { dir = installProject(name, pack.tarball, APP_FILES); });

    test(`${name} build: assets emitted, no Node built-in reaches the browser build, the page runs`, async () => {
      const { out, err } = await node(['node_modules/vite/bin/vite.js', 'build'], dir);
      const log = out + err;
      assert.doesNotMatch(log, /externalized for browser compatibility|node:fs|node:url/, log);
      assert.doesNotMatch(log, /warn/i, log);
      const assets = readdirSync(join(dir, 'dist/assets'));
      for (const stem of ['qwasm-simd', 'qwasm-scalar', 'qwasm-relaxed-threads', 'digits']) {
        assert.ok(assets.some((a) => a.startsWith(`${stem}-`)), `${stem} is not among the assets: ${assets}`);
      }
      const { server, url } = await serve(join(dir, 'dist'));
      try {
        assertDigits(await runPage(browser, url), `${name} build`);
      } finally {
        server.close();
      }
    });

    test(`${name} dev server: pre-bundled qwasm finds its .wasm and model files, protobufjs is converted`, async () => {
      const { child, match } = await startServer(['node_modules/vite/bin/vite.js', '--host', '127.0.0.1', '--port', '0'], dir, /Local:\s+(http:\/\/\S+)/);
      try {
        const run = await runPage(browser, match[1]);
        assertDigits(run, `${name} dev`);
        // the page read qwasm from Vite's pre-bundled copy, so the URL fix-up was what found the files
        assert.ok(run.requests.some((r) => r.includes('/node_modules/.vite/deps/qwasm')), run.requests.join('\n'));
        const build = run.relaxed ? 'qwasm-relaxed-threads' : 'qwasm-simd'; // the one init() picks here (assertDigits)
        assert.ok(run.requests.some((r) => r.endsWith(`/node_modules/qwasm/dist/${build}.wasm`)), run.requests.join('\n'));
      } finally {
        child.kill();
      }
    });
  });
}
