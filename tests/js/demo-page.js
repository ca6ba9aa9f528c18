// Shared by the demo tests: serves web_demo/ (prepared by tools/demo.mjs, as `npm run demo` does) and
// opens it in Debian's headless Chromium. Screenshots go to test-artifacts/demo/.
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { prepareDemo } from '../../tools/demo.mjs';
import { serve } from '../../tools/serve.mjs';

const CHROMIUM = process.env.QWASM_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
export const ARTIFACTS = new URL('../../test-artifacts/demo/', import.meta.url).pathname;
/**
 * A skip reason for the scalar pass of npm test (QWASM_SIMD=0): Chromium picks its build itself, so a page test
 * checks nothing new there. The heavier demo suites run once.
 */
export const ONCE = process.env.QWASM_SIMD === '0' && 'the page runs the build Chromium picks, whatever QWASM_SIMD says: once is enough';

/**
 * Starts server and browser; returns { open(query, { viewport }) -> { page, errors }, close() }. isolate: false
 * serves the page without the cross-origin isolation headers, as a static host that cannot send them would.
 */
export async function startDemo({ isolate = true } = {}) {
  const root = prepareDemo();
  mkdirSync(ARTIFACTS, { recursive: true });
  const { server, url } = await serve(root, 0, '127.0.0.1', { isolate });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return {
    url,
    async open(query = '', { viewport = { width: 1366, height: 900 } } = {}) {
      const page = await browser.newPage({ viewport });
      const errors = [];
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
      await page.goto(`${url}${query}`);
      await page.waitForFunction(() => window.qwasmDemo !== undefined, null, { timeout: 30000 });
      return { page, errors };
    },
    async close() {
      await browser.close();
      server.close();
    },
  };
}

/** Starts the demo (startDemo's options) and opens its Model view, ready: { demo, page, errors }. */
export async function startModelView(options) {
  const demo = await startDemo(options);
  const { page, errors } = await demo.open();
  await page.click('nav button[data-view="model"]');
  await page.waitForSelector('#model[data-ready]', { timeout: 20000 });
  return { demo, page, errors };
}

/** Waits until the model view shows model `model`'s result for `source` ('draw' or 'sample:i') and no run is in flight. */
export function waitForPrediction(page, source, model = 'digits.onnx', timeout = 10000) {
  return page.waitForFunction(([s, n]) => {
    const el = document.querySelector('.mv-prediction');
    return el?.dataset.source === s && el.dataset.model === n && !document.querySelector('#model').dataset.busy;
  }, [source, model], { timeout });
}
