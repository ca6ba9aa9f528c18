// The model loader's operator registry (js/model/operators/): every node is checked against its operator's entry
// when the model loads (inputs, attribute types and values, semantics forms), and an operator is one entry in its
// family file. Sqrt is the example of adding one: an entry in operators/elementwise.js, and this test against
// onnxruntime-web.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import { createOrtRunner } from '../../tools/bench/ort.mjs';
import { singleNodeModel } from '../../tools/bench/onnx-model.mjs';
import { mulberry32 } from '../../tools/bench/cases.mjs';
import { registeredOperators } from '../../js/model/operators/registry.js';
import { assertBitEqual, failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const F = (name, dims) => ({ name, elemType: 'FLOAT', dims });

async function bothRun(bytes, x, dims) {
  const runner = await createOrtRunner(bytes);
  let ref;
  try {
    ref = (await runner.run({ x: { type: 'float32', data: x, dims } })).y;
  } finally {
    await runner.release();
  }
  const model = await qwasm.loadModel(bytes);
  try {
    return { ours: (await model.run({ x: { data: x, dims } })).y.data, ref };
  } finally {
    model.dispose();
  }
}

test('Sqrt (one registry entry) equals onnxruntime-web bit for bit, NaN for negatives included', async () => {
  const rand = mulberry32(3);
  const x = Float32Array.from({ length: 4096 }, (_, i) => (i < 8 ? [0, -0, 1, 4, 2, Infinity, -1, 1e-45][i] : (rand() - 0.1) * 2 ** (rand() * 40 - 20)));
  const bytes = singleNodeModel({ opType: 'Sqrt', inputs: [F('x', [64, 64])], outputs: [F('y', [64, 64])] });
  const { ours, ref } = await bothRun(bytes, x, [64, 64]);
  assertBitEqual(assert, ours, ref, 'Sqrt');
});

test('Softmax follows its opset: from the axis on flattened before 13, along the axis alone from 13 (bit for bit)', async () => {
  const rand = mulberry32(9);
  const x = Float32Array.from({ length: 2 * 3 * 4 }, () => (rand() - 0.5) * 8);
  for (const [opset, attributes] of [[11, {}], [11, { axis: 2 }], [13, {}], [13, { axis: 1 }], [13, { axis: 0 }]]) {
    const bytes = singleNodeModel({ opType: 'Softmax', opset, attributes, inputs: [F('x', [2, 3, 4])], outputs: [F('y', [2, 3, 4])] });
    const { ours, ref } = await bothRun(bytes, x, [2, 3, 4]);
    assertBitEqual(assert, ours, ref, `Softmax opset ${opset} ${JSON.stringify(attributes)}`);
  }
});

test('a node whose inputs or attributes do not fit its operator fails at load, naming node, attribute and value', async () => {
  const conv = (attributes, nodeInputs = ['x', 'w']) => singleNodeModel({
    opType: 'Conv', attributes, nodeInputs, inputs: [F('x', [1, 1, 4, 4])],
    initializers: [{ name: 'w', elemType: 'FLOAT', dims: [1, 1, 3, 3], data: new Array(9).fill(1) }], outputs: [F('y', [1, 1, 2, 2])],
  });
  const cases = [
    [conv({ strides: { type: 'STRING', value: '1,1' } }), /^Conv node "Conv_node": attribute strides must be INTS, the file says STRING$/],
    [conv({ group: { type: 'FLOAT', value: 1 } }), /attribute group must be INT, the file says FLOAT/],
    [conv({ group: 0 }), /attribute group has an invalid value 0/],
    [conv({ pads: [1, 1, -1, 1] }), /attribute pads has an invalid value \[1,1,-1,1\]/],
    [conv({}, ['', 'w']), /^Conv node "Conv_node": required input 0 \(X\) is empty$/],
    [conv({}, ['x']), /^Conv node "Conv_node": has 1 inputs, Conv takes 2 to 3$/],
    [conv({}, ['x', 'w', '', 'w']), /has 4 inputs, Conv takes 2 to 3/],
    [singleNodeModel({ opType: 'Relu', inputs: [F('x', [2])], nodeInputs: ['x', 'x'], outputs: [F('y', [2])] }), /^Relu node "Relu_node": has 2 inputs, Relu takes 1$/],
    [singleNodeModel({ opType: 'Cast', inputs: [F('x', [2])], outputs: [F('y', [2])] }), /^Cast node "Cast_node": attribute to is required$/],
    // as many inputs as the operator requires, but the last required one (y_scale, input 3) is past the end:
    // an optional input before it must be there as an empty name (the fuzzer's seed 101 found a TypeError here)
    [singleNodeModel({
      opType: 'QLinearGlobalAveragePool', domain: 'com.microsoft', opset: 1,
      inputs: [{ name: 'x', elemType: 'UINT8', dims: [1, 1, 2, 2] }], nodeInputs: ['x', 's', 'z'],
      initializers: [{ name: 's', elemType: 'FLOAT', dims: [], data: [0.5] }, { name: 'z', elemType: 'UINT8', dims: [], data: [3] }],
      outputs: [{ name: 'y', elemType: 'UINT8', dims: [1, 1, 1, 1] }],
    }), /^QLinearGlobalAveragePool node "QLinearGlobalAveragePool_node": has 3 inputs, QLinearGlobalAveragePool takes 4 to 5$/],
  ];
  for (const [bytes, message] of cases) {
    await assert.rejects(qwasm.loadModel(bytes), (e) => e.name === 'ModelFormatError' && message.test(e.message) || assert.fail(`${e.name}: ${e.message} does not match ${message}`));
  }
  // unknown attributes are ignored, as ONNX Runtime ignores them
  const ok = await qwasm.loadModel(singleNodeModel({ opType: 'Relu', attributes: { qwasm_unknown: 3 }, inputs: [F('x', [2])], outputs: [F('y', [2])] }));
  assert.deepEqual(Array.from((await ok.run({ x: Float32Array.of(-1, 2) })).y.data), [0, 2]);
  ok.dispose();
});

test('the registry has one entry per operator, each with inputs and run', () => {
  const keys = registeredOperators();
  assert.equal(new Set(keys).size, keys.length);
  for (const k of ['QLinearConv', 'com.microsoft:QGemm', 'Conv', 'Sqrt', 'Reshape', 'com.microsoft:QLinearSoftmax']) assert.ok(keys.includes(k), k);
});
