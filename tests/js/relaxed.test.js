// Relaxed SIMD in Node: qwasm-relaxed-threads.wasm (built by clang 16 / wasm-ld 16) and the probe that decides
// whether its kernels may run (js/runtime/relaxed.js). Node 20 compiles relaxed SIMD only with
// --experimental-wasm-relaxed-simd, its baseline compiler computes the dot product wrongly, and this machine's
// x86 lowering saturates pairs of products: the probe refuses all of it. The kernels themselves are checked by
// forcing their usdot semantics on 7-bit activations (which every semantics of the instruction multiplies
// exactly) against the SIMD128 build, with the optimizing compiler only; and by showing that full bytes then
// differ, i.e. that the probe is what keeps the results exact. (Both semantics are emulated in the native C tests.)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { probesRelaxedByDefault } from './helpers.js';

const run = promisify(execFile);
const child = new URL('./threads-child.mjs', import.meta.url).pathname;
const RELAXED_FLAGS = ['--experimental-wasm-relaxed-simd', '--no-liftoff'];
// Node 20's flag and lowering; Node 24 runs relaxed SIMD without a flag (tests/js/node24.test.js).
const NODE20 = { skip: probesRelaxedByDefault && 'Node 20 only: tests/js/node24.test.js covers Node 24' };

async function runChild(options, env = '', flags = []) {
  const { stdout } = await run(process.execPath, [...flags, child, JSON.stringify(options), env], { timeout: 120000 });
  return JSON.parse(stdout);
}

test('the relaxed kernels give the SIMD128 bytes on 7-bit activations, on 1 and 2 threads', NODE20, async () => {
  const [reference, one, two] = await Promise.all([
    runChild({}, 'sevenBit'),
    runChild({ relaxedSimd: true }, 'forceUsdot sevenBit', RELAXED_FLAGS),
    runChild({ relaxedSimd: true, numThreads: 2 }, 'forceUsdot sevenBit', RELAXED_FLAGS),
  ]);
  for (const [r, threads] of [[one, 1], [two, 2]]) {
    assert.deepEqual(r.info, {
      isa: 'wasmrelaxed', simd: true, source: new URL('../../dist/qwasm-relaxed-threads.wasm', import.meta.url).href,
      threads, relaxed: 'usdot',
    });
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(r.checksums, reference.checksums);
    assert.equal(r.liveBytes, 0);
  }
});

test('full bytes through this engine\'s relaxed dot differ: the probe refuses it, and one warning says why', NODE20, async () => {
  const [reference, forced, probed, unflagged, auto] = await Promise.all([
    runChild({}),
    runChild({ relaxedSimd: true }, 'forceUsdot', RELAXED_FLAGS),
    runChild({ relaxedSimd: true }, '', RELAXED_FLAGS),
    runChild({ relaxedSimd: true }),
    runChild({}, '', RELAXED_FLAGS),
  ]);
  const gemms = Object.keys(reference.checksums).filter((name) => !name.startsWith('depthwise') && !name.includes('Pool'));
  assert.ok(gemms.every((name) => forced.checksums[name] !== reference.checksums[name]), 'the forced kernels saturate');
  assert.equal(probed.info.isa, 'wasmsimd');
  assert.equal(probed.info.relaxed, undefined);
  assert.match(probed.info.relaxedFallback, /^its relaxed dot product is not exact for full bytes \(got /);
  assert.deepEqual(probed.warnings, [`qwasm: relaxed SIMD is not used: ${probed.info.relaxedFallback}`]);
  assert.deepEqual(probed.checksums, reference.checksums);
  assert.equal(unflagged.info.relaxedFallback, 'this engine does not support relaxed SIMD');
  assert.deepEqual(unflagged.checksums, reference.checksums);
  // Default: Node keeps SIMD128 without a word.
  assert.equal(auto.info.isa, 'wasmsimd');
  assert.equal(auto.info.relaxedFallback, undefined);
  assert.deepEqual(auto.warnings, []);
});

test('relaxedSimd accepts true, false and \'auto\' only', async () => {
  const qwasmUrl = new URL('../../js/index.js', import.meta.url).href;
  const script = `const qwasm = await import(${JSON.stringify(qwasmUrl)});
    try { await qwasm.init({ relaxedSimd: 'yes' }); console.log('accepted'); } catch (e) { console.log(e.name + ': ' + e.message); }`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 60000 });
  assert.equal(stdout.trim(), "TypeError: init: relaxedSimd must be true, false or 'auto', got yes");
});
