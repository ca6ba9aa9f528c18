// QDQ models: PyTorch qnnpack models exported by torch.onnx (tools/golden/torch_qdq.py) are float
// operators between QuantizeLinear/DequantizeLinear pairs. loadModel fuses them into integer
// operators (js/model/qdq.js); the result must equal onnxruntime-web, the ONNX reference, bit for bit.
//
// Against PyTorch itself the outputs may differ by one output step on rare elements, and the cause is
// the exporter, not the arithmetic: torch.onnx writes each conv/linear bias as
// Cast(Div(bias, x_scale * w_scale), INT32) (torch/onnx/symbolic_helper.py, requantize_bias_helper),
// and Cast truncates toward zero where PyTorch's kernels round to nearest.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { createOrtRunner } from '../../tools/bench/ort.mjs';
import { graphModel } from '../../tools/bench/onnx-model.mjs';
import { assertBitEqual, failOnLeaks, fixture, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const modelBytes = (name) => new Uint8Array(readFileSync(new URL(`../fixtures/torch/qdq/${name}.onnx`, import.meta.url)));

const EXPECTED_LAYERS = {
  convnet: 'QuantizeLinear QLinearConv MaxPool Flatten QGemm DequantizeLinear', // the ReLU's Clip fused into the conv
  resnetlet: 'QuantizeLinear QLinearConv QLinearConv QLinearAdd QLinearGlobalAveragePool Flatten QGemm DequantizeLinear',
  // a padded AvgPool2d is written as Pad + AveragePool and x.mean([2, 3]) as ReduceMean: float operators between
  // DequantizeLinear and QuantizeLinear, as onnxruntime runs them
  poolnet: 'QuantizeLinear QLinearConv DequantizeLinear Pad AveragePool QuantizeLinear DequantizeLinear ReduceMean QuantizeLinear QGemm DequantizeLinear',
};

for (const name of Object.keys(EXPECTED_LAYERS)) {
  test(`QDQ ${name}: fused into integer operators, equal to onnxruntime-web, at most one step from PyTorch`, async () => {
    const bytes = modelBytes(name);
    const doc = fixture(`torch/qdq/${name}.json`);
    const model = await qwasm.loadModel(bytes);
    const ort = await createOrtRunner(bytes);
    try {
      assert.equal(model.layers.map((l) => l.opType).join(' '), EXPECTED_LAYERS[name]);
      let steps = 0;
      for (const c of doc.cases) {
        const x = Float32Array.from(c.x);
        const ours = (await model.run({ [doc.input]: { data: x, dims: doc.input_dims } }))[doc.output];
        assert.deepEqual(ours.dims, doc.output_dims);
        const ref = await ort.run({ [doc.input]: { type: 'float32', data: x, dims: doc.input_dims } });
        assertBitEqual(assert, ours.data, ref[doc.output], `${name} vs onnxruntime-web`);
        const torchY = Float32Array.from(c.y);
        for (let i = 0; i < torchY.length; i++) {
          const d = Math.abs(ours.data[i] - torchY[i]);
          if (d === 0) continue;
          steps++;
          assert.ok(d <= doc.output_scale * 1.0001, `${name}[${i}]: ${ours.data[i]} vs PyTorch ${torchY[i]}`);
        }
      }
      const profiled = await model.run({ [doc.input]: { data: Float32Array.from(doc.cases[0].x), dims: doc.input_dims } }, { profile: true });
      assert.deepEqual(profiled.profile.map((p) => p.opType), model.layers.map((l) => l.opType));
      assert.ok(profiled.profile.every((p) => p.ms >= 0 && Number.isFinite(p.ms)));
      const total = doc.cases.length * doc.output_dims.reduce((a, b) => a * b, 1);
      assert.ok(steps <= total / 4, `${steps} of ${total} outputs differ from PyTorch`);
    } finally {
      model.dispose();
      await ort.session.release?.();
    }
  });
}

test('QDQ Conv -> Clip -> Q: the Clip bounds are quantized with QuantizeLinear\'s rule (a tie at the upper bound)', async () => {
  // y scale 0.25: the Clip's 6.125 is 24.5 steps, a tie that QuantizeLinear rounds to 24 (half to even).
  const f = (name, dims, data) => ({ name, elemType: 'FLOAT', dims, data });
  const u8 = (name, v) => ({ name, elemType: 'UINT8', dims: [], data: [v] });
  const bytes = graphModel({
    inputs: [{ name: 'x', elemType: 'FLOAT', dims: [1, 1, 3, 3] }],
    initializers: [
      f('xs', [], [0.1]), u8('xz', 0), f('ys', [], [0.25]), u8('yz', 0),
      { name: 'w', elemType: 'INT8', dims: [2, 1, 1, 1], data: [100, -3] }, f('ws', [], [0.05]), { name: 'wz', elemType: 'INT8', dims: [], data: [0] },
      f('lo', [], [0]), f('hi', [], [6.125]),
    ],
    nodes: [
      { opType: 'QuantizeLinear', inputs: ['x', 'xs', 'xz'], outputs: ['xq'] },
      { opType: 'DequantizeLinear', inputs: ['xq', 'xs', 'xz'], outputs: ['xd'] },
      { opType: 'DequantizeLinear', inputs: ['w', 'ws', 'wz'], outputs: ['wd'] },
      { opType: 'Conv', inputs: ['xd', 'wd'], outputs: ['c'], attributes: { kernel_shape: [1, 1] } },
      { opType: 'Clip', inputs: ['c', 'lo', 'hi'], outputs: ['r'] },
      { opType: 'QuantizeLinear', inputs: ['r', 'ys', 'yz'], outputs: ['yq'] },
      { opType: 'DequantizeLinear', inputs: ['yq', 'ys', 'yz'], outputs: ['y'] },
    ],
    outputs: [{ name: 'y', elemType: 'FLOAT', dims: [1, 2, 3, 3] }],
  });
  const model = await qwasm.loadModel(bytes);
  const ort = await createOrtRunner(bytes);
  try {
    assert.equal(model.layers.map((l) => l.opType).join(' '), 'QuantizeLinear QLinearConv DequantizeLinear');
    const x = Float32Array.of(0, 0.5, 1, 1.2, 1.3, 2, 5, 10, 25.5);
    const ours = (await model.run({ x })).y.data;
    const ref = (await ort.run({ x: { type: 'float32', data: x, dims: [1, 1, 3, 3] } })).y;
    assertBitEqual(assert, ours, ref, 'Conv -> Clip(0, 6.125) -> Q vs onnxruntime-web');
    assert.equal(Math.max(...ours), 6, 'saturated outputs sit at 24 steps (6.0), not 25');
  } finally {
    model.dispose();
    await ort.release();
  }
});

test('QDQ Sigmoid and LeakyRelu become ONNX Runtime\'s table ops, equal to onnxruntime-web', async () => {
  // Output step 2e-7: near MLAS's logistic approximation error, where an exact sigmoid gives other bytes.
  const f = (name, dims, data) => ({ name, elemType: 'FLOAT', dims, data });
  const u8 = (name, v) => ({ name, elemType: 'UINT8', dims: [], data: [v] });
  const x = Float32Array.from({ length: 4096 }, (_, i) => -20 + i * 0.0049);
  for (const [op, attributes, ys] of [['Sigmoid', {}, 2e-7], ['Sigmoid', {}, 1 / 256], ['LeakyRelu', { alpha: 0.1 }, 0.03]]) {
    const bytes = graphModel({
      inputs: [{ name: 'x', elemType: 'FLOAT', dims: [1, 4096] }],
      initializers: [f('xs', [], [0.07]), u8('xz', 255), f('ys', [], [ys]), u8('yz', op === 'Sigmoid' ? 0 : 200)],
      nodes: [
        { opType: 'QuantizeLinear', inputs: ['x', 'xs', 'xz'], outputs: ['xq'] },
        { opType: 'DequantizeLinear', inputs: ['xq', 'xs', 'xz'], outputs: ['xd'] },
        { opType: op, inputs: ['xd'], outputs: ['s'], attributes },
        { opType: 'QuantizeLinear', inputs: ['s', 'ys', 'yz'], outputs: ['yq'] },
        { opType: 'DequantizeLinear', inputs: ['yq', 'ys', 'yz'], outputs: ['y'] },
      ],
      outputs: [{ name: 'y', elemType: 'FLOAT', dims: [1, 4096] }],
    });
    const model = await qwasm.loadModel(bytes);
    const ort = await createOrtRunner(bytes);
    try {
      assert.equal(model.layers.map((l) => l.opType).join(' '), `QuantizeLinear QLinear${op} DequantizeLinear`);
      const ours = (await model.run({ x })).y.data;
      const ref = (await ort.run({ x: { type: 'float32', data: x, dims: [1, 4096] } })).y;
      assertBitEqual(assert, ours, ref, `QDQ ${op} (y scale ${ys}) vs onnxruntime-web`);
    } finally {
      model.dispose();
      await ort.release();
    }
  }
});
