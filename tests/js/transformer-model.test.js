// BERT-shaped encoders through qwasm's model loader, byte for byte against onnxruntime-web: every file of
// tests/fixtures/transformer (torch.onnx.export at opset 14 and 17 and the dynamo exporter, their transformers.js
// q8 versions from onnxruntime's quantize_dynamic, static QDQ versions from its quantize_static, onnxruntime's
// transformer optimizer output and its q8 version, onnxruntime's own optimized q8 graph) on the recorded int64 inputs of three sequence lengths. The final outputs
// are compared with onnxruntime-web's recorded bits, and every intermediate value onnxruntime-web computes with
// the hashes tools/transformer/bert_intermediates.py recorded (onnxruntime's optimized graph run with every value
// as an output: the values a fusion keeps have the same names in qwasm's graph). The only values qwasm does not
// materialize are those of the Transposes it folds into float MatMuls as strided views: a Transpose's output read
// in place, or a MatMul's output written already transposed (under the Transpose's name, checked as such).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const DIR = new URL('../fixtures/transformer/', import.meta.url);
const record = JSON.parse(readFileSync(new URL('tiny-bert.json', DIR), 'utf8'));
const intermediates = JSON.parse(readFileSync(new URL('tiny-bert-intermediates.json', DIR), 'utf8'));

const feedsOf = (input) => Object.fromEntries(Object.entries(input).map(([n, t]) => [n, { data: BigInt64Array.from(t.data, BigInt), dims: t.dims }]));
const bitsOf = (b64) => {
  const bytes = Buffer.from(b64, 'base64');
  return new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
};
const u32 = (f) => new Uint32Array(f.buffer, f.byteOffset, f.length);
const hashOf = (data) => createHash('sha256').update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)).digest('hex').slice(0, 32);
const load = (name) => qwasm.loadModel(new Uint8Array(readFileSync(new URL(name, DIR))));

/** Runs every recorded input and checks outputs and intermediates; returns how many intermediates matched. */
async function checkFile(key, model, t) {
  const file = record.files[key];
  let matched = 0;
  const foldedTransposes = new Set(); // Transposes read in place by a MatMul (qwasm_perm_a / _b)
  const writtenTransposed = new Set(); // MatMuls whose output is written transposed, under the Transpose's name (qwasm_perm_y)
  for (let c = 0; c < record.inputs.length; c++) {
    // twice: the second run reads the shape plan (static nodes' values) and replays the memory plan
    for (const round of [1, 2]) {
      const out = await model.run(feedsOf(record.inputs[c]), { intermediates: true });
      for (const [name, web] of Object.entries(file.web[c])) {
        assert.deepEqual(out[name].dims, web.dims, `${key} case ${c} ${name} dims`);
        assert.deepEqual(u32(out[name].data), bitsOf(web.bits), `${key} case ${c} run ${round}: ${name} differs from onnxruntime-web`);
      }
      for (const [name, ref] of Object.entries(intermediates.files[key][c])) {
        // onnxruntime gives a DequantizeLinear read by several nodes one copy per reader ("…/duplicated"); qwasm
        // keeps one: the copy must equal it
        const original = name.endsWith('/duplicated') && ref.op === 'DequantizeLinear' ? name.slice(0, -'/duplicated'.length) : name;
        const v = out.intermediates[original] ?? out[original];
        if (!v && ['Transpose', 'MatMul', 'com.microsoft.FusedMatMul'].includes(ref.op)) {
          (ref.op === 'Transpose' ? foldedTransposes : writtenTransposed).add(name);
          continue;
        }
        assert.ok(v, `${key}: onnxruntime-web's value "${name}" (${ref.op}) is computed by qwasm too`);
        assert.deepEqual(v.dims, ref.dims, `${key} case ${c}: "${name}" dims`);
        assert.equal(hashOf(v.data), ref.sha256, `${key} case ${c} run ${round}: intermediate "${name}" (${ref.dtype} [${ref.dims}]) differs from onnxruntime-web`);
        matched++;
      }
    }
  }
  t.diagnostic(`${key}: ${matched} intermediate values byte-identical over ${record.inputs.length} inputs x 2 runs; ${foldedTransposes.size + writtenTransposed.size} Transposes folded into MatMuls`);
  // the values qwasm does not materialize are exactly those of its layout fusions: one folded Transpose per
  // qwasm_perm_a / _b, one MatMul output per qwasm_perm_y (whose Transpose's value was checked above)
  const perms = (side) => model.layers.filter((l) => l.attributes[`qwasm_perm_${side}`]).length;
  assert.equal(foldedTransposes.size, perms('a') + perms('b'), `${key}: the missing Transpose values are the folded ones (${[...foldedTransposes]})`);
  assert.equal(writtenTransposed.size, perms('y'), `${key}: the missing MatMul values are those written transposed (${[...writtenTransposed]})`);
}

for (const [key, file] of Object.entries(record.files)) {
  test(`${file.file}: every output and intermediate equals onnxruntime-web, for three sequence lengths`, async (t) => {
    const model = await load(file.file);
    try {
      await checkFile(key, model, t);
      assert.equal(model.peakBytes, model.memoryPlan.arenaBytes, 'every allocation of a run comes from the planned arena');
    } finally {
      model.dispose();
    }
  });
}

test('the loader makes onnxruntime\'s fused graph from files that are not pre-fused', async () => {
  const census = async (name) => {
    const model = await load(name);
    const ops = {};
    for (const l of model.layers) ops[l.domain ? `${l.domain}.${l.opType}` : l.opType] = (ops[l.domain ? `${l.domain}.${l.opType}` : l.opType] ?? 0) + 1;
    model.dispose();
    return ops;
  };
  const float14 = await census('tiny-bert-opset14.onnx');
  // decomposed LayerNorm -> LayerNormalization; Div by sqrt(2) ... -> Gelu, with its bias -> BiasGelu; attention's
  // Div -> FusedMatMul alpha; pooler Gemm + Tanh -> FusedGemm
  assert.equal(float14.ReduceMean, undefined);
  assert.equal(float14.LayerNormalization, 5);
  assert.equal(float14['com.microsoft.BiasGelu'], 2);
  assert.equal(float14['com.microsoft.FusedMatMul'], 2);
  assert.equal(float14['com.microsoft.FusedGemm'], 1);
  assert.equal(float14.Erf, undefined);
  const q14 = await census('tiny-bert-opset14_q8.onnx');
  // DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul -> Add: one node; a DynamicQuantizeLinear read by Q, K
  // and V stays and feeds three MatMulIntegerToFloat
  assert.equal(q14.MatMulInteger, undefined);
  assert.equal(q14['com.microsoft.DynamicQuantizeMatMul'], 7);
  assert.equal(q14['com.microsoft.MatMulIntegerToFloat'], 6);
  assert.equal(q14.DynamicQuantizeLinear, 2);
  // the residual Add + LayerNormalization where the file's shapes are known equal (as onnxruntime decides)
  assert.equal(q14['com.microsoft.SkipLayerNormalization'], 2);
  const dynamo = await census('tiny-bert-dynamo.onnx');
  assert.equal(dynamo['com.microsoft.SkipLayerNormalization'], 4, 'dynamo: Add(bias) + Add(residual) + LayerNorm fused, the bias absorbed');
});

test('the dynamic products\' int8 weights are packed when the model loads, once', async () => {
  const before = qwasm.memoryStats().liveBytes;
  const model = await load('tiny-bert-opset14_q8.onnx');
  try {
    const packed = qwasm.memoryStats().liveBytes - before;
    // 13 weights of 16 x 16 or 16 x 64, packed as int16 with scales and bias
    assert.ok(packed > 2 * 16 * (10 * 16 + 2 * 64 + 2 * 64 / 4), `${packed} bytes packed at load`);
    await model.run(feedsOf(record.inputs[0]));
    const afterRun = qwasm.memoryStats().liveBytes - before;
    await model.run(feedsOf(record.inputs[0]));
    assert.equal(qwasm.memoryStats().liveBytes - before, afterRun, 'a second run packs nothing and keeps nothing');
  } finally {
    model.dispose();
  }
  assert.equal(qwasm.memoryStats().liveBytes, before);
});

test('alternating sequence lengths: one shape plan and memory plan per length, outputs unchanged', async () => {
  const model = await load('tiny-bert-opset14_q8.onnx');
  try {
    const file = record.files.opset14_q8;
    for (let round = 0; round < 3; round++) {
      for (const c of [0, 1, 2]) {
        const out = await model.run(feedsOf(record.inputs[c]));
        assert.deepEqual(u32(out.last_hidden_state.data), bitsOf(file.web[c].last_hidden_state.bits), `round ${round} case ${c}`);
        assert.equal(model.memoryPlan.plans, round === 0 ? c + 1 : 3);
      }
    }
    // every run after the first of each length is served from the one arena
    assert.equal(model.peakBytes, model.memoryPlan.arenaBytes);
    const profiled = await model.run(feedsOf(record.inputs[0]), { profile: true });
    const statics = profiled.profile.filter((p) => p.static);
    assert.ok(statics.length > 50, `${statics.length} shape-only nodes reused from the shape plan`);
    assert.ok(statics.some((p) => p.opType === 'Concat') && statics.some((p) => p.opType === 'Shape'));
  } finally {
    model.dispose();
  }
});

test('inputs of the wrong type, shape or value are named errors', async () => {
  const model = await load('tiny-bert-opset14_q8.onnx');
  try {
    const feeds = feedsOf(record.inputs[0]);
    await assert.rejects(model.run({ ...feeds, input_ids: Float32Array.from([1, 2]) }),
      /^TypeError: Model\.run: input "input_ids" must be int64: a BigInt64Array or \{ data, dims \}, got Float32Array$/);
    await assert.rejects(model.run({ ...feeds, attention_mask: { data: new Int32Array(16), dims: [2, 8] } }),
      /input "attention_mask" must be int64: a BigInt64Array or \{ data, dims \}, got Int32Array/);
    await assert.rejects(model.run({ ...feeds, token_type_ids: { data: new BigInt64Array(16), dims: [2, 8, 1] } }),
      /^RangeError: Model\.run: input "token_type_ids" has 3 dimensions \[2,8,1\], the model expects 2 \[batch,sequence\]$/);
    await assert.rejects(model.run({ ...feeds, input_ids: { data: new BigInt64Array(15), dims: [2, 8] } }),
      /input "input_ids" has 15 values, its shape \[2,8\] needs 16/);
    await assert.rejects(model.run({ ...feeds, input_ids: { data: new BigInt64Array(16).fill(64n), dims: [2, 8] } }),
      /^RangeError: Gather node "\/embeddings\/word\/Gather": index 64 is out of range for axis 0 of size 64$/);
    // the model still runs after the errors, and nothing leaked (failOnLeaks)
    const out = await model.run(feeds);
    assert.deepEqual(u32(out.pooler_output.data), bitsOf(record.files.opset14_q8.web[0].pooler_output.bits));
  } finally {
    model.dispose();
  }
});

// The MiniLM-sized encoder (tools/transformer/bert.py --minilm writes it to build/, not committed; npm run bench
// generates it): K blocks of 256 / 128, 12 heads, 128 tokens, a padded second input.
const MINILM = new URL('../../build/models/transformer/', import.meta.url);
test('MiniLM-sized encoder, float and q8: outputs equal onnxruntime-web', { skip: !existsSync(new URL('minilm.json', MINILM)) && 'build/models/transformer not generated' }, async (t) => {
  const mini = JSON.parse(readFileSync(new URL('minilm.json', MINILM), 'utf8'));
  for (const key of ['opset14_q8', 'opset14']) {
    const model = await qwasm.loadModel(new Uint8Array(readFileSync(new URL(mini.files[key].file, MINILM))));
    try {
      for (let c = 0; c < mini.inputs.length; c++) {
        const out = await model.run(feedsOf(mini.inputs[c]));
        for (const [name, web] of Object.entries(mini.files[key].web[c])) {
          assert.deepEqual(u32(out[name].data), bitsOf(web.bits), `${key} case ${c}: ${name} differs from onnxruntime-web`);
        }
      }
      t.diagnostic(`${key}: ${mini.inputs.length} inputs, outputs identical`);
    } finally {
      model.dispose();
    }
  }
});
