// torchvision's quantizable architectures (random weights, BatchNorm statistics re-estimated, qnnpack PTQ),
// exported by tools/golden/torch_models.py --torchvision into build/models/torchvision (npm test runs it;
// the files are too big to commit). Two paths per model:
//   - tools/export_torch.py's file: bit for bit equal to PyTorch (the int8 logits and the float output);
//   - torch.onnx.export's QDQ file: fused by the loader, equal to onnxruntime-web byte for byte. It differs
//     from PyTorch, as onnxruntime does: the exporter truncates biases (Cast), ONNX rounds x / s where
//     PyTorch rounds x * (1 / s), and QLinearAdd is float where qnnpack's add is fixed point.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { createOrtRunner } from '../../tools/bench/ort.mjs';
import { assertBitEqual, failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const DIR = new URL('../../build/models/torchvision/', import.meta.url);
const MODELS = ['mobilenet_v2', 'mobilenet_v3_large', 'resnet18', 'shufflenet_v2_x1_0'];
const QDQ = ['mobilenet_v2', 'mobilenet_v3_large', 'resnet18']; // torch 1.13 cannot export ShuffleNetV2 as QDQ

function load(name) {
  const json = new URL(`${name}.json`, DIR);
  if (!existsSync(json)) throw new Error(`${json.pathname} is missing: run /usr/bin/python3 tools/golden/torch_models.py --torchvision build/models/torchvision --torchvision-only (npm test does)`);
  return JSON.parse(readFileSync(json, 'utf8'));
}

for (const name of MODELS) {
  test(`${name} (tools/export_torch.py): PyTorch's int8 output bit for bit`, async () => {
    const doc = load(name);
    const model = await qwasm.loadModel(new Uint8Array(readFileSync(new URL(`${name}.onnx`, DIR))));
    try {
      const out = await model.run({ [doc.input.name]: { data: Float32Array.from(doc.input.data), dims: doc.input.shape } }, { intermediates: true });
      assertBitEqual(assert, out.intermediates[doc.quantized_output.name].data, Uint8Array.from(doc.quantized_output.q), `${name} int8 logits`);
      assertBitEqual(assert, out[doc.output.name].data, Float32Array.from(doc.output.data), `${name} output`);
      assert.ok(new Set(out[doc.output.name].data).size > 50, `${name}: the logits should not collapse to a few values`);
    } finally {
      model.dispose();
    }
  });
}

for (const name of QDQ) {
  test(`${name} (torch.onnx.export QDQ): fused, equal to onnxruntime-web byte for byte`, async () => {
    const doc = load(name);
    const bytes = new Uint8Array(readFileSync(new URL(`${name}_qdq.onnx`, DIR)));
    const model = await qwasm.loadModel(bytes);
    const ort = await createOrtRunner(bytes);
    try {
      assert.ok(!model.layers.some((l) => l.opType === 'Conv' || l.opType === 'Gemm'), 'every Conv and Gemm fused into an integer operator');
      const x = Float32Array.from(doc.input.data);
      const ours = (await model.run({ input: { data: x, dims: doc.input.shape } })).output.data;
      const ref = (await ort.run({ input: { type: 'float32', data: x, dims: doc.input.shape } })).output;
      assertBitEqual(assert, ours, ref, `${name} QDQ vs onnxruntime-web`);
    } finally {
      model.dispose();
      await ort.release();
    }
  });
}
