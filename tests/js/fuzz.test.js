// The structure-aware model fuzzer (tools/fuzz/) as a test: a seeded run of a few thousand cases over the bundled
// models, the ONNX fixtures, the single-node zoo and the torchvision files npm test exports, each case loaded, run
// twice and disposed in a worker process with a time and memory limit. Every case must end in a correct run or a
// named error: no raw error, hang, trap, blow-up, leak or mismatch (two runs, or the SIMD128 and scalar builds, giving
// different outputs). The harness itself is checked with workers that hang, grow, die and disagree. A longer run: node tools/fuzz/fuzz.mjs --cases 50000 --seed N.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ModelFormatError, UnsupportedError } from '../../js/errors.js';
import { classifyError } from '../../tools/fuzz/classify.mjs';
import { FAILURES, corpus, fuzz, replay } from '../../tools/fuzz/runner.mjs';
import { encodeOnnx } from '../../js/model/onnx.js';
import { operatorKey, registeredOperators } from '../../js/model/operators/registry.js';
import { ARRAYS, ZOO_NAMES, zooModel } from '../../tools/fuzz/seeds.mjs';
import { qwasm, setup, wantSimd } from './helpers.js';

before(setup);

const CASES = Number(process.env.QWASM_FUZZ_CASES ?? 3000);
const SEED = Number(process.env.QWASM_FUZZ_SEED ?? 20261124);

test(`${CASES} mutated models (seed ${SEED}): every case runs or fails with a named error, nothing leaks`, async (t) => {
  const files = await corpus();
  assert.ok(files.length > 60, `${files.length} seed files`);
  const { counts, failures, ms } = await fuzz({ seed: SEED, cases: CASES, files, workers: 2, simd: wantSimd !== false });
  t.diagnostic(`${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')} in ${(ms / 1000).toFixed(1)} s`);
  const show = failures.slice(0, 10).map((f) => `${f.outcome}: ${f.file.split('/').slice(-2).join('/')} case seed ${f.seed} (${f.description}): ${f.message.split('\n')[0]}`);
  assert.deepEqual(show, [], `${failures.length} failing cases; reproduce one with node tools/fuzz/fuzz.mjs --repro <file> <case seed>`);
  assert.ok(counts.ok > CASES / 10 && counts.named > CASES / 3, 'the mutations reach both working and failing models');
});

test('the zoo has a valid single-node model for every registered operator', async () => {
  const covered = new Set();
  for (const name of ZOO_NAMES) {
    const graph = zooModel(name);
    for (const node of graph.nodes) covered.add(operatorKey(node));
    // unmutated, each seed loads and runs (else the fuzzer's mutations start from an error)
    const model = await qwasm.loadModel(await encodeOnnx(graph));
    try {
      const feeds = Object.fromEntries(model.inputs.map((s) => {
        const n = s.dims.reduce((a, d) => a * (typeof d === 'number' ? d : 2), 1);
        const dims = s.dims.map((d) => (typeof d === 'number' ? d : 2));
        return [s.name, { data: s.dtype === 'int64' ? new BigInt64Array(n).fill(2n) : new ARRAYS[s.dtype](n).fill(1), dims }];
      }));
      const outputs = await model.run(feeds);
      assert.ok(Object.keys(outputs).length > 0, name);
    } finally {
      model.dispose();
    }
  }
  assert.deepEqual(registeredOperators().filter((key) => !covered.has(key)), [], 'operators without a zoo model (tools/fuzz/seeds.mjs)');
});

const stubs = mkdtempSync(join(tmpdir(), 'qwasm-fuzz-'));
after(() => rmSync(stubs, { recursive: true, force: true }));

/** A stand-in worker whose answer to every case is `body` (run in the worker process). */
function stubWorker(name, body) {
  const path = join(stubs, `${name}.mjs`);
  writeFileSync(path, `process.on('message', async (c) => { ${body} }); process.send({ ready: true });\n`);
  return path;
}

test('the harness classifies a hang, a blow-up, a dying worker and a leak, and keeps going with a fresh worker', async () => {
  const files = [{ path: 'unused', weight: 1 }];
  const run = (workerPath, options = {}) => fuzz({ seed: 1, cases: 2, files, workers: 1, workerPath, timeoutMs: 1500, ...options });
  const hang = await run(stubWorker('hang', 'for (;;);'));
  assert.equal(hang.counts.hang, 2, 'each case killed after the time limit, the next one on a fresh worker');
  const grow = await run(stubWorker('grow', 'const keep = []; for (;;) { keep.push(Buffer.alloc(64 << 20, 1)); await new Promise((r) => setTimeout(r, 5)); }'), { memoryMb: 512, timeoutMs: 20000 });
  assert.equal(grow.counts['blow-up'], 2);
  const die = await run(stubWorker('die', 'process.exit(3);'));
  assert.equal(die.counts.trap, 2);
  const leak = await run(stubWorker('leak', "process.send({ id: c.id, outcome: 'leak', message: '16 bytes', description: '' });"));
  assert.equal(leak.counts.leak, 2);
  assert.deepEqual(FAILURES, ['raw', 'hang', 'trap', 'blow-up', 'leak', 'mismatch', 'fuzzer-error']);
});

test('compare: a difference between the SIMD128 and scalar builds in outputs or error message is a mismatch', async () => {
  const files = [{ path: 'unused', weight: 1 }];
  const run = (body) => fuzz({ seed: 1, cases: 2, files, workers: 1, compare: 'scalar', workerPath: stubWorker(`compare-${body.length}`, body) });
  const simd = "process.env.QWASM_SIMD === '1'";
  const answer = (fields) => `process.send({ id: c.id, description: '', message: '', ${fields} });`;
  assert.equal((await run(answer("outcome: 'ok', digest: 'same'"))).counts.ok, 2);
  const outputs = await run(answer(`outcome: 'ok', digest: ${simd} ? 'aaaa' : 'bbbb'`));
  assert.equal(outputs.counts.mismatch, 2);
  assert.equal(outputs.failures[0].message, 'SIMD128 build: outputs aaaa; scalar build: outputs bbbb');
  const errors = await run(`process.send({ id: c.id, description: '', outcome: 'named', message: ${simd} ? 'RangeError: a' : 'RangeError: b' });`);
  assert.equal(errors.counts.mismatch, 2);
  const oneFails = await run(answer(`outcome: ${simd} ? 'ok' : 'named', digest: 'x'`));
  assert.equal(oneFails.counts.mismatch, 2);
});

for (const [compare, what] of [['scalar', 'on both builds'], ['threads', 'on one and two threads']]) {
  // both builds run in each case, so once per npm test (the SIMD128 pass)
  test(`${Math.round(CASES / 3)} mutated models ${what}: the same outputs and the same errors`, { skip: wantSimd === false && 'runs in the SIMD128 pass' }, async (t) => {
    const { counts, failures, ms } = await fuzz({ seed: SEED + 1, cases: Math.round(CASES / 3), files: await corpus({ large: false }), workers: 1, compare });
    t.diagnostic(`${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')} in ${(ms / 1000).toFixed(1)} s`);
    assert.deepEqual(failures.slice(0, 10).map((f) => `${f.outcome}: ${f.file.split('/').slice(-2).join('/')} case seed ${f.seed}: ${f.message.split('\n')[0]}`), []);
    assert.ok(counts.ok > CASES / 30, 'cases that run compare outputs');
  });
}

test('named errors are qwasm\'s own; engine errors, traps and plain Errors are not', () => {
  assert.equal(classifyError(new ModelFormatError('anything')), 'named');
  assert.equal(classifyError(new UnsupportedError('anything')), 'named');
  assert.equal(classifyError(new RangeError('quantizePerTensor: scale must be a finite number > 0, got 0')), 'named');
  assert.equal(classifyError(new TypeError('Conv node "c": input must be ...')), 'named');
  const engine = (fn) => {
    try {
      fn();
    } catch (error) {
      return classifyError(error);
    }
    return 'ok';
  };
  assert.equal(engine(() => undefined.kind), 'raw');
  assert.equal(engine(() => new Float32Array(-1)), 'raw');
  assert.equal(engine(() => Math.fround(1n)), 'raw');
  assert.equal(engine(() => JSON.stringify({ a: 1n })), 'raw');
  assert.equal(classifyError(new RangeError('Conv node "c": Invalid typed array length: 4294967296')), 'raw', 'an engine message under a label');
  assert.equal(classifyError(new Error('Model.run: internal error')), 'raw');
  assert.equal(classifyError(new WebAssembly.RuntimeError('memory access out of bounds')), 'trap');
  assert.equal(classifyError(new RangeError('Array buffer allocation failed')), 'blow-up');
});

// Cases the long runs found (node tools/fuzz/fuzz.mjs --cases 50000), replayed in one worker in the order they hit:
// the mutation must still be the one recorded (else the seed file changed and the case must be found again).
const FINDINGS = [
  // a Transpose perm [0,0,1,3] folded into the MatMul before it: the product wrote past its output, and the next
  // case in the same worker trapped in free()
  { file: 'tests/fixtures/torch/models/bert_dynamic.onnx', seed: 3114903628, mutation: 'node layers.1.transpose_9 attribute perm: value changed' },
  { file: 'tests/fixtures/torch/models/modsnet.onnx', seed: 905904452, mutation: 'initializer reshape/scale: dims [16]' },
  // an int64 weight scale reached the float-bias rounding of PT2E files: "Cannot mix BigInt and other types"
  { file: 'tests/fixtures/pt2e/cnn-probe.onnx', seed: 4104567361, mutation: 'initializer fc.bias: element 1 changed; initializer _frozen_param2: dims []; initializer val_4: data_type 7' },
];

test('the long runs\' findings stay fixed', async () => {
  const root = new URL('../../', import.meta.url);
  const results = await replay(FINDINGS.map((f) => ({ file: new URL(f.file, root).pathname, seed: f.seed })), { simd: wantSimd !== false });
  results.forEach((r, i) => {
    assert.equal(r.description, FINDINGS[i].mutation, `${FINDINGS[i].file} ${FINDINGS[i].seed}: the mutation changed`);
    assert.ok(!FAILURES.includes(r.outcome), `${FINDINGS[i].file} ${FINDINGS[i].seed}: ${r.outcome} ${r.message}`);
  });
});
