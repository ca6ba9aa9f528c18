// Model.initializer(name): a copy of a graph constant (a layer's weights, bias, scale, zero point);
// Model.layers' qparams and Model.weight(name): for tools that inspect a model (the demo page's layer
// table and integer explainer).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { failOnLeaks, qwasm } from './helpers.js';
import { qlinearConvModel } from '../../tools/bench/ort.mjs';
import { QPARAMS } from '../../tools/bench/cases.mjs';

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

test('layers carry each layer\'s qparams (equal to PyTorch\'s) and weight; weight() gives it as a QTensor', async () => {
  const doc = JSON.parse(readFileSync(new URL('../fixtures/torch/models/convnet.json', import.meta.url), 'utf8'));
  const model = await qwasm.loadModel(new Uint8Array(readFileSync(new URL('../fixtures/torch/models/convnet.onnx', import.meta.url))));
  try {
    const ref = doc.cases[0].tensors; // PyTorch's scale and zero point of each quantized tensor, by ONNX name
    let checked = 0;
    for (const layer of model.layers) {
      const t = ref[layer.outputs[0]];
      if (!t || !layer.output) continue;
      assert.equal(layer.output.scale, Math.fround(t.scale), `${layer.name}: output scale`);
      assert.equal(layer.output.zeroPoint, t.zero_point, `${layer.name}: output zero point`);
      checked++;
    }
    assert.ok(checked >= 8, `only ${checked} layers checked`);
    // each 8-bit layer's input qparams are its producer's output qparams
    const byOutput = new Map(model.layers.map((l) => [l.outputs[0], l]));
    for (const layer of model.layers.filter((l) => l.opType === 'QLinearConv')) {
      assert.deepEqual(layer.input, byOutput.get(layer.inputs[0])?.output, `${layer.name}: input qparams`);
    }
    const perChannel = model.layers.find((l) => l.weight?.scales.length > 1);
    assert.ok(perChannel, 'convnet has a per-channel conv');
    assert.deepEqual(perChannel.bias, { name: perChannel.inputs[8], dtype: 'int32', dims: [perChannel.weight.dims[0]] });
    assert.equal(perChannel.weight.axis, 0);
    const w = model.weight(perChannel.name);
    try {
      const raw = model.initializer(perChannel.weight.name);
      assert.deepEqual(w.shape, raw.dims);
      assert.deepEqual(Array.from(w.intRepr()), Array.from(raw.data));
      const deq = w.dequantize();
      const inner = raw.data.length / raw.dims[0];
      for (let i = 0; i < raw.data.length; i += 7) {
        const c = Math.floor(i / inner);
        const expected = Math.fround(Math.fround(perChannel.weight.scales[c]) * (raw.data[i] - perChannel.weight.zeroPoints[c]));
        assert.equal(deq[i], expected, `weight element ${i} (channel ${c})`);
      }
    } finally {
      w.dispose();
    }
    assert.throws(() => model.weight('no such layer'), /no layer named "no such layer"/);
    const pool = model.layers.find((l) => l.opType === 'MaxPool');
    assert.throws(() => model.weight(pool.name), /has no constant quantized weight/);
    assert.equal(pool.weight, null);
    assert.deepEqual(pool.output, pool.input, 'max pool passes its qparams through');
  } finally {
    model.dispose();
  }
});

test('inputs and outputs carry the qparams they are quantized with: the digits model\'s are PyTorch\'s', async () => {
  const digits = JSON.parse(readFileSync(new URL('../../models/digits.json', import.meta.url), 'utf8'));
  const model = await qwasm.loadModel(new Uint8Array(readFileSync(new URL('../../models/digits.onnx', import.meta.url))));
  try {
    const [input] = model.inputs;
    assert.equal(input.dtype, 'float32');
    const quant = model.layers.find((l) => l.opType === 'QuantizeLinear');
    assert.deepEqual(input.qparams, quant.output, 'the float input is quantized by the first QuantizeLinear');
    const output = model.outputs.find((o) => o.name === digits.output.name);
    // digits.json records PyTorch's scale and zero point of the quantized logits (before DeQuantStub)
    assert.deepEqual(output.qparams, { scale: Math.fround(digits.test_images[0].scale), zeroPoint: digits.test_images[0].zero_point, dtype: 'uint8' });
  } finally {
    model.dispose();
  }
  // an 8-bit input read by QLinearConv with its x_scale / x_zero_point, its 8-bit output with y_scale / y_zero_point
  const c = { N: 1, Cin: 2, H: 3, W: 3, Cout: 2, Hout: 3, Wout: 3, kh: 1, kw: 1, pad: 0, stride: 1, group: 1 };
  const qop = await qwasm.loadModel(qlinearConvModel(c, new Int8Array(4).fill(1), new Int32Array(2)));
  try {
    assert.deepEqual(qop.inputs[0].qparams, { scale: Math.fround(QPARAMS.xScale), zeroPoint: QPARAMS.xZp, dtype: 'uint8' });
    assert.deepEqual(qop.outputs[0].qparams, { scale: Math.fround(QPARAMS.yScale), zeroPoint: QPARAMS.yZp, dtype: 'uint8' });
  } finally {
    qop.dispose();
  }
  const float = await qwasm.loadModel(new Uint8Array(readFileSync(new URL('../../models/digits-float.onnx', import.meta.url))));
  try {
    assert.equal(float.inputs[0].qparams, null);
    assert.ok(float.outputs.every((o) => o.qparams === null));
  } finally {
    float.dispose();
  }
});
