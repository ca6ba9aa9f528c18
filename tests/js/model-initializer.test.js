// Model.initializer(name): a copy of a graph constant (a layer's weights, bias, scale, zero point), for
// tools that inspect a model (the demo page's layer table and integer explainer).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const bytes = () => new Uint8Array(readFileSync(new URL('../fixtures/torch/qdq/convnet.onnx', import.meta.url)));

test('initializer returns copies of a layer\'s constants, undefined for other names', async () => {
  const model = await qwasm.loadModel(bytes());
  try {
    const conv = model.layers.find((l) => l.opType === 'QLinearConv');
    const [, xScale, xZero, w, wScale, wZero, , , bias] = conv.inputs;
    const weight = model.initializer(w);
    assert.equal(weight.dtype, 'int8');
    assert.ok(weight.data instanceof Int8Array);
    assert.equal(weight.dims.length, 4);
    assert.equal(weight.data.length, weight.dims.reduce((a, b) => a * b, 1));
    const s = model.initializer(xScale);
    assert.equal(s.dtype, 'float32');
    assert.ok(s.data[0] > 0);
    assert.equal(model.initializer(xZero).dtype, 'uint8');
    assert.equal(model.initializer(wScale).dtype, 'float32');
    assert.equal(model.initializer(wZero).dtype, 'int8');
    assert.equal(model.initializer(bias).dtype, 'int32');
    assert.equal(model.initializer(bias).data.length, weight.dims[0]);
    // a copy: changing it does not change the model
    const x = new Float32Array(64).fill(0.5);
    const before = (await model.run({ x: { data: x, dims: [1, 1, 8, 8] } })).y.data;
    weight.data.fill(0);
    weight.dims[0] = 1;
    assert.notEqual(model.initializer(w).data.every((v) => v === 0), true);
    assert.equal(model.initializer(w).dims.length, 4);
    assert.deepEqual((await model.run({ x: { data: x, dims: [1, 1, 8, 8] } })).y.data, before);
    // activations and unknown names are not constants
    assert.equal(model.initializer(conv.outputs[0]), undefined);
    assert.equal(model.initializer('x'), undefined);
    assert.equal(model.initializer('no such tensor'), undefined);
  } finally {
    model.dispose();
  }
});
