// init({ numThreads }) in Node: the threads build (qwasm-simd-threads.wasm, one instance per worker_threads
// worker over a shared memory) gives the same bytes as one thread, for operators split every way the drivers
// split them and for MobileNetV2 with every intermediate; where threads cannot run it falls back to one
// thread with one warning. init() is once per process, so each case runs tests/js/threads-child.mjs in a
// child process (which also shows that waiting workers never keep a process alive).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const child = new URL('./threads-child.mjs', import.meta.url).pathname;
const mobilenet = new URL('../../build/models/mobilenet_v2_int8_qdq.onnx', import.meta.url).pathname;

// The SIMD128 builds: Node 24 would take the relaxed-SIMD ones by default (tests/js/node24.test.js checks those).
async function runChild(options, env = '', model = '', feeds = '') {
  const { stdout } = await run(process.execPath, [child, JSON.stringify({ relaxedSimd: false, ...options }), env, model, feeds], { timeout: 120000 });
  return JSON.parse(stdout);
}

test('2 and 3 threads give the bytes of 1: GEMV, GEMMs by rows and columns, convolutions, depthwise, pooling, MobileNetV2', async (t) => {
  const model = existsSync(mobilenet) ? mobilenet : '';
  if (!model) t.diagnostic('build/models/mobilenet_v2_int8_qdq.onnx is missing (tools/test.sh writes it): operators only');
  const [one, two, three] = await Promise.all([1, 2, 3].map((numThreads) => runChild({ numThreads }, '', model)));
  assert.equal(one.info.threads, 1);
  assert.match(one.info.source, /qwasm-simd\.wasm$/);
  for (const r of [two, three]) {
    assert.match(r.info.source, /qwasm-simd-threads\.wasm$/);
    assert.deepEqual(r.warnings, []);
    assert.equal(r.info.threadsFallback, undefined);
    assert.deepEqual(r.checksums, one.checksums);
    if (model) {
      assert.ok(Object.keys(one.model).length > 60, 'MobileNetV2 returned its intermediates');
      assert.deepEqual(r.model, one.model);
    }
    assert.equal(r.liveBytes, 0);
  }
  assert.equal(two.info.threads, 2);
  assert.equal(three.info.threads, 3);
});

test('2 and 3 threads give the bytes of 1 for a q8 transformer: every intermediate, the attention heads in one batch', async () => {
  const dir = new URL('../fixtures/transformer/', import.meta.url).pathname;
  const [one, two, three] = await Promise.all([1, 2, 3].map((numThreads) =>
    runChild({ numThreads }, '', `${dir}tiny-bert-opset14_q8.onnx`, `${dir}tiny-bert.json`)));
  assert.ok(Object.keys(one.model).length > 100, 'the encoder returned its intermediates');
  for (const r of [two, three]) {
    assert.match(r.info.source, /qwasm-simd-threads\.wasm$/);
    assert.deepEqual(r.model, one.model);
    assert.equal(r.liveBytes, 0);
  }
});

test('numThreads 0 means one thread per core, at most 8', async () => {
  const { availableParallelism } = await import('node:os');
  const r = await runChild({ numThreads: 0 });
  assert.equal(r.info.threads, Math.min(8, availableParallelism()));
});

test('without SharedArrayBuffer, with the scalar build or a single-thread wasmBinary: one thread, one warning saying why', async () => {
  const cases = [
    [{ numThreads: 2 }, 'noSharedArrayBuffer', /SharedArrayBuffer is not available/],
    [{ numThreads: 4, simd: false }, '', /threads need the SIMD128 build/],
    [{ numThreads: 2, wasmBinaryFile: 'qwasm-simd.wasm' }, '', /not a threads build/],
    [{ numThreads: 2, wasmPaths: { simd: new URL('../../dist/qwasm-simd.wasm', import.meta.url).href, simdThreads: new URL('../../package.json', import.meta.url).href } },
      '', /qwasm-simd-threads|package\.json.*does not compile/],
  ];
  const results = await Promise.all(cases.map(([options, env]) => runChild(options, env)));
  const reference = (await runChild({})).checksums;
  for (let i = 0; i < cases.length; i++) {
    const [options, , reason] = cases[i];
    const r = results[i];
    assert.equal(r.info.threads, 1, JSON.stringify(options));
    assert.match(r.info.threadsFallback, reason);
    assert.equal(r.warnings.length, 1);
    assert.equal(r.warnings[0], `qwasm: running on 1 thread instead of ${options.numThreads}: ${r.info.threadsFallback}`);
    assert.deepEqual(r.checksums, reference, 'the fallback computes the same numbers');
  }
});

test('bad numThreads values and a second init() asking for another count throw', async () => {
  const qwasmUrl = new URL('../../js/index.js', import.meta.url).href;
  const script = `
    const qwasm = await import(${JSON.stringify(qwasmUrl)});
    const out = [];
    for (const numThreads of [-1, 1.5, 65, '2', NaN]) {
      try { await qwasm.init({ numThreads }); out.push('accepted ' + String(numThreads)); } catch (e) { out.push(e.name + ': ' + e.message); }
    }
    await qwasm.init({ numThreads: 2 });
    try { await qwasm.init({ numThreads: 3 }); out.push('accepted 3'); } catch (e) { out.push(e.message); }
    out.push(JSON.stringify((await qwasm.init({ numThreads: 2 })).threads));
    const bytes = (await import('node:fs')).readFileSync(new URL('../../dist/qwasm-simd-threads.wasm', ${JSON.stringify(import.meta.url)}));
    console.log(JSON.stringify(out));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 60000 });
  const out = JSON.parse(stdout);
  for (const line of out.slice(0, 5)) {
    assert.match(line, /^RangeError: init: numThreads must be an integer in \[0, 64\] \(0: one per core\), got /);
  }
  assert.equal(out[5], 'init: qwasm is already running on 2 thread(s); numThreads: 3 cannot apply now');
  assert.equal(out[6], '2');
});

test('the threads build given as wasmBinary runs on one thread wherever a shared memory can be made, SharedArrayBuffer or not', async () => {
  const qwasmUrl = new URL('../../js/index.js', import.meta.url).href;
  const wasm = new URL('../../dist/qwasm-simd-threads.wasm', import.meta.url).pathname;
  // An engine that makes no shared wasm memory, then one without the SharedArrayBuffer global that still makes one
  // (Chromium's pages without cross-origin isolation).
  const script = `
    const qwasm = await import(${JSON.stringify(qwasmUrl)});
    const wasmBinary = (await import('node:fs')).readFileSync(${JSON.stringify(wasm)});
    const Memory = WebAssembly.Memory;
    WebAssembly.Memory = function (d) { if (d.shared) throw new TypeError('no shared memory'); return new Memory(d); };
    try { await qwasm.init({ wasmBinary }); console.log('accepted'); } catch (e) { console.log(e.message); }
    WebAssembly.Memory = Memory;
    delete globalThis.SharedArrayBuffer;
    const info = await qwasm.init({ wasmBinary });
    console.log(info.threads, info.source, info.threadsFallback);
    const t = qwasm.quantizePerTensor([1, 2, 3], [3], 0.5, 0, 'quint8');
    console.log(Array.from(t.intRepr()).join(' '));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 60000 });
  assert.deepEqual(stdout.trim().split('\n'), [
    'qwasm: the wasm binary from wasmBinary is the threads build, which cannot run here: no shared memory',
    '1 wasmBinary undefined',
    '2 4 6',
  ]);
});
