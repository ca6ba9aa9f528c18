// QDQ files written by onnxruntime's own quantize_static (QuantFormat.QDQ, MinMax calibration; onnxruntime 1.30 from
// PyPI, tools/golden/ort_quantize_real.py) and its quantize_dynamic, on the float models and option sets of
// tools/golden/ort_quantize_static.py (docs/quantize-static.md). The reference is onnxruntime-web, which runs the same files:
// qwasm's fused integer operators must give the same bytes. Comparing the final float outputs exactly is
// comparing the last QuantizeLinear's bytes (its DequantizeLinear is one-to-one); the probe file also exposes
// every QuantizeLinear output, so each fused layer is compared on its own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { createOrtRunner } from '../../tools/bench/ort.mjs';
import { graphModel } from '../../tools/bench/onnx-model.mjs';
import { mulberry32 } from '../../tools/bench/cases.mjs';
import { assertBitEqual, failOnLeaks, fixture, qwasm, withQwasmAndOrt } from './helpers.js';
const { ModelFormatError } = qwasm;

failOnLeaks(before, afterEach);

const bytesOf = (file) => new Uint8Array(readFileSync(new URL(`../fixtures/ort_static/${file}`, import.meta.url)));

const CONV = 'QuantizeLinear QLinearConv QLinearConv MaxPool';
const CNN_TAIL = 'QLinearAveragePool QLinearAdd QLinearSigmoid QLinearMul QLinearConcat QLinearGlobalAveragePool Flatten QGemm QLinearSoftmax DequantizeLinear';
const CNN = `${CONV} ${CNN_TAIL}`;
const MLP = 'Transpose QuantizeLinear QLinearMatMul QLinearAdd Reshape QLinearMul QGemm DequantizeLinear';
// int8 activations: the constants' DQs stay int8 while the activation pairs become uint8 (QDQS8ToU8Transformer), so
// ORT leaves the Add and the Mul of a constant in float (docs/quantize-static.md)
const MLP_INT8 = 'DequantizeLinear DequantizeLinear Transpose QuantizeLinear QLinearMatMul DequantizeLinear Add QuantizeLinear Reshape DequantizeLinear Mul QuantizeLinear QGemm DequantizeLinear';
// quantize_dynamic: DynamicQuantizeLinear -> ConvInteger / MatMulInteger -> Cast -> Mul(scales) -> Add(bias) per layer
// (Gemm becomes MatMulInteger), the rest float
const DYN = 'DynamicQuantizeLinear Mul ConvInteger Cast Mul Add';
// DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(x_scale * w_scale) -> Add(bias): one node, as onnxruntime
// fuses it (dynamic_quantize_matmul_fusion.cc; js/model/passes/transformer.js)
const DYN_MM = 'DynamicQuantizeMatMul';
const DIGITS = `${CONV} QLinearConv QLinearConv QLinearAdd QLinearGlobalAveragePool Flatten QGemm DequantizeLinear`;

// What qwasm makes of each file: every QDQ group quantize_static writes becomes one integer operator, as
// ONNX Runtime's QDQ transformer does. With ActivationSymmetric the ReLU / Clip stay (quantize_static keeps
// them: with zero point 127 the Q after the conv cannot stand for them) and run in float between
// DequantizeLinear and QuantizeLinear, in both runtimes.
const EXPECTED = {
  digits: {
    per_tensor: DIGITS,
    per_channel: DIGITS,
    dynamic: `DynamicQuantizeLinear Reshape Reshape Reshape Reshape Mul ConvInteger Cast Mul Add Relu ${DYN} Relu MaxPool ${DYN} Relu ${DYN} Add Relu GlobalAveragePool Flatten ${DYN_MM}`,
  },
  cnn: {
    per_tensor: CNN,
    per_channel: CNN,
    per_channel_reduce_range: CNN,
    act_symmetric: `QuantizeLinear QLinearConv DequantizeLinear Relu QuantizeLinear QLinearConv DequantizeLinear Clip QuantizeLinear MaxPool ${CNN_TAIL}`,
    qdq_weights: CNN, // the float weights' QuantizeLinear folded into int8 initializers
    dedicated: CNN, // the per-consumer Q/DQ copies merged
  },
  mlp: { per_tensor: MLP, per_channel: MLP, act_symmetric: MLP, act_int8: MLP_INT8, qdq_weights: MLP, dynamic: `Transpose ${DYN_MM} Reshape Mul ${DYN_MM}` },
};

for (const [name, variants] of Object.entries(EXPECTED)) {
  for (const [variant, layers] of Object.entries(variants)) {
    test(`${variant === 'dynamic' ? 'quantize_dynamic' : 'quantize_static'} ${name} (${variant}): ${variant === 'dynamic' ? 'the integer operators' : 'fused into integer operators'}, equal to onnxruntime-web`, async () => {
      const doc = fixture(`ort_static/${name}.json`);
      assert.ok(doc.variants[variant], `${name}.json lists ${variant}`);
      const bytes = bytesOf(`${name}-${variant}.onnx`);
      const model = await qwasm.loadModel(bytes);
      const ort = await createOrtRunner(bytes);
      try {
        assert.equal(model.layers.map((l) => l.opType).join(' '), layers);
        for (const c of doc.cases) {
          const x = Float32Array.from(c.x);
          const ours = (await model.run({ [doc.input]: { data: x, dims: doc.input_dims } }))[doc.output];
          const ref = await ort.run({ [doc.input]: { type: 'float32', data: x, dims: doc.input_dims } });
          assert.deepEqual(ours.dims, Array.from(ort.lastDims[doc.output]));
          assertBitEqual(assert, ours.data, ref[doc.output], `${name}-${variant} vs onnxruntime-web`);
        }
      } finally {
        model.dispose();
        await ort.release();
      }
    });
  }
}

test('quantize_dynamic cnn: every tensor to the probabilities equals onnxruntime-web', async () => {
  // The probe file (tools/golden/ort_quantize_real.py) outputs every float tensor. All are byte-identical, through
  // the ConvInteger / MatMulInteger layers and the float ops between them, to the logits and the float Softmax
  // (onnxruntime's MLAS form, docs/transformer-ops.md).
  const doc = fixture('ort_static/cnn.json');
  await withQwasmAndOrt(bytesOf('cnn-dynamic-probe.onnx'), async (run, model) => {
    // every value is a graph output, so the dynamic product stays unfused (as in onnxruntime)
    assert.equal(model.layers.map((l) => l.opType).join(' '), `Reshape Reshape ${DYN} Relu ${DYN} Clip MaxPool AveragePool Add Sigmoid Mul Concat GlobalAveragePool Flatten DynamicQuantizeLinear Mul MatMulInteger Cast Mul Add Softmax`);
    const names = model.outputs.map((o) => o.name);
    assert.ok(names.length >= 13 && names.includes('logits') && names.includes(doc.output), `${names.length} probes`);
    for (const c of doc.cases) {
      const { ours, ref } = await run(doc.input, Float32Array.from(c.x), doc.input_dims);
      for (const name of names) assertBitEqual(assert, ours[name].data, ref[name], `${name} vs onnxruntime-web`);
    }
  });
});

test('quantize_static cnn (per_channel): every quantized intermediate equals onnxruntime-web', async () => {
  const doc = fixture('ort_static/cnn.json');
  const bytes = bytesOf('cnn-per_channel-probe.onnx');
  const model = await qwasm.loadModel(bytes);
  const ort = await createOrtRunner(bytes);
  try {
    const probes = model.outputs.filter((o) => o.name.endsWith('_QuantizeLinear_Output')).map((o) => o.name);
    assert.equal(probes.length, 13); // x, r1, r2, p, a, s, g, m, cat, gap, flat, logits, probs
    for (const c of doc.cases) {
      const x = Float32Array.from(c.x);
      const ours = await model.run({ x: { data: x, dims: doc.input_dims } });
      const ref = await ort.run({ x: { type: 'float32', data: x, dims: doc.input_dims } });
      for (const name of probes) {
        assert.equal(ours[name].dtype, 'uint8', name);
        assertBitEqual(assert, ours[name].data, ref[name], `${name} vs onnxruntime-web`);
      }
    }
  } finally {
    model.dispose();
    await ort.release();
  }
});

test('quantize_static cnn with int8 activations: equal to onnxruntime-web, the groups with mixed types in float', async () => {
  // onnxruntime-web turns an int8 Q -> DQ pair into uint8 (QDQS8ToU8Transformer) only where the Q feeds one DQ
  // that feeds one node. Here the MaxPool output's DQ feeds the AveragePool, the Add and the Concat, and the Add's
  // feeds the Sigmoid and the Mul: those pairs stay int8 while the others become uint8, and ORT leaves every group
  // whose sides then differ unfused (DQ -> float op -> Q): MaxPool, AveragePool, Add, Sigmoid, Mul, Concat. So does
  // qwasm (docs/quantize-static.md).
  const doc = fixture('ort_static/cnn.json');
  const bytes = bytesOf('cnn-act_int8.onnx');
  const model = await qwasm.loadModel(bytes);
  const ort = await createOrtRunner(bytes);
  try {
    const float = (op) => `DequantizeLinear ${op} QuantizeLinear`;
    assert.equal(model.layers.map((l) => l.opType).join(' '), `QuantizeLinear QLinearConv QLinearConv ${['MaxPool', 'AveragePool', 'Add', 'Sigmoid', 'Mul', 'Concat'].map(float).join(' ')} QLinearGlobalAveragePool Flatten QGemm QLinearSoftmax DequantizeLinear`);
    for (const c of doc.cases) {
      const x = Float32Array.from(c.x);
      const ours = (await model.run({ x: { data: x, dims: doc.input_dims } })).probs;
      const ref = await ort.run({ x: { type: 'float32', data: x, dims: doc.input_dims } });
      assertBitEqual(assert, ours.data, ref.probs, 'cnn-act_int8 vs onnxruntime-web');
    }
  } finally {
    model.dispose();
    await ort.release();
  }
});

test('quantize_static digits: onnxruntime-web\'s predictions on the fixture agree with the float model', async () => {
  // A check of the fixture, not of qwasm: the reimplemented quantizer must give a working model.
  const doc = fixture('ort_static/digits.json');
  for (const variant of ['per_tensor', 'per_channel']) {
    const ort = await createOrtRunner(bytesOf(`digits-${variant}.onnx`));
    let agree = 0;
    for (const c of doc.cases) {
      const y = (await ort.run({ input: { type: 'float32', data: Float32Array.from(c.x), dims: doc.input_dims } })).output;
      const argmax = (a) => Array.from(a).indexOf(Math.max(...a));
      if (argmax(y) === argmax(c.float_y)) agree++;
    }
    await ort.release();
    assert.ok(agree >= doc.cases.length - 1, `${variant}: ${agree} of ${doc.cases.length} predictions agree`);
  }
});

test('quantize_static with 16-bit activations (com.microsoft Q/DQ): a named error, while onnxruntime-web runs it', async () => {
  const bytes = bytesOf('mlp-uint16.onnx');
  const doc = fixture('ort_static/mlp.json');
  const ort = await createOrtRunner(bytes);
  try {
    const y = (await ort.run({ x: { type: 'float32', data: Float32Array.from(doc.cases[0].x), dims: doc.input_dims } })).y;
    assert.equal(y.length, 7);
  } finally {
    await ort.release();
  }
  await assert.rejects(qwasm.loadModel(bytes), (e) => e instanceof ModelFormatError && /zero_point.*data type 4 \(UINT16\) is not supported/.test(e.message));
});

// The ONNX Runtime kernels the fused pooling and softmax groups run on (js/model/ort-kernels.js), on their
// own: one DequantizeLinear -> op -> QuantizeLinear group per case, against onnxruntime-web, uint8 and int8.
async function unaryGroup(op, attributes, dims, [xs, xz, ys, yz], elem, seed) {
  const f = (name, v) => ({ name, elemType: 'FLOAT', dims: [], data: [v] });
  const z = (name, v) => ({ name, elemType: elem, dims: [], data: [v] });
  const bytes = graphModel({
    inputs: [{ name: 'x', elemType: 'FLOAT', dims }],
    initializers: [f('xs', xs), z('xz', xz), f('ys', ys), z('yz', yz)],
    nodes: [
      { opType: 'QuantizeLinear', inputs: ['x', 'xs', 'xz'], outputs: ['xq'] },
      { opType: 'DequantizeLinear', inputs: ['xq', 'xs', 'xz'], outputs: ['xd'] },
      { opType: op, inputs: ['xd'], outputs: ['r'], attributes },
      { opType: 'QuantizeLinear', inputs: ['r', 'ys', 'yz'], outputs: ['yq'] },
      { opType: 'DequantizeLinear', inputs: ['yq', 'ys', 'yz'], outputs: ['y'] },
    ],
    outputs: [{ name: 'y', elemType: 'FLOAT', dims: null }],
  });
  const rng = mulberry32(seed);
  const x = Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => ((rng() % 3000) / 10 - 150) * xs); // mulberry32 gives uint32
  const model = await qwasm.loadModel(bytes);
  const ort = await createOrtRunner(bytes);
  try {
    assert.equal(model.layers.map((l) => l.opType).join(' '), `QuantizeLinear QLinear${op} DequantizeLinear`);
    const ours = (await model.run({ x: { data: x, dims } })).y;
    const ref = (await ort.run({ x: { type: 'float32', data: x, dims } })).y;
    assert.deepEqual(ours.dims, Array.from(ort.lastDims.y));
    assertBitEqual(assert, ours.data, ref, `${op} ${JSON.stringify(attributes)} ${elem} vs onnxruntime-web`);
  } finally {
    model.dispose();
    await ort.release();
  }
}

test('QDQ AveragePool, GlobalAveragePool and Softmax groups equal onnxruntime-web (ties, padding, ceil_mode, int8)', async () => {
  let seed = 1;
  for (const elem of ['UINT8', 'INT8']) {
    // Odd zero points: a tie rounded on the wrong side of the zero point fails.
    const [zx, zo, zy] = elem === 'INT8' ? [-125, 3, -121] : [3, 131, 7];
    const exact = [0.0625, zx, 0.0625, zx]; // power-of-two scale: exact sums, real .5 ties
    const same = [0.05, zx, 0.05, zx];
    const other = [0.05, zo, 0.0371, zy];
    for (const attrs of [
      { kernel_shape: [2, 2] },
      { kernel_shape: [2, 2], strides: [2, 2] },
      { kernel_shape: [3, 3], pads: [1, 1, 1, 1] },
      { kernel_shape: [3, 3], pads: [1, 1, 1, 1], count_include_pad: 1 },
      { kernel_shape: [3, 2], strides: [2, 2], pads: [1, 0, 1, 1], ceil_mode: 1 },
      { kernel_shape: [7, 9] }, // the whole image: ORT's global pool
    ]) {
      // int8: with a DQ after the last Q, ORT rewrites both pairs to uint8 and runs the uint8 kernel (the other
      // contexts are in the test below).
      for (const q of [exact, same, other]) await unaryGroup('AveragePool', attrs, [1, 3, 7, 9], q, elem, seed++);
    }
    for (const q of [exact, same, other]) await unaryGroup('GlobalAveragePool', {}, [2, 5, 6, 8], q, elem, seed++);
    const off = elem === 'INT8' ? -128 : 0;
    for (const axis of [-1, 1]) await unaryGroup('Softmax', { axis }, [2, 10, 3], [0.0812, 120 + off, 1 / 256, off], elem, seed++);
  }
});

test('float AveragePool equals onnxruntime-web bit for bit (its global, vector and generic kernels)', async () => {
  const dims = [1, 4, 9, 13];
  const rng = mulberry32(9);
  const x = Float32Array.from({ length: 4 * 9 * 13 }, () => (rng() % 100000) / 997.3 - 50); // inexact sums
  for (const attributes of [
    { kernel_shape: [2, 2] },
    { kernel_shape: [3, 3], pads: [1, 1, 1, 1] },
    { kernel_shape: [3, 3], pads: [1, 2, 0, 1], count_include_pad: 1 },
    { kernel_shape: [3, 3], strides: [2, 2] },
    { kernel_shape: [3, 5], strides: [1, 3] }, // stride 3 along the width: the generic kernel
    { kernel_shape: [9, 13] }, // the whole image: the global kernel
  ]) {
    const bytes = graphModel({
      inputs: [{ name: 'x', elemType: 'FLOAT', dims }],
      initializers: [],
      nodes: [{ opType: 'AveragePool', inputs: ['x'], outputs: ['y'], attributes }],
      outputs: [{ name: 'y', elemType: 'FLOAT', dims: null }],
    });
    const model = await qwasm.loadModel(bytes);
    const ort = await createOrtRunner(bytes);
    try {
      const ours = (await model.run({ x: { data: x, dims } })).y;
      const ref = (await ort.run({ x: { type: 'float32', data: x, dims } })).y;
      assert.deepEqual(ours.dims, Array.from(ort.lastDims.y));
      assertBitEqual(assert, ours.data, ref, `AveragePool ${JSON.stringify(attributes)} vs onnxruntime-web`);
    } finally {
      model.dispose();
      await ort.release();
    }
  }
});

// An int8 DequantizeLinear -> AveragePool -> QuantizeLinear group in the contexts that decide what ONNX Runtime
// runs (docs/quantize-static.md): its QDQS8ToU8Transformer rewrites an int8 Q -> DQ pair to uint8 only where the
// Q feeds that one DQ and is no graph output and the DQ feeds one node; its selector then fuses the group only
// if both sides have the same type. The contexts give different results on these inputs (checked at the end),
// so qwasm picking the wrong computation fails.
test('int8 AveragePool groups equal onnxruntime-web in every context (float path, int8 and uint8 QLinearAveragePool)', async () => {
  const dims = [1, 3, 7, 9];
  const contexts = {
    // name: [extra graph outputs, DQ after the last Q, what qwasm should run]
    'last Q the graph output': [['yq'], false, 'float'],
    'both Q outputs graph outputs': [['xq', 'yq'], false, 'int8'],
    'a DequantizeLinear after the last Q': [[], true, 'uint8'],
    'DQ after, first Q also a graph output': [['xq'], true, 'float'],
    'DQ after, first DQ also a graph output': [['xd'], true, 'float'],
  };
  const seen = new Map(); // scale + attrs -> set of distinct results over the contexts
  let seed = 40;
  for (const s of [0.05, 0.0625]) {
    for (const attributes of [
      { kernel_shape: [2, 2] },
      { kernel_shape: [3, 3], pads: [1, 1, 1, 1] },
      { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], count_include_pad: 1 },
    ]) {
      const rng = mulberry32(seed++);
      const x = Float32Array.from({ length: 3 * 7 * 9 }, () => ((rng() % 3000) / 10 - 150) * s);
      for (const [name, [extra, dqAfter, kind]] of Object.entries(contexts)) {
        const F = (n, v) => ({ name: n, elemType: 'FLOAT', dims: [], data: [v] });
        const Z = (n, v) => ({ name: n, elemType: 'INT8', dims: [], data: [v] });
        const nodes = [
          { opType: 'QuantizeLinear', inputs: ['x', 's', 'z'], outputs: ['xq'] },
          { opType: 'DequantizeLinear', inputs: ['xq', 's', 'z'], outputs: ['xd'] },
          { opType: 'AveragePool', inputs: ['xd'], outputs: ['r'], attributes },
          { opType: 'QuantizeLinear', inputs: ['r', 'ys', 'yz'], outputs: ['yq'] },
        ];
        if (dqAfter) nodes.push({ opType: 'DequantizeLinear', inputs: ['yq', 'ys', 'yz'], outputs: ['y'] });
        const type = { xq: 'INT8', yq: 'INT8', xd: 'FLOAT' };
        const bytes = graphModel({
          inputs: [{ name: 'x', elemType: 'FLOAT', dims }],
          initializers: [F('s', s), Z('z', -125), F('ys', s), Z('yz', -125)],
          nodes,
          outputs: [...(dqAfter ? ['y'] : []), ...extra].map((n) => ({ name: n, elemType: type[n] ?? 'FLOAT', dims: null })),
        });
        const model = await qwasm.loadModel(bytes);
        const ort = await createOrtRunner(bytes);
        const label = `${name}, scale ${s}, ${JSON.stringify(attributes)}`;
        try {
          const layers = model.layers.map((l) => l.opType).join(' ');
          assert.equal(layers.includes('QLinearAveragePool'), kind !== 'float', `${label}: ${layers}`);
          const pool = model.layers.find((l) => l.opType === 'QLinearAveragePool');
          if (pool) assert.equal(pool.input.dtype, kind, label);
          const ours = await model.run({ x: { data: x, dims } });
          const ref = await ort.run({ x: { type: 'float32', data: x, dims } });
          const out = dqAfter ? 'y' : 'yq';
          assertBitEqual(assert, ours[out].data, ref[out], `${label} vs onnxruntime-web`);
          for (const n of extra) assertBitEqual(assert, ours[n].data, ref[n], `${label}: ${n}`);
          const key = `${s} ${JSON.stringify(attributes)}`;
          const q = dqAfter ? Array.from(ref.y, (v) => Math.round(v / s) - 125) : Array.from(ref.yq); // the int8 values
          if (!seen.has(key)) seen.set(key, new Map());
          seen.get(key).set(kind, q.join(','));
        } finally {
          model.dispose();
          await ort.release();
        }
      }
    }
  }
  // The inputs tell the computations apart. Scale 0.05: some pooling gives three different results. Scale 0.0625
  // (a power of two): the int8 and uint8 forms cannot differ (an average of multiples of the scale, over the
  // scale, is exact or at least 1/18 away from a tie, and a tie rounds to even on both sides of + 128), but the
  // float path (rounding before the zero point is added) still differs from them.
  const results = (s) => [...seen].filter(([k]) => k.startsWith(`${s} `)).map(([, m]) => m);
  assert.ok(results(0.05).some((m) => new Set(m.values()).size === 3), 'scale 0.05: three different results');
  for (const m of results(0.0625)) assert.equal(m.get('int8'), m.get('uint8'));
  assert.ok(results(0.0625).some((m) => m.get('float') !== m.get('int8')), 'scale 0.0625: the float path differs');
});
