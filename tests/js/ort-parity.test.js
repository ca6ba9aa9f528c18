// com.microsoft quantized operators against onnxruntime-web (npm, wasm backend), the reference that
// defines them: single-node models with adversarial qparams (equal scales make exact .5 ties) run in
// both, outputs compared byte for byte. The ONNX conformance suite has no data for these operators.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import { createOrtRunner } from '../../tools/bench/ort.mjs';
import { singleNodeModel } from '../../tools/bench/onnx-model.mjs';
import { assertBitEqual, failOnLeaks, qwasm } from './helpers.js';
import { mulberry32 } from '../../tools/bench/cases.mjs';

failOnLeaks(before, afterEach);

const QPARAMS = [
  // [a_scale, a_zp, b_scale, b_zp, y_scale, y_zp]
  [0.0123, 120, 0.0371, 7, 0.0411, 131],
  [0.02, 128, 0.02, 128, 0.04, 128], // every sum of two halves is a tie
  [0.1, 3, 0.0007, 250, 0.0213, 0],
  [0.5, 0, 0.25, 255, 0.001, 255], // saturates both ways
];

async function both(opType, elem, aDims, bDims, q, seed) {
  const [sa, za, sb, zb, sy, zy] = q;
  const T = elem === 'UINT8' ? Uint8Array : Int8Array;
  const shift = elem === 'UINT8' ? 0 : 128;
  const rng = mulberry32(seed);
  const numel = (d) => d.reduce((x, y) => x * y, 1);
  const a = T.from({ length: numel(aDims) }, () => (rng() & 255) - shift);
  const b = T.from({ length: numel(bDims) }, () => (rng() & 255) - shift);
  const scalar = (name, v, t = 'FLOAT') => ({ name, elemType: t, dims: [], data: [t === 'FLOAT' ? v : v - shift] });
  const outDims = aDims.length >= bDims.length ? aDims : bDims;
  const model = singleNodeModel({
    opType, domain: 'com.microsoft', opset: 1,
    inputs: [{ name: 'a', elemType: elem, dims: aDims }, { name: 'b', elemType: elem, dims: bDims }],
    initializers: [scalar('sa', sa), scalar('za', za, elem), scalar('sb', sb), scalar('zb', zb, elem), scalar('sy', sy), scalar('zy', zy, elem)],
    nodeInputs: ['a', 'sa', 'za', 'b', 'sb', 'zb', 'sy', 'zy'],
    outputs: [{ name: 'y', elemType: elem, dims: outDims }],
    attributes: {},
  });
  const type = elem === 'UINT8' ? 'uint8' : 'int8';
  const runner = await createOrtRunner(model);
  const ref = (await runner.run({ a: { type, data: a, dims: aDims }, b: { type, data: b, dims: bDims } })).y;
  await runner.release();
  const m = await qwasm.loadModel(model);
  try {
    const ours = (await m.run({ a: { data: a, dims: aDims }, b: { data: b, dims: bDims } })).y.data;
    return { ours, ref };
  } finally {
    m.dispose();
  }
}

for (const elem of ['UINT8', 'INT8']) {
  test(`QLinearAdd ${elem} equals onnxruntime-web byte for byte (ties, saturation, tails, broadcasting)`, async () => {
    let seed = 1;
    for (const q of QPARAMS) {
      for (const [aDims, bDims] of [[[4099], [4099]], [[1, 8, 5, 7], [1, 8, 5, 7]], [[2, 3, 17], [17]], [[2, 3, 17], [3, 1]]]) {
        const { ours, ref } = await both('QLinearAdd', elem, aDims, bDims, q, seed++);
        assertBitEqual(assert, ours, ref, `QLinearAdd ${elem} ${JSON.stringify(q)} ${JSON.stringify([aDims, bDims])}`);
      }
    }
  });
}

for (const elem of ['UINT8', 'INT8']) {
  test(`QLinearMul ${elem} equals onnxruntime-web byte for byte`, async () => {
    let seed = 100;
    for (const q of QPARAMS) {
      for (const [aDims, bDims] of [[[4099], [4099]], [[2, 3, 17], [17]]]) {
        const { ours, ref } = await both('QLinearMul', elem, aDims, bDims, q, seed++);
        assertBitEqual(assert, ours, ref, `QLinearMul ${elem} ${JSON.stringify(q)} ${JSON.stringify([aDims, bDims])}`);
      }
    }
  });
}

async function lookupBoth(opType, elem, q, attributes) {
  const [sx, zx, sy, zy] = q;
  const T = elem === 'UINT8' ? Uint8Array : Int8Array;
  const shift = elem === 'UINT8' ? 0 : 128;
  const x = T.from({ length: 256 * 3 + 5 }, (_, i) => (i % 256) - shift); // every byte, then a tail
  const s = (name, v, t = 'FLOAT') => ({ name, elemType: t, dims: [], data: [t === 'FLOAT' ? v : v - shift] });
  const model = singleNodeModel({
    opType, domain: 'com.microsoft', opset: 1,
    inputs: [{ name: 'x', elemType: elem, dims: [x.length] }],
    initializers: [s('sx', sx), s('zx', zx, elem), s('sy', sy), s('zy', zy, elem)],
    nodeInputs: ['x', 'sx', 'zx', 'sy', 'zy'],
    outputs: [{ name: 'y', elemType: elem, dims: [x.length] }],
    attributes,
  });
  const runner = await createOrtRunner(model);
  const ref = (await runner.run({ x: { type: elem === 'UINT8' ? 'uint8' : 'int8', data: x, dims: [x.length] } })).y;
  await runner.release();
  const m = await qwasm.loadModel(model);
  try {
    return { ours: (await m.run({ x })).y.data, ref };
  } finally {
    m.dispose();
  }
}

// The last two put the output step near MLAS's approximation error: an exact logistic gives other bytes there.
const LOOKUP_QPARAMS = [[0.05, 128, 1 / 256, 0], [0.1, 100, 0.0039, 3], [0.0123, 7, 0.02, 200], [0.3, 255, 0.5, 128], [0.02, 0, 0.01, 0], [0.07, 255, 2e-7, 0], [0.06, 220, 3e-7, 0]];

for (const elem of ['UINT8', 'INT8']) {
  test(`QLinearSigmoid and QLinearLeakyRelu ${elem} equal onnxruntime-web on every input byte`, async () => {
    for (const q of LOOKUP_QPARAMS) {
      const sig = await lookupBoth('QLinearSigmoid', elem, q, {});
      assertBitEqual(assert, sig.ours, sig.ref, `QLinearSigmoid ${elem} ${q}`);
      for (const alpha of [0.01, 0.1, 0.2]) {
        const lr = await lookupBoth('QLinearLeakyRelu', elem, q, { alpha });
        assertBitEqual(assert, lr.ours, lr.ref, `QLinearLeakyRelu ${elem} ${q} alpha ${alpha}`);
      }
    }
  });
}

// QLinearMatMul (ONNX domain) broadcasts its batch dimensions as numpy's matmul does; the conformance data has
// only equal batches. b a graph input (a matrix packed per batch), and a packed 2-D b shared by every batch.
test('QLinearMatMul with broadcast batch dimensions equals onnxruntime-web byte for byte', async () => {
  const [sa, za, sb, zb, sy, zy] = QPARAMS[0];
  let seed = 40;
  for (const [aDims, bDims] of [[[2, 1, 3, 20], [4, 20, 6]], [[3, 20], [2, 20, 5]], [[2, 3, 4, 8], [8, 5]], [[1, 4, 7], [3, 7, 2]]]) {
    const rng = mulberry32(seed++);
    const numel = (d) => d.reduce((x, y) => x * y, 1);
    const a = Uint8Array.from({ length: numel(aDims) }, () => rng() & 255);
    const b = Int8Array.from({ length: numel(bDims) }, () => (rng() & 255) - 128);
    const batch = [];
    for (let i = 1; i <= Math.max(aDims.length, bDims.length) - 2; i++) batch.unshift(Math.max(aDims.at(-2 - i) ?? 1, bDims.at(-2 - i) ?? 1));
    const outDims = [...batch, aDims.at(-2), bDims.at(-1)];
    const scalar = (name, v, elemType = 'FLOAT') => ({ name, elemType, dims: [], data: [v] });
    const model = singleNodeModel({
      opType: 'QLinearMatMul', opset: 13,
      inputs: [{ name: 'a', elemType: 'UINT8', dims: aDims }, { name: 'b', elemType: 'INT8', dims: bDims }],
      initializers: [scalar('sa', sa), scalar('za', za, 'UINT8'), scalar('sb', sb), scalar('zb', zb - 128, 'INT8'), scalar('sy', sy), scalar('zy', zy, 'UINT8')],
      nodeInputs: ['a', 'sa', 'za', 'b', 'sb', 'zb', 'sy', 'zy'],
      outputs: [{ name: 'y', elemType: 'UINT8', dims: outDims }],
    });
    const runner = await createOrtRunner(model);
    const ref = (await runner.run({ a: { type: 'uint8', data: a, dims: aDims }, b: { type: 'int8', data: b, dims: bDims } })).y;
    await runner.release();
    const label = JSON.stringify([aDims, bDims]);
    const m = await qwasm.loadModel(model);
    try {
      const ours = (await m.run({ a: { data: a, dims: aDims }, b: { data: b, dims: bDims } })).y;
      assert.deepEqual(ours.dims, outDims, label);
      assertBitEqual(assert, ours.data, ref, `QLinearMatMul ${label}`);
    } finally {
      m.dispose();
    }
    if (bDims.length !== 2) continue;
    const qa = qwasm.fromIntRepr(a, aDims, sa, za, 'quint8');
    const qb = qwasm.fromIntRepr(b, bDims, sb, zb - 128, 'qint8');
    const packed = qwasm.packMatMul(qb, { mode: 'onnx' });
    const y = qwasm.matmul(qa, packed, { scale: sy, zeroPoint: zy });
    try {
      assert.deepEqual(y.shape, outDims, label);
      assertBitEqual(assert, y.intRepr(), ref, `matmul with packed b ${label}`);
    } finally {
      for (const t of [qa, qb, packed, y]) t.dispose();
    }
  }
});
