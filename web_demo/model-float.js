// The model view's float reference: the float export of the digits CNN (models/digits-float.onnx, written by
// tools/train_digits.py from the same trained weights before quantization) run by onnxruntime-web, a real
// float engine, not a float path written in the page. tools/demo.mjs copies ORT's wasm-backend ESM build and
// the two files it loads into vendor/ort/, with manifest.json listing their sizes. ORT (about 15 MB, mostly its
// .wasm) is imported only when the user asks for the float reference, so the page runs without it (the int8
// side does not depend on this module succeeding).
import { timeRuns } from './timing.js';

const ORT_DIR = new URL('./vendor/ort/', import.meta.url); // relative to this file: the static site's own copy
const ORT_MODULE = new URL('ort.wasm.min.mjs', ORT_DIR);

/** What loading the reference costs: { version, files: [{ name, bytes }], bytes } (vendor/ort/manifest.json). */
export async function floatReferenceManifest() {
  const url = new URL('manifest.json', ORT_DIR);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
  return response.json();
}

/**
 * Imports onnxruntime-web (wasm backend, one thread, no proxy worker) and creates a session for the float
 * model at `modelUrl`. Resolves to { ort, session, version, inputName, outputName }.
 */
export async function loadFloatReference(modelUrl) {
  const ort = await import(ORT_MODULE.href);
  ort.env.wasm.wasmPaths = ORT_DIR.href;
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const response = await fetch(modelUrl);
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${modelUrl}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  return { ort, session, version: ort.env.versions?.web ?? '', inputName: session.inputNames[0], outputName: session.outputNames[0] };
}

/**
 * Runs the float model on an 8x8 image (values in [0, 1]): { logits: Float32Array, latency (timing.js: plain runs
 * fetching the logits only, repeated until the clock's step is < 1% of their total), activations: { name: { data,
 * dims } } }. One more run fetches every output (the logits and, for digits-float.onnx, the float activations named
 * like digits.onnx's quantized tensors), so the latency is that of the plain model.
 */
export async function runFloat(ref, image) {
  const input = new ref.ort.Tensor('float32', Float32Array.from(image), [1, 1, 8, 8]);
  const feeds = { [ref.inputName]: input };
  const latency = await timeRuns(async () => {
    const out = await ref.session.run(feeds, [ref.outputName]);
    out[ref.outputName].dispose?.();
  });
  const out = await ref.session.run(feeds); // all outputs
  const activations = {};
  for (const name of ref.session.outputNames) {
    activations[name] = { data: Float32Array.from(out[name].data), dims: Array.from(out[name].dims) };
    out[name].dispose?.();
  }
  return { logits: activations[ref.outputName].data, latency, activations };
}

export function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

export const argmax = (xs) => {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i] > xs[best]) best = i;
  return best;
};
