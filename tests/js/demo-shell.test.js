// The demo page's shell in headless Chromium: it starts with no errors on the SIMD build.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ARTIFACTS, startDemo } from './demo-page.js';

let demo;
before(async () => { demo = await startDemo(); });
after(async () => { await demo?.close(); });

test('demo page starts on the SIMD build with no console errors', async () => {
  const { page, errors } = await demo.open();
  const state = await page.evaluate(() => ({ ready: window.qwasmDemo.ready, error: window.qwasmDemo.error, backend: document.body.dataset.backend }));
  await page.screenshot({ path: `${ARTIFACTS}shell.png` });
  await page.close();
  assert.equal(state.error, undefined);
  assert.equal(state.ready, true);
  assert.equal(state.backend, 'simd');
  assert.deepEqual(errors, []);
});
