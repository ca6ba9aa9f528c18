// The faces view in headless Chromium, on the committed face expression model (models/faces/, copied to
// web_demo/models/faces/ by tools/demo.mjs): for the default photo, and for a square given by a deep link, the
// probabilities shown are those Node's qwasm computes from the same 112x112 pixels (read back from the page's crop
// canvas) with the same int8 and float files, bit for bit in the logits (the probabilities, a float64 softmax in
// JS, to 1e-12: the engines' Math.exp may differ in the last bit); onnxruntime-web in the page gives the same
// int8 bits; a photo picked by the user is classified; the int8 file opens in the model view with its layers and
// weight scales; its files are fetched only when the view is first shown; at 420 px nothing runs off the page and the prediction is on the first screen with the photo.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ARTIFACTS, ONCE, startDemo } from './demo-page.js';
import { qwasm, setup } from './helpers.js';
import { CLASSES, INPUT_DIMS, faceInput, softmax } from '../../web_demo/faces-compute.js';

const root = new URL('../../', import.meta.url);
const read = (f) => new Uint8Array(readFileSync(new URL(`models/faces/${f}`, root)));
const u32 = (xs) => Array.from(new Uint32Array(Float32Array.from(xs).buffer));

let demo;
let models;
before(async () => {
  if (ONCE) return;
  await setup();
  models = { int8: await qwasm.loadModel(read('expression-int8.onnx')), float: await qwasm.loadModel(read('expression-float.onnx')) };
  demo = await startDemo();
});
after(async () => {
  models?.int8.dispose();
  models?.float.dispose();
  await demo?.close();
});

/** Opens the faces view (query: the address's hash part) and waits for its first prediction. */
async function openFaces(query = '#faces', viewport) {
  const { page, errors } = await demo.open(query, viewport ? { viewport } : undefined);
  if (!query.startsWith('#faces')) {
    await page.waitForSelector('#model[data-ready]', { state: 'attached', timeout: 20000 });
    const fetched = await page.evaluate(() => performance.getEntriesByType('resource').map((r) => r.name).filter((n) => n.includes('models/faces/')));
    assert.deepEqual(fetched, [], 'the face model is not fetched before its view is shown');
    await page.click('nav button[data-view="faces"]');
  }
  await page.waitForSelector('#faces[data-ready="true"] .fc-prediction[data-logits]', { timeout: 60000 });
  return { page, errors };
}

/** What the page shows next to what Node's qwasm computes for the pixels of the page's crop canvas. */
async function shownAndExpected(page) {
  const shown = await page.evaluate(() => {
    const crop = document.querySelector('.fc-crop');
    const el = document.querySelector('.fc-prediction');
    return {
      pixels: Array.from(crop.getContext('2d').getImageData(0, 0, 112, 112).data),
      logits: JSON.parse(el.dataset.logits), floatLogits: JSON.parse(el.dataset.floatLogits), label: el.dataset.label,
      p8: [...el.querySelectorAll('.fc-p8')].map((td) => ({ value: Number(td.dataset.value), text: td.textContent })),
      pf: [...el.querySelectorAll('.fc-pf')].map((td) => Number(td.dataset.value)),
      ms: Number(document.querySelector('.fc-status').dataset.ms),
      hash: location.hash,
    };
  });
  const feeds = { input: { data: faceInput(Uint8Array.from(shown.pixels)), dims: INPUT_DIMS } };
  const int8 = Array.from((await models.int8.run(feeds)).logits.data);
  const float = Array.from((await models.float.run(feeds)).logits.data);
  return { shown, int8, float };
}

function assertSame({ shown, int8, float }) {
  assert.deepEqual(u32(shown.logits), u32(int8), 'int8 logits: the page\'s qwasm vs Node\'s, bit for bit');
  assert.deepEqual(u32(shown.floatLogits), u32(float), 'float logits: the page\'s qwasm vs Node\'s');
  // the softmax is JS float64 in each engine: the browser's Math.exp may differ from Node's in the last bit
  const close = (a, b) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));
  const p = softmax(Float32Array.from(int8));
  shown.p8.forEach((cell, i) => {
    assert.ok(close(cell.value, p[i]), `int8 probability ${i}: ${cell.value} vs ${p[i]}`);
    assert.equal(cell.text, p[i].toFixed(4));
  });
  softmax(Float32Array.from(float)).forEach((v, i) => assert.ok(close(shown.pf[i], v), `float probability ${i}`));
  assert.equal(shown.label, CLASSES[p.indexOf(Math.max(...p))]);
  assert.ok(shown.ms > 0);
}

test('the default photo: the page shows what Node\'s qwasm computes for its crop; onnxruntime-web gives the same bits; the model view shows its layers', { skip: ONCE }, async () => {
  const { page, errors } = await openFaces('', undefined);
  try {
    const result = await shownAndExpected(page);
    assertSame(result);
    assert.equal(result.shown.label, 'happy', 'the astronaut smiles');
    assert.equal(result.shown.hash, '#faces');
    await page.screenshot({ path: `${ARTIFACTS}faces.png`, fullPage: true });

    await page.click('.fc-ort');
    await page.waitForSelector('.fc-ort-result[data-same]', { timeout: 60000 });
    assert.equal(await page.getAttribute('.fc-ort-result', 'data-same'), 'true');

    await page.click('.fc-open');
    await page.waitForFunction(() => document.querySelector('#model').classList.contains('active')
      && document.querySelector('.mv-model-name')?.textContent === 'expression-int8.onnx'
      && document.querySelectorAll('.mv-layers tbody tr').length > 0, null, { timeout: 60000 });
    const layers = await page.evaluate(() => [...document.querySelectorAll('.mv-layers tbody tr')].map((r) => [...r.children].map((c) => c.textContent)));
    const convs = layers.filter((cells) => cells[2].startsWith('QLinearConv'));
    assert.equal(convs.length, 31);
    assert.ok(convs.every((cells) => /per-channel/.test(cells.join(' '))), 'every convolution lists its per-channel int8 weights');
    assert.ok(convs.every((cells) => /\d\.\d+e?-?\d* … \d/.test(cells.join(' '))), 'and the range of their scales');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a deep link restores the square; moving it with the slider updates the link and the prediction', { skip: ONCE }, async () => {
  const { page, errors } = await openFaces('#faces?face=30,20,160');
  try {
    const linked = await shownAndExpected(page);
    assertSame(linked);
    assert.equal(linked.shown.hash, '#faces?face=30%2C20%2C160');
    await page.fill('.fc-size', '40');
    await page.dispatchEvent('.fc-size', 'input');
    await page.waitForFunction((before) => document.querySelector('.fc-prediction').dataset.logits !== before && !location.hash.includes('160'), JSON.stringify(linked.shown.logits), { timeout: 30000 });
    await page.waitForTimeout(300); // the last of the runs the change queued
    const moved = await shownAndExpected(page);
    assertSame(moved);
    assert.match(moved.shown.hash, /^#faces\?face=\d+%2C\d+%2C\d+$/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a photo the user picks is classified; at 420 px nothing runs off the page, the prediction is on the first screen', { skip: ONCE }, async () => {
  const { page, errors } = await openFaces('#faces', { width: 420, height: 900 });
  try {
    const before = await page.getAttribute('.fc-prediction', 'data-logits');
    // the user's photo: the default one again, as a file, so only the square differs: centred, half the side
    await page.setInputFiles('.fc-file', new URL('models/faces/astronaut-face.png', root).pathname);
    await page.waitForFunction((b) => document.querySelector('.fc-prediction').dataset.logits !== b, before, { timeout: 30000 });
    await page.waitForTimeout(300);
    assertSame(await shownAndExpected(page));
    assert.equal(await page.evaluate(() => location.hash), '#faces');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 420), 'nothing runs off a 420 px page');
    const labelBottom = await page.evaluate(() => document.querySelector('.fc-label').getBoundingClientRect().bottom + window.scrollY);
    assert.ok(labelBottom <= 900, `the prediction is on the first screen with the photo (its bottom at ${labelBottom} px)`);
    await page.screenshot({ path: `${ARTIFACTS}faces-narrow.png`, fullPage: true });
    // not an image: a named error, and the previous photo stays
    await page.setInputFiles('.fc-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a photo') });
    await page.waitForSelector('.fc-error:not([hidden])', { timeout: 10000 });
    assert.match(await page.textContent('.fc-error'), /Could not read notes\.txt as an image/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
