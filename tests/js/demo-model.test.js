// The demo page's model view in headless Chromium: the bundled digits model (models/digits.onnx, copied to
// web_demo/models/ by tools/demo.mjs) loads, classifies the held-out test images exactly as PyTorch did,
// classifies a drawing, rejects malformed files without losing the current model, sends tensors to the
// explorer, and its integer explainer agrees with the kernel.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ARTIFACTS, startModelView, waitForPrediction } from './demo-page.js';
import { qwasm, setup } from './helpers.js';

const digits = JSON.parse(readFileSync(new URL('../../models/digits.json', import.meta.url), 'utf8'));
const digitsOnnx = readFileSync(new URL('../../models/digits.onnx', import.meta.url));
const otherOnnx = readFileSync(new URL('../fixtures/torch/qdq/convnet.onnx', import.meta.url));

let demo;
let page;
let errors;
let layers; // the digits model's layers, as qwasm in Node lists them
before(async () => {
  await setup();
  const model = await qwasm.loadModel(new Uint8Array(digitsOnnx));
  layers = model.layers;
  model.dispose();
  ({ demo, page, errors } = await startModelView());
});
after(async () => {
  await page?.close();
  await demo?.close();
});

/** Waits until the prediction shows a result for `source` ('draw' or 'sample:i') of model `name`. */
async function prediction(source, name = 'digits.onnx') {
  await waitForPrediction(page, source, name);
  return page.evaluate(() => {
    const el = document.querySelector('.mv-prediction');
    return { cls: Number(el.dataset.class), logits: JSON.parse(el.dataset.logits), bitexact: document.querySelector('.mv-reference').dataset.bitexact };
  });
}

// the models live in the model view's worker (web_demo/model-worker.js): its wasm memory is the one to watch
const liveBytes = () => page.evaluate(() => window.qwasmModelView.memoryStats().then((s) => s.liveBytes));

test('the model view starts with the digits model and no errors', async () => {
  const state = await page.evaluate(() => ({
    ready: window.qwasmDemo.ready,
    name: document.querySelector('.mv-model-name')?.textContent,
    loadError: !document.querySelector('.mv-load-error').hidden,
    thumbs: document.querySelectorAll('.mv-thumb').length,
    rows: document.querySelectorAll('.mv-layers tbody tr').length,
  }));
  await prediction('sample:0');
  await page.screenshot({ path: `${ARTIFACTS}model-start.png`, fullPage: true });
  assert.equal(state.ready, true);
  assert.equal(state.name, 'digits.onnx');
  assert.equal(state.loadError, false);
  assert.equal(state.thumbs, digits.test_images.length);
  assert.equal(state.rows, layers.length);
  assert.deepEqual(errors, []);
});

test('every bundled test image: the prediction and the logits are PyTorch\'s, bit for bit', async () => {
  const before = await liveBytes();
  for (let i = 0; i < digits.test_images.length; i++) {
    const s = digits.test_images[i];
    await page.click(`.mv-thumb[data-index="${i}"]`);
    const got = await prediction(`sample:${i}`);
    assert.equal(got.cls, s.prediction, `test image ${i} (#${s.index})`);
    assert.deepEqual(Float32Array.from(got.logits), Float32Array.from(s.logits), `logits of test image ${i}`);
    assert.equal(got.bitexact, 'true');
  }
  const correct = digits.test_images.filter((s) => s.prediction === s.label).length;
  assert.ok(correct >= digits.test_images.length - 1, `${correct} of ${digits.test_images.length} correct`);
  assert.equal(await liveBytes(), before, 'wasm memory grew across runs');
  assert.deepEqual(errors, []);
});

/** Draws strokes (lists of [x, y] fractions of the pad) with the mouse; returns the prediction. */
async function draw(strokes) {
  await page.click('.mv-clear');
  const box = await page.locator('.mv-pad').boundingBox();
  const at = ([fx, fy]) => [box.x + fx * box.width, box.y + fy * box.height];
  for (const stroke of strokes) {
    await page.mouse.move(...at(stroke[0]));
    await page.mouse.down();
    for (const p of stroke.slice(1)) await page.mouse.move(...at(p), { steps: 4 });
    await page.mouse.up();
  }
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))); // the last stroke's update
  await page.waitForFunction(() => document.querySelector('.mv-prediction').dataset.source === 'draw' && !document.querySelector('.mv-muted'));
  return prediction('draw');
}

test('drawing on the canvas produces a prediction', async () => {
  const one = await draw([[[0.5, 0.15], [0.5, 0.85]]]);
  assert.equal(one.cls, 1, 'a drawn 1');
  assert.equal(one.logits.length, 10);
  const ring = Array.from({ length: 25 }, (_, i) => [0.5 + 0.25 * Math.sin((i / 24) * 2 * Math.PI), 0.5 - 0.35 * Math.cos((i / 24) * 2 * Math.PI)]);
  assert.equal((await draw([ring])).cls, 0, 'a drawn 0');
  const four = await draw([[[0.35, 0.15], [0.25, 0.55], [0.75, 0.55]], [[0.6, 0.3], [0.6, 0.85]]]);
  assert.equal(four.cls, 4, 'a drawn 4 (two strokes)');
  const ink = await page.evaluate(() => {
    const c = document.querySelector('.mv-preview');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let dark = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 128) dark++;
    return dark;
  });
  assert.ok(ink > 0, 'the 8x8 preview shows the drawing');
  await page.screenshot({ path: `${ARTIFACTS}model-drawing.png` });
  await page.click('.mv-clear');
  await page.waitForFunction(() => document.querySelector('.mv-muted') !== null);
  assert.deepEqual(errors, []);
});

test('latency: plain runs repeated until the clock\'s step is below 1% of their total, the mean shown', async () => {
  for (const i of [1, 2]) {
    await page.click(`.mv-thumb[data-index="${i}"]`);
    await prediction(`sample:${i}`);
    const t = await page.evaluate(() => ({ ...document.querySelector('.mv-runinfo').dataset, text: document.querySelector('.mv-latency-int8').textContent }));
    const [ms, runs, totalMs, stepMs] = [t.ms, t.runs, t.totalMs, t.stepMs].map(Number);
    assert.ok(stepMs > 0 && stepMs <= 0.1 + 1e-9, `the clock's step ${stepMs} ms`);
    assert.ok(totalMs >= 100 * stepMs, `${runs} runs over ${totalMs} ms: the step ${stepMs} ms is not below 1% of it`);
    assert.ok(Number.isInteger(runs) && runs >= 1);
    assert.ok(Math.abs(ms * runs - totalMs) < 1e-9, 'the mean of the timed runs');
    assert.equal(t.text, ms < 1 ? `${(ms * 1000).toFixed(ms < 0.1 ? 1 : 0)} µs` : `${ms.toFixed(2)} ms`);
  }
  assert.match(await page.textContent('.mv-runinfo'), /mean of \d+ runs? over [\d.]+ ms after \d+ untimed; the clock's step here is [\d.]+ µs, < 1% of that/);
  assert.deepEqual(errors, []);
});

test('a malformed or truncated model shows the loader\'s error and the page keeps working', async () => {
  const random = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) % 256));
  for (const [name, buffer] of [['random.onnx', random], ['truncated.onnx', digitsOnnx.subarray(0, digitsOnnx.length >> 1)]]) {
    await page.setInputFiles('.mv-file', { name, mimeType: 'application/octet-stream', buffer });
    await page.waitForSelector('.mv-load-error:not([hidden])');
    const message = await page.textContent('.mv-load-error');
    assert.match(message, new RegExp(`Could not use "${name}": \\w*Error: .+`), message);
    assert.match(message, /The model in use is still digits\.onnx\./);
    if (name === 'truncated.onnx') await page.screenshot({ path: `${ARTIFACTS}model-error.png` });
    assert.equal(await page.textContent('.mv-model-name'), 'digits.onnx');
    await page.click('.mv-thumb[data-index="3"]');
    const got = await prediction('sample:3');
    assert.equal(got.cls, digits.test_images[3].prediction);
    await page.click('.mv-thumb[data-index="4"]');
    assert.equal((await prediction('sample:4')).cls, digits.test_images[4].prediction);
  }
  // a valid model of another shape replaces it (the digits model is freed), and the reset button brings it back
  const loaded = await liveBytes();
  await page.setInputFiles('.mv-file', { name: 'convnet.onnx', mimeType: 'application/octet-stream', buffer: otherOnnx });
  await prediction('sample:4', 'convnet.onnx');
  assert.equal(await page.isHidden('.mv-load-error'), true);
  assert.ok((await liveBytes()) < loaded, 'the replaced model was disposed');
  await page.click('.mv-reset');
  await prediction('sample:4');
  assert.equal(await liveBytes(), loaded);
  assert.deepEqual(errors, []);
});

test('the explainer recomputes outputs of every linear layer and checks them against the kernel', async () => {
  await page.click('.mv-thumb[data-index="0"]');
  await prediction('sample:0');
  await page.waitForSelector('.mv-check');
  assert.equal(await page.getAttribute('.mv-check', 'data-match'), 'true');
  assert.match(await page.textContent('.mv-check'), /✓/);
  // the classifier's predicted class is the default element
  assert.match(await page.textContent('.mv-ex-left'), new RegExp(`fc\\[0, ${digits.test_images[0].prediction}\\]`));
  const options = await page.$$eval('.mv-ex-layer option', (os) => os.map((o) => o.value));
  assert.equal(options.length, layers.filter((l) => ['QLinearConv', 'QGemm', 'QLinearMatMul'].includes(l.opType)).length);
  for (const value of options) {
    await page.selectOption('.mv-ex-layer', value);
    for (let k = 0; k < 3; k++) {
      await page.click('.mv-explain-panel button');
      assert.equal(await page.getAttribute('.mv-check', 'data-match'), 'true', `layer ${value}`);
    }
  }
  await page.selectOption('.mv-ex-layer', options[1]);
  await page.locator('.mv-explain-panel').screenshot({ path: `${ARTIFACTS}model-explainer.png` });
  assert.deepEqual(errors, []);
});

test('the layer table sends weights and outputs to the explorer', async () => {
  await page.click('.mv-layers tr[data-layer="1"] .mv-send-weights');
  await page.waitForSelector('#explorer.active');
  await page.screenshot({ path: `${ARTIFACTS}model-to-explorer.png` });
  await page.click('nav button[data-view="model"]');
  await page.click(`.mv-layers tr[data-layer="${layers.length - 1}"] .mv-send-output`);
  await page.waitForSelector('#explorer.active');
  await page.click('nav button[data-view="model"]');
  await page.screenshot({ path: `${ARTIFACTS}model-view.png`, fullPage: true });
  assert.deepEqual(errors, []);
});

test('the explainer follows a loaded model with fused ReLU6 ranges, depthwise and grouped convolutions', async () => {
  const convnet = readFileSync(new URL('../fixtures/torch/models/convnet.onnx', import.meta.url));
  await page.setInputFiles('.mv-file', { name: 'convnet.onnx', mimeType: 'application/octet-stream', buffer: convnet });
  await prediction('sample:0', 'convnet.onnx');
  const options = await page.$$eval('.mv-ex-layer option', (os) => os.map((o) => o.value));
  assert.equal(options.length, 5);
  let clamped = 0;
  for (const value of options) {
    await page.selectOption('.mv-ex-layer', value);
    for (let k = 0; k < 8; k++) {
      await page.click('.mv-explain-panel button');
      assert.equal(await page.getAttribute('.mv-check', 'data-match'), 'true', `layer ${value}: ${await page.textContent('.mv-ex-left p')}`);
      if (/saturated/.test(await page.textContent('.mv-steps'))) clamped++;
    }
  }
  assert.ok(clamped > 0, 'some of the elements were clamped');
  await page.click('.mv-reset');
  await prediction('sample:0');
  assert.deepEqual(errors, []);
});

test("the explainer recomputes an element under another profile, equal to qwasm's kernel in that profile on the same input", async () => {
  await page.click('.mv-thumb[data-index="3"]');
  await prediction('sample:3');
  const snap = await page.evaluate(() => window.qwasmModelView.snapshot());
  const model = await qwasm.loadModel(new Uint8Array(digitsOnnx));
  try {
    const fc = model.layers.find((l) => l.opType === 'QGemm');
    // the demo numbers its own layer list: take the option that names the QGemm
    const fcOption = await page.$$eval('.mv-ex-layer option', (os) => os.filter((o) => / \(QGemm\)$/.test(o.textContent)).map((o) => o.value));
    assert.equal(fcOption.length, 1, 'one QGemm in the layer list');
    const input = snap.layers.find((l) => l.tensor === fc.inputs[0]);
    const weight = model.weight(fc.name);
    const bias = model.initializer(fc.bias.name).data;
    const x = qwasm.fromIntRepr(Uint8Array.from(input.data), input.dims, fc.input.scale, fc.input.zeroPoint, 'quint8');
    for (const semantics of ['pytorch-fbgemm', 'onnx']) {
      await page.selectOption('.mv-ex-layer', fcOption[0]);
      await page.selectOption('.mv-ex-compare', semantics);
      await page.waitForSelector(`.mv-other[data-other="${semantics}"]`);
      const coords = await page.$$eval('.mv-ex-coord', (cs) => cs.map((c) => Number(c.value)));
      const shown = Number(await page.textContent(`.mv-other[data-other="${semantics}"] .mv-eq strong`));
      // the file's int32 bias at scale in * w: ONNX adds it as it is, FBGEMM's form takes its float value
      const sw = Math.fround(Math.fround(fc.input.scale) * Math.fround(fc.weight.scales[0]));
      const b = semantics === 'onnx' ? Int32Array.from(bias) : Float32Array.from(bias, (v) => Math.fround(v * sw));
      const packed = qwasm.packLinear(weight, b, { semantics });
      const y = qwasm.linear(x, packed, { scale: fc.output.scale, zeroPoint: fc.output.zeroPoint, dtype: fc.output.dtype === 'int8' ? 'qint8' : 'quint8' });
      try {
        assert.equal(shown, y.intRepr()[coords[coords.length - 1]], `${semantics}: the explainer's ${shown} against the kernel`);
      } finally {
        y.dispose();
        packed.dispose();
      }
    }
    x.dispose();
    weight.dispose();
  } finally {
    model.dispose();
  }
  await page.selectOption('.mv-ex-compare', '');
  assert.equal(await page.$('.mv-other'), null);
  assert.deepEqual(errors, []);
});
