// Models written by tools/export_torch.py (qwasm.semantics = pytorch-qnnpack) against PyTorch 1.13's
// qnnpack engine, bit for bit: every intermediate tensor's int_repr (the fixture keys them by ONNX tensor
// name; a conv whose Clip the loader fused now produces the Clip's tensor, so its pre-activation tensor is
// not observable and is skipped) and the float outputs. Fixtures: tools/golden/torch_models.py; the
// bundled digits model: tools/train_digits.py.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { assertBitEqual, failOnLeaks, fixture, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const root = new URL('../../', import.meta.url);
const bytesOf = (path) => new Uint8Array(readFileSync(new URL(path, root)));

for (const name of ['convnet', 'blocknet', 'shapenet', 'modsnet']) {
  test(`exported ${name}: every tensor equals PyTorch's int_repr, outputs bit for bit`, async () => {
    const doc = fixture(`torch/models/${name}.json`);
    const model = await qwasm.loadModel(bytesOf(`tests/fixtures/torch/models/${name}.onnx`));
    try {
      assert.equal(model.semantics, 'pytorch-qnnpack');
      for (const c of doc.cases) {
        const feeds = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, { data: Float32Array.from(v.data), dims: v.shape }]));
        const out = await model.run(feeds, { intermediates: true });
        let compared = 0;
        for (const [tensor, ref] of Object.entries(c.tensors)) {
          const ours = out.intermediates[tensor];
          if (!ours) continue;
          compared++;
          assert.deepEqual(ours.dims, ref.shape, `${name}/${c.name}: ${tensor} shape`);
          assertBitEqual(assert, Array.from(ours.data, Number), ref.q, `${name}/${c.name}: ${tensor}`);
        }
        assert.ok(compared >= Object.keys(c.tensors).length * 0.7, `${name}/${c.name}: only ${compared} tensors observable`);
        for (const [k, o] of Object.entries(c.outputs)) {
          assertBitEqual(assert, out[k].data, Float32Array.from(o.data), `${name}/${c.name}: output ${k}`);
        }
      }
    } finally {
      model.dispose();
    }
  });
}

test('the bundled digits model: PyTorch int8 logits bit for bit, and the labels it predicts', async () => {
  const doc = JSON.parse(readFileSync(new URL('models/digits.json', root), 'utf8'));
  const model = await qwasm.loadModel(bytesOf('models/digits.onnx'));
  try {
    let correct = 0;
    for (const img of doc.test_images) {
      const out = await model.run({ [doc.input.name]: { data: Float32Array.from(img.image), dims: doc.input.shape } }, { intermediates: true });
      const logits = out[doc.output.name].data;
      assertBitEqual(assert, logits, Float32Array.from(img.logits), `digits image ${img.index}: logits`);
      assertBitEqual(assert, out.intermediates[doc.output.quantized_name].data, Uint8Array.from(img.q), `digits image ${img.index}: int8 logits`);
      const predicted = logits.indexOf(Math.max(...logits));
      assert.equal(predicted, img.prediction, `digits image ${img.index}`);
      if (predicted === img.label) correct++;
    }
    assert.ok(correct >= doc.test_images.length - 1, `${correct} of ${doc.test_images.length} correct`);
  } finally {
    model.dispose();
  }
});
