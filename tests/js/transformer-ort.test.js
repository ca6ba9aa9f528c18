// The BERT-shaped encoder files of tests/fixtures/transformer (tools/transformer/bert.py: torch.onnx.export at
// opset 14 and 17 and with the dynamo exporter, onnxruntime's quantize_dynamic in transformers.js's q8 settings,
// onnxruntime's transformer optimizer, onnxruntime's own optimized q8 graph) run in onnxruntime-web (wasm, one
// thread) on the recorded int64 token ids and attention masks. What this establishes for qwasm's encoder work:
// onnxruntime-web computes the recorded "web" outputs (the target, bit for bit), and how far onnxruntime's
// Python wheel is from them (not byte-identical: its x86 kernels round differently; measured below).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runEncoder } from '../../tools/transformer/encoder-web.mjs';

const DIR = new URL('../fixtures/transformer/', import.meta.url);
const record = JSON.parse(readFileSync(new URL('tiny-bert.json', DIR), 'utf8'));
const floats = (b64) => {
  const bytes = Buffer.from(b64, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
};

test('the encoder files hold the operators issue 11 names (and onnxruntime\'s fused forms)', () => {
  const ops = (key) => record.files[key].ops;
  for (const key of ['opset14', 'opset17', 'dynamo']) {
    for (const op of ['Slice', 'Expand', 'Cast', 'Sub', 'Where', 'Softmax', 'Tanh', 'MatMul', 'Gather']) {
      assert.ok(ops(key)[op] > 0, `${key} has ${op}`);
    }
  }
  for (const op of ['ReduceMean', 'Pow', 'Sqrt', 'Erf', 'Equal', 'ConstantOfShape']) assert.ok(ops('opset14')[op] > 0, `opset14 has ${op}`);
  assert.ok(ops('opset17').LayerNormalization > 0 && ops('dynamo').Gelu > 0, 'LayerNormalization at 17, Gelu-20 from dynamo');
  for (const key of ['opset14_q8', 'opset17_q8', 'dynamo_q8', 'opt_q8']) {
    assert.ok(ops(key).DynamicQuantizeLinear > 0 && ops(key).MatMulInteger > 0, `${key} is dynamically quantized`);
  }
  for (const op of ['SkipLayerNormalization', 'BiasGelu', 'EmbedLayerNormalization']) assert.ok(ops('opt')[`com.microsoft.${op}`] > 0, `opt has ${op}`);
  for (const op of ['DynamicQuantizeMatMul', 'MatMulIntegerToFloat', 'FusedMatMul', 'Gelu', 'SkipLayerNormalization']) {
    assert.ok(ops('ort_q8')[`com.microsoft.${op}`] > 0, `ort_q8 has ${op}`);
  }
});

for (const [key, file] of Object.entries(record.files)) {
  test(`${file.file}: onnxruntime-web computes the recorded outputs; onnxruntime (Python) is close, not identical`, async (t) => {
    const outputs = await runEncoder(readFileSync(new URL(file.file, DIR)), record.inputs);
    let equal = 0;
    let total = 0;
    let maxAbs = 0;
    outputs.forEach((o, c) => {
      for (const [name, tensor] of Object.entries(o)) {
        const web = floats(file.web[c][name].bits);
        const python = floats(file.outputs[c][name].bits);
        assert.deepEqual(tensor.dims, file.web[c][name].dims, `${key} case ${c} ${name} dims`);
        assert.deepEqual(new Uint32Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.length),
          new Uint32Array(web.buffer), `${key} case ${c} ${name}: onnxruntime-web's recorded bits`);
        for (let i = 0; i < web.length; i++) {
          total++;
          if (Object.is(web[i], python[i])) equal++;
          maxAbs = Math.max(maxAbs, Math.abs(web[i] - python[i]));
        }
      }
    });
    // Measured with onnxruntime 1.30 (Python, AVX2 machine) and onnxruntime-web 1.30: at most ~1.5e-6.
    assert.ok(maxAbs <= 1e-5, `${key}: max |web - python| = ${maxAbs}`);
    t.diagnostic(`${key}: ${equal} of ${total} outputs byte-identical to onnxruntime (Python), max |difference| ${maxAbs.toExponential(2)}`);
  });
}
