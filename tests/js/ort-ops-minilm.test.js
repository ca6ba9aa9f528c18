// The transformer operators (model loader and kernels) at the MiniLM-sized encoder's shapes (hidden 384, 12 heads of 32, FFN 1536,
// sequence 128) against onnxruntime-web, byte for byte: the nodes onnxruntime's optimizer leaves in such a model
// (tests/fixtures/transformer/tiny-bert-ort_q8.onnx shows them), with seeded random inputs, so that K blocking
// (constant B of depth 1536: six packed blocks of 256; N >= K > 128: blocks of 128), the one-row GEMV, many rows
// and long softmax rows are exercised.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import { singleNodeModel } from '../../tools/bench/onnx-model.mjs';
import { mulberry32 } from '../../tools/bench/cases.mjs';
import { compareBytes, runWeb } from '../../tools/transformer/ort-ops-cases.mjs';
import { failOnLeaks, runModelCase } from './helpers.js';

const ELEM = { float32: 'FLOAT', uint8: 'UINT8', int8: 'INT8' };
const ARRAYS = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array };

failOnLeaks(before, afterEach);

function tensor(rng, dtype, dims, scale = 1) {
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new ARRAYS[dtype](n);
  for (let i = 0; i < n; i++) {
    const u = rng() / 2 ** 32;
    data[i] = dtype === 'float32' ? (u * 2 - 1) * scale : dtype === 'int8' ? (rng() & 255) - 128 : rng() & 255;
  }
  return { dtype, dims, data };
}

/** A case in the fixture's form (tools/transformer/ort-ops-cases.mjs), its model built here. */
function makeCase(name, op, domain, inputs, attrs = {}, opset = 17) {
  const model = singleNodeModel({
    opType: op, domain, opset: domain ? 1 : opset,
    inputs: inputs.filter((i) => !i.initializer).map((i) => ({ name: i.name, elemType: ELEM[i.dtype], dims: i.dims })),
    initializers: inputs.filter((i) => i.initializer).map((i) => ({ name: i.name, elemType: ELEM[i.dtype], dims: i.dims, data: i.data })),
    nodeInputs: inputs.map((i) => i.name),
    outputs: [{ name: 'y', elemType: 'FLOAT', dims: null }],
    attributes: attrs,
  });
  const plain = Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, v?.value ?? v])); // { type, value } -> value
  return { name, op, domain, opset, attrs: plain, model, inputs, outputs: [{ name: 'y', dtype: 'float32', dims: null }] };
}

function cases() {
  const rng = mulberry32(384);
  const t = (dtype, dims, scale, extra = {}) => ({ ...tensor(rng, dtype, dims, scale), ...extra });
  const ms = 'com.microsoft';
  const list = [
    makeCase('DynamicQuantizeMatMul 128x384 by 384x1536 + bias', 'DynamicQuantizeMatMul', ms, [
      t('float32', [1, 128, 384], 3, { name: 'a' }), t('int8', [384, 1536], 1, { name: 'b', initializer: true }),
      { name: 'b_scale', dtype: 'float32', dims: [], data: Float32Array.of(0.0071), initializer: true },
      { name: 'b_zero_point', dtype: 'int8', dims: [], data: Int8Array.of(0), initializer: true },
      t('float32', [1536], 0.5, { name: 'bias', initializer: true })]),
    makeCase('MatMulIntegerToFloat 128x1536 by 1536x384 + bias', 'MatMulIntegerToFloat', ms, [
      t('uint8', [1, 128, 1536], 1, { name: 'a' }), t('int8', [1536, 384], 1, { name: 'b', initializer: true }),
      { name: 'a_scale', dtype: 'float32', dims: [], data: Float32Array.of(0.023), initializer: true },
      { name: 'b_scale', dtype: 'float32', dims: [], data: Float32Array.of(0.0049), initializer: true },
      { name: 'a_zero_point', dtype: 'uint8', dims: [], data: Uint8Array.of(121), initializer: true },
      { name: 'b_zero_point', dtype: 'int8', dims: [], data: Int8Array.of(0), initializer: true },
      t('float32', [384], 0.5, { name: 'bias', initializer: true })]),
    makeCase('FusedMatMul QK^T 12 heads 128x32, alpha 1/sqrt(32)', 'FusedMatMul', ms,
      [t('float32', [1, 12, 128, 32], 2, { name: 'a' }), t('float32', [1, 12, 128, 32], 2, { name: 'b' })],
      { alpha: { type: 'FLOAT', value: 0.17677669 }, transB: 1 }),
    makeCase('MatMul PV 12 heads 128x128 by 128x32', 'MatMul', '',
      [t('float32', [1, 12, 128, 128], 1, { name: 'a' }), t('float32', [1, 12, 128, 32], 2, { name: 'b' })], {}, 13),
    makeCase('MatMul 128x1536 by constant 1536x384 (packed: 6 K blocks)', 'MatMul', '',
      [t('float32', [1, 128, 1536], 2, { name: 'a' }), t('float32', [1536, 384], 0.05, { name: 'b', initializer: true })], {}, 13),
    makeCase('MatMul 2 x (64x260 by 260x264): N >= K, blocks of 128', 'MatMul', '',
      [t('float32', [1, 2, 64, 260], 2, { name: 'a' }), t('float32', [1, 2, 260, 264], 2, { name: 'b' })], {}, 13),
    makeCase('MatMul 1x600 by 600x37 (one row: MLAS GEMV)', 'MatMul', '',
      [t('float32', [1, 600], 2, { name: 'a' }), t('float32', [600, 37], 2, { name: 'b' })], {}, 13),
    makeCase('Softmax 12x128x128 with masked columns', 'Softmax', '', [(() => {
      const x = t('float32', [1, 12, 128, 128], 8, { name: 'x' });
      for (let i = 100; i < x.data.length; i += 128) x.data.fill(-3.4028234663852886e38, i, i + 28);
      return x;
    })()], { axis: -1 }, 13),
    makeCase('SkipLayerNormalization 128x384', 'SkipLayerNormalization', ms, [
      t('float32', [1, 128, 384], 4, { name: 'x' }), t('float32', [1, 128, 384], 4, { name: 'skip' }),
      t('float32', [384], 1, { name: 'gamma', initializer: true }), t('float32', [384], 1, { name: 'beta', initializer: true })],
    { epsilon: { type: 'FLOAT', value: 1e-12 } }),
    makeCase('LayerNormalization 128x384', 'LayerNormalization', '', [
      t('float32', [1, 128, 384], 4, { name: 'x' }), t('float32', [384], 1, { name: 'scale', initializer: true }),
      t('float32', [384], 1, { name: 'bias', initializer: true })], { axis: -1, epsilon: { type: 'FLOAT', value: 1e-12 } }),
    makeCase('Gelu 128x1536', 'Gelu', ms, [t('float32', [1, 128, 1536], 6, { name: 'x' })]),
    makeCase('Tanh 384', 'Tanh', '', [t('float32', [1, 384], 5, { name: 'x' })], {}, 13),
  ];
  return list;
}

test('MiniLM-sized transformer nodes: qwasm equals onnxruntime-web byte for byte', async (t) => {
  for (const c of cases()) {
    const web = await runWeb(c);
    const [ours] = await runModelCase(c);
    const { differ, maxAbs } = compareBytes(ours, web[0].data);
    assert.equal(differ, 0, `${c.name}: ${differ} of ${web[0].data.length} differ (max |d| ${maxAbs})`);
    t.diagnostic(`${c.name}: ${web[0].data.length} outputs identical`);
  }
});
