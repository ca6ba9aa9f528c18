// The model view with a text encoder in headless Chromium: the tiny q8 BERT (tests/fixtures/transformer, a
// transformers.js-style quantize_dynamic file) is dropped in, runs on token ids, lists its dynamic int8 products with
// weight and activation qparams, and the integer explainer recomputes outputs of a DynamicQuantizeMatMul and of a
// MatMulIntegerToFloat equal to the kernel's; the digits model comes back with the reset button.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ARTIFACTS, startModelView } from './demo-page.js';
import { qwasm, setup } from './helpers.js';

const bert = readFileSync(new URL('../fixtures/transformer/tiny-bert-opset14_q8.onnx', import.meta.url));

let demo;
let page;
let errors;
before(async () => {
  await setup();
  ({ demo, page, errors } = await startModelView());
});
after(async () => {
  await page?.close();
  await demo?.close();
});

const explained = () => page.waitForFunction(() => document.querySelector('.tf-explainer')?.dataset.equal !== undefined, null, { timeout: 20000 });

test('a q8 BERT encoder: token ids in, dynamic int8 products listed, one output recomputed in integers', async () => {
  const model = await qwasm.loadModel(new Uint8Array(bert));
  const products = model.layers.filter((l) => l.opType === 'DynamicQuantizeMatMul' || l.opType === 'MatMulIntegerToFloat');
  model.dispose();
  await page.setInputFiles('.mv-file', { name: 'tiny-bert-opset14_q8.onnx', mimeType: 'application/octet-stream', buffer: bert });
  await page.waitForSelector('.tf:not([hidden]) .tf-latency', { timeout: 20000 });
  await explained();
  const state = await page.evaluate(() => ({
    name: document.querySelector('.mv-model-name')?.textContent,
    rows: [...document.querySelectorAll('.tf-layers tbody tr')].map((r) => ({ op: r.children[2].textContent, act: r.querySelector('.tf-act').textContent })),
    equal: document.querySelector('.tf-explainer').dataset.equal,
    imagesHidden: document.querySelector('.mv-top').hidden,
  }));
  await page.screenshot({ path: `${ARTIFACTS}model-transformer.png`, fullPage: true });
  assert.equal(state.name, 'tiny-bert-opset14_q8.onnx');
  assert.equal(state.imagesHidden, true);
  assert.equal(state.rows.length, products.length);
  assert.ok(state.rows.some((r) => r.op === 'DynamicQuantizeMatMul') && state.rows.some((r) => r.op === 'MatMulIntegerToFloat'));
  assert.ok(state.rows.every((r) => /^\d\.\d+(e-?\d+)? \/ \d+$/.test(r.act)), JSON.stringify(state.rows.map((r) => r.act)));
  assert.equal(state.equal, 'true', 'the first product\'s element equals the kernel');
  // a MatMulIntegerToFloat (reads DynamicQuantizeLinear's qparams) and another element of it
  const mitf = state.rows.findIndex((r) => r.op === 'MatMulIntegerToFloat');
  await page.locator('.tf-explain').nth(mitf).click();
  await page.fill('.tf-pick >> nth=0 >> input', '5');
  await page.locator('.tf-pick >> nth=0 >> input').dispatchEvent('change');
  await page.fill('.tf-pick >> nth=1 >> input', '11');
  await page.locator('.tf-pick >> nth=1 >> input').dispatchEvent('change');
  await explained();
  const steps = await page.evaluate(() => ({ equal: document.querySelector('.tf-explainer').dataset.equal, text: document.querySelector('.tf-steps').textContent }));
  assert.equal(steps.equal, 'true');
  assert.match(steps.text, /DynamicQuantizeLinear/);
  // other token ids, then back to the digits model
  await page.fill('.tf-ids', '3 1 4 1 5 9 2 6 5 3 5');
  await page.click('.tf-run');
  await page.waitForFunction(() => document.querySelector('.tf-outputs')?.textContent.includes('[1×11×16]'), null, { timeout: 20000 });
  await page.click('.mv-reset');
  await page.waitForFunction(() => document.querySelector('.mv-model-name')?.textContent === 'digits.onnx' && !document.querySelector('.mv-top').hidden);
  assert.equal(await page.isHidden('.tf'), true);
  assert.deepEqual(errors, []);
});
