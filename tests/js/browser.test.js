// The package in a real browser: Debian's Chromium, headless, driven by playwright-core, loading
// js/index.js and the .wasm files over HTTP from a static server, as a web page would.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { serve } from '../../tools/serve.mjs';

const CHROMIUM = process.env.QWASM_CHROMIUM ?? '/usr/bin/chromium';
// The flags a closed network needs: no background traffic, no sandbox as root.
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

let browser;
let server;
let base;
before(async () => {
  ({ server, url: base } = await serve(new URL('../../', import.meta.url).pathname));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});
after(async () => {
  await browser?.close();
  server?.close();
});

async function load(query) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}tests/browser/loader.html${query}`);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 20000 });
  const result = await page.evaluate(() => window.result);
  await page.close();
  assert.deepEqual(errors, []);
  return result;
}

test('Chromium runs the SIMD build by default, with the same numbers as Node', async () => {
  const r = await load('');
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.probe, true);
  assert.equal(r.info.isa, 'wasmsimd');
  assert.equal(r.info.source, `${base}dist/qwasm-simd.wasm`);
  assert.deepEqual(r.ints, [0, 2, 2, 4, 255]);
  assert.deepEqual(r.values, [-1, 0, 0, 1, 126.5]);
  assert.equal(r.tie, 128);
  assert.equal(r.liveBytes, 0);
});

test('Chromium runs the scalar build on request', async () => {
  const r = await load('?simd=0');
  assert.equal(r.info.isa, 'scalar');
  assert.deepEqual(r.ints, [0, 2, 2, 4, 255]);
});

test('a missing binary fails with the URL that was tried', async () => {
  const r = await load('?wasmPaths=/nowhere/');
  assert.match(r.error, new RegExp(`could not fetch the wasm binary at /nowhere/qwasm-simd\\.wasm: HTTP 404`));
});
