// Post-training static quantization of a float ONNX model, without Python: calibrate with PyTorch's
// observers (a named default qconfig), quantize the weights, write a QDQ ONNX file (the form
// onnxruntime's quantize_static and torch.onnx.export write, so onnxruntime loads it too), load it
// as an int8 Model, and measure each quantized tensor's error against the float model (SQNR).
//
// Which tensors get quantization parameters follows PyTorch's eager-mode rules for the same modules:
//   - Conv, Gemm, MatMul (constant weight), Add, Mul, Concat: each activation input and the output get
//     an observer; a Relu or Clip that is the output's only consumer is fused (observed after it, as
//     torch's ConvReLU2d / add_relu);
//   - MaxPool, GlobalAveragePool, Flatten, Reshape, Transpose, Squeeze, Unsqueeze, Identity, Relu on a
//     quantized tensor keep their input's qparams (no observer, as torch's quantized versions do);
//   - everything else stays float, fed by DequantizeLinear.
// Weights: the qconfig's weight observer (per tensor for qnnpack, per output channel for x86/fbgemm),
// quantized as PyTorch's convert does: x * (1 / scale), rounded half to even (torch.quantize_per_tensor /
// per_channel). Bias: int32 at scale (float)(input_scale * weight_scale), the product taken in double, rounded as
// PyTorch's qnnpack engine quantizes it: b * (1 / scale) (quantize_per_tensor to qint32). Checked against torch
// 1.13 (tests/fixtures/torch/ptq_rounding.json); x86 / fbgemm keep the bias in float, which a QDQ file cannot.
import { ModelFormatError, UnsupportedError } from '../errors.js';
import { Sqnr, roundHalfEven } from '../reference.js';
import { defaultQConfig } from '../ops/observers.js';
import { quantizePerChannel, quantizePerTensor } from '../tensor/qtensor.js';
import { decodeOnnx, encodeOnnx } from './onnx.js';
import { loadModel, readSource } from './model.js';
import { checkNodesBeforePasses } from './operators/registry.js';

const COMPUTE = new Set(['Conv', 'Gemm', 'MatMul', 'Add', 'Mul', 'Concat']);
const SHARED = new Set(['MaxPool', 'GlobalAveragePool', 'Flatten', 'Reshape', 'Transpose', 'Squeeze', 'Unsqueeze', 'Identity', 'Relu']);
const f32 = Math.fround;

function consumersOf(nodes) {
  const map = new Map();
  for (const n of nodes) for (const i of n.inputs) if (i) map.set(i, [...(map.get(i) ?? []), n]);
  return map;
}

/** Weight axis that carries the output channels: Conv [OC, ...]: 0; Gemm transB=1 [N, K]: 0; else [K, N]: 1. */
function weightAxis(node) {
  if (node.opType === 'Conv') return 0;
  if (node.opType === 'Gemm') return (node.attributes.transB ?? 0) === 1 ? 0 : 1;
  return 1;
}

/**
 * Which tensors are quantized and how: Map(tensor -> { observed: true } | { sharedWith: tensor }),
 * plus the compute nodes whose weights are quantized and the activations fused into them.
 */
function planQuantization(graph) {
  const consumers = consumersOf(graph.nodes);
  const isConst = (name) => graph.initializers.has(name);
  const plan = new Map();
  const weighted = []; // Conv / Gemm / MatMul with a constant weight
  const fused = new Set();
  const root = (t) => plan.get(t)?.sharedWith ?? t;
  for (const node of graph.nodes) {
    if (fused.has(node)) continue;
    const op = node.opType;
    if (node.domain && node.domain !== 'ai.onnx') continue;
    if (COMPUTE.has(op)) {
      let activations;
      if (op === 'Conv' || op === 'Gemm' || op === 'MatMul') {
        const w = graph.initializers.get(node.inputs[1]);
        const ok = w && w.dtype === 'float32' && !isConst(node.inputs[0]) &&
          (op !== 'Gemm' || ((node.attributes.transA ?? 0) === 0 && (node.attributes.alpha ?? 1) === 1 && (node.attributes.beta ?? 1) === 1)) &&
          (op !== 'MatMul' || w.dims.length === 2) &&
          (!node.inputs[2] || (graph.initializers.get(node.inputs[2])?.dims.length === 1));
        if (!ok) continue;
        activations = [node.inputs[0]];
        weighted.push(node);
      } else {
        if (node.inputs.some(isConst)) continue; // constants on the 8-bit side: left float
        activations = node.inputs;
      }
      for (const x of activations) if (!plan.has(x)) plan.set(x, { observed: true });
      let out = node.outputs[0];
      const next = consumers.get(out) ?? [];
      const act = next.length === 1 && (next[0].opType === 'Relu' || (next[0].opType === 'Clip' && next[0].inputs.slice(1).every((i) => !i || isConst(i)))) ? next[0] : null;
      if (act && !graph.outputs.some((o) => o.name === out)) {
        fused.add(act);
        out = act.outputs[0];
      }
      plan.set(out, { observed: true });
    } else if (SHARED.has(op) && plan.has(node.inputs[0]) && !graph.initializers.has(node.inputs[0])) {
      for (const o of node.outputs) plan.set(o, { sharedWith: root(node.inputs[0]) });
    }
  }
  return { plan, weighted, root };
}

function resolveQConfig(qconfig) {
  if (typeof qconfig === 'string') {
    if (!['qnnpack', 'x86', 'fbgemm'].includes(qconfig)) throw new TypeError(`quantizeStatic: unknown qconfig "${qconfig}"; expected 'qnnpack', 'x86', 'fbgemm' or { activation, weight } observer factories`);
    return { name: qconfig, ...defaultQConfig(qconfig) };
  }
  if (qconfig && typeof qconfig.activation === 'function' && typeof qconfig.weight === 'function') return { name: qconfig.name ?? 'custom', ...qconfig };
  throw new TypeError(`quantizeStatic: qconfig must be 'qnnpack', 'x86', 'fbgemm' or { activation, weight } observer factories, got ${String(qconfig)}`);
}

function feedsArray(calibration) {
  const list = calibration == null ? [] : Array.from(calibration);
  if (list.length === 0) throw new RangeError('quantizeStatic: the calibration set is empty; pass an iterable of feeds ({ inputName: data })');
  return list;
}

const dataOf = (feed) => feed?.data ?? feed;

/**
 * Observes every observed tensor over the calibration set; returns Map(tensor -> observer). Samples are
 * observed batchSize at a time, concatenated along axis 0, as torch's observers see a DataLoader batch
 * (a HistogramObserver's result depends on how the data is split into calls).
 */
async function calibrate(floatModel, plan, calibration, makeObserver, batchSize, onSample) {
  const observers = new Map();
  for (const [t, how] of plan) if (how.observed) observers.set(t, makeObserver());
  const valueOf = (out, feeds, t, i) => {
    const v = out.intermediates[t] ?? (t in feeds ? { data: dataOf(feeds[t]), dims: feeds[t].dims ?? floatModel.inputs.find((s) => s.name === t).dims } : null);
    if (!v) throw new Error(`quantizeStatic: tensor "${t}" was not computed in calibration sample ${i}`);
    if (!(v.data instanceof Float32Array)) throw new UnsupportedError(`quantizeStatic: tensor "${t}" is ${v.dtype ?? typeof v.data}, only float32 activations are quantized`);
    return v;
  };
  for (let start = 0; start < calibration.length; start += batchSize) {
    const batch = new Map([...observers.keys()].map((t) => [t, []]));
    for (let i = start; i < Math.min(start + batchSize, calibration.length); i++) {
      const feeds = calibration[i];
      const out = await floatModel.run(feeds, { intermediates: true });
      for (const [t, parts] of batch) parts.push(valueOf(out, feeds, t, i));
      onSample(i + 1);
    }
    for (const [t, parts] of batch) {
      if (parts.length === 1) {
        observers.get(t).observe(parts[0].data, parts[0].dims);
        continue;
      }
      const data = new Float32Array(parts.reduce((n, p) => n + p.data.length, 0));
      let offset = 0;
      for (const p of parts) {
        data.set(p.data, offset);
        offset += p.data.length;
      }
      const dims = [parts.reduce((n, p) => n + (p.dims[0] ?? 1), 0), ...parts[0].dims.slice(1)];
      observers.get(t).observe(data, dims);
    }
  }
  return observers;
}

/** { scale, zeroPoint, dtype } of an activation observer (quint8 / qint8 as ONNX's uint8 / int8). */
function activationQParams(observer) {
  const q = observer.calculateQparams();
  const scale = q.scale ?? q.scales?.[0];
  const zeroPoint = q.zeroPoint ?? q.zeroPoints?.[0];
  if (q.scales && q.scales.length !== 1) throw new UnsupportedError('quantizeStatic: per-channel activation observers are not supported');
  return { scale: f32(Number(scale)), zeroPoint: Number(zeroPoint), dtype: observer.dtype === 'qint8' ? 'int8' : 'uint8' };
}

/** The weight's qparams from the qconfig's weight observer, along `axis` when it is per channel. */
function weightQParams(w, axis, makeObserver) {
  const observer = makeObserver();
  let data = w.data;
  let dims = w.dims;
  if (axis === 1) {
    // per-channel observers read channels on axis 0: observe the transpose of a [K, N] weight
    const [k, n] = w.dims;
    data = new Float32Array(w.data.length);
    for (let r = 0; r < k; r++) for (let c = 0; c < n; c++) data[c * k + r] = w.data[r * n + c];
    dims = [n, k];
  }
  observer.observe(data, dims);
  const q = observer.calculateQparams();
  const scales = q.scales ? Array.from(q.scales, f32) : [f32(q.scale)];
  const zeroPoints = q.zeroPoints ? Array.from(q.zeroPoints, Number) : [Number(q.zeroPoint)];
  return { scales, zeroPoints, dtype: observer.dtype === 'quint8' ? 'uint8' : 'int8' };
}

/** PyTorch's quantize (zp + rint(x * (1 / scale)) in float32, saturated), per tensor or per axis. */
function quantizeWeight(w, { scales, zeroPoints, dtype }, axis) {
  const qd = dtype === 'uint8' ? 'quint8' : 'qint8';
  const t = scales.length === 1
    ? quantizePerTensor(w.data, w.dims, scales[0], zeroPoints[0], qd, { rounding: 'torch' })
    : quantizePerChannel(w.data, w.dims, scales, zeroPoints, axis, qd, { rounding: 'torch' });
  try {
    return t.intRepr();
  } finally {
    t.dispose();
  }
}

/** int32 bias: rint(bias * (1 / s)) in float32, s = (float)(input_scale * weight_scale) (a double product), saturated. */
function quantizeBias(bias, inputScale, weightScales) {
  const scales = Float32Array.from(bias.data, (_, c) => f32(inputScale * weightScales[weightScales.length > 1 ? c : 0]));
  const data = Int32Array.from(bias.data, (b, c) => {
    return Math.min(Math.max(roundHalfEven(f32(b * f32(1 / scales[c]))), -2147483648), 2147483647);
  });
  return { scales, data };
}

/** The QDQ graph: the float graph with Q/DQ pairs on quantized tensors and quantized weights. */
function writeQdq(graph, { plan, weighted, root }, qparams, makeWeightObserver) {
  const inits = new Map(graph.initializers);
  const nodes = [];
  const scalar = (dtype, v) => ({ dtype, dims: [], data: dtype === 'float32' ? Float32Array.of(v) : dtype === 'int8' ? Int8Array.of(v) : Uint8Array.of(v) });
  const qparamNames = (t) => {
    const r = root(t);
    const { scale, zeroPoint, dtype } = qparams.get(r);
    if (!inits.has(`${r}_scale`)) {
      inits.set(`${r}_scale`, scalar('float32', scale));
      inits.set(`${r}_zero_point`, scalar(dtype, zeroPoint));
    }
    return [`${r}_scale`, `${r}_zero_point`];
  };
  const qdqPair = (from, to, t) => {
    const [s, z] = qparamNames(t);
    nodes.push({ name: `${t}_QuantizeLinear`, opType: 'QuantizeLinear', domain: '', inputs: [from, s, z], outputs: [`${t}_quantized`], attributes: {} });
    nodes.push({ name: `${t}_DequantizeLinear`, opType: 'DequantizeLinear', domain: '', inputs: [`${t}_quantized`, s, z], outputs: [to], attributes: {} });
  };
  const inputNames = new Set(graph.inputs.map((i) => i.name));
  const renamed = new Map(); // graph input -> its dequantized name
  for (const input of graph.inputs) {
    if (plan.has(input.name)) {
      qdqPair(input.name, `${input.name}_dequantized`, input.name);
      renamed.set(input.name, `${input.name}_dequantized`);
    }
  }
  const weightedSet = new Set(weighted);
  const replacedWeights = new Set();
  for (const original of graph.nodes) {
    const node = { ...original, inputs: original.inputs.map((i) => renamed.get(i) ?? i), outputs: original.outputs.slice() };
    if (weightedSet.has(original)) {
      const axis = weightAxis(original);
      const wName = original.inputs[1];
      const w = graph.initializers.get(wName);
      const wq = weightQParams(w, axis, makeWeightObserver);
      const perAxis = wq.scales.length > 1;
      const wDtype = wq.dtype;
      inits.set(`${wName}_quantized`, { dtype: wDtype, dims: w.dims.slice(), data: quantizeWeight(w, wq, axis) });
      inits.set(`${wName}_scale`, { dtype: 'float32', dims: perAxis ? [wq.scales.length] : [], data: Float32Array.from(wq.scales) });
      const Z = wDtype === 'uint8' ? Uint8Array : Int8Array;
      inits.set(`${wName}_zero_point`, { dtype: wDtype, dims: perAxis ? [wq.scales.length] : [], data: Z.from(wq.zeroPoints) });
      const axisAttr = perAxis ? { axis } : {};
      nodes.push({ name: `${wName}_DequantizeLinear`, opType: 'DequantizeLinear', domain: '', inputs: [`${wName}_quantized`, `${wName}_scale`, `${wName}_zero_point`], outputs: [`${wName}_dequantized`], attributes: axisAttr });
      node.inputs[1] = `${wName}_dequantized`;
      replacedWeights.add(wName);
      if (original.inputs[2]) {
        const bName = original.inputs[2];
        const xq = qparams.get(root(original.inputs[0]));
        const { scales, data } = quantizeBias(graph.initializers.get(bName), xq.scale, wq.scales);
        inits.set(`${bName}_quantized`, { dtype: 'int32', dims: [data.length], data });
        inits.set(`${bName}_scale`, { dtype: 'float32', dims: [scales.length], data: scales });
        inits.set(`${bName}_zero_point`, { dtype: 'int32', dims: [data.length], data: new Int32Array(data.length) });
        nodes.push({ name: `${bName}_DequantizeLinear`, opType: 'DequantizeLinear', domain: '', inputs: [`${bName}_quantized`, `${bName}_scale`, `${bName}_zero_point`], outputs: [`${bName}_dequantized`], attributes: { axis: 0 } });
        node.inputs[2] = `${bName}_dequantized`;
        replacedWeights.add(bName);
      }
    }
    const quantizedOutputs = node.outputs.filter((o) => plan.has(o) && !inputNames.has(o));
    for (const t of quantizedOutputs) node.outputs[node.outputs.indexOf(t)] = `${t}_float`;
    nodes.push(node);
    for (const t of quantizedOutputs) qdqPair(`${t}_float`, t, t);
  }
  const stillRead = new Set(nodes.flatMap((n) => n.inputs));
  for (const name of replacedWeights) if (!stillRead.has(name)) inits.delete(name);
  const opsets = new Map(graph.opsets);
  if ((opsets.get('') ?? 0) < 13) opsets.set('', 13); // per-axis QuantizeLinear / DequantizeLinear
  return { ...graph, opsets, initializers: inits, nodes };
}

/** The int8 model's value of a quantized tensor, dequantized; undefined when the run did not keep it. */
function int8Value(intermediates, t, q) {
  for (const name of [`${t}_quantized`, t]) {
    const v = intermediates[name];
    if (!v) continue;
    if (v.dtype === 'float32') return v.data;
    const s = q.scale;
    return Float32Array.from(v.data, (x) => f32(s * (Number(x) - q.zeroPoint)));
  }
  return undefined;
}

/**
 * Post-training static quantization of a float ONNX model in the page or in Node.
 *   source: the float model (bytes, ArrayBuffer, URL or path, as loadModel);
 *   calibration: an iterable of feeds ({ inputName: Float32Array | { data, dims } }), representative inputs;
 *   options.qconfig: 'qnnpack' (default), 'x86', 'fbgemm' (torch's default qconfigs) or { activation, weight }
 *   observer factories; options.batchSize: samples per observer call (torch's calibration batch; default 1);
 *   options.onProgress({ stage: 'calibrate' | 'measure', done, total }): called after every sample of the
 *   calibration pass and of the SQNR pass (a page shows it; a Worker posts it).
 * Returns { bytes (the QDQ ONNX file), model (the int8 Model; dispose it), qparams (Map tensor ->
 * { scale, zeroPoint, dtype }), report ([{ tensor, producer, opType, scale, zeroPoint, sqnrDb }] over the
 * calibration set, in graph order), qconfig }.
 */
export async function quantizeStatic(source, calibration, options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`quantizeStatic: options must be an object, got ${String(options)}`);
  const { qconfig = 'qnnpack', batchSize = 1, onProgress = null } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`quantizeStatic: batchSize must be a positive integer, got ${String(batchSize)}`);
  if (onProgress !== null && typeof onProgress !== 'function') throw new TypeError(`quantizeStatic: onProgress must be a function, got ${typeof onProgress}`);
  const progress = (stage, done, total) => onProgress?.({ stage, done, total });
  const config = resolveQConfig(qconfig);
  const samples = feedsArray(calibration);
  const bytes = await readSource(source);
  const graph = await decodeOnnx(bytes);
  checkNodesBeforePasses(graph); // planQuantization reads attributes and inputs, as the passes do
  if (graph.nodes.some((n) => n.opType === 'QuantizeLinear' || n.opType === 'DequantizeLinear' || n.opType.startsWith('QLinear'))) {
    throw new ModelFormatError('quantizeStatic: the model is already quantized; pass the float model');
  }
  const quantization = planQuantization(graph);
  if (quantization.plan.size === 0) throw new UnsupportedError('quantizeStatic: the model has no Conv, Gemm, MatMul, Add, Mul or Concat to quantize');
  const floatModel = await loadModel(bytes, { semantics: 'onnx' });
  let int8 = null;
  try {
    const observers = await calibrate(floatModel, quantization.plan, samples, config.activation, batchSize, (done) => progress('calibrate', done, samples.length));
    const qparams = new Map([...observers].map(([t, o]) => [t, activationQParams(o)]));
    const qdq = writeQdq(graph, quantization, qparams, config.weight);
    qdq.metadata = new Map([...graph.metadata, ['qwasm.quantize_static', `qconfig ${config.name}, ${samples.length} calibration samples`]]);
    const out = await encodeOnnx(qdq);
    int8 = await loadModel(out);
    // error of every quantized tensor against the float model, over the calibration set
    const sqnr = new Map([...quantization.plan.keys()].map((t) => [t, new Sqnr()]));
    for (const [i, feeds] of samples.entries()) {
      const f = await floatModel.run(feeds, { intermediates: true });
      const q = await int8.run(feeds, { intermediates: true });
      for (const [t, acc] of sqnr) {
        const reference = f.intermediates[t]?.data ?? dataOf(feeds[t]);
        const approx = int8Value(q.intermediates, t, qparams.get(quantization.root(t)));
        if (reference && approx) acc.add(reference, approx);
      }
      progress('measure', i + 1, samples.length);
    }
    const producer = new Map(graph.nodes.flatMap((n) => n.outputs.map((o) => [o, n])));
    const report = [...quantization.plan.keys()].map((t) => {
      const q = qparams.get(quantization.root(t));
      return { tensor: t, producer: producer.get(t)?.name ?? null, opType: producer.get(t)?.opType ?? 'input', scale: q.scale, zeroPoint: q.zeroPoint, sqnrDb: sqnr.get(t).db };
    });
    const all = new Map([...quantization.plan.keys()].map((t) => [t, { ...qparams.get(quantization.root(t)) }]));
    return { bytes: out, model: int8, qparams: all, report, qconfig: config.name };
  } catch (error) {
    int8?.dispose();
    throw error;
  } finally {
    floatModel.dispose();
  }
}

