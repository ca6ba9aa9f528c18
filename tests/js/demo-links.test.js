// Deep links into the demo page, in headless Chromium: the address names the view on screen and its settings
// (#explorer?dtype=qint8&…, #model?sample=3, #ptq?qconfig=x86&count=32); opening such an address restores them,
// changing a setting updates it, and the back button returns to the previous view.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ONCE, startDemo } from './demo-page.js';

let demo;
before(async () => {
  if (!ONCE) demo = await startDemo();
});
after(async () => {
  await demo?.close();
});

const hash = (page) => page.evaluate(() => decodeURIComponent(location.hash));

test('#explorer?…: the explorer opens with the linked settings, and the address follows its controls', { skip: ONCE }, async () => {
  const { page, errors } = await demo.open('#explorer?source=synthetic&dist=laplace&dtype=qint8&scheme=symmetric&observer=histogram&bits=6');
  try {
    await page.waitForFunction(() => window.qwasmExplorer?.state?.version > 0);
    const s = await page.evaluate(() => window.qwasmExplorer.state.settings);
    assert.deepEqual([s.source, s.dist, s.dtype, s.scheme, s.observer, s.bits], ['synthetic', 'laplace', 'qint8', 'symmetric', 'histogram', 6]);
    assert.equal(await page.evaluate(() => document.querySelector('#explorer').classList.contains('active')), true);
    await page.selectOption('select[name="rounding"]', 'onnx');
    assert.equal(await hash(page), '#explorer?source=synthetic&dist=laplace&dtype=qint8&bits=6&scheme=symmetric&observer=histogram&rounding=onnx');
    // the same address in a new page gives the same numbers
    const link = await page.evaluate(() => location.href);
    const again = await demo.open(link.slice(link.indexOf('#')));
    await again.page.waitForFunction(() => window.qwasmExplorer?.state?.version > 0);
    const [a, b] = await Promise.all([page, again.page].map((p) => p.evaluate(() => {
      const { settings, scales, zeroPoints } = window.qwasmExplorer.state;
      return { settings, scales, zeroPoints };
    })));
    assert.deepEqual(b, a);
    await again.page.close();
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('#model?sample=3 and #ptq?…: the view on screen, its test image or its options; the back button returns', { skip: ONCE }, async () => {
  const { page, errors } = await demo.open('#model?sample=3');
  try {
    await page.waitForSelector('#model.active[data-ready]', { timeout: 30000 });
    await page.waitForFunction(() => document.querySelector('.mv-prediction')?.dataset.source === 'sample:3');
    await page.click('.mv-thumb[data-index="5"]');
    await page.waitForFunction(() => decodeURIComponent(location.hash) === '#model?sample=5');
    await page.click('nav button[data-view="ptq"]');
    assert.equal(await hash(page), '#ptq');
    await page.waitForSelector('#ptq[data-ready]');
    await page.selectOption('.pq-qconfig', 'x86');
    await page.selectOption('.pq-count', '32');
    assert.equal(await hash(page), '#ptq?qconfig=x86&count=32');
    await page.goBack();
    await page.waitForFunction(() => document.querySelector('#model').classList.contains('active'));
    assert.equal(await hash(page), '#model?sample=5');
    const linked = await demo.open('#ptq?qconfig=x86&count=32&batch=8');
    await linked.page.waitForSelector('#ptq.active[data-ready]');
    assert.deepEqual(await linked.page.evaluate(() => [document.querySelector('.pq-qconfig').value, document.querySelector('.pq-count').value,
      document.querySelector('.pq-batch').value]), ['x86', '32', '8']);
    await linked.page.close();
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
