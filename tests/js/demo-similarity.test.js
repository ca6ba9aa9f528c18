// The sentence-similarity view in headless Chromium, on the pretrained MiniLM q8 file (build/models/pretrained/,
// copied to web_demo/pretrained/ by tools/demo.mjs): sentences typed in, the similarity shown for each pair equals
// the one Node computes with qwasm, the demo's tokenizer and its pooling on the same file; onnxruntime-web on the
// same file in the page gives the same bits; the q8 file opens in the model view's transformer panel; at 420 px
// nothing runs off the page; without the files the view says how to make them and the rest of the page works.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ARTIFACTS, startDemo } from './demo-page.js';
import { qwasm, setup } from './helpers.js';
import { createTokenizer } from '../../web_demo/wordpiece.js';
import { embedSentences } from '../../web_demo/similarity-compute.js';

const DIR = new URL('../../build/models/pretrained/', import.meta.url);
const skip = existsSync(new URL('done', DIR)) ? false
  : 'build/models/pretrained is absent: tools/pretrained/make.sh makes it (tools/test.sh runs it; tests/js/pretrained-minilm.test.js says why it could not)';
const SENTENCES = ['A cat sits on the mat.', 'There is a cat sitting on a rug.', 'Stock markets fell sharply on Monday.', 'Équipe naïve, 東京 — déjà vu!'];

let demo;
before(async () => {
  await setup();
  demo = await startDemo();
});
after(async () => {
  await demo?.close();
});

async function openView(route) {
  const { page, errors } = await demo.open();
  if (route) { // a copy of the demo without the files: every request for them is a 404
    await page.route('**/pretrained/**', (r) => r.fulfill({ status: 404, body: 'not found' }));
    await page.reload();
    await page.waitForFunction(() => window.qwasmDemo !== undefined, null, { timeout: 30000 });
  }
  await page.click('nav button[data-view="similarity"]');
  await page.waitForFunction(() => document.querySelector('.ss-availability')?.dataset.available !== undefined, null, { timeout: 20000 });
  return { page, errors };
}

test('typed sentences: the similarities shown equal Node\'s qwasm ones; onnxruntime-web on the same file gives the same bits', { skip }, async () => {
  const vocab = readFileSync(new URL('vocab.txt', DIR), 'utf8');
  const model = await qwasm.loadModel(new Uint8Array(readFileSync(new URL('minilm-q8.onnx', DIR))));
  let expected;
  try {
    expected = await embedSentences(createTokenizer(vocab), SENTENCES, async (feeds) => (await model.run(feeds)).last_hidden_state);
  } finally {
    model.dispose();
  }
  const { page, errors } = await openView(false);
  try {
    assert.equal(await page.getAttribute('.ss-availability', 'data-available'), 'true');
    await page.fill('.ss-sentences', SENTENCES.join('\n'));
    await page.click('.ss-run');
    await page.waitForSelector('.ss-results:not([hidden]) .ss-cell', { timeout: 60000 });
    const shown = await page.evaluate(() => ({
      cells: [...document.querySelectorAll('.ss-results > .mv-table-wrap .ss-table tbody tr')].map((r) => [...r.querySelectorAll('.ss-cell')].map((c) => ({ value: Number(c.dataset.value), text: c.textContent }))),
      ms: Number(document.querySelector('.ss-status').dataset.ms),
      tokens: [...document.querySelectorAll('.ss-token-line')].map((li) => li.textContent),
    }));
    assert.equal(shown.cells.length, SENTENCES.length);
    shown.cells.forEach((row, i) => row.forEach((cell, j) => {
      assert.equal(cell.value, expected.similarity[i][j], `similarity ${i} ${j}`);
      assert.equal(cell.text, expected.similarity[i][j].toFixed(4));
    }));
    assert.ok(expected.similarity[0][1] > expected.similarity[0][2] + 0.2, `paraphrase ${expected.similarity[0][1]} vs unrelated ${expected.similarity[0][2]}`);
    assert.deepEqual(shown.tokens, expected.tokens.map((t) => t.tokens.join(' ')));
    assert.ok(shown.ms > 0);

    await page.click('.ss-ort-q8');
    await page.waitForSelector('.ss-ort-q8[data-same]', { timeout: 60000 });
    const ort = await page.evaluate(() => document.querySelector('.ss-reference .ss-ort-q8').dataset);
    assert.ok(Number(ort.total) > 0);
    assert.equal(ort.same, ort.total, 'onnxruntime-web in the page: every number the same bits as qwasm');
    assert.equal(Number(ort.maxDiff), 0);

    await page.setViewportSize({ width: 420, height: 900 });
    await page.waitForTimeout(100);
    await page.screenshot({ path: `${ARTIFACTS}similarity-narrow.png`, fullPage: true });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 420), 'nothing runs off a 420 px page');
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.screenshot({ path: `${ARTIFACTS}similarity.png`, fullPage: true });

    // the q8 file in the model view's transformer panel (its per-layer table of dynamic int8 products)
    await page.click('.ss-open');
    await page.waitForSelector('#model.active .tf:not([hidden]) .tf-latency', { timeout: 120000 });
    const panel = await page.evaluate(() => ({ name: document.querySelector('.mv-model-name')?.textContent, rows: document.querySelectorAll('.tf-layers tbody tr').length }));
    assert.equal(panel.name, 'minilm-q8.onnx');
    assert.ok(panel.rows >= 36, `${panel.rows} dynamic int8 products listed (6 layers x 6)`);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('without the model files the view says how to make them, and the page still works', async () => {
  const { page, errors } = await openView(true);
  try {
    const note = await page.evaluate(() => ({ text: document.querySelector('.ss-availability').textContent, available: document.querySelector('.ss-availability').dataset.available, disabled: document.querySelector('.ss-run').disabled }));
    assert.equal(note.available, 'false');
    assert.equal(note.disabled, true);
    assert.match(note.text, /not in this copy of the demo.*npm run demo.*tools\/pretrained\/make\.sh/);
    await page.click('nav button[data-view="model"]');
    await page.waitForSelector('#model[data-ready]', { timeout: 20000 });
    assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
  } finally {
    await page.close();
  }
});
