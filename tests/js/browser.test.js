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
let plainServer; // the same files without the cross-origin isolation headers
let plainBase;
before(async () => {
  const root = new URL('../../', import.meta.url).pathname;
  ({ server, url: base } = await serve(root));
  ({ server: plainServer, url: plainBase } = await serve(root, 0, '127.0.0.1', { isolate: false }));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});
after(async () => {
  await browser?.close();
  server?.close();
  plainServer?.close();
});

async function load(query, from = base) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${from}tests/browser/loader.html${query}`);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 20000 });
  const result = await page.evaluate(() => window.result);
  await page.close();
  assert.deepEqual(errors, []);
  return result;
}

// What init() runs by default on this server's cross-origin isolated pages: the relaxed-SIMD build where this
// Chromium's probe finds an exact relaxed dot product (x86 with AVX-VNNI, ARM), else SIMD128.
const defaultBuild = ({ relaxedProbe }, threads) =>
  (relaxedProbe.semantics
    ? { isa: 'wasmrelaxed', source: `${base}dist/qwasm-relaxed-threads.wasm`, relaxed: relaxedProbe.semantics }
    : { isa: 'wasmsimd', source: `${base}dist/qwasm-simd${threads > 1 ? '-threads' : ''}.wasm` });

test('Chromium runs the SIMD build by default, with the same numbers as Node', async () => {
  const r = await load('');
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.probe, true);
  const { isa, source } = defaultBuild(r, 1);
  assert.equal(r.info.isa, isa);
  assert.equal(r.info.source, source);
  const plain = await load('?relaxedSimd=0');
  assert.equal(plain.info.isa, 'wasmsimd');
  assert.equal(plain.info.source, `${base}dist/qwasm-simd.wasm`);
  assert.deepEqual(plain.ints, r.ints);
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

test('a cross-origin isolated page runs 2 threads (Blob-URL workers over a shared memory) with the bytes of 1', async () => {
  const one = await load('?gemm=1');
  const two = await load('?gemm=1&numThreads=2');
  assert.equal(one.info.threads, 1);
  assert.equal(two.isolated, true);
  assert.deepEqual(two.info, { simd: true, threads: 2, ...defaultBuild(two, 2) });
  assert.deepEqual(two.warnings, []);
  assert.equal(two.gemm, one.gemm);
  assert.deepEqual(two.ints, one.ints);
  assert.equal(two.liveBytes, 0);
});

test('without cross-origin isolation, or when workers cannot start, one thread runs and says why once', async () => {
  const one = await load('?gemm=1');
  const plain = await load('?gemm=1&numThreads=2', plainBase);
  assert.equal(plain.isolated, false);
  assert.equal(plain.info.threads, 1);
  // One thread needs no isolation: where the probe passes, the relaxed build runs on a shared memory all the same.
  assert.equal(plain.info.source, `${plainBase}dist/${plain.relaxedProbe.semantics ? 'qwasm-relaxed-threads' : 'qwasm-simd'}.wasm`);
  assert.match(plain.info.threadsFallback, /SharedArrayBuffer is not available .*Cross-Origin-Opener-Policy: same-origin/);
  assert.deepEqual(plain.warnings, [`qwasm: running on 1 thread instead of 2: ${plain.info.threadsFallback}`]);
  assert.equal(plain.gemm, one.gemm);
  // A Content-Security-Policy that allows no workers: the pool cannot start.
  const blocked = await load('?gemm=1&numThreads=2&noWorkers=1');
  assert.equal(blocked.info.threads, 1);
  assert.match(blocked.info.threadsFallback, /worker 1 failed/);
  assert.equal(blocked.warnings.length, 1);
  assert.equal(blocked.gemm, one.gemm);
});

test('relaxed SIMD: the probe decides; forced on 7-bit activations the relaxed kernels give the SIMD128 bytes', async () => {
  const one = await load('?gemm=1&sevenBit=1');
  const auto = await load('?gemm=1&numThreads=2');
  const { semantics, reason } = auto.relaxedProbe;
  if (semantics) {
    // An engine whose relaxed dot multiplies full bytes exactly (AVX-VNNI, ARM): the relaxed build runs by default,
    // and on full bytes it gives the SIMD128 build's bytes.
    assert.equal(auto.info.relaxed, semantics);
    assert.equal(auto.info.isa, 'wasmrelaxed');
    const simd128 = await load('?gemm=1&relaxedSimd=0');
    assert.equal(simd128.info.isa, 'wasmsimd');
    assert.equal(auto.gemm, simd128.gemm);
  } else {
    // This machine's Chromium (x86 without AVX-VNNI) saturates pairs of products: SIMD128, and a reason on request.
    assert.match(reason, /not exact for full bytes/);
    assert.equal(auto.info.isa, 'wasmsimd');
    const asked = await load('?gemm=1&relaxedSimd=1');
    assert.equal(asked.info.relaxedFallback, reason);
    assert.deepEqual(asked.warnings, [`qwasm: relaxed SIMD is not used: ${reason}`]);
  }
  const forced = await load('?gemm=1&sevenBit=1&numThreads=2&forceUsdot=1');
  assert.equal(forced.info.isa, 'wasmrelaxed');
  assert.equal(forced.info.source, `${base}dist/qwasm-relaxed-threads.wasm`);
  assert.equal(forced.gemm, one.gemm);
  // Without cross-origin isolation Chromium still makes a shared memory (it only may not send it to a worker): the
  // relaxed build runs on one thread there, with the bytes of SIMD128.
  const plain = await load('?gemm=1&relaxedSimd=1', plainBase);
  assert.equal(plain.isolated, false);
  if (semantics) {
    assert.deepEqual([plain.info.isa, plain.info.relaxed, plain.info.threads], ['wasmrelaxed', semantics, 1]);
    assert.equal(plain.info.relaxedFallback, undefined);
    assert.deepEqual(plain.warnings, []);
    assert.equal(plain.gemm, (await load('?gemm=1&relaxedSimd=0', plainBase)).gemm);
  } else {
    assert.equal(plain.info.isa, 'wasmsimd');
    assert.equal(plain.info.relaxedFallback, reason);
  }
});
