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
import { assertBitEqual, failOnLeaks, fixture, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const modelBytes = (name) => new Uint8Array(readFileSync(new URL(`../fixtures/torch/qdq/${name}.onnx`, import.meta.url)));

const EXPECTED_LAYERS = {
  convnet: 'QuantizeLinear QLinearConv MaxPool Flatten QGemm DequantizeLinear', // the ReLU's Clip fused into the conv
  resnetlet: 'QuantizeLinear QLinearConv QLinearConv QLinearAdd QLinearGlobalAveragePool Flatten QGemm DequantizeLinear',
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
