// Runs an encoder file of tools/transformer/bert.py in onnxruntime-web (wasm backend, one thread, its default
// graph optimizations) on the recorded int64 inputs: shared by bert_web.mjs and tests/js/transformer-ort.test.js.
import * as ort from 'onnxruntime-web';

/** inputs: [{ input_ids: { dims, data }, ... }] -> [{ last_hidden_state: { dims, data }, pooler_output: ... }] */
export async function runEncoder(modelBytes, inputs) {
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(modelBytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  try {
    const results = [];
    for (const feed of inputs) {
      const tensors = Object.fromEntries(Object.entries(feed).map(([name, t]) => [name, new ort.Tensor('int64', BigInt64Array.from(t.data, BigInt), t.dims)]));
      const out = await session.run(tensors);
      results.push(Object.fromEntries(Object.entries(out).map(([name, t]) => [name, { dims: Array.from(t.dims), data: t.data }])));
    }
    return results;
  } finally {
    await session.release();
  }
}
