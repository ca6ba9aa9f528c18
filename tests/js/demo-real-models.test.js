// The model view with real-size models in headless Chromium: torchvision's MobileNetV2 (int8, as
// tools/export_torch.py writes it, and the QDQ file torch.onnx.export writes; both generated into build/models/
// by npm test's export step) loads with progress while the page stays responsive, runs, lists every layer,
// takes outputs of its layers apart in integers, and sends its 1.28M-element classifier weights to the explorer.
// A file that cannot be used is named in the error and leaves the current model working; a float model says so.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { singleNodeModel } from '../../tools/bench/onnx-model.mjs';
import { ARTIFACTS, ONCE, startModelView, waitForPrediction } from './demo-page.js';
import { qwasm, setup } from './helpers.js';

const root = new URL('../../', import.meta.url);
const MOBILENET = new URL('build/models/torchvision/mobilenet_v2.onnx', root);
const MOBILENET_QDQ = new URL('build/models/mobilenet_v2_int8_qdq.onnx', root);
const missing = !existsSync(MOBILENET) || !existsSync(MOBILENET_QDQ);
const skip = ONCE || (missing && 'build/models/ has no MobileNetV2: npm test exports it (tools/golden/torch_models.py, tools/bench/mobilenet_v2.py)');

let demo;
let page;
let errors;
before(async () => {
  if (skip) return;
  await setup();
  ({ demo, page, errors } = await startModelView());
});
after(async () => {
  await page?.close();
  await demo?.close();
});

test('web_demo/ spreads no array into Math.min / Math.max (a million-element weight overflows the call stack)', () => {
  const dir = new URL('web_demo/', root);
  const found = readdirSync(dir).filter((f) => f.endsWith('.js'))
    .flatMap((f) => readFileSync(new URL(f, dir), 'utf8').split('\n').map((line, i) => [`${f}:${i + 1}`, line]))
    .filter(([, line]) => /Math\.(min|max)\(\s*\.\.\./.test(line));
  assert.deepEqual(found, [], 'use model-analysis.js extent() instead');
});

/** Waits until the prediction is model `name`'s on `source` and nothing runs. */
async function prediction(name, source = 'sample:0') {
  await waitForPrediction(page, source, name, 60000);
  return page.evaluate(() => {
    const el = document.querySelector('.mv-prediction');
    return {
      cls: Number(el.dataset.class), logits: JSON.parse(el.dataset.logits), kind: el.dataset.kind,
      title: document.querySelector('.mv-pred-int8 .mv-pred-title').textContent, name: document.querySelector('.mv-model-name').textContent,
      rows: document.querySelectorAll('.mv-layers tbody tr').length, bars: document.querySelectorAll('.mv-bar').length,
      runError: document.querySelector('.mv-run-error').hidden ? null : document.querySelector('.mv-run-error').textContent,
      loadError: document.querySelector('.mv-load-error').hidden ? null : document.querySelector('.mv-load-error').textContent,
    };
  });
}

/**
 * Loads `buffer` as file `name` through the file input while the page records its load progress phases and the
 * longest gap between two ticks of a 10 ms timer on its main thread (a blocked page stops ticking). The page
 * fetches the bytes itself first: playwright's setInputFiles decodes a large file's base64 on the page's thread.
 */
async function loadFile(name, buffer) {
  await page.route(`**/test-files/${name}`, (route) => route.fulfill({ body: buffer, contentType: 'application/octet-stream' }));
  await page.evaluate(async (file) => {
    const blob = await (await fetch(`/test-files/${file}`)).blob();
    const probe = { phases: [], gap: 0, last: performance.now() };
    probe.timer = setInterval(() => {
      const now = performance.now();
      probe.gap = Math.max(probe.gap, now - probe.last);
      probe.last = now;
    }, 10);
    probe.observer = new MutationObserver(() => {
      const phase = document.querySelector('.mv-progress').dataset.phase;
      if (phase && probe.phases.at(-1) !== phase) probe.phases.push(phase);
    });
    probe.observer.observe(document.querySelector('.mv-progress'), { attributes: true, attributeFilter: ['data-phase'] });
    window.loadProbe = probe;
    const input = document.querySelector('.mv-file');
    const files = new DataTransfer();
    files.items.add(new File([blob], file));
    input.files = files.files;
    input.dispatchEvent(new Event('change'));
  }, name);
}

async function stopProbe() {
  return page.evaluate(() => {
    const p = window.loadProbe;
    clearInterval(p.timer);
    p.observer.disconnect();
    return { phases: p.phases, gap: p.gap };
  });
}

test('MobileNetV2 int8 loads in the worker with progress, the page stays responsive, and it runs with all its layers', { skip }, async () => {
  const bytes = readFileSync(MOBILENET);
  const model = await qwasm.loadModel(new Uint8Array(bytes));
  const layers = model.layers.length;
  model.dispose();
  await loadFile('mobilenet_v2.onnx', bytes);
  const got = await prediction('mobilenet_v2.onnx');
  const probe = await stopProbe();
  assert.equal(got.loadError, null);
  assert.equal(got.runError, null);
  assert.equal(got.name, 'mobilenet_v2.onnx');
  assert.equal(got.kind, 'int8');
  assert.equal(got.logits.length, 1000);
  assert.equal(got.bars, 10, 'the 10 most likely of 1000 classes');
  assert.equal(got.rows, layers);
  assert.deepEqual(probe.phases, ['decode', 'prepare', 'describe'], 'the file is read by the page: no download phase');
  assert.ok(probe.gap < 250, `the page's thread stalled for ${probe.gap.toFixed(0)} ms while MobileNetV2 loaded`);
  console.log(`MobileNetV2 (${(bytes.length / 1e6).toFixed(1)} MB) loaded in the worker: phases ${probe.phases.join(', ')}; longest stall of the page's thread ${probe.gap.toFixed(0)} ms`);
  await page.screenshot({ path: `${ARTIFACTS}model-mobilenet.png`, fullPage: true });
  assert.deepEqual(errors, []);
});

test('MobileNetV2: the explainer takes apart outputs of its first conv, a depthwise conv and the classifier', { skip }, async () => {
  const options = await page.$$eval('.mv-ex-layer option', (os) => os.map((o) => ({ value: o.value, text: o.textContent })));
  assert.equal(options.length, 53, '52 QLinearConv and a QGemm');
  const depthwise = options.find((o, i) => i > 0 && /QLinearConv/.test(o.text));
  for (const o of [options[0], depthwise, options.at(-1)]) {
    await page.selectOption('.mv-ex-layer', o.value);
    for (let k = 0; k < 3; k++) {
      await page.click('.mv-explain-panel button');
      assert.equal(await page.getAttribute('.mv-check', 'data-match'), 'true', `${o.text}: ${await page.textContent('.mv-ex-left p')}`);
    }
  }
  assert.deepEqual(errors, []);
});

test('MobileNetV2: the classifier\'s 1.28M weights go to the explorer', { skip }, async () => {
  const last = await page.$$eval('.mv-layers tbody tr', (trs) => trs.filter((tr) => tr.querySelector('.mv-send-weights')).at(-1).dataset.layer);
  await page.click(`.mv-layers tr[data-layer="${last}"] .mv-send-weights`);
  await page.waitForSelector('#explorer.active');
  await page.waitForFunction(() => window.qwasmExplorer?.state?.numel === 1280 * 1000, null, { timeout: 30000 });
  const state = await page.evaluate(() => ({ error: window.qwasmExplorer.state.error, dims: window.qwasmExplorer.state.dims }));
  assert.equal(state.error, null);
  assert.deepEqual(state.dims, [1000, 1280]);
  await page.click('nav button[data-view="model"]');
  assert.deepEqual(errors, []);
});

test('a file that cannot be used is named in the error; the current model stays and runs', { skip }, async () => {
  const truncated = readFileSync(MOBILENET).subarray(0, 2e6);
  const twoInputs = Buffer.from(singleNodeModel({
    opType: 'Add', opset: 13,
    inputs: [{ name: 'a', elemType: 'FLOAT', dims: [1, 64] }, { name: 'b', elemType: 'FLOAT', dims: [1, 64] }],
    outputs: [{ name: 'y', elemType: 'FLOAT', dims: [1, 64] }],
  }));
  for (const [name, buffer, why] of [['half.onnx', truncated, /ModelFormatError/], ['two-inputs.onnx', twoInputs, /this model has 2 inputs/]]) {
    await page.setInputFiles('.mv-file', { name, mimeType: 'application/octet-stream', buffer });
    await page.waitForSelector('.mv-load-error:not([hidden])');
    const message = await page.textContent('.mv-load-error');
    assert.match(message, new RegExp(`^Could not use "${name}": `), message);
    assert.match(message, why, message);
    assert.match(message, /The model in use is still mobilenet_v2\.onnx\.$/, message);
    assert.equal(await page.textContent('.mv-model-name'), 'mobilenet_v2.onnx');
    await page.click('.mv-thumb[data-index="5"]');
    const got = await prediction('mobilenet_v2.onnx', 'sample:5');
    assert.equal(got.runError, null);
    assert.equal(got.logits.length, 1000);
    await page.click('.mv-thumb[data-index="0"]');
    await prediction('mobilenet_v2.onnx');
  }
  assert.deepEqual(errors, []);
});

test('the QDQ MobileNetV2 loads and runs; the digits float model is labelled float; memory is freed', { skip }, async () => {
  await loadFile('mobilenet_v2_int8_qdq.onnx', readFileSync(MOBILENET_QDQ));
  const qdq = await prediction('mobilenet_v2_int8_qdq.onnx');
  await stopProbe();
  assert.equal(qdq.kind, 'int8');
  assert.equal(qdq.logits.length, 1000);
  assert.equal(qdq.runError, null);
  const float = readFileSync(new URL('models/digits-float.onnx', root));
  await page.setInputFiles('.mv-file', { name: 'digits-float.onnx', mimeType: 'application/octet-stream', buffer: float });
  const f = await prediction('digits-float.onnx');
  assert.equal(f.kind, 'float');
  assert.equal(f.title, 'float · qwasm');
  assert.equal(await page.textContent('.mv-kind'), 'float');
  assert.match(await page.textContent('.mv-model-meta'), /a float model: no layer computes in integers/);
  assert.match(await page.textContent('.mv-live-title'), /^float prediction$/);
  await page.click('.mv-reset');
  const back = await prediction('digits.onnx');
  assert.equal(back.kind, 'int8');
  const stats = await page.evaluate(() => window.qwasmModelView.memoryStats());
  assert.equal(stats.models, 1, 'the worker holds only the current model');
  assert.ok(stats.liveBytes < 1e6, `${stats.liveBytes} bytes still live: the MobileNetV2s were not freed`);
  assert.deepEqual(errors, []);
});
