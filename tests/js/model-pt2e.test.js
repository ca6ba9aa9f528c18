// torchao's PT2E flow (XNNPACKQuantizer: int8 activations, per-channel symmetric weights) on a CNN, exported with
// torch.onnx.export(dynamo=True): tests/fixtures/pt2e (tools/golden/pt2e_models.py, torch 2.13 + torchao 0.18).
// qwasm must equal onnxruntime-web on every int8 tensor (the probe file outputs each QuantizeLinear's) and the
// output. onnxruntime and qwasm differ from the converted PyTorch model where it computes in float what they
// compute in integers (docs/exporter.md, "PT2E"): the fixture records those elements by layer, checked here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { assertBitEqual, failOnLeaks, fixture, withQwasmAndOrt } from './helpers.js';

failOnLeaks(before, afterEach);

const bytesOf = (file) => new Uint8Array(readFileSync(new URL(`../fixtures/pt2e/${file}`, import.meta.url)));

test('PT2E CNN (dynamo export): every int8 tensor and the output equal onnxruntime-web', async () => {
  const doc = fixture('pt2e/cnn.json');
  await withQwasmAndOrt(bytesOf('cnn-probe.onnx'), async (run, model) => {
    const names = model.outputs.filter((o) => o.dtype === 'int8').map((o) => o.name);
    const out = model.outputs[0].name;
    assert.ok(names.length >= 7, `${names.length} int8 probes`);
    for (const c of doc.cases) {
      const { ours, ref } = await run('x', Float32Array.from(c.x), doc.input_dims);
      for (const name of names) assertBitEqual(assert, ours[name].data, ref[name], `${name} vs onnxruntime-web`);
      assertBitEqual(assert, ours[out].data, ref[out], 'output vs onnxruntime-web');
      assertBitEqual(assert, ours[out].data, Float32Array.from(c.ort), 'output vs onnxruntime (Python)');
    }
  });
});

test('PT2E CNN, the file as exported (groups fused where onnxruntime fuses them): equal to onnxruntime-web', async () => {
  const doc = fixture('pt2e/cnn.json');
  await withQwasmAndOrt(bytesOf('cnn.onnx'), async (run, model) => {
    // int8 Q / DQ pairs that feed several readers stay int8 (onnxruntime's QDQS8ToU8Transformer), so the first two
    // convolutions run in float on dequantized values; the strided conv and the Linear fuse
    assert.equal(model.layers.filter((l) => l.opType === 'QLinearConv' || l.opType === 'QGemm').length, 2);
    const out = model.outputs[0].name;
    for (const c of doc.cases) {
      const { ours, ref } = await run('x', Float32Array.from(c.x), doc.input_dims);
      assertBitEqual(assert, ours[out].data, ref[out], 'output vs onnxruntime-web');
    }
  });
});

test('PT2E CNN: every element where the converted PyTorch model differs is explained by the bias onnxruntime rounds', () => {
  // tools/golden/pt2e_models.py: per QuantizeLinear, the int8 elements PyTorch and onnxruntime disagree on, by cause:
  // `rounding` (the same float, x * (1/s) vs x / s) or `float`; and `explained`: PyTorch's own op run on
  // onnxruntime's int8 input with the bias rounded to int32 at x_scale * w_scale, as onnxruntime rounds it,
  // leaves 0 differences: that rounding (and what earlier layers pass on) is the whole difference.
  const doc = fixture('pt2e/cnn.json');
  assert.equal(doc.layers.length, 6);
  assert.equal(doc.layers[0].upstream_equal, true); // the first layer reads the same int8 input in both
  assert.ok(doc.layers[0].float > 0, 'the first layer differs at all');
  for (const l of doc.layers) {
    assert.equal(l.rounding, 0, `${l.tensor}: QuantizeLinear's rule`);
    assert.equal(l.explained, 0, `${l.tensor}: unexplained differences`);
  }
  const outputs = doc.cases.flatMap((c) => c.torch.map((v, i) => Math.abs(v - c.ort[i])));
  assert.ok(Math.max(...outputs) <= doc.layers[doc.layers.length - 1].example.scale * 1.0001, 'outputs at most one step apart');
});
