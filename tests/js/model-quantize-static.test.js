// QDQ files in the form onnxruntime's quantize_static writes (QuantFormat.QDQ, MinMax calibration), made by
// tools/golden/ort_quantize_static.py, a reimplementation of that output format (there is no onnxruntime
// Python package here; docs/quantize-static.md). The reference is onnxruntime-web, which runs the same files:
// qwasm's fused integer operators must give the same bytes. Comparing the final float outputs exactly is
// comparing the last QuantizeLinear's bytes (its DequantizeLinear is one-to-one); the probe file also exposes
// every QuantizeLinear output, so each fused layer is compared on its own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { createOrtRunner } from '../../tools/bench/ort.mjs';
import { assertBitEqual, failOnLeaks, fixture, qwasm } from './helpers.js';
import { ModelFormatError } from '../../js/model/onnx.js';

failOnLeaks(before, afterEach);

const bytesOf = (file) => new Uint8Array(readFileSync(new URL(`../fixtures/ort_static/${file}`, import.meta.url)));

const CONV = 'QuantizeLinear QLinearConv QLinearConv MaxPool';
const CNN_TAIL = 'QLinearAveragePool QLinearAdd QLinearSigmoid QLinearMul QLinearConcat QLinearGlobalAveragePool Flatten QGemm QLinearSoftmax DequantizeLinear';
const CNN = `${CONV} ${CNN_TAIL}`;
const MLP = 'Transpose QuantizeLinear QLinearMatMul QLinearAdd Reshape QLinearMul QGemm DequantizeLinear';
const DIGITS = `${CONV} QLinearConv QLinearConv QLinearAdd QLinearGlobalAveragePool Flatten QGemm DequantizeLinear`;

// What qwasm makes of each file: every QDQ group quantize_static writes becomes one integer operator, as
// ONNX Runtime's QDQ transformer does. With ActivationSymmetric the ReLU / Clip stay (quantize_static keeps
// them: with zero point 127 the Q after the conv cannot stand for them) and run in float between
// DequantizeLinear and QuantizeLinear, in both runtimes.
const EXPECTED = {
  digits: { per_tensor: DIGITS, per_channel: DIGITS },
  cnn: {
    per_tensor: CNN,
    per_channel: CNN,
    per_channel_reduce_range: CNN,
    act_symmetric: `QuantizeLinear QLinearConv DequantizeLinear Relu QuantizeLinear QLinearConv DequantizeLinear Clip QuantizeLinear MaxPool ${CNN_TAIL}`,
    qdq_weights: CNN, // the float weights' QuantizeLinear folded into int8 initializers
    dedicated: CNN, // the per-consumer Q/DQ copies merged
  },
  mlp: { per_tensor: MLP, per_channel: MLP, act_symmetric: MLP, qdq_weights: MLP },
};

for (const [name, variants] of Object.entries(EXPECTED)) {
  for (const [variant, layers] of Object.entries(variants)) {
    test(`quantize_static ${name} (${variant}): fused into integer operators, equal to onnxruntime-web`, async () => {
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
