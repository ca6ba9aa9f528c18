// loadModel on real ONNX files: the ONNX conformance data (Debian libonnx-testdata, as JSON under
// tests/fixtures/onnx) rebuilt as single-node .onnx files with protobufjs and run end to end through
// decoding, validation and the kernels; plus every kind of bad input.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import { singleNodeModel } from '../../tools/bench/onnx-model.mjs';
import { assertBitEqual, failOnLeaks, fixture, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const ELEM = { float32: 'FLOAT', uint8: 'UINT8', int8: 'INT8', int32: 'INT32', int64: 'INT64' };

/** The conformance case as an .onnx file whose first input is a graph input and the rest initializers. */
function modelOf(c, graphInputs = 1) {
  const present = c.inputs;
  return singleNodeModel({
    opType: c.node.op_type,
    domain: c.node.domain,
    opset: c.opset,
    inputs: present.slice(0, graphInputs).map((t) => ({ name: t.name, elemType: ELEM[t.dtype], dims: t.dims })),
    initializers: present.slice(graphInputs).map((t) => ({ name: t.name, elemType: ELEM[t.dtype], dims: t.dims, data: t.data })),
    nodeInputs: c.node.inputs,
    outputs: c.outputs.map((o) => ({ name: o.name, elemType: ELEM[o.dtype], dims: o.dims })),
    attributes: c.node.attributes,
  });
}

const ARRAYS = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array };

for (const name of ['test_quantizelinear', 'test_quantizelinear_axis', 'test_dequantizelinear', 'test_dequantizelinear_axis',
  'test_qlinearmatmul_2D', 'test_qlinearmatmul_3D', 'test_qlinearconv', 'test_matmulinteger', 'test_convinteger_with_padding',
  'test_convinteger_without_padding', 'test_basic_convinteger', 'test_dynamicquantizelinear',
  'test_dynamicquantizelinear_max_adjusted', 'test_dynamicquantizelinear_min_adjusted']) {
  test(`loadModel runs ${name} bit for bit`, async () => {
    const c = fixture(`onnx/${name}.json`);
    const model = await qwasm.loadModel(modelOf(c));
    try {
      const x = c.inputs[0];
      const out = await model.run({ [x.name]: { data: ARRAYS[x.dtype].from(x.data), dims: x.dims } });
      for (const o of c.outputs) {
        assertBitEqual(assert, Array.from(out[o.name].data, Number), o.data, `${name} ${o.name}`);
        assert.deepEqual(out[o.name].dims, o.dims);
      }
    } finally {
      model.dispose();
    }
  });
}

test('the model object: inputs, outputs, layers, dispose', async () => {
  const c = fixture('onnx/test_qlinearconv.json');
  const model = await qwasm.loadModel(modelOf(c));
  // qparams: the conformance data's x_scale / x_zero_point and y_scale / y_zero_point
  const qp = (s, z) => ({ scale: Math.fround(c.inputs[s].data[0]), zeroPoint: c.inputs[z].data[0], dtype: 'uint8' });
  assert.deepEqual(model.inputs, [{ name: 'x', dtype: 'uint8', dims: [1, 1, 7, 7], qparams: qp(1, 2) }]);
  assert.deepEqual(model.outputs, [{ name: 'y', dtype: 'uint8', dims: [1, 1, 7, 7], qparams: qp(6, 7) }]);
  assert.equal(model.layers[0].opType, 'QLinearConv');
  assert.equal(model.semantics, 'onnx');
  const x = Uint8Array.from(c.inputs[0].data);
  await assert.rejects(model.run({ x: x.subarray(1) }), /run: input "x" has 48 values, its shape \[1,1,7,7\] needs 49/);
  await assert.rejects(model.run({ x: Float32Array.from(x) }), /run: input "x" must be uint8: a Uint8Array or \{ data, dims \} or a QTensor, got Float32Array/);
  await assert.rejects(model.run({ x: { data: x, dims: [1, 1, 49, 1] } }), /run: input "x": dimension 2 is 49, the model expects 7/);
  await assert.rejects(model.run({}), /run: input "x" is missing/);
  await assert.rejects(model.run({ x, y: x }), /the model has no input "y"; its inputs are "x"/);
  await assert.rejects(model.run({ x: 'pixels' }), /run: input "x" must be uint8: .* got String/);
  model.dispose();
  model.dispose();
  await assert.rejects(model.run({ x }), /Model\.run: the model was disposed/);
});

test('unsupported operators are named with their node and opset', async () => {
  const bytes = singleNodeModel({
    opType: 'Einsum', opset: 12, inputs: [{ name: 'a', elemType: 'FLOAT', dims: [2] }], initializers: [],
    outputs: [{ name: 'b', elemType: 'FLOAT', dims: [2] }], attributes: { equation: 'i->i' },
  });
  await assert.rejects(qwasm.loadModel(bytes), /unsupported operator Einsum \(node "Einsum_node", opset 12\)/);
  await assert.rejects(qwasm.loadModel(bytes), qwasm.UnsupportedError);
  await assert.rejects(qwasm.loadModel(new Uint8Array([8, 1, 18, 200])), qwasm.ModelFormatError);
});

test('truncated, corrupted and hostile files end in an error, never a crash', async () => {
  const good = modelOf(fixture('onnx/test_qlinearconv.json'));
  await assert.rejects(qwasm.loadModel(good.subarray(0, good.length - 7)), /malformed ONNX file|raw_data|holds|no graph/);
  await assert.rejects(qwasm.loadModel(new Uint8Array([8, 1, 18, 200])), /malformed ONNX file/);
  await assert.rejects(qwasm.loadModel(new Uint8Array(0)), /malformed ONNX file: no graph/);
  await assert.rejects(qwasm.loadModel('/no/such/model.onnx'), /loadModel: could not read \/no\/such\/model\.onnx/);
  await assert.rejects(qwasm.loadModel(42), /loadModel: the model must be a Uint8Array, an ArrayBuffer or a URL/);
  // An initializer declaring 2^40 elements with 4 bytes of data: rejected before any allocation.
  const hostile = singleNodeModel({
    opType: 'Identity', opset: 13, inputs: [], initializers: [{ name: 'a', elemType: 'FLOAT', dims: [1], data: [1] }],
    outputs: [{ name: 'b', elemType: 'FLOAT', dims: [1] }], attributes: {},
  });
  const patched = Uint8Array.from(hostile);
  const at = patched.findIndex((v, i) => v === 0x08 && patched[i + 1] === 0x01 && patched[i + 2] === 0x10); // dims: [1], data_type
  assert.ok(at > 0, 'found the initializer dims');
  const huge = new Uint8Array([...patched.subarray(0, at), 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, ...patched.subarray(at + 2)]);
  await assert.rejects(qwasm.loadModel(huge), /elements .* exceed the limit|malformed ONNX file/);
});

test('fuzz: thousands of truncated and bit-flipped files give a clean error or a correct run', async () => {
  const c = fixture('onnx/test_qlinearconv.json');
  const good = modelOf(c);
  const x = Uint8Array.from(c.inputs[0].data);
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 16777216;
  let errors = 0;
  let runs = 0;
  for (let i = 0; i < 3000; i++) {
    const bytes = Uint8Array.from(good.subarray(0, i % 3 === 0 ? Math.floor(rand() * good.length) : good.length)); // a copy
    const flips = i % 3 === 0 ? 0 : 1 + Math.floor(rand() * 4);
    for (let f = 0; f < flips; f++) bytes[Math.floor(rand() * bytes.length)] ^= 1 << Math.floor(rand() * 8);
    let model;
    try {
      model = await qwasm.loadModel(bytes);
      const out = await model.run({ x });
      assert.ok(out && typeof out === 'object');
      runs++;
    } catch (error) {
      assert.ok(error instanceof Error, `iteration ${i}: threw ${error}`);
      assert.ok(!(error instanceof WebAssembly.RuntimeError), `iteration ${i}: a wasm trap: ${error.message}`);
      assert.ok(!/Maximum call stack|out of memory|is not a function|Cannot read prop/.test(error.message), `iteration ${i}: ${error.message}`);
      errors++;
    } finally {
      model?.dispose();
    }
  }
  assert.ok(errors > 100 && runs > 10, `${errors} clean errors, ${runs} runs`);
});

/** A one-node float model run on `x`: returns the output data. */
async function runFloatNode(opType, x, dims, outDims, { attributes = {}, initializers = [], nodeInputs } = {}) {
  const bytes = singleNodeModel({
    opType, opset: 13, inputs: [{ name: 'x', elemType: 'FLOAT', dims }], initializers,
    nodeInputs: nodeInputs ?? ['x', ...initializers.map((t) => t.name)], outputs: [{ name: 'y', elemType: 'FLOAT', dims: outDims }], attributes,
  });
  const model = await qwasm.loadModel(bytes);
  try {
    const out = await model.run({ x: { data: Float32Array.from(x), dims } });
    assert.deepEqual(out.y.dims, outDims, `${opType} output shape`);
    return Array.from(out.y.data);
  } finally {
    model.dispose();
  }
}

test('the float operators around quantized layers', async () => {
  const f = (name, dims, data) => ({ name, elemType: 'FLOAT', dims, data });
  const i64 = (name, data) => ({ name, elemType: 'INT64', dims: [data.length], data: data.map(BigInt) });
  assert.deepEqual(await runFloatNode('Add', [1, 2, 3, 4], [2, 2], [2, 2], { initializers: [f('b', [2], [10, 20])] }), [11, 22, 13, 24]);
  assert.deepEqual(await runFloatNode('Mul', [1, 2, 3, 4], [2, 2], [2, 2], { initializers: [f('b', [2, 1], [2, 3])] }), [2, 4, 9, 12]);
  assert.deepEqual(await runFloatNode('Transpose', [1, 2, 3, 4, 5, 6], [2, 3], [3, 2]), [1, 4, 2, 5, 3, 6]);
  assert.deepEqual(await runFloatNode('Concat', [1, 2], [1, 2], [2, 2], { attributes: { axis: 0 }, initializers: [f('b', [1, 2], [3, 4])] }), [1, 2, 3, 4]);
  assert.deepEqual(await runFloatNode('MatMul', [1, 2, 3, 4], [2, 2], [2, 1], { initializers: [f('b', [2, 1], [1, 1])] }), [3, 7]);
  assert.deepEqual(
    await runFloatNode('Gemm', [1, 2, 3, 4], [2, 2], [2, 2], { attributes: { transB: 1, alpha: { type: 'FLOAT', value: 2 }, beta: { type: 'FLOAT', value: 1 } }, initializers: [f('b', [2, 2], [1, 0, 0, 1]), f('c', [2], [0.5, -0.5])] }),
    [2.5, 3.5, 6.5, 7.5],
  );
  assert.deepEqual(await runFloatNode('GlobalAveragePool', [1, 2, 3, 4, 10, 20, 30, 40], [1, 2, 2, 2], [1, 2, 1, 1]), [2.5, 25]);
  assert.deepEqual(await runFloatNode('Relu', [-1, 2], [2], [2]), [0, 2]);
  assert.deepEqual(await runFloatNode('Clip', [-1, 0.5, 9], [3], [3], { initializers: [f('lo', [], [0]), f('hi', [], [6])] }), [0, 0.5, 6]);
  assert.deepEqual(await runFloatNode('HardSigmoid', [-5, 0, 5], [3], [3]), [0, 0.5, 1]);
  assert.deepEqual(await runFloatNode('HardSwish', [-4, 0, 1, 4], [4], [4]), [-0, 0, Math.fround(1 * (1 / 6 + 0.5)), 4]);
  const sm = await runFloatNode('Softmax', [0, Math.log(3)], [1, 2], [1, 2]);
  assert.deepEqual(sm.map((v) => Math.round(v * 1e6) / 1e6), [0.25, 0.75]);
  assert.deepEqual(await runFloatNode('Sigmoid', [0], [1], [1]), [0.5]);
  assert.deepEqual(await runFloatNode('Flatten', [1, 2, 3, 4], [1, 2, 2], [1, 4]), [1, 2, 3, 4]);
  assert.deepEqual(await runFloatNode('Reshape', [1, 2, 3, 4], [2, 2], [4, 1], { initializers: [i64('s', [-1, 1])] }), [1, 2, 3, 4]);
  assert.deepEqual(await runFloatNode('Unsqueeze', [1, 2], [2], [1, 2], { initializers: [i64('axes', [0])] }), [1, 2]);
  assert.deepEqual(await runFloatNode('Squeeze', [1, 2], [1, 2], [2], { initializers: [i64('axes', [0])] }), [1, 2]);
  assert.deepEqual(await runFloatNode('Gather', [1, 2, 3], [3], [2], { initializers: [i64('i', [2, -3])] }), [3, 1]);
});

test('Split: sizes from the input, equal parts, and sizes that do not add up', async () => {
  const x = Float32Array.from({ length: 2 * 5 }, (_, i) => i);
  const splitModel = (sizes, outs) => singleNodeModel({
    opType: 'Split', opset: 13,
    inputs: [{ name: 'x', elemType: 'FLOAT', dims: [2, 5] }],
    initializers: sizes ? [{ name: 'split', elemType: 'INT64', dims: [sizes.length], data: sizes }] : [],
    nodeInputs: sizes ? ['x', 'split'] : ['x'],
    outputs: outs.map((d, i) => ({ name: `y${i}`, elemType: 'FLOAT', dims: d })),
    attributes: { axis: 1 },
  });
  const m = await qwasm.loadModel(splitModel([2, 3], [[2, 2], [2, 3]]));
  try {
    const out = await m.run({ x });
    assert.deepEqual(Array.from(out.y0.data), [0, 1, 5, 6]);
    assert.deepEqual(Array.from(out.y1.data), [2, 3, 4, 7, 8, 9]);
    assert.deepEqual(out.y1.dims, [2, 3]);
  } finally {
    m.dispose();
  }
  const bad = await qwasm.loadModel(splitModel([2, 2], [[2, 2], [2, 2]]));
  try {
    await assert.rejects(bad.run({ x }), /Split.*split sizes \[2,2\] do not divide dimension 1 \(5\) into 2 outputs/);
  } finally {
    bad.dispose();
  }
  const uneven = await qwasm.loadModel(splitModel(null, [[2, 2], [2, 2]]));
  try {
    await assert.rejects(uneven.run({ x }), /5 does not split into 2 equal parts/);
  } finally {
    uneven.dispose();
  }
});

test('QLinearAveragePool needs a 4-D input (NHWC with channels_last = 1)', async () => {
  const s = (name, v, t = 'FLOAT') => ({ name, elemType: t, dims: [], data: [v] });
  const model = singleNodeModel({
    opType: 'QLinearAveragePool', domain: 'com.microsoft', opset: 1,
    inputs: [{ name: 'x', elemType: 'UINT8', dims: [1, 4, 4] }],
    initializers: [s('xs', 0.1), s('xz', 3, 'UINT8'), s('ys', 0.1), s('yz', 3, 'UINT8')],
    nodeInputs: ['x', 'xs', 'xz', 'ys', 'yz'],
    outputs: [{ name: 'y', elemType: 'UINT8', dims: [1, 2, 2] }],
    attributes: { kernel_shape: [2, 2], strides: [2, 2], channels_last: 1 },
  });
  const m = await qwasm.loadModel(model);
  try {
    await assert.rejects(m.run({ x: new Uint8Array(16) }), /QLinearAveragePool node "QLinearAveragePool_node": input 0 \(X\) must have 4 dimensions, got shape \[1,4,4\]$/);
  } finally {
    m.dispose();
  }
});
