// Debian's headless Chromium (playwright-core), as tests/js/browser.test.js drives it, for the bundled pages of
// tests/package: open a page, wait for window.result, and collect every error the page or its workers report.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { SAMPLE } from './install.js';

const CHROMIUM = process.env.QWASM_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

export const launch = () => chromium.launch({ executablePath: CHROMIUM, args: ARGS });

// qwasm's relaxed-SIMD probe (js/runtime/relaxed.js), run in a page: which build init() takes there by default.
const PROBE = `${readFileSync(new URL('../../js/runtime/relaxed.js', import.meta.url), 'utf8').replaceAll('export function', 'function')}
relaxedDotSemantics().semantics;`;

/**
 * Opens `url` and returns { result: window.result, errors, requests, relaxed } once the page has set window.result;
 * relaxed: the semantics this Chromium's relaxed dot product passes qwasm's probe with, or null.
 */
export async function runPage(browser, url) {
  const page = await browser.newPage();
  const errors = [];
  const requests = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('requestfinished', (r) => requests.push(r.url()));
  page.on('worker', (w) => w.on('console', (m) => { if (m.type() === 'error') errors.push(`worker console: ${m.text()}`); }));
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60000 });
    return { result: await page.evaluate(() => window.result), errors, requests, relaxed: await page.evaluate(PROBE) };
  } finally {
    await page.close();
  }
}

/**
 * The checks every page of tests/package/app makes: the digits model ran, on the page and in a module Worker, on the
 * SIMD128 build, or on the relaxed-SIMD one where the probe passes (on one thread it needs no cross-origin isolation).
 */
export function assertDigits({ result, errors, relaxed }, where) {
  assert.equal(result.error, undefined, `${where}: ${result.error}`);
  for (const [side, r] of Object.entries({ page: result.main, worker: result.worker })) {
    assert.equal(r.error, undefined, `${where} (${side}): ${r.error}`);
    assert.equal(r.isa, relaxed ? 'wasmrelaxed' : 'wasmsimd', `${where} (${side})`);
    assert.deepEqual(r.ints, [0, 2, 2, 4, 255], `${where} (${side}): quantizePerTensor`);
    assert.equal(r.tie, 2, `${where} (${side}): qwasm/reference`);
    assert.deepEqual(r.expected, SAMPLE.logits, `${where} (${side}): the samples file`);
    assert.deepEqual(r.logits, SAMPLE.logits.map(Math.fround), `${where} (${side}): PyTorch's logits, bit for bit`);
    assert.equal(r.liveBytes, 0, `${where} (${side})`);
  }
  assert.deepEqual(errors, [], where);
}
