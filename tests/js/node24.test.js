// Node 24 (V8 13): qwasm probes relaxed SIMD there by default, as in browsers (js/runtime/wasm.js). Node 20, which
// runs the rest of the suite, keeps SIMD128, so these tests run tests/js/threads-child.mjs under the Node 24 binary
// that tools/setup.sh puts in build/node24 and compare its bytes (operators, MobileNetV2's and a q8 transformer's
// every intermediate tensor) with the SIMD128 bytes of the Node running the suite, which the golden tests check
// against PyTorch and onnxruntime. V8 first compiles wasm with its baseline compiler (Liftoff) and optimizes hot
// functions later (TurboFan); Node 20's Liftoff computed the relaxed dot product wrongly, so each compiler runs alone
// here too.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const node24 = `${root}build/node24/bin/node`;
const child = `${root}tests/js/threads-child.mjs`;
const mobilenet = `${root}build/models/mobilenet_v2_int8_qdq.onnx`;
const bert = [`${root}tests/fixtures/transformer/tiny-bert-opset14_q8.onnx`, `${root}tests/fixtures/transformer/tiny-bert.json`];
const TIERS = { default: [], 'Liftoff only': ['--liftoff-only'], 'TurboFan only': ['--no-liftoff'] };

async function runChild(node, flags, options, model = []) {
  const { stdout } = await run(node, [...flags, child, JSON.stringify(options), '', ...model], { timeout: 300000, maxBuffer: 1 << 24 });
  return JSON.parse(stdout);
}

/** Runs the jobs two at a time (the machines have two cores). */
async function pooled(jobs) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

// tools/setup.sh installs Node 24 on x86-64 and arm64 Linux; elsewhere these tests cannot run.
const skip = existsSync(node24) ? false : `${node24} is missing (tools/setup.sh installs it on x86-64 and arm64 Linux)`;

test('Node 24 runs the relaxed kernels where its probe passes, with the SIMD128 bytes under each compiler', { skip }, async (t) => {
  const { stdout: probeOut } = await run(node24, ['--input-type=module', '-e',
    `import { relaxedDotSemantics } from '${root}js/runtime/relaxed.js'; console.log(JSON.stringify(relaxedDotSemantics()));`]);
  const probe = JSON.parse(probeOut);
  t.diagnostic(`Node 24's relaxed dot product on this machine: ${probe.semantics ?? probe.reason}`);
  const models = [...(existsSync(mobilenet) ? [[mobilenet]] : []), bert];
  if (!existsSync(mobilenet)) t.diagnostic('build/models/mobilenet_v2_int8_qdq.onnx is missing (tools/test.sh writes it)');
  const jobs = [];
  for (const model of models) {
    jobs.push(() => runChild(process.execPath, [], { relaxedSimd: false }, model));
    for (const flags of Object.values(TIERS)) jobs.push(() => runChild(node24, flags, {}, model));
  }
  const results = await pooled(jobs);
  const perModel = Object.keys(TIERS).length + 1;
  for (let m = 0; m < models.length; m++) {
    const [reference, ...tiers] = results.slice(m * perModel, (m + 1) * perModel);
    assert.equal(reference.info.isa, 'wasmsimd');
    assert.ok(Object.keys(reference.model).length > 10);
    Object.keys(TIERS).forEach((tier, i) => {
      const r = tiers[i];
      const what = `${models[m][0].split('/').pop()}, Node 24, ${tier}`;
      if (probe.semantics) {
        assert.equal(r.info.isa, 'wasmrelaxed', what);
        assert.equal(r.info.relaxed, probe.semantics, what);
      } else {
        assert.equal(r.info.isa, 'wasmsimd', what);
      }
      assert.deepEqual(r.warnings, [], what);
      assert.deepEqual(r.checksums, reference.checksums, what);
      assert.deepEqual(r.model, reference.model, what);
      assert.equal(r.liveBytes, 0, what);
    });
  }
});

test('Node 24 on two threads: the relaxed threads build gives the same bytes', { skip }, async () => {
  const [reference, two] = await pooled([
    () => runChild(process.execPath, [], { relaxedSimd: false }, bert),
    () => runChild(node24, [], { numThreads: 2 }, bert),
  ]);
  assert.equal(two.info.threads, 2);
  assert.deepEqual(two.warnings, []);
  assert.deepEqual(two.checksums, reference.checksums);
  assert.deepEqual(two.model, reference.model);
});
