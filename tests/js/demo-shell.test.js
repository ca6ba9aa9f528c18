// The demo page's shell in headless Chromium: it starts with no errors on the SIMD build.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ARTIFACTS, startDemo } from './demo-page.js';

let demo;
before(async () => { demo = await startDemo(); });
after(async () => { await demo?.close(); });

test('demo page starts on the SIMD build with no console errors', async () => {
  const { page, errors } = await demo.open();
  const state = await page.evaluate(async () => ({
    ready: window.qwasmDemo.ready, error: window.qwasmDemo.error, backend: document.body.dataset.backend,
    relaxed: document.body.dataset.relaxed, label: document.querySelector('#backend').textContent,
    probe: (await import('./qwasm/js/runtime/relaxed.js')).relaxedDotSemantics().semantics,
  }));
  await page.screenshot({ path: `${ARTIFACTS}shell.png` });
  await page.close();
  assert.equal(state.error, undefined);
  assert.equal(state.ready, true);
  assert.equal(state.backend, 'simd');
  // The served page is cross-origin isolated: the relaxed-SIMD build runs exactly where this Chromium's probe passes.
  assert.equal(state.relaxed, state.probe ?? undefined);
  assert.equal(state.label, `backend: SIMD128${state.probe ? ` + relaxed-SIMD dot product (${state.probe})` : ''} WebAssembly`);
  assert.deepEqual(errors, []);
});
