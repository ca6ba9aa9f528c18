// Hostile arguments for every public function of qwasm and qwasm/reference, from one table: each entry gives a
// valid call, and every argument (and every field of an options argument) is replaced in turn by each hostile value
// below. Every call must either work or throw a named error (ModelFormatError / UnsupportedError / TypeError /
// RangeError, NotImplementedError for the observers' torch checks, whose message names the function: classified by
// tools/fuzz/classify.mjs), never an engine error, a trap or a giant allocation, and must give back every byte of
// wasm memory it took (the result is disposed; memoryStats().liveBytes is compared after each case).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, after, test } from 'node:test';
import * as reference from '../../js/reference.js';
import { classifyError } from '../../tools/fuzz/classify.mjs';
import { qwasm, setup } from './helpers.js';

const HOSTILE = [
  undefined, null, NaN, Infinity, -Infinity, -1, 0, 0.5, 2 ** 31, 2 ** 53, 1e300, -0, 1n, '', '1', 'qint8', true,
  [], [NaN], [1, -1], [2 ** 31, 2 ** 31], ['1'], [1n], {}, { length: 4 }, Symbol('hostile'), () => 1,
  new Float64Array(2), new BigInt64Array(1), new Uint8Array(0), new Int32Array([-1, 1]), new Date(0),
];

const digits = readFileSync(new URL('../../models/digits.onnx', import.meta.url));
const digitsFloat = readFileSync(new URL('../../models/digits-float.onnx', import.meta.url));

let fixtures; // tensors and packed weights of the wrong kind, made once (hostile values that are qwasm objects)

/** Disposes whatever a call returned: tensors, packed weights, models, and the tensors inside objects and arrays. */
function release(v, depth = 0) {
  if (v === null || typeof v !== 'object' || depth > 2) return;
  if (typeof v.dispose === 'function' && !(v instanceof Date)) {
    v.dispose();
    return;
  }
  for (const x of Array.isArray(v) ? v : Object.values(v)) release(x, depth + 1);
}

const q = (ints, shape, dtype = 'quint8', scale = 0.1, zp = dtype === 'quint8' ? 3 : 0) => qwasm.fromIntRepr(ints, shape, scale, zp, dtype);
const seq = (n, f = (i) => (i * 7) % 11) => Array.from({ length: n }, (_, i) => f(i));
const x23 = () => q(seq(6), [2, 3]);
const x4d = () => q(seq(2 * 3 * 5 * 5), [2, 3, 5, 5]);
const w43 = () => q(seq(12, (i) => (i % 5) - 2), [4, 3], 'qint8', 0.05);
const w34 = () => q(seq(12, (i) => (i % 5) - 2), [3, 4], 'qint8', 0.05);
const wconv = () => q(seq(4 * 3 * 9, (i) => (i % 5) - 2), [4, 3, 3, 3], 'qint8', 0.05);
const out = () => ({ scale: 0.1, zeroPoint: 0 });

/**
 * The table: name -> { make: () => args (fresh objects; what the call owns is released after it), call: (...args),
 * options: index of an options argument whose fields are replaced too }. Methods are 'Class#method'.
 */
const TABLE = {
  init: { make: () => [{ numThreads: qwasm.backendInfo().threads, relaxedSimd: 'auto' }], call: (o) => qwasm.init(o), options: 0 },
  backendInfo: { make: () => [], call: () => qwasm.backendInfo() },
  memoryStats: { make: () => [], call: () => qwasm.memoryStats() },
  simdSupported: { make: () => [], call: () => qwasm.simdSupported() },
  chooseQParams: { make: () => [{ min: -1, max: 1, dtype: 'qint8', qscheme: 'per_tensor_symmetric' }], call: (o) => qwasm.chooseQParams(o), options: 0 },
  quantRange: { make: () => [{ dtype: 'qint8', reduceRange: false }], call: (o) => qwasm.quantRange(o), options: 0 },
  quantizePerTensor: { make: () => [[0.1, 0.2, -0.3, 0.4], [2, 2], 0.1, 3, 'quint8', { rounding: 'onnx' }], call: qwasm.quantizePerTensor, options: 5 },
  quantizePerChannel: { make: () => [[0.1, 0.2, -0.3, 0.4], [2, 2], [0.1, 0.2], [0, 1], 0, 'qint8', {}], call: qwasm.quantizePerChannel, options: 6 },
  fromIntRepr: { make: () => [[1, 2, 3, 4], [2, 2], 0.1, 3, 'quint8'], call: qwasm.fromIntRepr },
  fromIntReprPerChannel: { make: () => [[1, 2, 3, 4], [2, 2], [0.1, 0.2], [0, 1], 1, 'qint8'], call: qwasm.fromIntReprPerChannel },
  empty: { make: () => [[2, 2], { dtype: 'qint8', scale: 0.1, zeroPoint: 1 }], call: qwasm.empty, options: 1 },
  QTensor: { make: () => [1, 2, 3], call: (...a) => new qwasm.QTensor(...a) },
  tidy: { make: () => [() => [x23(), x23().select(0, 1)]], call: qwasm.tidy },
  keep: { make: () => [x23()], call: (t) => void qwasm.keep(t), owned: [0] }, // (it returns t: not released twice)
  'QTensor.fromBytes': { make: () => [fixtures.bytes.slice()], call: (b) => qwasm.QTensor.fromBytes(b) },
  packLinear: { make: () => [w43(), [1, 2, 3, 4], {}], call: qwasm.packLinear, options: 2, owned: [0] },
  PackedLinear: { make: () => [w43(), null, {}], call: (...a) => new qwasm.PackedLinear(...a), options: 2, owned: [0] },
  linear: { make: () => [x23(), qwasm.packLinear(fixtures.w43, null), out()], call: qwasm.linear, options: 2, owned: [0, 1] },
  dynamicLinear: { make: () => [[0.5, -1.25, 2, 0.75, 0, -3], [2, 3], qwasm.packLinear(fixtures.w43, [0.5, -0.25, 1, 0]), { semantics: 'pytorch-fbgemm' }], call: qwasm.dynamicLinear, options: 3, owned: [2] },
  packConv2d: { make: () => [wconv(), null, { padding: 1, stride: 1, dilation: 1, groups: 1 }], call: qwasm.packConv2d, options: 2, owned: [0] },
  PackedConv2d: { make: () => [wconv(), null, {}], call: (...a) => new qwasm.PackedConv2d(...a), options: 2, owned: [0] },
  conv2d: { make: () => [x4d(), qwasm.packConv2d(fixtures.wconv, null, { padding: 1 }), out()], call: qwasm.conv2d, options: 2, owned: [0, 1] },
  packMatMul: { make: () => [w34(), {}], call: qwasm.packMatMul, options: 1, owned: [0] },
  PackedMatMul: { make: () => [w34(), {}], call: (...a) => new qwasm.PackedMatMul(...a), options: 1, owned: [0] },
  matmul: { make: () => [x23(), w34(), out()], call: qwasm.matmul, options: 2, owned: [0, 1] },
  dynamicQuantizeLinear: { make: () => [[0.5, -1, 2], [3]], call: qwasm.dynamicQuantizeLinear },
  matmulInteger: { make: () => [x23(), w34()], call: qwasm.matmulInteger, owned: [0, 1] },
  convInteger: { make: () => [x4d(), qwasm.packConv2d(fixtures.wconv, null, { mode: 'none' })], call: qwasm.convInteger, owned: [0, 1] },
  add: { make: () => [x23(), x23(), out()], call: qwasm.add, options: 2, owned: [0, 1] },
  mul: { make: () => [x23(), x23(), out()], call: qwasm.mul, options: 2, owned: [0, 1] },
  cat: { make: () => [[x23(), x23()], 1, {}], call: qwasm.cat, options: 2, owned: [0] },
  clamp: { make: () => [x23(), -0.1, 0.4, {}], call: qwasm.clamp, options: 3, owned: [0] },
  hardtanh: { make: () => [x23(), -0.1, 0.4, {}], call: qwasm.hardtanh, options: 3, owned: [0] },
  relu: { make: () => [x23()], call: qwasm.relu, owned: [0] },
  relu6: { make: () => [x23(), {}], call: qwasm.relu6, options: 1, owned: [0] },
  hardswish: { make: () => [x23(), out()], call: qwasm.hardswish, options: 1, owned: [0] },
  sigmoid: { make: () => [x23(), {}], call: qwasm.sigmoid, options: 1, owned: [0] },
  leakyRelu: { make: () => [x23(), 0.1, {}], call: qwasm.leakyRelu, options: 2, owned: [0] },
  maxPool2d: { make: () => [x4d(), { kernelSize: 2, stride: 1, padding: 1, dilation: 1, ceilMode: false }], call: qwasm.maxPool2d, options: 1, owned: [0] },
  avgPool2d: { make: () => [x4d(), { kernelSize: 3, stride: 2, padding: 1, ceilMode: true, countIncludePad: false }], call: qwasm.avgPool2d, options: 1, owned: [0] },
  adaptiveAvgPool2d: { make: () => [x4d(), [2, 3], {}], call: qwasm.adaptiveAvgPool2d, options: 2, owned: [0] },
  mean: { make: () => [x4d(), [2, 3], true, {}], call: qwasm.mean, options: 3, owned: [0] },
  MinMaxObserver: { make: () => [{ dtype: 'qint8' }], call: (o) => new qwasm.MinMaxObserver(o), options: 0 },
  MovingAverageMinMaxObserver: { make: () => [{ averagingConstant: 0.1 }], call: (o) => new qwasm.MovingAverageMinMaxObserver(o), options: 0 },
  PerChannelMinMaxObserver: { make: () => [{ chAxis: 0, dtype: 'qint8', qscheme: 'per_channel_symmetric' }], call: (o) => new qwasm.PerChannelMinMaxObserver(o), options: 0 },
  MovingAveragePerChannelMinMaxObserver: { make: () => [{ chAxis: 1 }], call: (o) => new qwasm.MovingAveragePerChannelMinMaxObserver(o), options: 0 },
  HistogramObserver: { make: () => [{ bins: 64, upsampleRate: 16 }], call: (o) => new qwasm.HistogramObserver(o), options: 0 },
  FixedQParamsObserver: { make: () => [{ scale: 1 / 256, zeroPoint: 0 }], call: (o) => new qwasm.FixedQParamsObserver(o), options: 0 },
  PlaceholderObserver: { make: () => [{ dtype: 'float32' }], call: (o) => new qwasm.PlaceholderObserver(o), options: 0 },
  defaultQConfig: { make: () => ['qnnpack'], call: qwasm.defaultQConfig },
  fakeQuantize: { make: () => [[0.1, -0.2, 3], 0.1, 3, 0, 255], call: qwasm.fakeQuantize },
  fakeQuantizePerChannel: { make: () => [[0.1, -0.2, 3, 4], [2, 2], [0.1, 0.2], [0, 1], 0, -128, 127], call: qwasm.fakeQuantizePerChannel },
  loadModel: { make: () => [digits, {}], call: qwasm.loadModel, options: 1 },
  quantizeStatic: { make: () => [digitsFloat, [{ input: new Float32Array(64).fill(0.5) }], { qconfig: 'qnnpack', batchSize: 1 }], call: qwasm.quantizeStatic, options: 2 },
  Model: { make: () => [{}, {}], call: (...a) => new qwasm.Model(...a) },
  'Model#run': { make: () => [fixtures.model, { input: new Float32Array(64).fill(0.25) }, { intermediates: false, profile: false }], call: (m, f, o) => m.run(f, o), options: 2 },
  'Model#runFeed': { make: () => [fixtures.model, { data: new Float32Array(64), dims: [1, 1, 8, 8] }], call: (m, feed) => m.run({ input: feed }) },
  'Model#weight': { make: () => [fixtures.model, fixtures.model.layers.find((l) => l.weight).name], call: (m, n) => m.weight(n) },
  'Model#initializer': { make: () => [fixtures.model, fixtures.model.layers.find((l) => l.weight).weight.name], call: (m, n) => m.initializer(n) },
  'Model#layers': { make: () => [fixtures.model], call: (m) => m.layers },
  // QTensor methods, on a fresh [2, 3] quint8 tensor (a per-channel one where the method needs it)
  ...Object.fromEntries([
    ['numel', []], ['isContiguous', []], ['qScale', []], ['qZeroPoint', []], ['intRepr', []], ['dequantize', []], ['item', []],
    ['transpose', [0, 1]], ['permute', [[1, 0]]], ['contiguous', []], ['reshape', [[3, 2]]], ['flatten', [0, -1]], ['select', [1, 2]],
    ['slice', [1, 0, 2, 1]], ['at', [1, 2]], ['clone', []], ['requantize', [0.2, 4, 'qint8', {}]], ['toBytes', []], ['toString', []],
    ['dispose', []],
  ].map(([m, args]) => [`QTensor#${m}`, { make: () => [x23(), ...args], call: (t, ...a) => t[m](...a), owned: [0], options: m === 'requantize' ? 4 : undefined }])),
  'QTensor#copyFrom': { make: () => [x23(), x23(), { rounding: 'onnx' }], call: (t, o, opt) => t.copyFrom(o, opt), owned: [0, 1], options: 2 },
  ...Object.fromEntries(['qPerChannelScales', 'qPerChannelZeroPoints', 'qPerChannelAxis'].map((m) => [`QTensor#${m}`, {
    make: () => [qwasm.fromIntReprPerChannel([1, 2, 3, 4], [2, 2], [0.1, 0.2], [0, 1], 0, 'qint8')], call: (t) => t[m](), owned: [0],
  }])),
  ...Object.fromEntries(['shape', 'ndim', 'dtype', 'qscheme', 'strides', 'disposed'].map((g) => [`QTensor#${g}`, { make: () => [x23()], call: (t) => t[g], owned: [0] }])),
  ...Object.fromEntries(['MinMaxObserver', 'MovingAverageMinMaxObserver', 'HistogramObserver', 'PerChannelMinMaxObserver',
    'MovingAveragePerChannelMinMaxObserver', 'FixedQParamsObserver', 'PlaceholderObserver'].flatMap((name) => {
    const options = name === 'FixedQParamsObserver' ? { scale: 0.1, zeroPoint: 0 } : {};
    const make = () => new qwasm[name](options);
    return [
      [`${name}#observe`, { make: () => [make(), [0.5, -1, 2, 3], [2, 2]], call: (o, d, s) => o.observe(d, s) }],
      [`${name}#calculateQparams`, { make: () => [make().observe([0.5, -1, 2, 3], [2, 2])], call: (o) => o.calculateQparams() }],
      [`${name}#reset`, { make: () => [make()], call: (o) => o.reset() }],
      [`${name}#state`, { make: () => [make()], call: (o) => o.state?.() }],
    ];
  })),
  // qwasm/reference
  ...Object.fromEntries([
    ['f32', [0.1]], ['wrapInt32', [2 ** 32 + 5]], ['roundHalfEven', [2.5]], ['roundHalfAway', [-2.5]],
    ['quantizeTorch', [0.27, 0.0021, 0, -128, 127]], ['fmaf', [0.1, 0.2, 0.3]], ['quantizeFbgemm', [0.27, 0.0021, 3, 0, 255]],
    ['quantizeFbgemmScalar', [0.27, 0.0021, 3, 0, 255]], ['quantizeOnnx', [0.27, 0.0021, 3, 0, 255]], ['dequantize', [7, 0.1, 3]],
    ['dequantizePerChannel', [7, 0.1, 3]], ['quantizeMultiplier', [0.3]], ['srdhm', [2 ** 30, 2 ** 30]], ['rdbpot', [-7, 2]],
    ['requantizationParams', ['qnnpack', { inScale: 0.1, weightScale: 0.2, outScale: 0.3, bias: 1 }]],
    ['requantizeSteps', ['fixedpoint', 1000, reference.requantizationParams('fixedpoint', { inScale: 0.1, weightScale: 0.2, outScale: 0.3 }), 3, 0, 255]],
    ['requantize', ['qnnpack', 1000, reference.requantizationParams('qnnpack', { inScale: 0.1, weightScale: 0.2, outScale: 0.3 }), 3, 0, 255]],
    ['sqnrDb', [[1, 2, 3], [1, 2, 3.5]]], ['chooseQParamsDynamic', [-1.5, 2.25, 0, 127]],
    ['dynamicQParams', [[-0.5, 0.25, 1.5]]], ['dynamicMatMulOutput', [1234, 0.01, 0.02, 0.5]],
  ].map(([name, args]) => [`reference.${name}`, { make: () => structuredClone(args), call: reference[name], options: name === 'requantizationParams' ? 1 : undefined }])),
  'reference.Sqnr#add': { make: () => [new reference.Sqnr(), [1, 2], [1, 2.5]], call: (s, a, b) => s.add(a, b).db },
};

/** What one call did: 'ok', or the classification of what it threw; `leaked` wasm bytes. */
async function attempt(entry, edit) {
  const live = () => qwasm.memoryStats().liveBytes;
  const before = live();
  const args = entry.make();
  const owned = (entry.owned ?? []).map((i) => args[i]);
  edit(args);
  let outcome = 'ok';
  let message = '';
  try {
    release(await entry.call(...args));
  } catch (error) {
    outcome = classifyError(error);
    message = `${error?.name}: ${error?.message}`;
  } finally {
    release(owned);
  }
  return { outcome, message, leaked: live() - before };
}

function show(v) {
  if (typeof v === 'symbol') return 'Symbol()';
  if (typeof v === 'function') return 'function';
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${v.length})`;
  if (v instanceof qwasm.QTensor) return v.disposed ? 'disposed QTensor' : `QTensor ${v.dtype} [${v.shape}]`;
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && v.constructor !== Object) return v.constructor.name;
  return JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v);
}

before(async () => {
  await setup();
  const model = await qwasm.loadModel(digits);
  const t = x23();
  const disposed = x23();
  disposed.dispose();
  fixtures = {
    model, w43: w43(), wconv: wconv(), bytes: t.toBytes(),
    extra: [t, disposed, qwasm.fromIntRepr([1, 2, 3, 4], [2, 2], 1, 0, 'qint32'), qwasm.fromIntRepr([5], [], 0.1, 3, 'quint8'),
      qwasm.fromIntRepr([], [0, 3], 0.1, 3, 'quint8'), qwasm.fromIntReprPerChannel([1, 2, 3, 4], [2, 2], [0.1, 0.2], [0, 1], 0, 'qint8')],
  };
  // (the transposed copy is disposed at once: left to the garbage collector, its finalizer would free it during a case)
  const w34 = fixtures.w43.transpose(0, 1).contiguous();
  fixtures.extra.push(qwasm.packLinear(fixtures.w43), qwasm.packConv2d(fixtures.wconv), qwasm.packMatMul(w34));
  w34.dispose();
});

after(() => {
  release([fixtures.model, fixtures.w43, fixtures.wconv, fixtures.extra]);
});

test('the table covers every public function of qwasm and qwasm/reference, and every QTensor method', () => {
  const missing = [];
  // (the error classes are Error's subclasses, with Error's constructor)
  for (const [name, v] of Object.entries(qwasm)) if (typeof v === 'function' && !(v.prototype instanceof Error) && !TABLE[name]) missing.push(name);
  for (const [name, v] of Object.entries(reference)) {
    if (typeof v === 'function' && !TABLE[`reference.${name}`] && !TABLE[`reference.${name}#add`]) missing.push(`reference.${name}`);
  }
  for (const name of Object.getOwnPropertyNames(qwasm.QTensor.prototype)) {
    if (name !== 'constructor' && !TABLE[`QTensor#${name}`] && typeof name === 'string') missing.push(`QTensor#${name}`);
  }
  assert.deepEqual(missing, [], 'public functions without hostile-argument cases');
});

test('backendInfo: the documented fields only, each of its type (threads and relaxed SIMD included)', () => {
  const info = qwasm.backendInfo();
  const types = { isa: 'string', simd: 'boolean', source: 'string', threads: 'number', relaxed: 'string', threadsFallback: 'string', relaxedFallback: 'string' };
  for (const [key, v] of Object.entries(info)) assert.equal(typeof v, types[key], `backendInfo().${key} = ${show(v)}`);
  assert.ok(['wasmsimd', 'wasmrelaxed', 'scalar'].includes(info.isa), info.isa);
  assert.ok(Number.isInteger(info.threads) && info.threads >= 1 && info.threads <= 64, `threads ${info.threads}`);
  assert.ok(info.relaxed === undefined || ['usdot', 'sdot'].includes(info.relaxed), info.relaxed);
  assert.equal(info.isa === 'wasmrelaxed', info.relaxed !== undefined);
});

test('hostile arguments: every call works or throws a named error, and gives back its wasm memory', async () => {
  const failures = [];
  const counts = { ok: 0, named: 0 };
  for (const [name, entry] of Object.entries(TABLE)) {
    const base = await attempt(entry, () => {});
    if (base.outcome !== 'ok' && !name.startsWith('QTensor#q') && !['QTensor', 'Model', 'QTensor#item', 'PlaceholderObserver#calculateQparams'].includes(name)) {
      failures.push(`${name}(valid arguments): ${base.outcome} ${base.message}`);
    }
    const width = (() => { const a = entry.make(); release((entry.owned ?? []).map((i) => a[i])); return a.length + 1; })();
    const variants = [];
    for (let i = name.includes('#') ? 1 : 0; i < width; i++) { // a method's receiver (argument 0) stays what it is
      for (const h of [...HOSTILE, ...fixtures.extra]) variants.push([`argument ${i} = ${show(h)}`, (args) => { args[i] = h; }]);
    }
    if (entry.options !== undefined) {
      const keys = Object.keys((() => { const a = entry.make(); const o = a[entry.options]; release((entry.owned ?? []).map((i) => a[i])); return o; })());
      for (const key of keys) {
        for (const h of HOSTILE) variants.push([`options.${key} = ${show(h)}`, (args) => { args[entry.options] = { ...args[entry.options], [key]: h }; }]);
      }
    }
    for (const [what, edit] of variants) {
      let r = await attempt(entry, edit);
      // packed weights keep a requantization blob and a workspace from their first call: only a second leak counts
      if (r.leaked > 0 && r.outcome === 'ok') r = await attempt(entry, edit);
      counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
      if (r.outcome !== 'ok' && r.outcome !== 'named') failures.push(`${name}, ${what}: ${r.outcome} (${r.message})`);
      else if (r.leaked !== 0) failures.push(`${name}, ${what}: ${r.leaked} bytes leaked (${r.outcome}${r.message ? `: ${r.message}` : ''})`);
    }
  }
  assert.ok(counts.named > 3000, `only ${counts.named} named errors: the table is not doing its job`);
  assert.deepEqual(failures.slice(0, 40), [], `${failures.length} hostile calls failed (ok ${counts.ok}, named ${counts.named})`);
});
