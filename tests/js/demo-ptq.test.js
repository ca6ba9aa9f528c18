// The demo page's "Quantize in the page" view in headless Chromium: it runs qwasm.quantizeStatic on the float
// digits CNN in the browser. The same code runs here in Node on the same training images with the same options:
// every table row (scale, zero point, SQNR) and PyTorch's qparams beside it (models/digits.onnx) are the ones
// computed here, the held-out accuracies shown are the ones computed here, the downloadable QDQ file is
// byte for byte Node's and loadModel accepts it; a rejected run is shown as an error, not swallowed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ARTIFACTS, startDemo } from './demo-page.js';
import { qwasm, setup } from './helpers.js';

const root = new URL('../../', import.meta.url);
const read = (path) => new Uint8Array(readFileSync(new URL(path, root)));
const data = JSON.parse(readFileSync(new URL('models/digits-data.json', root), 'utf8'));
const image = (s) => Float32Array.from(s, (c) => (c.charCodeAt(0) - 97) / 16);
const argmax = (a) => a.indexOf(Math.max(...a));

async function heldOut(model) {
  let right = 0;
  for (const [i, s] of data.test.images.entries()) {
    const out = await model.run({ input: image(s) });
    if (argmax(Array.from(out.output.data)) === data.test.labels[i]) right++;
  }
  return right;
}

let demo;
let page;
let errors;
let torchQ; // PyTorch's qparams by tensor name, from digits.onnx's layers
let baseline; // held-out right answers of the float model and of PyTorch's int8 model
before(async () => {
  await setup();
  const torch = await qwasm.loadModel(read('models/digits.onnx'));
  const float = await qwasm.loadModel(read('models/digits-float.onnx'));
  torchQ = new Map();
  for (const l of torch.layers) if (l.output && !torchQ.has(l.outputs[0])) torchQ.set(l.outputs[0], l.output);
  baseline = { float: await heldOut(float), torch: await heldOut(torch) };
  float.dispose();
  torch.dispose();
  demo = await startDemo();
  ({ page, errors } = await demo.open());
  await page.click('nav button[data-view="ptq"]');
  await page.waitForSelector('#ptq[data-ready]', { timeout: 20000 });
});
after(async () => {
  await page?.close();
  await demo?.close();
});

let lastProbe = null; // the last run's progress and the page's longest stall (runPanel)

/**
 * Sets the controls, clicks the button and waits for run number `runs` to finish (or fail). Meanwhile the page
 * records the progress it shows ({ stage: highest done of total }) and the longest gap between two ticks of a
 * 10 ms timer on its thread (lastProbe): the work runs in a worker, so the page keeps ticking.
 */
async function runPanel({ qconfig, count, batchSize }, status = 'done') {
  await page.selectOption('.pq-qconfig', qconfig);
  await page.selectOption('.pq-count', String(count));
  await page.fill('.pq-batch', String(batchSize));
  const before = await page.evaluate(() => {
    const probe = { stages: {}, gap: 0, last: performance.now() };
    probe.timer = setInterval(() => {
      const now = performance.now();
      probe.gap = Math.max(probe.gap, now - probe.last);
      probe.last = now;
    }, 10);
    const el = document.querySelector('.pq-progress');
    probe.observer = new MutationObserver(() => {
      const { stage, done, total } = el.dataset;
      if (stage && !el.hidden) probe.stages[stage] = `${done}/${total}`;
    });
    probe.observer.observe(el, { attributes: true, attributeFilter: ['data-done'] });
    window.ptqProbe = probe;
    return Number(document.querySelector('#ptq').dataset.runs ?? 0);
  });
  await page.click('.pq-run');
  await page.waitForFunction(([st, n]) => {
    const el = document.querySelector('#ptq');
    return el.dataset.status === st && (st !== 'done' || Number(el.dataset.runs) === n + 1);
  }, [status, before], { timeout: 60000 });
  lastProbe = await page.evaluate(() => {
    const p = window.ptqProbe;
    clearInterval(p.timer);
    p.observer.disconnect();
    return { stages: p.stages, gap: p.gap };
  });
}

function shownTable() {
  return page.evaluate(() => [...document.querySelectorAll('.pq-table tbody tr')].map((tr) => ({
    ...tr.dataset,
    op: tr.querySelector('.pq-op').textContent,
    vs: tr.querySelector('.pq-vs').textContent,
    sqnrText: tr.querySelector('.pq-sqnr .num').textContent,
    bar: tr.querySelector('.pq-sqnr .pq-bar-fill').style.width,
  })));
}

async function checkRun(options) {
  const t0 = Date.now();
  await runPanel(options);
  const pageMs = Date.now() - t0;
  const calibration = data.train.images.slice(0, options.count).map((s) => ({ input: image(s) }));
  const ours = await qwasm.quantizeStatic(read('models/digits-float.onnx'), calibration, { qconfig: options.qconfig, batchSize: options.batchSize });
  try {
    const rows = await shownTable();
    const what = `${options.qconfig}, ${options.count} images, batch ${options.batchSize}`;
    assert.deepEqual(rows.map((r) => r.tensor), ours.report.map((r) => r.tensor), what);
    for (const [i, r] of ours.report.entries()) {
      const got = rows[i];
      const at = `${what}: ${r.tensor}`;
      assert.equal(Number(got.scale), r.scale, `${at}: scale`);
      assert.equal(Number(got.zeroPoint), r.zeroPoint, `${at}: zero point`);
      assert.equal(got.op, r.producer === null ? 'graph input' : r.opType, at);
      // the same float64 sums in another engine: equal, allowing for a last-bit difference in log10
      assert.ok(Math.abs(Number(got.sqnr) - r.sqnrDb) <= 1e-9 * Math.abs(r.sqnrDb), `${at}: SQNR ${got.sqnr} vs ${r.sqnrDb}`);
      assert.equal(got.sqnrText, `${r.sqnrDb.toFixed(1)} dB`, at);
      assert.equal(parseFloat(got.bar), Number(Math.min(100, (r.sqnrDb / 60) * 100).toFixed(1)), `${at}: bar`);
      const t = torchQ.get(r.tensor);
      if (!t) {
        assert.equal(got.torchScale, '', at);
        continue;
      }
      assert.equal(Number(got.torchScale), t.scale, `${at}: PyTorch's scale`);
      assert.equal(Number(got.torchZeroPoint), t.zeroPoint, `${at}: PyTorch's zero point`);
      const same = r.scale === t.scale && r.zeroPoint === t.zeroPoint;
      assert.equal(got.same, String(same), at);
      if (same) assert.equal(got.vs, '✓ same as PyTorch', at);
      else {
        const d = Math.abs((r.scale - t.scale) / t.scale);
        assert.equal(got.vs.split(',')[0], `scale ${r.scale >= t.scale ? '+' : '−'}${d >= 1e-3 ? `${(d * 100).toFixed(1)} %` : `${d.toExponential(1)} rel.`}`, at);
      }
    }
    // held-out accuracy: the float model, the page's int8 model and PyTorch's, as computed here
    const acc = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('.pq-acc')].map((el) => [el.dataset.model,
      { right: Number(el.dataset.right), total: Number(el.dataset.total), text: el.querySelector('.pq-acc-value').textContent }])));
    const int8Right = await heldOut(ours.model);
    assert.deepEqual(Object.keys(acc), ['float', 'int8', 'torch']);
    for (const [k, right] of Object.entries({ float: baseline.float, int8: int8Right, torch: baseline.torch })) {
      assert.equal(acc[k].right, right, `${what}: ${k} accuracy`);
      assert.equal(acc[k].total, 360);
      assert.equal(acc[k].text, `${((right / 360) * 100).toFixed(1)} %`);
    }
    // the download: Node's QDQ file byte for byte, loadable by loadModel
    const link = await page.evaluate(() => {
      const a = document.querySelector('.pq-link');
      return { href: a.href, name: a.download, text: a.textContent };
    });
    assert.equal(link.name, `digits-int8-${options.qconfig}.onnx`);
    assert.equal(link.text, 'Download QDQ model (.onnx)');
    assert.match(link.href, /^blob:/);
    const bytes = new Uint8Array(await page.evaluate(async (href) => Array.from(new Uint8Array(await (await fetch(href)).arrayBuffer())), link.href));
    assert.deepEqual(bytes, new Uint8Array(ours.bytes), `${what}: the downloaded file is Node's`);
    const loaded = await qwasm.loadModel(bytes);
    try {
      assert.equal(loaded.layers.filter((l) => l.opType === 'QLinearConv').length, 4);
      assert.equal(await heldOut(loaded), int8Right);
    } finally {
      loaded.dispose();
    }
    assert.match(await page.textContent('.pq-status'), /^Done in [\d.]+ m?s: calibration, quantization and SQNR report [\d.]+ m?s, held-out accuracy [\d.]+ m?s/);
    console.log(`${what}: page ${pageMs} ms; ${rows.filter((r) => r.same === 'true').length} of ${rows.filter((r) => r.same !== '').length} qparams same as PyTorch; held-out int8 ${int8Right}/360`);
    return rows;
  } finally {
    ours.model.dispose();
  }
}

test('qnnpack on 32 training images: the table, the accuracies and the file are what quantizeStatic gives in Node', async () => {
  const rows = await checkRun({ qconfig: 'qnnpack', count: 32, batchSize: 256 });
  assert.ok(rows.length >= 10);
  assert.ok(rows.every((r) => Number(r.sqnr) > 20), 'int8 noise, not garbage');
  assert.match(await page.textContent('.pq-tensors .pq-note'), /float32 rounding noise.*different summation order/);
  assert.deepEqual(errors, []);
});

test('PyTorch\'s own settings (qnnpack, all 1437 images, batch 256): the qparams PyTorch chose, up to float32 noise', async () => {
  const rows = await checkRun({ qconfig: 'qnnpack', count: 1437, batchSize: 256 });
  const compared = rows.filter((r) => r.same !== '');
  assert.ok(compared.length >= 8);
  assert.ok(compared.filter((r) => r.same === 'true').length >= compared.length / 2, 'most are identical');
  for (const r of compared) {
    assert.equal(r.zeroPoint, r.torchZeroPoint, r.tensor);
    assert.ok(Math.abs(r.scale / r.torchScale - 1) <= 2e-6, `${r.tensor}: ${r.scale} vs ${r.torchScale}`);
  }
  assert.match(await page.textContent('.pq-tensors .pq-note'), /These are PyTorch's calibration settings/);
  // the work ran in the worker, with progress to the last image of every pass, and the page kept responding
  assert.deepEqual(lastProbe.stages, { calibrate: '1437/1437', measure: '1437/1437', accuracy: '360/360' });
  assert.ok(lastProbe.gap < 250, `the page's thread stalled for ${lastProbe.gap.toFixed(0)} ms during the calibration`);
  console.log(`calibration on 1437 images in the worker: the page's longest stall ${lastProbe.gap.toFixed(0)} ms`);
  await page.mouse.move(0, 0);
  await page.locator('#ptq').screenshot({ path: `${ARTIFACTS}ptq.png` });
  assert.deepEqual(errors, []);
});

test('x86 on 32 images in batches of 8: the options reach quantizeStatic', async () => {
  await checkRun({ qconfig: 'x86', count: 32, batchSize: 8 });
  assert.deepEqual(errors, []);
});

test('a rejected run is shown in the page and the previous results stay', async () => {
  await runPanel({ qconfig: 'qnnpack', count: 32, batchSize: 0 }, 'error');
  const err = await page.evaluate(() => {
    const el = document.querySelector('.pq-error');
    return { hidden: el.hidden, text: el.textContent };
  });
  assert.equal(err.hidden, false);
  assert.match(err.text, /Could not quantize: RangeError: quantizeStatic: batchSize must be a positive integer, got 0\. The results below are from the previous run\./);
  assert.equal(await page.evaluate(() => document.querySelector('.pq-results').hidden), false);
  // a good run clears the error
  await runPanel({ qconfig: 'qnnpack', count: 32, batchSize: 256 });
  assert.equal(await page.evaluate(() => document.querySelector('.pq-error').hidden), true);
});

test('"Use in the model view" opens the page\'s int8 model there', async () => {
  await page.click('.pq-open');
  await page.waitForFunction(() => document.querySelector('.mv-prediction')?.dataset.model === 'digits-int8-qnnpack.onnx'
    && !document.querySelector('#model').dataset.busy, null, { timeout: 10000 });
  assert.equal(await page.evaluate(() => document.querySelector('#model').classList.contains('active')), true);
  assert.equal(await page.textContent('.mv-model-name'), 'digits-int8-qnnpack.onnx');
  await page.click('nav button[data-view="ptq"]');
  assert.deepEqual(errors, []);
});
