// The demo page at a phone's width (420 px), in headless Chromium: in the model view the drawing pad and the
// prediction fit one screen together, so drawing shows its result without scrolling; every table wider than its
// panel says that it scrolls sideways (and at desktop width, where the layer table fits, says nothing).
// Screenshots: test-artifacts/demo/narrow-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ARTIFACTS, ONCE, startDemo } from './demo-page.js';

const PHONE = { width: 420, height: 800 };
let demo;
before(async () => {
  if (!ONCE) demo = await startDemo();
});
after(async () => {
  await demo?.close();
});

/** The wrappers dom.js scrollable() watches, each with whether it overflows and whether its hint shows. */
const scrollers = (page, root) => page.evaluate((sel) => [...document.querySelectorAll(`${sel} [data-scrollable]`)]
  .filter((w) => w.offsetParent !== null)
  .map((w) => ({
    table: w.querySelector('table')?.className, wide: w.scrollWidth > w.clientWidth + 1,
    hint: w.previousElementSibling?.classList.contains('scroll-hint') && !w.previousElementSibling.hidden && w.previousElementSibling.offsetParent !== null,
  })), root);

test('at 420 px the pad and the prediction share the screen: a drawn digit\'s class shows without scrolling', { skip: ONCE }, async () => {
  const { page, errors } = await demo.open('#model', { viewport: PHONE });
  try {
    await page.waitForSelector('#model[data-ready]', { timeout: 30000 });
    await page.locator('.mv-pad').scrollIntoViewIfNeeded();
    const inView = () => page.evaluate(() => ['.mv-pad', '.mv-live-class', '.mv-live-prob'].map((sel) => {
      const r = document.querySelector(sel).getBoundingClientRect();
      return { sel, inside: r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.width > 0 };
    }));
    for (const v of await inView()) assert.ok(v.inside, `${v.sel} is not on screen with the pad`);
    const box = await page.locator('.mv-pad').boundingBox();
    await page.click('.mv-clear');
    await page.mouse.move(box.x + 0.5 * box.width, box.y + 0.15 * box.height);
    await page.mouse.down();
    await page.mouse.move(box.x + 0.5 * box.width, box.y + 0.85 * box.height, { steps: 8 });
    await page.mouse.up();
    await page.waitForFunction(() => document.querySelector('.mv-prediction').dataset.source === 'draw' && !document.querySelector('.mv-muted')
      && !document.querySelector('#model').dataset.busy);
    assert.equal(await page.textContent('.mv-live-class'), '1');
    for (const v of await inView()) assert.ok(v.inside, `after drawing, ${v.sel} is not on screen with the pad`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), true, 'the page itself does not scroll sideways');
    await page.screenshot({ path: `${ARTIFACTS}narrow-model.png` });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('at 420 px every table wider than its panel says it scrolls; at 1366 px the layer table fits and says nothing', { skip: ONCE }, async () => {
  const { page, errors } = await demo.open('#model', { viewport: PHONE });
  try {
    await page.waitForSelector('#model[data-ready]', { timeout: 30000 });
    await page.waitForFunction(() => document.querySelector('.mv-check'));
    const model = await scrollers(page, '#model');
    assert.ok(model.some((s) => s.table === 'mv-layers' && s.wide), 'the layer table overflows at 420 px');
    for (const s of model) assert.equal(s.hint, s.wide, `${s.table}: hint ${s.hint}, overflowing ${s.wide}`);
    await page.locator('.mv-layers-panel').screenshot({ path: `${ARTIFACTS}narrow-layers.png` });
    await page.click('nav button[data-view="explorer"]');
    await page.waitForFunction(() => window.qwasmExplorer?.state?.version > 0);
    await page.waitForTimeout(100); // the resize observers report the view that just appeared
    const explorer = await scrollers(page, '#explorer');
    assert.ok(explorer.length > 0);
    for (const s of explorer) assert.equal(s.hint, s.wide, `${s.table}: hint ${s.hint}, overflowing ${s.wide}`);
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.click('nav button[data-view="model"]');
    await page.waitForTimeout(100);
    const wide = await scrollers(page, '#model');
    const layers = wide.find((s) => s.table === 'mv-layers');
    assert.deepEqual(layers, { table: 'mv-layers', wide: false, hint: false });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
