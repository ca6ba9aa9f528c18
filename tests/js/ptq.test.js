// quantizeStatic: post-training quantization of a float ONNX model in JS. The references are real ones:
// PyTorch 1.13's own post-training quantization of the same digits network (models/digits.onnx, calibrated by
// tools/train_digits.py with the qnnpack qconfig on the same training images in batches of 256), and
// onnxruntime-web running the QDQ file quantizeStatic writes.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { createOrtRunner } from '../../tools/bench/ort.mjs';
import { mulberry32 } from '../../tools/bench/cases.mjs';
import { assertBitEqual, failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const root = new URL('../../', import.meta.url);
const read = (path) => new Uint8Array(readFileSync(new URL(path, root)));
const data = JSON.parse(readFileSync(new URL('models/digits-data.json', root), 'utf8'));
const image = (s) => Float32Array.from(s, (c) => (c.charCodeAt(0) - 97) / 16);
const calibration = data.train.images.map((s) => ({ input: image(s) }));
const argmax = (a) => a.indexOf(Math.max(...a));

async function heldOutAccuracy(model) {
  let right = 0;
  for (const [i, s] of data.test.images.entries()) {
    const out = await model.run({ input: image(s) });
    if (argmax(Array.from(out.output.data)) === data.test.labels[i]) right++;
  }
  return right / data.test.images.length;
}

async function assertOrtAgrees(bytes, model, label) {
  const ort = await createOrtRunner(bytes);
  for (const s of data.test.images.slice(0, 40)) {
    const x = image(s);
    const theirs = await ort.run({ input: { type: 'float32', data: x, dims: [1, 1, 8, 8] } });
    const ours = await model.run({ input: x });
    assertBitEqual(assert, ours.output.data, theirs.output, `${label}: onnxruntime-web on the QDQ file`);
  }
}

test('qnnpack qconfig on the digits CNN: the qparams PyTorch chose, its accuracy, a file onnxruntime runs identically', async () => {
  const torchModel = await qwasm.loadModel(read('models/digits.onnx'));
  const result = await qwasm.quantizeStatic(read('models/digits-float.onnx'), calibration, { qconfig: 'qnnpack', batchSize: data.calibration_batch });
  try {
    assert.equal(result.qconfig, 'qnnpack');
    // PyTorch's qparams, by tensor name (tools/train_digits.py names digits.onnx's tensors like the float taps)
    const torchQ = new Map(torchModel.layers.filter((l) => l.output).map((l) => [l.outputs[0], l.output]));
    let compared = 0;
    let identical = 0;
    for (const row of result.report) {
      const ref = torchQ.get(row.tensor);
      if (!ref) continue;
      compared++;
      assert.equal(row.zeroPoint, ref.zeroPoint, `${row.tensor}: zero point`);
      // Our float activations come from a float conv summing in another order than torch's, so a
      // HistogramObserver may see min / max a few ulps apart: the scale agrees to float32 rounding noise.
      assert.ok(Math.abs(row.scale - ref.scale) <= 2e-6 * ref.scale, `${row.tensor}: scale ${row.scale}, torch ${ref.scale}`);
      if (row.scale === ref.scale) identical++;
    }
    assert.ok(compared >= 8, `only ${compared} tensors compared`);
    assert.ok(identical >= compared / 2, `only ${identical} of ${compared} scales identical to torch's`);
    // weights: the same integers as torch's MinMaxObserver + quantize_per_tensor (the float weights come
    // from torch.onnx.export's BN folding, torch's from fuse_modules': scales agree to an ulp); biases too
    const ourLayers = result.model.layers.filter((l) => l.weight);
    const torchLayers = torchModel.layers.filter((l) => l.weight);
    assert.equal(ourLayers.length, torchLayers.length);
    ourLayers.forEach((l, i) => {
      const t = torchLayers[i];
      assert.ok(Math.abs(l.weight.scales[0] - t.weight.scales[0]) <= 2e-7 * t.weight.scales[0], `${t.name}: weight scale`);
      assert.deepEqual(result.model.initializer(l.weight.name).data, torchModel.initializer(t.weight.name).data, `${t.name}: weight integers`);
      assert.deepEqual(result.model.initializer(l.bias.name).data, torchModel.initializer(t.bias.name).data, `${t.name}: int32 bias`);
    });
    // the per-layer error report: every quantized tensor compared, a sane int8 error
    assert.equal(result.report.length, result.qparams.size);
    for (const row of result.report) assert.ok(row.sqnrDb > 25 && row.sqnrDb < 70, `${row.tensor}: SQNR ${row.sqnrDb} dB`);
    // the int8 model: as accurate as torch's on the held-out split, and the same in onnxruntime-web
    const ours = await heldOutAccuracy(result.model);
    const theirs = await heldOutAccuracy(torchModel);
    assert.ok(ours >= 0.98 && Math.abs(ours - theirs) <= 0.01, `held-out accuracy ${ours}, torch's PTQ ${theirs}`);
    await assertOrtAgrees(result.bytes, result.model, 'qnnpack');
    // the file says how it was made, and the loader finds the fused integer layers in it
    assert.match(result.model.metadata['qwasm.quantize_static'], /qconfig qnnpack, 1437 calibration samples/);
    assert.equal(result.model.layers.filter((l) => l.opType === 'QLinearConv').length, 4);
  } finally {
    result.model.dispose();
    torchModel.dispose();
  }
});

test('x86 qconfig: per-channel symmetric weights along the output channel, reduced-range activations; progress per sample', async () => {
  const progress = [];
  const result = await qwasm.quantizeStatic(read('models/digits-float.onnx'), calibration.slice(0, 64), { qconfig: 'x86', batchSize: 16, onProgress: (p) => progress.push(p) });
  try {
    const pass = (stage) => Array.from({ length: 64 }, (_, i) => ({ stage, done: i + 1, total: 64 }));
    assert.deepEqual(progress, [...pass('calibrate'), ...pass('measure')]);
    const convs = result.model.layers.filter((l) => l.weight);
    assert.equal(convs.length, 5);
    for (const l of convs) {
      assert.equal(l.weight.scales.length, l.weight.dims[0], `${l.name}: one scale per output channel`);
      assert.ok(l.weight.zeroPoints.every((z) => z === 0), `${l.name}: symmetric`);
      assert.equal(l.weight.axis, 0);
      assert.ok(l.output.zeroPoint <= 127, `${l.name}: reduce_range keeps activations in [0, 127]`);
    }
    await assertOrtAgrees(result.bytes, result.model, 'x86');
  } finally {
    result.model.dispose();
  }
});

test('quantizeStatic: bad arguments are named errors', async () => {
  const float = read('models/digits-float.onnx');
  await assert.rejects(qwasm.quantizeStatic(float, []), /calibration set is empty/);
  await assert.rejects(qwasm.quantizeStatic(float, calibration.slice(0, 2), { qconfig: 'tflite' }), /quantizeStatic: unknown qconfig "tflite"/);
  await assert.rejects(qwasm.quantizeStatic(float, calibration.slice(0, 2), { batchSize: 0 }), /batchSize must be a positive integer/);
  await assert.rejects(qwasm.quantizeStatic(float, calibration.slice(0, 2), { onProgress: 5 }), { name: 'TypeError', message: /quantizeStatic: onProgress must be a function, got number/ });
  await assert.rejects(qwasm.quantizeStatic(read('models/digits.onnx'), calibration.slice(0, 2)), /already quantized; pass the float model/);
  await assert.rejects(qwasm.quantizeStatic(float, [{ image: new Float32Array(64) }]), /has no input "image"/);
  await assert.rejects(qwasm.quantizeStatic(float, [{ input: new Float32Array(10) }]), /input "input" has 10 values/);
});

const MOBILENET = new URL('build/models/mobilenet_v2_float.onnx', root);
test('MobileNetV2 (torchvision, float export): every conv, add and pool fused, equal to onnxruntime-web', { skip: !existsSync(MOBILENET) && 'build/models/mobilenet_v2_float.onnx is generated by npm run bench (tools/bench/mobilenet_v2.py)' }, async () => {
  const next = mulberry32(3);
  const sample = () => ({ x: { data: Float32Array.from({ length: 3 * 224 * 224 }, () => (next() / 2 ** 32) * 2 - 1), dims: [1, 3, 224, 224] } });
  const result = await qwasm.quantizeStatic(new Uint8Array(readFileSync(MOBILENET)), [sample(), sample()], { qconfig: 'qnnpack' });
  try {
    const count = (op) => result.model.layers.filter((l) => l.opType === op).length;
    assert.deepEqual([count('QLinearConv'), count('QLinearAdd'), count('QLinearGlobalAveragePool'), count('QGemm')], [52, 10, 1, 1]);
    assert.ok(result.report.every((r) => r.sqnrDb > 10), 'every tensor compared, none garbage');
    const ort = await createOrtRunner(result.bytes);
    const x = sample().x;
    const theirs = await ort.run({ x: { type: 'float32', data: x.data, dims: x.dims } });
    const ours = await result.model.run({ x });
    assertBitEqual(assert, ours[ort.outputNames[0]].data, theirs[ort.outputNames[0]], 'MobileNetV2 logits');
  } finally {
    result.model.dispose();
  }
});

test('weights and biases round as PyTorch quantizes them: x * (1 / scale), not x / scale (torch 1.13 fixture)', async () => {
  // tools/golden/torch_ptq_rounding.py: a Conv2d and a Linear reading the graph input, with weights and biases on
  // half steps where the two rules disagree, quantized by torch (qnnpack qconfig); the integers its modules hold.
  const doc = JSON.parse(readFileSync(new URL('tests/fixtures/torch/ptq_rounding.json', root), 'utf8'));
  const calibration = doc.calibration.map((x) => ({ input: { data: Float32Array.from(x), dims: doc.input.shape } }));
  const result = await qwasm.quantizeStatic(read(`tests/fixtures/torch/${doc.model}`), calibration, { qconfig: doc.qconfig, batchSize: doc.batch_size });
  try {
    const input = result.qparams.get('input');
    assert.equal(input.scale, Math.fround(doc.input.scale));
    assert.equal(input.zeroPoint, doc.input.zero_point);
    for (const [name, layer] of Object.entries(doc.layers)) {
      assert.ok(layer.weight.onnx_rule_differs >= 10 && layer.bias.onnx_rule_differs >= 3, `${name}: the fixture must separate the rules`);
      const w = result.model.initializer(`${layer.weight.name}_quantized`);
      assertBitEqual(assert, Array.from(w.data), layer.weight.q, `${name} weight integers`);
      assert.equal(result.model.initializer(`${layer.weight.name}_scale`).data[0], Math.fround(layer.weight.scale));
      const b = result.model.initializer(`${layer.bias.name}_quantized`);
      assertBitEqual(assert, Array.from(b.data), layer.bias.q, `${name} bias integers`);
    }
  } finally {
    result.model.dispose();
  }
});
