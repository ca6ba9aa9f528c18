// Shared by the node:test suites. QWASM_SIMD=1 / QWASM_SIMD=0 (set by tools/test.sh) picks the
// wasm build under test, so every suite runs against both; QWASM_THREADS=N runs the suite on the threads
// build with N threads (tools/test.sh runs the model and operator suites so); QWASM_RELAXED=1 requires the relaxed-SIMD
// kernels (tools/test.sh's Node 24 pass, where the probe passes).
import { readFileSync } from 'node:fs';
import * as qwasm from '../../js/index.js';
import { relaxedDotSemantics } from '../../js/runtime/relaxed.js';
import { checkCalls } from '../../tools/fuzz/signatures.mjs';

export { qwasm };

export const wantSimd = process.env.QWASM_SIMD === undefined ? undefined : process.env.QWASM_SIMD !== '0';

export const wantThreads = process.env.QWASM_THREADS === undefined ? undefined : Number(process.env.QWASM_THREADS);

/** Whether this Node probes relaxed SIMD by default: 24 (V8 13) or later (npm test runs the suite on Node 20, and
 * its reference suites again under Node 24). */
export const probesRelaxedByDefault = Number.parseInt(process.versions.v8, 10) >= 13;

/** Whether init() takes the relaxed-SIMD build by default here: where this Node probes and the probe passes. */
export const relaxedByDefault = probesRelaxedByDefault && relaxedDotSemantics().semantics !== null;

export async function setup() {
  const info = await qwasm.init({ simd: wantSimd, numThreads: wantThreads });
  if (wantSimd !== undefined && info.simd !== wantSimd) {
    throw new Error(`expected the ${wantSimd ? 'SIMD' : 'scalar'} build, got ${info.isa}`);
  }
  if (process.env.QWASM_RELAXED === '1' && info.relaxed === undefined) {
    throw new Error(`expected the relaxed-SIMD kernels, got ${info.isa} (${info.relaxedFallback ?? 'not probed'})`);
  }
  if (wantThreads !== undefined && info.threads !== wantThreads) {
    throw new Error(`expected ${wantThreads} threads, got ${info.threads} (${info.threadsFallback})`);
  }
  // every call into wasm checked: an argument its parameter type would change (ToInt32) is an internal error
  checkCalls(info);
  return info;
}

const SPECIAL = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };

/** Loads a golden fixture; "NaN"/"Infinity"/"-Infinity" strings become numbers. */
export function fixture(path) {
  const text = readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
  return JSON.parse(text, (key, value) => (typeof value === 'string' && value in SPECIAL ? SPECIAL[value] : value));
}

/** First index where two array-likes differ bitwise (NaN equals NaN, -0 differs from 0), or -1. */
export function firstDifference(actual, expected) {
  if (actual.length !== expected.length) return Math.min(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) {
    if (!Object.is(actual[i], expected[i])) return i;
  }
  return -1;
}

export function assertBitEqual(assert, actual, expected, label) {
  const i = firstDifference(actual, expected);
  assert.equal(i, -1, i < 0 ? '' : `${label}: element ${i} is ${actual[i]}, expected ${expected[i]} (length ${actual.length} vs ${expected.length})`);
}

/** A QTensor from a golden fixture's tensor record {q, shape, scale, zero_point, dtype}. */
export const fixtureTensor = (t) => qwasm.fromIntRepr(t.q, t.shape, t.scale, t.zero_point, t.dtype);

/** A QTensor from a fixture's weight record (per tensor, or per channel with scales / zero_points / axis). */
export function fixtureWeight(w) {
  return w.qscheme === 'per_channel_affine'
    ? qwasm.fromIntReprPerChannel(w.q, w.shape, w.scales, w.zero_points, w.axis, w.dtype)
    : qwasm.fromIntRepr(w.q, w.shape, w.scale, w.zero_point, w.dtype);
}

export const DTYPE_RANGE = { quint8: [0, 255], qint8: [-128, 127], qint32: [-2147483648, 2147483647] };

/** Runs fn(...tensors) and disposes them afterwards, even when an assertion fails. */
export function using(...tensors) {
  return (fn) => {
    try {
      return fn(...tensors);
    } finally {
      for (const t of tensors) t.dispose();
    }
  };
}

/** Registers hooks that fail a test which leaves wasm memory allocated (call at the top of a suite). */
export function failOnLeaks(before, afterEach) {
  let baseline;
  before(async () => {
    await setup();
    baseline = qwasm.memoryStats().liveBytes;
  });
  afterEach(() => {
    const live = qwasm.memoryStats().liveBytes;
    const expected = baseline;
    baseline = live; // one leak fails one test, not every later one
    if (live !== expected) throw new Error(`wasm memory leaked: ${live - expected} bytes`);
  });
}

/**
 * Runs a single-node case (tools/transformer/ort-ops-cases.mjs's form: model bytes, inputs with data, outputs by
 * name) through qwasm's model loader: the case's graph inputs are fed, its initializers are the model's.
 * Returns the outputs' data in the case's order.
 */
export async function runModelCase(c) {
  const model = await qwasm.loadModel(c.model);
  try {
    const feeds = {};
    for (const i of c.inputs) if (!i.absent && !i.initializer) feeds[i.name] = { data: i.data, dims: i.dims };
    const out = await model.run(feeds);
    return c.outputs.map((o) => out[o.name].data);
  } finally {
    model.dispose();
  }
}

/**
 * Loads ONNX bytes in qwasm and in onnxruntime-web (tools/bench/ort.mjs) and calls fn(run, model): run(input name,
 * Float32Array, dims) -> { ours, ref } (every output of each). Both are released afterwards.
 */
export async function withQwasmAndOrt(bytes, fn) {
  const { createOrtRunner } = await import('../../tools/bench/ort.mjs');
  const model = await qwasm.loadModel(bytes);
  const ort = await createOrtRunner(bytes);
  const run = async (name, data, dims) => ({
    ours: await model.run({ [name]: { data, dims } }),
    ref: await ort.run({ [name]: { type: 'float32', data, dims } }),
  });
  try {
    return await fn(run, model);
  } finally {
    model.dispose();
    await ort.release();
  }
}
