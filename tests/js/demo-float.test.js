// The model view's float reference in headless Chromium: the float export of the digits CNN
// (models/digits-float.onnx, tools/train_digits.py) run by onnxruntime-web in the page. For every bundled test
// image its logits are PyTorch's float logits (models/digits.json float_logits) up to float rounding, its
// prediction is their argmax, and the SQNR shown is the one computed here from the page's int8 and float
// logits. The layer table's per-layer SQNR (each int8 output tensor, dequantized, against the float activation
// the export returns under the same name) is recomputed here from the tensors the page holds. Loaded models get
// no float reference; a missing onnxruntime-web leaves the int8 side working. onnxruntime-web (15 MB, mostly its
// .wasm) is downloaded only when the user asks, on a button that says how much it weighs.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ORT_FILES } from '../../tools/demo.mjs';
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

/** The resources the page has fetched from vendor/ort/ so far. */
const ortRequests = (p = page) => p.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes('/vendor/ort/')));

test('onnxruntime-web is not downloaded until asked for; the button says how much it weighs', async () => {
  await shown('sample:0', 'off');
  assert.deepEqual((await ortRequests()).map((n) => n.replace(/.*\/vendor\/ort\//, '')), ['manifest.json']);
  const bytes = ORT_FILES.reduce((n, f) => n + statSync(new URL(`../../node_modules/onnxruntime-web/dist/${f}`, import.meta.url)).size, 0);
  const button = await page.textContent('.mv-float-load');
  assert.ok(button.includes(`${(bytes / 1e6).toFixed(1)} MB download`), `${button} (the files are ${bytes} bytes)`);
  assert.equal(await page.getAttribute('.mv-float-load', 'data-bytes'), String(bytes));
  await page.locator('.mv-output').screenshot({ path: `${ARTIFACTS}model-float-off.png` });
  await page.click('.mv-float-load');
  await shown('sample:0');
  assert.ok((await ortRequests()).some((n) => n.endsWith('ort-wasm-simd-threaded.wasm')), 'the .wasm came when asked for');
  assert.deepEqual(errors, []);
});

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

/** The layer table's SQNR cells and the page's tensors behind them (window.qwasmModelView.snapshot()). */
async function layerSqnr(p = page) {
  return p.evaluate(() => ({
    snap: window.qwasmModelView.snapshot(),
    cells: [...document.querySelectorAll('.mv-layers tbody tr')].map((tr) => {
      const td = tr.querySelector('.mv-layer-sqnr');
      return { layer: Number(tr.dataset.layer), sqnr: td?.dataset.sqnr, text: td?.textContent, tensor: td?.dataset.tensor };
    }),
    header: [...document.querySelectorAll('.mv-layers thead th')].map((th) => th.textContent),
    note: document.querySelector('.mv-layers-panel .mv-note').textContent,
  }));
}

test('per-layer SQNR int8 vs float: the page\'s values are the ones computed here from its int8 and float tensors', async () => {
  const withFloat = new Set([...digits.float_activations, 'output']); // the float export's outputs
  const lines = [];
  for (const i of [0, 3, 6, 11, 17]) {
    await page.click(`.mv-thumb[data-index="${i}"]`);
    const got = await shown(`sample:${i}`);
    const what = `test image ${i}`;
    const { snap, cells, header, note } = await layerSqnr();
    assert.equal(snap.source, `sample:${i}`);
    assert.equal(header[5], 'SQNR int8 vs float');
    assert.match(note, /SQNR int8 vs float: the layer's output for the current input/);
    const byTensor = {};
    for (const l of snap.layers) {
      const cell = cells.find((c) => c.layer === l.index);
      assert.equal(cell.tensor, l.tensor, what);
      if (!withFloat.has(l.tensor)) {
        assert.equal(l.float, null, `${what}: ${l.tensor} has no float counterpart`);
        assert.equal(cell.sqnr, '', `${what}: ${l.tensor}`);
        assert.equal(cell.text, '–', `${what}: ${l.tensor}`);
        continue;
      }
      assert.equal(l.float.length, l.data.length, `${what}: ${l.tensor}`);
      // dequantize as DequantizeLinear does (float32 product), then the SQNR in float64
      const s = Math.fround(l.scale);
      const dq = l.dtype === 'float32' ? l.data : l.data.map((q) => Math.fround(s * (q - l.zeroPoint)));
      const expected = sqnr(l.float, dq);
      assert.ok(Math.abs(l.sqnr - expected) < 1e-6, `${what}: ${l.tensor} SQNR ${l.sqnr} vs ${expected}`);
      assert.ok(Math.abs(Number(cell.sqnr) - expected) < 1e-6, `${what}: ${l.tensor} cell ${cell.sqnr}`);
      assert.equal(cell.text, `${expected.toFixed(1)} dB`, `${what}: ${l.tensor}`);
      assert.ok(expected > 15, `${what}: ${l.tensor} SQNR ${expected} dB is no quantization noise`);
      byTensor[l.tensor] = l;
    }
    assert.deepEqual(Object.keys(byTensor).sort(), [...withFloat].sort(), what);
    // the float activations are the float model's own: its input, and flatten is gap reshaped
    assert.deepEqual(Float32Array.from(byTensor.quant.float), Float32Array.from(digits.test_images[i].image), what);
    assert.deepEqual(byTensor.flatten.float, byTensor.gap.float, what);
    assert.deepEqual(byTensor.output.float, got.float, what);
    // the last quantized tensor is the logits: its SQNR is the one shown next to the prediction
    assert.ok(Math.abs(byTensor.fc.sqnr - got.sqnr) < 1e-9, `${what}: fc ${byTensor.fc.sqnr} vs logits ${got.sqnr}`);
    assert.ok(Math.abs(byTensor.output.sqnr - got.sqnr) < 1e-9, what);
    lines.push(`image ${i}: ${snap.layers.filter((l) => l.sqnr !== null).map((l) => `${l.tensor} ${l.sqnr.toFixed(1)}`).join(', ')}`);
  }
  console.log(`per-layer SQNR int8 vs float (dB)\n  ${lines.join('\n  ')}`);
  await page.click('.mv-thumb[data-index="6"]');
  await shown('sample:6');
  await page.mouse.move(0, 0);
  await page.locator('.mv-layers-panel').screenshot({ path: `${ARTIFACTS}model-sqnr.png` });
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
  const drawnLayers = await layerSqnr();
  const fc = drawnLayers.snap.layers.find((l) => l.tensor === 'fc');
  assert.ok(Math.abs(fc.sqnr - drawn.sqnr) < 1e-9, 'a drawing gets per-layer SQNR too');
  // a blank pad is no input to judge the models on: no red "classes differ", whatever the two argmaxes are
  await page.click('.mv-clear');
  await page.waitForFunction(() => document.querySelector('.mv-muted') !== null);
  await shown('draw');
  const blank = await page.evaluate(() => ({ text: document.querySelector('.mv-agreement').textContent, cls: document.querySelector('.mv-agreement').className }));
  assert.deepEqual(blank, { text: 'blank input: no verdict', cls: 'mv-agreement' });

  await page.click('.mv-thumb[data-index="2"]');
  await page.setInputFiles('.mv-file', { name: 'convnet.onnx', mimeType: 'application/octet-stream', buffer: otherOnnx });
  await page.waitForFunction(() => document.querySelector('.mv-float').dataset.model === 'convnet.onnx');
  const other = await shown('sample:2', 'none');
  assert.equal(other.float, null);
  assert.match(await page.textContent('.mv-float-prediction'), /no float reference/);
  assert.match(other.text, /No float reference for convnet\.onnx/);
  const otherLayers = await layerSqnr();
  assert.ok(!otherLayers.header.includes('SQNR int8 vs float'), 'no SQNR column without a float reference');
  assert.ok(otherLayers.cells.every((c) => c.sqnr === undefined));
  await page.locator('.mv-output').screenshot({ path: `${ARTIFACTS}model-float-none.png` });
  await page.click('.mv-reset');
  await page.waitForFunction(() => document.querySelector('.mv-float').dataset.model === 'digits.onnx');
  const back = await shown('sample:2');
  assert.equal(back.floatClass, argmax(digits.test_images[2].float_logits));
  const backLayers = await layerSqnr();
  assert.ok(Math.abs(backLayers.snap.layers.find((l) => l.tensor === 'fc').sqnr - back.sqnr) < 1e-9);
  assert.deepEqual(errors, []);
});

test('without onnxruntime-web the page starts, the int8 side works and a note says why there is no float', async () => {
  const { page: p, errors: errs } = await demo.open();
  try {
    await p.route('**/vendor/ort/**', (route) => route.fulfill({ status: 404, body: 'not found' }));
    await p.click('nav button[data-view="model"]');
    await p.waitForSelector('#model[data-ready]', { timeout: 20000 });
    await p.click('.mv-float-load');
    const got = await shown('sample:0', 'failed', p);
    assert.deepEqual(Float32Array.from(got.int8), Float32Array.from(digits.test_images[0].logits));
    assert.match(got.text, /Float reference unavailable: onnxruntime-web could not be loaded/);
    const { cells } = await layerSqnr(p);
    assert.ok(cells.every((c) => c.text === '–' && c.sqnr === ''), 'no per-layer SQNR without the float reference');
    assert.equal(await p.evaluate(() => window.qwasmDemo.ready), true);
    await p.locator('.mv-output').screenshot({ path: `${ARTIFACTS}model-float-unavailable.png` });
    // the only errors are the blocked module's own
    assert.ok(errs.every((e) => /404|ort\.wasm\.min\.mjs|module script/i.test(e)), errs.join('\n'));
  } finally {
    await p.close();
  }
});
