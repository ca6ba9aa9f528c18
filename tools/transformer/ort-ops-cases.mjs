// Reading tests/fixtures/ort_ops/cases.json (written by tools/transformer/ort_ops.py) and running its
// single-node models in onnxruntime-web (wasm backend, one thread): shared by the fixture writer
// (tools/transformer/ort_ops_web.mjs) and the test (tests/js/ort-ops.test.js).
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-web';
import { ModelProto } from '../bench/onnx-model.mjs';

export const CASES_PATH = new URL('../../tests/fixtures/ort_ops/cases.json', import.meta.url);

const ARRAYS = {
  float32: Float32Array, int64: BigInt64Array, int32: Int32Array, bool: Uint8Array, uint8: Uint8Array, int8: Int8Array,
};
const ONNX_TYPES = { 1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 9: 'bool' };

/** { dtype, dims, data: base64 } -> { dtype, dims, data: typed array } */
export function decodeTensor({ dtype, dims, data }) {
  const bytes = Buffer.from(data, 'base64');
  const Type = ARRAYS[dtype];
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return { dtype, dims, data: new Type(copy.buffer, 0, bytes.length / Type.BYTES_PER_ELEMENT) };
}

/** The initializers of a model, by name, as decoded tensors (the fixture stores their data only there). */
function initializers(modelBytes) {
  const model = ModelProto.decode(modelBytes);
  const out = {};
  for (const t of model.graph.initializer) {
    const dtype = ONNX_TYPES[t.dataType];
    out[t.name] = decodeTensor({ dtype, dims: t.dims.map(Number), data: Buffer.from(t.rawData).toString('base64') });
  }
  return out;
}

/**
 * The cases with decoded tensors: { name, op, domain, attrs, params, model (bytes),
 * inputs: [{ name, absent?, initializer?, dtype, dims, data }], outputs: [{ name, dtype, dims, data }] (Python;
 * stored as { same_as_web: true } where identical to onnxruntime-web's), web: [...] (onnxruntime-web, when the
 * fixture has them) }.
 */
export function loadCases(path = CASES_PATH) {
  const { cases, ...header } = JSON.parse(readFileSync(path, 'utf8'));
  return {
    header,
    cases: cases.map((c) => {
      const model = Buffer.from(c.model, 'base64');
      const inits = initializers(model);
      return {
        ...c,
        model: new Uint8Array(model),
        inputs: c.inputs.map((i) => (i.absent ? i : i.initializer ? { ...i, ...inits[i.name] } : { ...i, ...decodeTensor(i) })),
        web: c.web?.map((o) => ({ ...o, ...decodeTensor(o) })),
        outputs: c.outputs.map((o, i) => (o.same_as_web ? { ...c.web[i], ...decodeTensor(c.web[i]) } : { ...o, ...decodeTensor(o) })),
      };
    }),
  };
}

let configured = false;

/** Runs one case in onnxruntime-web (wasm EP, 1 thread, graph optimizations 'all' as its default). */
export async function runWeb(c) {
  if (!configured) {
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
    ort.env.logLevel = 'error';
    configured = true;
  }
  const session = await ort.InferenceSession.create(c.model, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  try {
    const feeds = {};
    for (const i of c.inputs) {
      if (!i.absent && !i.initializer) feeds[i.name] = new ort.Tensor(i.dtype, i.data, i.dims);
    }
    const out = await session.run(feeds);
    return c.outputs.map((o) => {
      const t = out[o.name];
      return { name: o.name, dtype: o.dtype, dims: Array.from(t.dims), data: t.data };
    });
  } finally {
    await session.release();
  }
}

/** Byte-level comparison: the number of elements whose bytes differ, and the largest |a - b| among floats. */
export function compareBytes(a, b) {
  const ea = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const eb = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (a.length !== b.length) return { differ: Math.max(a.length, b.length), maxAbs: Infinity };
  const size = a.BYTES_PER_ELEMENT;
  let differ = 0;
  let maxAbs = 0;
  for (let i = 0; i < a.length; i++) {
    let same = true;
    for (let j = 0; j < size; j++) same &&= ea[i * size + j] === eb[i * size + j];
    if (!same) {
      differ++;
      if (a instanceof Float32Array) {
        const d = Math.abs(a[i] - b[i]);
        maxAbs = Math.max(maxAbs, Number.isNaN(d) ? Infinity : d);
      }
    }
  }
  return { differ, maxAbs };
}
