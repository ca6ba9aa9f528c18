// Debian's headless Chromium (playwright-core), as tests/js/browser.test.js drives it, for the bundled pages of
// tests/package: open a page, wait for window.result, and collect every error the page or its workers report.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { SAMPLE } from './install.js';

const CHROMIUM = process.env.QWASM_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

export const launch = () => chromium.launch({ executablePath: CHROMIUM, args: ARGS });

/** Opens `url` and returns { result: window.result, errors, requests } once the page has set window.result. */
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
    return { result: await page.evaluate(() => window.result), errors, requests };
  } finally {
    await page.close();
  }
}

/** The checks every page of tests/package/app makes: the digits model ran, on the page and in a module Worker. */
export function assertDigits({ result, errors }, where) {
  assert.equal(result.error, undefined, `${where}: ${result.error}`);
  for (const [side, r] of Object.entries({ page: result.main, worker: result.worker })) {
    assert.equal(r.error, undefined, `${where} (${side}): ${r.error}`);
    assert.equal(r.isa, 'wasmsimd', `${where} (${side})`);
    assert.deepEqual(r.ints, [0, 2, 2, 4, 255], `${where} (${side}): quantizePerTensor`);
    assert.equal(r.tie, 2, `${where} (${side}): qwasm/reference`);
    assert.deepEqual(r.expected, SAMPLE.logits, `${where} (${side}): the samples file`);
    assert.deepEqual(r.logits, SAMPLE.logits.map(Math.fround), `${where} (${side}): PyTorch's logits, bit for bit`);
    assert.equal(r.liveBytes, 0, `${where} (${side})`);
  }
  assert.deepEqual(errors, [], where);
}
