// The demo as a static host without the cross-origin isolation headers serves it (GitHub Pages): no threads, but
// Chromium still makes the shared memory the relaxed-SIMD build imports, so that build runs on one thread where this
// Chromium's relaxed dot product passes qwasm's probe, in the page and in the model view's worker; the outputs are
// still PyTorch's, and nothing fails (no shared memory is sent between them).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ARTIFACTS, ONCE, startModelView, waitForPrediction } from './demo-page.js';

const digits = JSON.parse(readFileSync(new URL('../../models/digits.json', import.meta.url), 'utf8'));

let demo;
let page;
let errors;
before(async () => {
  if (ONCE) return;
  ({ demo, page, errors } = await startModelView({ isolate: false }));
});
after(async () => {
  await page?.close();
  await demo?.close();
});

test('without isolation headers: the relaxed build where the probe passes, every test image as PyTorch classified it', { skip: ONCE }, async () => {
  const state = await page.evaluate(async () => ({
    isolated: crossOriginIsolated, relaxed: document.body.dataset.relaxed,
    worker: window.qwasmModelView.backend(),
    probe: (await import('./qwasm/js/runtime/relaxed.js')).relaxedDotSemantics().semantics,
  }));
  assert.equal(state.isolated, false);
  assert.equal(state.relaxed, state.probe ?? undefined);
  assert.deepEqual([state.worker.isa, state.worker.threads, state.worker.crossOriginIsolated],
    [state.probe ? 'wasmrelaxed' : 'wasmsimd', 1, false]);
  for (let i = 0; i < digits.test_images.length; i++) {
    await page.click(`.mv-thumb[data-index="${i}"]`);
    await waitForPrediction(page, `sample:${i}`);
    const shown = await page.evaluate(() => {
      const el = document.querySelector('.mv-prediction');
      return { logits: JSON.parse(el.dataset.logits), bitexact: document.querySelector('.mv-reference').dataset.bitexact };
    });
    assert.deepEqual(Float32Array.from(shown.logits), Float32Array.from(digits.test_images[i].logits), `test image ${i}`);
    assert.equal(shown.bitexact, 'true', `test image ${i}`);
  }
  await page.screenshot({ path: `${ARTIFACTS}static-host.png` });
  assert.deepEqual(errors, []);
});
