// Models quantized by PyTorch 2.13 on its qnnpack, fbgemm and x86 engines and written by the exporter
// (python/qwasm_export; semantics pytorch2-qnnpack, pytorch-fbgemm, pytorch-x86), against PyTorch bit for bit on
// every tensor. Fixtures: tools/golden/torch2_models.py (the synthetic models of torch_models.py in eager mode and
// an FX graph mode model, committed); the CNN architectures (ResNet18, MobileNetV2, MobileNetV3-Large,
// ShuffleNetV2 at 224 x 224) are exported into build/models/torch2 by npm test (too big to commit).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, before, describe, test } from 'node:test';
import { assertBitEqual, failOnLeaks, fixture, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const root = new URL('../../', import.meta.url);
const bytesOf = (url) => new Uint8Array(readFileSync(url));
const SEMANTICS = { qnnpack: 'pytorch2-qnnpack', fbgemm: 'pytorch-fbgemm', x86: 'pytorch-x86' };
const feedsOf = (inputs) => Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, { data: Float32Array.from(v.data), dims: v.shape }]));

for (const [engine, semantics] of Object.entries(SEMANTICS)) {
  describe(`PyTorch 2.13, ${engine} engine (${semantics})`, () => {
    for (const name of ['convnet', 'blocknet', 'shapenet', 'modsnet', 'fxnet']) {
      test(`${name}: every tensor equals PyTorch's int_repr, outputs bit for bit`, async () => {
        const doc = fixture(`torch2/models/${engine}/${name}.json`);
        assert.equal(doc.engine, engine);
        const model = await qwasm.loadModel(bytesOf(new URL(`tests/fixtures/torch2/models/${engine}/${name}.onnx`, root)));
        try {
          assert.equal(model.semantics, semantics);
          assert.equal(model.metadata['qwasm.torch_cpu_capability'], 'AVX512');
          for (const c of doc.cases) {
            const out = await model.run(feedsOf(c.inputs), { intermediates: true });
            let compared = 0;
            for (const [tensor, ref] of Object.entries(c.tensors)) {
              const ours = out.intermediates[tensor];
              if (!ours) continue; // a conv's pre-activation tensor, when the loader fused its Clip
              compared++;
              assert.deepEqual(ours.dims, ref.shape, `${name}/${c.name}: ${tensor} shape`);
              assertBitEqual(assert, Array.from(ours.data, Number), ref.q, `${name}/${c.name}: ${tensor}`);
            }
            assert.ok(compared >= Object.keys(c.tensors).length * 0.7, `${name}/${c.name}: only ${compared} tensors observable`);
            for (const [k, o] of Object.entries(c.outputs)) assertBitEqual(assert, out[k].data, Float32Array.from(o.data), `${name}/${c.name}: output ${k}`);
          }
        } finally {
          model.dispose();
        }
      });
    }
  });
}

const CNN = new URL('build/models/torch2/', root);
for (const engine of Object.keys(SEMANTICS)) {
  for (const name of ['resnet18', 'mobilenet_v2', 'mobilenet_v3_large', 'shufflenet_v2_x1_0']) {
    test(`${name} (PyTorch 2.13, ${engine}): every intermediate tensor and the output bit for bit`, async () => {
      const json = new URL(`${engine}/${name}.json`, CNN);
      if (!existsSync(json)) throw new Error(`${json.pathname} is missing: run $(bash tools/setup-python.sh) tools/golden/torch2_models.py --cnn build/models/torch2 --cnn-only (npm test does)`);
      const doc = JSON.parse(readFileSync(json, 'utf8'));
      const blob = bytesOf(new URL(`${engine}/${name}.bin`, CNN));
      const model = await qwasm.loadModel(bytesOf(new URL(`${engine}/${name}.onnx`, CNN)));
      try {
        assert.equal(model.semantics, SEMANTICS[engine]);
        const out = await model.run({ [doc.input.name]: { data: Float32Array.from(doc.input.data), dims: doc.input.shape } }, { intermediates: true });
        let compared = 0;
        for (const t of doc.tensors) {
          const ours = out.intermediates[t.name];
          if (!ours) continue;
          compared++;
          const n = t.shape.reduce((a, b) => a * b, 1);
          assert.deepEqual(ours.dims, t.shape, `${name}: ${t.name} shape`);
          assertBitEqual(assert, ours.data, blob.subarray(t.offset, t.offset + n), `${name}: ${t.name}`);
        }
        assert.ok(compared >= doc.tensors.length * 0.6, `${name}: only ${compared} of ${doc.tensors.length} tensors observable`);
        assertBitEqual(assert, out[doc.output.name].data, Float32Array.from(doc.output.data), `${name}: output`);
      } finally {
        model.dispose();
      }
    });
  }
}

describe('quantize_dynamic encoders (tools/golden/torch_dynamic_models.py): every dynamic linear of the file equals PyTorch', async () => {
  // The file's float operators (LayerNormalization, Erf, Softmax, MatMul) run with ONNX Runtime's arithmetic, not
  // PyTorch's; its com.microsoft DynamicQuantizeMatMul nodes carry PyTorch's weights, and the semantics profile the
  // file names gives dynamicLinear PyTorch's arithmetic: from PyTorch's own input each reproduces its output.
  const { decodeOnnx } = await import('../../js/model/onnx.js');
  const files = [['torch/models', 'pytorch-qnnpack'], ...Object.entries(SEMANTICS).map(([e, s]) => [`torch2/models/${e}`, s])];
  for (const [dir, semantics] of files) {
    test(`${dir}/bert_dynamic.onnx (${semantics})`, async () => {
      const doc = fixture(`${dir}/bert_dynamic.json`);
      const graph = await decodeOnnx(bytesOf(new URL(`tests/fixtures/${dir}/bert_dynamic.onnx`, root)));
      assert.equal(graph.metadata.get('qwasm.semantics'), semantics);
      assert.ok(doc.float_error < 1e-5, `float error ${doc.float_error}`);
      const nodes = new Map(graph.nodes.filter((n) => n.opType === 'DynamicQuantizeMatMul').map((n) => [n.name, n]));
      let checked = 0;
      for (const lin of doc.cases[0].linears) {
        const node = nodes.get(lin.node);
        const [b, s, z, bias] = node.inputs.slice(1).map((name) => graph.initializers.get(name));
        const [k, n] = b.dims;
        const wt = new Int8Array(n * k);
        for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) wt[j * k + i] = b.data[i * n + j];
        const w = s.data.length > 1 ? qwasm.fromIntReprPerChannel(wt, [n, k], Array.from(s.data), Array.from(z.data), 0, 'qint8') : qwasm.fromIntRepr(wt, [n, k], s.data[0], z.data[0], 'qint8');
        const packed = qwasm.packLinear(w, bias ? bias.data : null, { semantics });
        try {
          const y = qwasm.dynamicLinear(Float32Array.from(lin.input), lin.input_shape, packed, { semantics });
          assertBitEqual(assert, y.data, Float32Array.from(lin.output), `${dir} ${lin.node}`);
        } finally {
          packed.dispose();
          w.dispose();
        }
        checked++;
      }
      assert.equal(checked, nodes.size);
      assert.equal(checked, 14);
    });

    test(`${dir}/bert_dynamic.onnx (${semantics}) through loadModel: each DynamicQuantizeMatMul node alone equals PyTorch, the encoder runs`, async () => {
      // The loader's DynamicQuantizeMatMul takes the file's profile (PyTorch's dynamic Linear, packed at load), not
      // onnxruntime's form: every node as a one-node model on PyTorch's own input gives PyTorch's output bit for
      // bit. The whole encoder runs too (its float operators are onnxruntime's: close to PyTorch, not identical).
      const { encodeOnnx } = await import('../../js/model/onnx.js');
      const doc = fixture(`${dir}/bert_dynamic.json`);
      const bytes = bytesOf(new URL(`tests/fixtures/${dir}/bert_dynamic.onnx`, root));
      const graph = await decodeOnnx(bytes);
      const nodes = new Map(graph.nodes.filter((n) => n.opType === 'DynamicQuantizeMatMul').map((n) => [n.name, n]));
      for (const lin of doc.cases[0].linears) {
        const node = nodes.get(lin.node);
        const one = {
          ...graph,
          nodes: [node],
          initializers: new Map(node.inputs.slice(1).filter(Boolean).map((name) => [name, graph.initializers.get(name)])),
          inputs: [{ name: node.inputs[0], dtype: 'float32', dims: lin.input_shape }],
          outputs: [{ name: node.outputs[0], dtype: 'float32', dims: [...lin.input_shape.slice(0, -1), graph.initializers.get(node.inputs[1]).dims[1]] }],
        };
        const model = await qwasm.loadModel(await encodeOnnx(one));
        try {
          assert.equal(model.semantics, semantics);
          const out = await model.run({ [node.inputs[0]]: { data: Float32Array.from(lin.input), dims: lin.input_shape } });
          assertBitEqual(assert, out[node.outputs[0]].data, Float32Array.from(lin.output), `${dir} ${lin.node} through the loader`);
        } finally {
          model.dispose();
        }
      }
      const model = await qwasm.loadModel(bytes);
      try {
        const c = doc.cases[0];
        const feeds = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, { data: BigInt64Array.from(v.data, BigInt), dims: v.shape }]));
        const out = Object.values(await model.run(feeds))[0];
        assert.deepEqual(out.dims, c.output.shape);
        out.data.forEach((v, i) => assert.ok(Math.abs(v - c.output.data[i]) < 1e-5, `output ${i}: ${v} vs PyTorch's ${c.output.data[i]}`));
      } finally {
        model.dispose();
      }
    });
  }
});
