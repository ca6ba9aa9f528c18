// The model view's float reference in headless Chromium: the float export of the digits CNN
// (models/digits-float.onnx, tools/train_digits.py) run by onnxruntime-web in the page. For every bundled test
// image its logits are PyTorch's float logits (models/digits.json float_logits) up to float rounding, its
// prediction is their argmax, and the SQNR shown is the one computed here from the page's int8 and float
// logits. Loaded models get no float reference; a missing onnxruntime-web leaves the int8 side working.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ARTIFACTS, startModelView } from './demo-page.js';

const digits = JSON.parse(readFileSync(new URL('../../models/digits.json', import.meta.url), 'utf8'));
const otherOnnx = readFileSync(new URL('../fixtures/torch/qdq/convnet.onnx', import.meta.url));

const argmax = (xs) => xs.reduce((b, v, i) => (v > xs[b] ? i : b), 0);

let demo;
let page;
let errors;
before(async () => {
  ({ demo, page, errors } = await startModelView());
});
after(async () => {
  await page?.close();
  await demo?.close();
});

/** Waits until int8 and float results are shown for `source`; returns what the page holds. */
async function shown(source, status = 'ready', p = page) {
  await p.waitForFunction(([s, st]) => {
    const f = document.querySelector('.mv-float');
    return document.querySelector('.mv-prediction')?.dataset.source === s && f?.dataset.source === s
      && f.dataset.status === st && !document.querySelector('#model').dataset.busy;
  }, [source, status], { timeout: 15000 });
  return p.evaluate(() => {
    const q = document.querySelector('.mv-prediction');
    const f = document.querySelector('.mv-float');
    return {
      int8: JSON.parse(q.dataset.logits),
      int8Class: Number(q.dataset.class),
      float: f.dataset.logits ? JSON.parse(f.dataset.logits) : null,
      floatClass: Number(f.dataset.class),
      floatShown: document.querySelector('.mv-float-prediction .mv-class')?.textContent,
      sqnr: Number(f.dataset.sqnr),
      sqnrText: document.querySelector('.mv-sqnr')?.textContent,
      agree: f.dataset.agree,
      agreementText: document.querySelector('.mv-agreement').textContent,
      torchClose: f.dataset.torchClose,
      text: f.textContent,
      floatLatency: document.querySelector('.mv-latency-float')?.textContent,
    };
  });
}

function sqnr(f, q) {
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < f.length; i++) {
    signal += f[i] ** 2;
    noise += (f[i] - q[i]) ** 2;
  }
  return 10 * Math.log10(signal / noise);
}

test('every bundled test image: onnxruntime-web\'s float logits are PyTorch\'s, the SQNR shown is the one computed here', async () => {
  const t0 = Date.now();
  const seen = [];
  let worst = 0;
  for (let i = 0; i < digits.test_images.length; i++) {
    const s = digits.test_images[i];
    await page.click(`.mv-thumb[data-index="${i}"]`);
    const got = await shown(`sample:${i}`);
    const what = `test image ${i} (#${s.index})`;
    assert.equal(got.float.length, 10);
    const diff = Math.max(...got.float.map((v, k) => Math.abs(v - s.float_logits[k])));
    assert.ok(diff < 1e-4, `${what}: max |ORT − PyTorch float| = ${diff}`);
    worst = Math.max(worst, diff);
    assert.equal(got.floatClass, argmax(s.float_logits), what);
    assert.equal(got.floatShown, String(argmax(s.float_logits)), what);
    assert.equal(got.torchClose, 'true', what);
    // int8 side unchanged: PyTorch's int8 logits, bit for bit
    assert.deepEqual(Float32Array.from(got.int8), Float32Array.from(s.logits), what);
    const expected = sqnr(got.float, got.int8);
    assert.ok(Math.abs(got.sqnr - expected) < 1e-9, `${what}: SQNR ${got.sqnr} vs ${expected}`);
    assert.equal(got.sqnrText, `${expected.toFixed(1)} dB`, what);
    assert.equal(got.agree, String(got.floatClass === got.int8Class), what);
    assert.match(got.agreementText, got.floatClass === got.int8Class ? /same class/ : /differ/);
    assert.match(got.floatLatency, /^\d+(\.\d+)? (ms|µs)$/);
    seen.push(expected);
  }
  console.log(`SQNR int8 vs float on the ${seen.length} test images: ${Math.min(...seen).toFixed(1)} … ${Math.max(...seen).toFixed(1)} dB; max |ORT − PyTorch float| ${worst.toExponential(1)} (${Date.now() - t0} ms)`);
  await page.click('.mv-thumb[data-index="6"]');
  await shown('sample:6');
  await page.mouse.move(0, 0);
  await page.locator('.mv-top').screenshot({ path: `${ARTIFACTS}model-float.png` });
  assert.deepEqual(errors, []);
});

test('a drawing gets a float prediction too; a loaded model gets none, the reset brings it back', async () => {
  await page.click('.mv-clear');
  const box = await page.locator('.mv-pad').boundingBox();
  await page.mouse.move(box.x + 0.5 * box.width, box.y + 0.15 * box.height);
  await page.mouse.down();
  await page.mouse.move(box.x + 0.5 * box.width, box.y + 0.85 * box.height, { steps: 8 });
  await page.mouse.up();
  await page.waitForFunction(() => document.querySelector('.mv-prediction').dataset.source === 'draw' && !document.querySelector('.mv-muted'));
  const drawn = await shown('draw');
  assert.equal(drawn.int8Class, 1);
  assert.equal(drawn.floatClass, 1);
  assert.ok(Math.abs(drawn.sqnr - sqnr(drawn.float, drawn.int8)) < 1e-9);
  assert.equal(drawn.torchClose, undefined, 'no PyTorch comparison for a drawing');

  await page.click('.mv-thumb[data-index="2"]');
  await page.setInputFiles('.mv-file', { name: 'convnet.onnx', mimeType: 'application/octet-stream', buffer: otherOnnx });
  await page.waitForFunction(() => document.querySelector('.mv-float').dataset.model === 'convnet.onnx');
  const other = await shown('sample:2', 'none');
  assert.equal(other.float, null);
  assert.match(await page.textContent('.mv-float-prediction'), /no float reference/);
  assert.match(other.text, /No float reference for convnet\.onnx/);
  await page.locator('.mv-output').screenshot({ path: `${ARTIFACTS}model-float-none.png` });
  await page.click('.mv-reset');
  await page.waitForFunction(() => document.querySelector('.mv-float').dataset.model === 'digits.onnx');
  const back = await shown('sample:2');
  assert.equal(back.floatClass, argmax(digits.test_images[2].float_logits));
  assert.deepEqual(errors, []);
});

test('without onnxruntime-web the page starts, the int8 side works and a note says why there is no float', async () => {
  const { page: p, errors: errs } = await demo.open();
  try {
    await p.route('**/vendor/ort/**', (route) => route.fulfill({ status: 404, body: 'not found' }));
    await p.click('nav button[data-view="model"]');
    await p.waitForSelector('#model[data-ready]', { timeout: 20000 });
    const got = await shown('sample:0', 'failed', p);
    assert.deepEqual(Float32Array.from(got.int8), Float32Array.from(digits.test_images[0].logits));
    assert.match(got.text, /Float reference unavailable: onnxruntime-web could not be loaded/);
    assert.equal(await p.evaluate(() => window.qwasmDemo.ready), true);
    await p.locator('.mv-output').screenshot({ path: `${ARTIFACTS}model-float-unavailable.png` });
    // the only errors are the blocked module's own
    assert.ok(errs.every((e) => /404|ort\.wasm\.min\.mjs|module script/i.test(e)), errs.join('\n'));
  } finally {
    await p.close();
  }
});
