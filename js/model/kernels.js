// The ONNX operators a quantized model needs, over two kinds of runtime values:
//   { kind: 'host', dtype, dims, data }  a JS typed array (float32 and index tensors, small things)
//   { kind: 'q', q: QTensor }            8-bit / int32 data in wasm memory
// QOperator graphs carry a tensor's qparams at its consumers (x_scale, x_zero_point inputs), so a 'q'
// value's own qparams are nominal; each consumer views it with its own (zero copy).
import * as qw from '../index.js';
import { applyTable } from '../elementwise.js';
import { broadcastSourceIndex } from '../layout.js';
import { avgPool2dChannelsLast } from '../pooling.js';
import { conv2dFloat, packConv2dFloat } from '../conv-float.js';
import { leakyReluTable, mlasLogistic, sigmoidTable } from './ort-tables.js';
import { floatAveragePool, ortAveragePool, ortGlobalAveragePool, qlinearSoftmax } from './ort-kernels.js';
import { withQParams } from '../qtensor.js';
import { ModelFormatError } from './onnx.js';

export class UnsupportedError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UnsupportedError';
  }
}

const QDTYPE = { uint8: 'quint8', int8: 'qint8', int32: 'qint32' };
const ONNX_OF = { quint8: 'uint8', qint8: 'int8', qint32: 'int32' };
const ARRAY = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array };

export const host = (dtype, dims, data) => ({ kind: 'host', dtype, dims, data });
const numel = (dims) => dims.reduce((a, b) => a * b, 1);

export function dtypeOf(v) {
  return v.kind === 'q' ? ONNX_OF[v.q.dtype] : v.dtype;
}
export function dimsOf(v) {
  return v.kind === 'q' ? v.q.shape.slice() : v.dims;
}

/** A value's data on the host. */
export function toHost(v) {
  if (v.kind === 'host') return v;
  return host(ONNX_OF[v.q.dtype], v.q.shape.slice(), v.q.intRepr());
}

/** A value as a QTensor with the given qparams (a view, or a copy into wasm memory). */
function toQ(v, scale, zeroPoint, where) {
  if (v.kind === 'q') return withQParams(v.q, scale, zeroPoint);
  if (!QDTYPE[v.dtype] || v.dtype === 'int32') throw new ModelFormatError(`${where}: expected uint8 or int8 data, got ${v.dtype}`);
  return qw.fromIntRepr(v.data, v.dims, scale, zeroPoint, QDTYPE[v.dtype]);
}

function scalar(v, where) {
  const h = toHost(v);
  if (h.data.length !== 1) throw new ModelFormatError(`${where}: expected a scalar, got ${h.data.length} values`);
  return Number(h.data[0]);
}

function floatData(v, where) {
  if (dtypeOf(v) !== 'float32') throw new ModelFormatError(`${where}: expected float32 data, got ${dtypeOf(v)}`);
  return v.data;
}

/** Scale(s) and zero point(s) of a (possibly per-axis) quantization. */
function qparamsOf(scaleV, zpV, where) {
  const s = toHost(scaleV);
  const z = zpV ? toHost(zpV) : null;
  const scales = Array.from(s.data, Number);
  const zps = z ? Array.from(z.data, Number) : scales.map(() => 0);
  if (zps.length !== scales.length) throw new ModelFormatError(`${where}: ${scales.length} scales but ${zps.length} zero points`);
  return { scales, zps, perAxis: s.dims.length === 1 && scales.length > 1, dtype: z ? z.dtype : 'uint8' };
}

// ---- the run context -------------------------------------------------------------------------
// ctx: { semantics: 'pytorch-qnnpack' | 'onnx', rounding, mode, node, opset,
//        prepare(make, key): the node's packed weights, made by make() on its first run and kept }

const where = (node) => `${node.opType} node "${node.name}"`;

function quantizeLinear(ctx, [x, s, z], attrs) {
  const w = where(ctx.node);
  const { scales, zps, perAxis, dtype } = qparamsOf(s, z, w);
  const qd = QDTYPE[dtype];
  if (!qd || qd === 'qint32') throw new UnsupportedError(`${w}: output type ${dtype} is not supported`);
  const xd = floatData(x, w);
  if (perAxis) {
    const axis = attrs.axis ?? 1;
    const ax = axis < 0 ? axis + x.dims.length : axis;
    return [{ kind: 'q', q: qw.quantizePerChannel(xd, x.dims, scales, zps, ax, qd, { rounding: ctx.rounding }) }];
  }
  return [{ kind: 'q', q: qw.quantizePerTensor(xd, x.dims, scales[0], zps[0], qd, { rounding: ctx.rounding }) }];
}

function dequantizeLinear(ctx, [x, s, z], attrs) {
  const w = where(ctx.node);
  const { scales, zps, perAxis } = qparamsOf(s, z, w);
  const h = toHost(x);
  const qd = QDTYPE[h.dtype];
  if (!qd) throw new ModelFormatError(`${w}: expected 8-bit or int32 input, got ${h.dtype}`);
  const axis = attrs.axis ?? 1;
  const t = perAxis
    ? qw.fromIntReprPerChannel(h.data, h.dims, scales, zps, axis < 0 ? axis + h.dims.length : axis, qd)
    : qw.fromIntRepr(h.data, h.dims, scales[0], zps[0], qd);
  try {
    return [host('float32', h.dims.slice(), t.dequantize())];
  } finally {
    t.dispose();
  }
}

function weightTensor(v, s, z, axis, where_) {
  const { scales, zps, perAxis } = qparamsOf(s, z, where_);
  const h = toHost(v);
  const qd = QDTYPE[h.dtype];
  if (qd !== 'quint8' && qd !== 'qint8') throw new ModelFormatError(`${where_}: weights must be uint8 or int8, got ${h.dtype}`);
  return perAxis
    ? qw.fromIntReprPerChannel(h.data, h.dims, scales, zps, axis, qd)
    : qw.fromIntRepr(h.data, h.dims, scales[0], zps[0], qd);
}

function outputQ(s, z, where_, attrs) {
  const { scales, zps, dtype } = qparamsOf(s, z, where_);
  const out = { scale: scales[0], zeroPoint: zps[0], dtype: QDTYPE[dtype] };
  if (attrs?.qwasm_output_range) out.outputRange = attrs.qwasm_output_range; // a fused Clip (qdq.js fuseClips)
  return out;
}

function convAttrs(attrs, kernelRank, w) {
  if (attrs.auto_pad && attrs.auto_pad !== 'NOTSET') throw new UnsupportedError(`${w}: auto_pad ${attrs.auto_pad} is not supported; use explicit pads`);
  const pads = attrs.pads ?? [0, 0, 0, 0];
  if (kernelRank !== 2) throw new UnsupportedError(`${w}: only 2-D convolutions are supported`);
  return { stride: attrs.strides ?? [1, 1], dilation: attrs.dilations ?? [1, 1], groups: attrs.group ?? 1, padding: [pads[0], pads[1], pads[2], pads[3]] };
}

/** QLinearConv: weights packed once (the first run), reused after. */
function qlinearConv(ctx, inputs, attrs) {
  const w = where(ctx.node);
  const [x, xs, xz, wv, ws, wz, ys, yz, b] = inputs;
  const packed = ctx.prepare(() => {
    if (!ctx.isConstant(ctx.node.inputs[3])) throw new UnsupportedError(`${w}: weights that are not constant are not supported`);
    const weight = weightTensor(wv, ws, wz, 0, w);
    try {
      const bias = b ? Int32Array.from(toHost(b).data) : null;
      return qw.packConv2d(weight, bias, { ...convAttrs(attrs, weight.shape.length - 2, w), mode: ctx.mode });
    } finally {
      weight.dispose();
    }
  });
  const xq = toQ(x, scalar(xs, w), scalar(xz, w), w);
  try {
    return [{ kind: 'q', q: qw.conv2d(xq, packed, outputQ(ys, yz, w, attrs)) }];
  } finally {
    xq.dispose();
  }
}

/** com.microsoft QGemm: y = A B^T (+ C int32), transB = 1 required. */
function qgemm(ctx, inputs, attrs) {
  const w = where(ctx.node);
  const [a, as, az, bv, bs, bz, c, ys, yz] = inputs;
  if ((attrs.transA ?? 0) !== 0 || (attrs.transB ?? 0) !== 1 || (attrs.alpha ?? 1) !== 1) {
    throw new UnsupportedError(`${w}: only transA = 0, transB = 1, alpha = 1 are supported`);
  }
  if (!ys) throw new UnsupportedError(`${w}: float output (no y_scale) is not supported`);
  const packed = ctx.prepare(() => {
    if (!ctx.isConstant(ctx.node.inputs[3])) throw new UnsupportedError(`${w}: weights that are not constant are not supported`);
    const weight = weightTensor(bv, bs, bz, 0, w);
    try {
      return qw.packLinear(weight, c ? Int32Array.from(toHost(c).data) : null, { mode: ctx.mode });
    } finally {
      weight.dispose();
    }
  });
  const aq = toQ(a, scalar(as, w), scalar(az, w), w);
  try {
    return [{ kind: 'q', q: qw.linear(aq, packed, outputQ(ys, yz, w, attrs)) }];
  } finally {
    aq.dispose();
  }
}

function qlinearMatMul(ctx, inputs, attrs) {
  const w = where(ctx.node);
  const [a, as, az, bv, bs, bz, ys, yz] = inputs;
  const aq = toQ(a, scalar(as, w), scalar(az, w), w);
  const bDims = dimsOf(bv);
  const bq = weightTensor(bv, bs, bz, bDims.length - 1, w);
  try {
    return [{ kind: 'q', q: qw.matmul(aq, bq, { ...outputQ(ys, yz, w, attrs), mode: ctx.mode }) }];
  } finally {
    aq.dispose();
    bq.dispose();
  }
}

function binaryQ(op) {
  return (ctx, [a, as, az, b, bs, bz, ys, yz]) => {
    const w = where(ctx.node);
    const aq = toQ(a, scalar(as, w), scalar(az, w), w);
    const bq = toQ(b, scalar(bs, w), scalar(bz, w), w);
    try {
      const out = outputQ(ys, yz, w);
      const options = { scale: out.scale, zeroPoint: out.zeroPoint };
      if (op === 'add') return [{ kind: 'q', q: qw.add(aq, bq, { ...options, mode: ctx.semantics === 'pytorch-qnnpack' ? 'qnnpack' : 'onnx' }) }];
      return [{ kind: 'q', q: qw.mul(aq, bq, { ...options, mode: ctx.semantics === 'pytorch-qnnpack' ? 'qnnpack' : 'onnx' }) }];
    } finally {
      aq.dispose();
      bq.dispose();
    }
  };
}

/** com.microsoft QLinearSigmoid / QLinearLeakyRelu: ONNX Runtime's 256-entry tables (ort-tables.js). */
function qlinearLookup(kind) {
  return (ctx, [x, xs, xz, ys, yz], attrs) => {
    const w = where(ctx.node);
    const xq = toQ(x, scalar(xs, w), xz ? scalar(xz, w) : 0, w);
    try {
      const out = outputQ(ys, yz ?? host(dtypeOf(x), [], dtypeOf(x) === 'int8' ? Int8Array.of(0) : Uint8Array.of(0)), w);
      const signed = xq.dtype === 'qint8';
      const table = kind === 'sigmoid'
        ? sigmoidTable(signed, xq.qScale(), xq.qZeroPoint(), out.scale, out.zeroPoint)
        : leakyReluTable(attrs.alpha ?? 0.01, signed, xq.qScale(), xq.qZeroPoint(), out.scale, out.zeroPoint);
      return [{ kind: 'q', q: applyTable(xq, table, out.scale, out.zeroPoint, ctx.node.opType) }];
    } finally {
      xq.dispose();
    }
  };
}

function qlinearConcat(ctx, inputs, attrs) {
  const w = where(ctx.node);
  const [ys, yz, ...rest] = inputs;
  if (rest.length % 3 !== 0 || rest.length === 0) throw new ModelFormatError(`${w}: inputs must be (Y_scale, Y_zero_point, then X, X_scale, X_zero_point triples)`);
  const parts = [];
  try {
    for (let i = 0; i < rest.length; i += 3) parts.push(toQ(rest[i], scalar(rest[i + 1], w), scalar(rest[i + 2], w), w));
    const out = outputQ(ys, yz, w);
    return [{ kind: 'q', q: qw.cat(parts, attrs.axis ?? 0, { scale: out.scale, zeroPoint: out.zeroPoint }) }];
  } finally {
    for (const p of parts) p.dispose();
  }
}

function qlinearAveragePool(global) {
  return (ctx, [x, xs, xz, ys, yz], attrs) => {
    const w = where(ctx.node);
    // channels_last = 1: the data is NHWC; pooled through an NCHW view of it, in the form PyTorch uses
    // for channels-last tensors (tools/export_torch.py writes this for a channels_last input).
    const nhwc = !!attrs.channels_last;
    if (ctx.mode === 'onnx' && !nhwc) {
      // ONNX Runtime's own kernels (ort-kernels.js): what ORT makes of quantize_static's QDQ pooling.
      const hx = toHost(x);
      const [sx, zx, sy, zy] = [scalar(xs, w), xz ? scalar(xz, w) : 0, scalar(ys, w), yz ? scalar(yz, w) : 0];
      const r = global ? ortGlobalAveragePool(hx, sx, zx, sy, zy, w) : ortAveragePool(hx, sx, zx, sy, zy, attrs, w);
      return [host(hx.dtype, r.dims, r.data)];
    }
    if (nhwc && dimsOf(x).length !== 4) throw new ModelFormatError(`${w}: channels_last = 1 needs a 4-D input`);
    const stored = toQ(x, scalar(xs, w), scalar(xz, w), w);
    const xq = nhwc ? stored.permute([0, 3, 1, 2]) : stored;
    if (nhwc) stored.dispose();
    const out = outputQ(ys, yz, w);
    if (out.scale !== xq.qScale() || out.zeroPoint !== xq.qZeroPoint()) {
      xq.dispose();
      throw new UnsupportedError(`${w}: output qparams that differ from the input's are not supported`);
    }
    try {
      const pooled = (() => {
        if (global) return qw.mean(xq, [2, 3], true);
        const pads = attrs.pads ?? [0, 0, 0, 0];
        if (pads[0] !== pads[2] || pads[1] !== pads[3]) throw new UnsupportedError(`${w}: asymmetric pads are not supported`);
        const options = { kernelSize: attrs.kernel_shape, stride: attrs.strides ?? 1, padding: [pads[0], pads[1]], ceilMode: !!attrs.ceil_mode, countIncludePad: !!attrs.count_include_pad };
        return nhwc ? avgPool2dChannelsLast(xq, options) : qw.avgPool2d(xq, options);
      })();
      if (!nhwc) return [{ kind: 'q', q: pooled }];
      const back = pooled.permute([0, 2, 3, 1]);
      pooled.dispose();
      const out = back.contiguous();
      back.dispose();
      return [{ kind: 'q', q: out }];
    } finally {
      xq.dispose();
    }
  };
}

function maxPool(ctx, [x], attrs) {
  const w = where(ctx.node);
  if (dtypeOf(x) === 'float32') return maxPoolFloat(ctx, x, attrs);
  const pads = attrs.pads ?? [0, 0, 0, 0];
  if (pads[0] !== pads[2] || pads[1] !== pads[3]) throw new UnsupportedError(`${w}: asymmetric pads are not supported`);
  const xq = toQ(x, 1, 0, w);
  try {
    return [{ kind: 'q', q: qw.maxPool2d(xq, { kernelSize: attrs.kernel_shape, stride: attrs.strides ?? 1, padding: [pads[0], pads[1]], dilation: attrs.dilations ?? 1, ceilMode: !!attrs.ceil_mode }) }];
  } finally {
    xq.dispose();
  }
}

/** Clip: on 8-bit data the bounds are integers of the same type (a fused ReLU / ReLU6). */
function clip(ctx, [x, lo, hi], attrs) {
  const w = where(ctx.node);
  const dt = dtypeOf(x);
  const min = lo ? scalar(lo, w) : attrs.min ?? -Infinity;
  const max = hi ? scalar(hi, w) : attrs.max ?? Infinity;
  if (dt === 'float32') {
    const d = floatData(x, w);
    return [host('float32', x.dims, d.map((v) => Math.min(Math.max(v, min), max)))];
  }
  // integer bounds: clamp the integers (a view with scale 1, zero point 0 makes real = integer)
  const xq = toQ(x, 1, 0, w);
  try {
    return [{ kind: 'q', q: qw.clamp(xq, min, max) }];
  } finally {
    xq.dispose();
  }
}

function reshapeLike(ctx, x, dims) {
  if (x.kind === 'q') return [{ kind: 'q', q: x.q.reshape(dims) }];
  return [host(x.dtype, dims, x.data)];
}

function resolveReshape(dims, shape, allowZero) {
  const out = shape.map((d, i) => (d === 0 && !allowZero ? dims[i] : d));
  const known = out.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
  return out.map((d) => (d === -1 ? numel(dims) / known : d));
}

function flatten(ctx, [x], attrs) {
  const dims = dimsOf(x);
  const axis = attrs.axis ?? 1;
  const a = axis < 0 ? axis + dims.length : axis;
  return reshapeLike(ctx, x, [numel(dims.slice(0, a)), numel(dims.slice(a))]);
}

function reshape(ctx, [x, shapeV], attrs) {
  const shape = Array.from(toHost(shapeV).data, Number);
  return reshapeLike(ctx, x, resolveReshape(dimsOf(x), shape, attrs.allowzero));
}

function cast(ctx, [x], attrs) {
  const to = { 1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 9: 'bool' }[attrs.to];
  if (!to) throw new UnsupportedError(`${where(ctx.node)}: cast to type ${attrs.to} is not supported`);
  const h = toHost(x);
  const Out = ARRAY[to];
  const data = to === 'int64' ? BigInt64Array.from(h.data, (v) => BigInt(Math.trunc(Number(v)))) : Out.from(h.data, (v) => Number(v));
  return [host(to, h.dims, data)];
}

/** Gather: the 8-bit lookup-table pattern of the exporter (a uint8 table indexed by a tensor), and
 * ordinary gathers on host data. */
function gather(ctx, [data, indices], attrs) {
  const w = where(ctx.node);
  const d = toHost(data);
  const idx = toHost(indices);
  const axis = attrs.axis ?? 0;
  const a = axis < 0 ? axis + d.dims.length : axis;
  const outer = numel(d.dims.slice(0, a));
  const size = d.dims[a];
  const inner = numel(d.dims.slice(a + 1));
  const n = idx.data.length;
  const out = new ARRAY[d.dtype](outer * n * inner);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < n; i++) {
      let j = Number(idx.data[i]);
      if (j < 0) j += size;
      if (!(j >= 0 && j < size)) throw new ModelFormatError(`${w}: index ${idx.data[i]} is out of range for axis size ${size}`);
      out.set(d.data.subarray((o * size + j) * inner, (o * size + j + 1) * inner), (o * n + i) * inner);
    }
  }
  return [host(d.dtype, [...d.dims.slice(0, a), ...idx.dims, ...d.dims.slice(a + 1)], out)];
}

function floatUnary(fn) {
  return (ctx, [x], attrs) => {
    const d = floatData(x, where(ctx.node));
    const out = new Float32Array(d.length);
    for (let i = 0; i < d.length; i++) out[i] = fn(d[i], attrs);
    return [host('float32', x.dims, out)];
  };
}

function relu(ctx, [x]) {
  const d = floatData(x, where(ctx.node));
  const out = new Float32Array(d.length); // zeros: only the positive values are written (NaN gives 0)
  for (let i = 0, n = d.length; i < n; i++) {
    const v = d[i];
    if (v > 0) out[i] = v;
  }
  return [host('float32', x.dims, out)];
}

function softmax(ctx, [x], attrs) {
  const d = floatData(x, where(ctx.node));
  const axis = attrs.axis ?? -1;
  const a = axis < 0 ? axis + x.dims.length : axis;
  const inner = numel(x.dims.slice(a));
  const out = new Float32Array(d.length);
  for (let o = 0; o < d.length; o += inner) {
    let m = -Infinity;
    for (let i = 0; i < inner; i++) m = Math.max(m, d[o + i]);
    let s = 0;
    for (let i = 0; i < inner; i++) s += out[o + i] = Math.exp(d[o + i] - m);
    for (let i = 0; i < inner; i++) out[o + i] /= s;
  }
  return [host('float32', x.dims, out)];
}

function shape(ctx, [x]) {
  return [host('int64', [dimsOf(x).length], BigInt64Array.from(dimsOf(x), BigInt))];
}

function constant(ctx, inputs, attrs) {
  if (!attrs.value) throw new UnsupportedError(`${where(ctx.node)}: only the 'value' form of Constant is supported`);
  return [host(attrs.value.dtype, attrs.value.dims, attrs.value.data)];
}

function identity(ctx, [x]) {
  return [x.kind === 'q' ? { kind: 'q', q: x.q.clone() } : x];
}

// ---- dynamic quantization ------------------------------------------------------------------

function dynamicQuantizeLinear(ctx, [x]) {
  const { y, scale, zeroPoint } = qw.dynamicQuantizeLinear(floatData(x, where(ctx.node)), x.dims);
  return [{ kind: 'q', q: y }, host('float32', [], Float32Array.of(scale)), host('uint8', [], Uint8Array.of(zeroPoint))];
}

function matMulInteger(ctx, [a, b, az, bz]) {
  const w = where(ctx.node);
  const aq = toQ(a, 1, az ? scalar(az, w) : 0, w);
  const bh = toHost(b);
  const zps = bz ? Array.from(toHost(bz).data, Number) : [0];
  const bq = zps.length > 1
    ? qw.fromIntReprPerChannel(bh.data, bh.dims, zps.map(() => 1), zps, bh.dims.length - 1, QDTYPE[bh.dtype])
    : qw.fromIntRepr(bh.data, bh.dims, 1, zps[0], QDTYPE[bh.dtype]);
  try {
    return [{ kind: 'q', q: qw.matmulInteger(aq, bq) }];
  } finally {
    aq.dispose();
    bq.dispose();
  }
}

function convInteger(ctx, [x, wv, xz, wz], attrs) {
  const w = where(ctx.node);
  const packed = ctx.prepare(() => {
    if (!ctx.isConstant(ctx.node.inputs[1])) throw new UnsupportedError(`${w}: weights that are not constant are not supported`);
    const wh = toHost(wv);
    const weight = qw.fromIntRepr(wh.data, wh.dims, 1, wz ? scalar(wz, w) : 0, QDTYPE[wh.dtype]);
    try {
      return qw.packConv2d(weight, null, { ...convAttrs(attrs, wh.dims.length - 2, w), mode: 'none' });
    } finally {
      weight.dispose();
    }
  });
  const xq = toQ(x, 1, xz ? scalar(xz, w) : 0, w);
  try {
    return [{ kind: 'q', q: qw.convInteger(xq, packed) }];
  } finally {
    xq.dispose();
  }
}

// ---- float (and index) operators on host data -----------------------------------------------

function broadcastDims(a, b, w) {
  const rank = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < rank; i++) {
    const x = a[a.length - rank + i] ?? 1;
    const y = b[b.length - rank + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new ModelFormatError(`${w}: shapes [${a}] and [${b}] do not broadcast`);
    out.push(x === 1 ? y : x);
  }
  return out;
}

function binaryHost(fn, fnBig) {
  return (ctx, [a, b]) => {
    const w = where(ctx.node);
    const x = toHost(a);
    const y = toHost(b);
    if (x.dtype !== y.dtype) throw new ModelFormatError(`${w}: input types ${x.dtype} and ${y.dtype} differ`);
    const dims = broadcastDims(x.dims, y.dims, w);
    const op = x.dtype === 'int64' ? fnBig : fn;
    if (x.data.length === y.data.length && x.dims.length === y.dims.length && x.dims.every((d, k) => d === y.dims[k])) {
      const out = new ARRAY[x.dtype](x.data.length); // same shapes: element by element, no index arrays
      const xd = x.data;
      const yd = y.data;
      for (let i = 0, n = out.length; i < n; i++) out[i] = op(xd[i], yd[i]);
      return [host(x.dtype, dims, out)];
    }
    const ia = broadcastSourceIndex(dims, x.dims);
    const ib = broadcastSourceIndex(dims, y.dims);
    const out = new ARRAY[x.dtype](ia.length);
    for (let i = 0; i < out.length; i++) out[i] = op(x.data[ia[i]], y.data[ib[i]]);
    return [host(x.dtype, dims, out)];
  };
}

function transpose(ctx, [x], attrs) {
  const h = toHost(x);
  const rank = h.dims.length;
  const perm = attrs.perm ?? [...Array(rank).keys()].reverse();
  const dims = perm.map((p) => h.dims[p]);
  const inStrides = new Array(rank);
  let acc = 1;
  for (let k = rank - 1; k >= 0; k--) {
    inStrides[k] = acc;
    acc *= h.dims[k];
  }
  const out = new ARRAY[h.dtype](h.data.length);
  const pos = new Array(rank).fill(0);
  for (let i = 0; i < out.length; i++) {
    let off = 0;
    for (let k = 0; k < rank; k++) off += pos[k] * inStrides[perm[k]];
    out[i] = h.data[off];
    for (let k = rank - 1; k >= 0; k--) {
      if (++pos[k] < dims[k]) break;
      pos[k] = 0;
    }
  }
  return [host(h.dtype, dims, out)];
}

/** Split (opset 13: sizes as an optional int64 input; opset < 13: the `split` attribute; else equal parts). */
function split(ctx, [x, sizesIn], attrs) {
  const w = where(ctx.node);
  const h = toHost(x);
  const rank = h.dims.length;
  const axis = (attrs.axis ?? 0) < 0 ? attrs.axis + rank : attrs.axis ?? 0;
  if (axis < 0 || axis >= rank) throw new ModelFormatError(`${w}: axis ${attrs.axis} is out of range for rank ${rank}`);
  const parts = ctx.node.outputs.length;
  const dim = h.dims[axis];
  let sizes = sizesIn ? Array.from(toHost(sizesIn).data, Number) : attrs.split ? attrs.split.map(Number) : null;
  if (!sizes) {
    if (dim % parts !== 0) throw new UnsupportedError(`${w}: ${dim} does not split into ${parts} equal parts`);
    sizes = new Array(parts).fill(dim / parts);
  }
  if (sizes.length !== parts || sizes.some((s) => !Number.isInteger(s) || s < 0) || sizes.reduce((a, b) => a + b, 0) !== dim) {
    throw new ModelFormatError(`${w}: split sizes [${sizes}] do not divide dimension ${axis} (${dim}) into ${parts} outputs`);
  }
  const outer = numel(h.dims.slice(0, axis));
  const inner = numel(h.dims.slice(axis + 1));
  let start = 0;
  return sizes.map((s) => {
    const out = new ARRAY[h.dtype](outer * s * inner);
    for (let o = 0; o < outer; o++) out.set(h.data.subarray((o * dim + start) * inner, (o * dim + start + s) * inner), o * s * inner);
    start += s;
    const dims = h.dims.slice();
    dims[axis] = s;
    return host(h.dtype, dims, out);
  });
}

function concat(ctx, inputs, attrs) {
  const w = where(ctx.node);
  const hs = inputs.map(toHost);
  const rank = hs[0].dims.length;
  const axis = (attrs.axis ?? 0) < 0 ? attrs.axis + rank : attrs.axis ?? 0;
  const outer = numel(hs[0].dims.slice(0, axis));
  const dims = hs[0].dims.slice();
  dims[axis] = hs.reduce((s, h) => s + h.dims[axis], 0);
  const out = new ARRAY[hs[0].dtype](numel(dims));
  let at = 0;
  for (let o = 0; o < outer; o++) {
    for (const h of hs) {
      if (h.dtype !== hs[0].dtype) throw new ModelFormatError(`${w}: inputs of different types`);
      const run = numel(h.dims.slice(axis));
      out.set(h.data.subarray(o * run, (o + 1) * run), at);
      at += run;
    }
  }
  return [host(hs[0].dtype, dims, out)];
}

/** Float matrix product of [m, k] x [k, n] blocks (row-major; with bTransposed, b is [n, k]). */
function matmulFloat(a, b, m, k, n, out, outOffset, bTransposed = false) {
  const bk = bTransposed ? 1 : n; // stride of b along k
  const bn = bTransposed ? k : 1; // stride of b along n
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[i * k + p] * b[p * bk + j * bn];
      out[outOffset + i * n + j] = s;
    }
  }
}

function matmulHost(ctx, [a, b]) {
  const w = where(ctx.node);
  const x = toHost(a);
  const y = toHost(b);
  if (x.dims.length !== 2 || y.dims.length !== 2) throw new UnsupportedError(`${w}: only 2-D float MatMul is supported`);
  const [m, k] = x.dims;
  const [k2, n] = y.dims;
  if (k !== k2) throw new ModelFormatError(`${w}: [${x.dims}] x [${y.dims}] do not multiply`);
  const out = new Float32Array(m * n);
  matmulFloat(floatData(x, w), floatData(y, w), m, k, n, out, 0);
  return [host('float32', [m, n], out)];
}

function gemm(ctx, [a, b, c], attrs) {
  const w = where(ctx.node);
  let x = toHost(a);
  let y = toHost(b);
  if (attrs.transA) [x] = transpose(ctx, [x], {});
  const [m, k] = x.dims;
  const n = attrs.transB ? y.dims[0] : y.dims[1];
  if ((attrs.transB ? y.dims[1] : y.dims[0]) !== k) throw new ModelFormatError(`${w}: [${x.dims}] x [${y.dims}]${attrs.transB ? '^T' : ''} do not multiply`);
  const out = new Float32Array(m * n);
  matmulFloat(floatData(x, w), floatData(y, w), m, k, n, out, 0, !!attrs.transB);
  const alpha = attrs.alpha ?? 1;
  const beta = attrs.beta ?? 1;
  const bias = c ? toHost(c) : null;
  const ib = bias ? broadcastSourceIndex([m, n], bias.dims) : null;
  for (let i = 0; i < out.length; i++) out[i] = alpha * out[i] + (bias ? beta * bias.data[ib[i]] : 0);
  return [host('float32', [m, n], out)];
}

function globalAveragePool(ctx, [x]) {
  const h = toHost(x);
  // ORT runs a 2-D GlobalAveragePool through MLAS's global pooling kernel (its float AveragePool's, ort-kernels.js).
  if (h.dims.length === 4) return floatAveragePool(ctx, [h], { kernel_shape: h.dims.slice(2) });
  const [nb, c] = h.dims;
  const hw = numel(h.dims.slice(2));
  const d = floatData(h, where(ctx.node));
  const out = new Float32Array(nb * c);
  for (let i = 0; i < nb * c; i++) {
    let s = 0;
    for (let p = 0; p < hw; p++) s += d[i * hw + p];
    out[i] = s / hw;
  }
  return [host('float32', [nb, c, ...h.dims.slice(2).map(() => 1)], out)];
}

// ---- float convolution, pooling, batch normalization (NCHW) ----------------------------------------

const AUTO_PADS = new Set(['NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID']);

/**
 * The [top, left, bottom, right] pads of a 2-D window op over an input of spatial size [h, w], from
 * explicit pads or auto_pad (ONNX: SAME_* gives ceil(in / stride) outputs, the odd pad at the end for
 * SAME_UPPER, at the beginning for SAME_LOWER; VALID none).
 */
function windowPads(attrs, kernel, stride, dilation, [h, w], where_) {
  const autoPad = attrs.auto_pad ?? 'NOTSET';
  if (!AUTO_PADS.has(autoPad)) throw new UnsupportedError(`${where_}: auto_pad "${autoPad}" is not supported (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)`);
  if (autoPad === 'VALID') return [0, 0, 0, 0];
  if (autoPad === 'NOTSET') {
    const pads = attrs.pads ?? [0, 0, 0, 0];
    if (pads.length !== 4 || !pads.every((p) => Number.isInteger(p) && p >= 0)) throw new ModelFormatError(`${where_}: pads must be 4 non-negative integers for a 2-D op, got [${pads}]`);
    return [pads[0], pads[1], pads[2], pads[3]];
  }
  const begin = [];
  const end = [];
  [h, w].forEach((size, i) => {
    const out = Math.ceil(size / stride[i]);
    const total = Math.max(0, (out - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - size);
    const small = Math.floor(total / 2);
    begin.push(autoPad === 'SAME_UPPER' ? small : total - small);
    end.push(autoPad === 'SAME_UPPER' ? total - small : small);
  });
  return [begin[0], begin[1], end[0], end[1]];
}

function pairAttr(attrs, name, fallback, where_) {
  const v = attrs[name] ?? fallback;
  if (!Array.isArray(v) || v.length !== 2 || !v.every((e) => Number.isInteger(e) && e >= 1)) throw new ModelFormatError(`${where_}: ${name} must be 2 positive integers for a 2-D op, got [${v}]`);
  return v;
}

/** Float Conv (NCHW, 2-D): weights packed once into wasm memory (src/operators/conv2d-f32.c). */
function convFloat(ctx, [x, wv, b], attrs) {
  const w = where(ctx.node);
  const xDims = dimsOf(x);
  const wh = toHost(wv);
  if (wh.dtype !== 'float32' || dtypeOf(x) !== 'float32') throw new UnsupportedError(`${w}: Conv on ${dtypeOf(x)} input with ${wh.dtype} weights is not supported (float32 only; quantized convolutions come as QLinearConv or QDQ)`);
  if (wh.dims.length !== 4) {
    if (wh.dims.length === 3 || wh.dims.length === 5) throw new UnsupportedError(`${w}: only 2-D convolutions are supported (weight rank ${wh.dims.length})`);
    throw new ModelFormatError(`${w}: weight must have rank 4 [M, C / group, kH, kW], got shape [${wh.dims}]`);
  }
  if (xDims.length !== 4) throw new ModelFormatError(`${w}: input must have rank 4 [N, C, H, W] for a 2-D convolution, got shape [${xDims}]`);
  const group = attrs.group ?? 1;
  const [m, cg, kh, kw] = wh.dims;
  const c = xDims[1];
  if (!Number.isInteger(group) || group < 1 || c % group !== 0 || m % group !== 0) {
    throw new ModelFormatError(`${w}: input channels ${c} and output channels ${m} must be divisible by group ${group}`);
  }
  if (c / group !== cg) throw new ModelFormatError(`${w}: weight shape [${wh.dims}] needs ${cg * group} input channels (group ${group}), the input has ${c}`);
  if (attrs.kernel_shape && (attrs.kernel_shape[0] !== kh || attrs.kernel_shape[1] !== kw)) throw new ModelFormatError(`${w}: kernel_shape [${attrs.kernel_shape}] differs from the weight's [${kh}, ${kw}]`);
  const bias = b ? toHost(b) : null;
  if (bias && (bias.dtype !== 'float32' || bias.data.length !== m)) throw new ModelFormatError(`${w}: bias must be ${m} float32 values, got ${bias.dtype} shape [${bias.dims}]`);
  const stride = pairAttr(attrs, 'strides', [1, 1], w);
  const dilation = pairAttr(attrs, 'dilations', [1, 1], w);
  const padding = windowPads(attrs, [kh, kw], stride, dilation, xDims.slice(2), w);
  const constant = ctx.isConstant(ctx.node.inputs[1]) && (!b || ctx.isConstant(ctx.node.inputs[2]));
  const make = () => {
    try {
      return packConv2dFloat(wh.data, wh.dims, bias ? bias.data : null, { stride, dilation, padding, groups: group });
    } catch (error) {
      throw new ModelFormatError(`${w}: ${error.message}`);
    }
  };
  const packed = constant ? ctx.prepare(make, padding.join(',')) : make();
  try {
    const y = conv2dFloatOf(floatData(x, w), xDims, packed, w, attrs.qwasm_relu === 1); // a Relu fused at load (qdq.js)
    return [host('float32', y.dims, y.data)];
  } finally {
    if (!constant) packed.dispose();
  }
}

/** conv2dFloat with its shape errors as the node's ModelFormatError. */
function conv2dFloatOf(x, xDims, packed, w, relu) {
  try {
    return conv2dFloat(x, xDims, packed, { relu });
  } catch (error) {
    if (error instanceof RangeError) throw new ModelFormatError(`${w}: ${error.message}`);
    throw error;
  }
}

/**
 * The geometry of a float pooling over NCHW x: kernel, strides, dilations, pads and output size
 * (ONNX: floor, or ceil with ceil_mode, of (in + pads - dilated kernel) / stride + 1, a last window
 * that would start in the end padding dropped).
 */
function poolGeometry(x, attrs, w) {
  const dims = dimsOf(x);
  if (dims.length !== 4) throw new UnsupportedError(`${w}: only 2-D pooling of [N, C, H, W] is supported, got shape [${dims}]`);
  if (!attrs.kernel_shape) throw new ModelFormatError(`${w}: kernel_shape is required`);
  const kernel = pairAttr(attrs, 'kernel_shape', null, w);
  const stride = pairAttr(attrs, 'strides', [1, 1], w);
  const dilation = pairAttr(attrs, 'dilations', [1, 1], w);
  const pads = windowPads(attrs, kernel, stride, dilation, dims.slice(2), w);
  const out = [0, 1].map((i) => {
    const size = dims[2 + i];
    const span = size + pads[i] + pads[i + 2] - ((kernel[i] - 1) * dilation[i] + 1);
    if (span < 0) throw new ModelFormatError(`${w}: the window (kernel ${kernel[i]}, dilation ${dilation[i]}) does not fit the padded input size ${size} along axis ${2 + i}`);
    let o = (attrs.ceil_mode ? Math.ceil(span / stride[i]) : Math.floor(span / stride[i])) + 1;
    if (attrs.ceil_mode && (o - 1) * stride[i] >= size + pads[i]) o--;
    return o;
  });
  return { dims, kernel, stride, dilation, pads, out };
}

/** Float pooling: reduce(window values) per output, over NCHW data. */
function poolFloat(x, g, init, step, finish) {
  const [n, c, h, wd] = g.dims;
  const [oh, ow] = g.out;
  const d = x.data;
  const y = new Float32Array(n * c * oh * ow);
  let o = 0;
  for (let plane = 0; plane < n * c; plane++) {
    const base = plane * h * wd;
    for (let oy = 0; oy < oh; oy++) {
      const y0 = oy * g.stride[0] - g.pads[0];
      for (let ox = 0; ox < ow; ox++) {
        const x0 = ox * g.stride[1] - g.pads[1];
        let acc = init;
        let valid = 0;
        for (let ky = 0; ky < g.kernel[0]; ky++) {
          const iy = y0 + ky * g.dilation[0];
          if (iy < 0 || iy >= h) continue;
          for (let kx = 0; kx < g.kernel[1]; kx++) {
            const ix = x0 + kx * g.dilation[1];
            if (ix < 0 || ix >= wd) continue;
            acc = step(acc, d[base + iy * wd + ix]);
            valid++;
          }
        }
        y[o++] = finish(acc, valid, oy, ox);
      }
    }
  }
  return [host('float32', [n, c, oh, ow], y)];
}

function maxPoolFloat(ctx, x, attrs) {
  const w = where(ctx.node);
  if (ctx.node.outputs.length > 1 && ctx.node.outputs[1]) throw new UnsupportedError(`${w}: the Indices output is not supported`);
  if ((attrs.storage_order ?? 0) !== 0) throw new UnsupportedError(`${w}: storage_order ${attrs.storage_order} is not supported`);
  const g = poolGeometry(x, attrs, w);
  return poolFloat(x, g, -Infinity, (a, v) => (v > a || Number.isNaN(v) ? v : a), (a) => a);
}

/** Float AveragePool: count_include_pad divides by the window clipped to the padded input (ONNX
 * Runtime's rule: the part of a ceil_mode window past the end padding never counts). */
/**
 * Float AveragePool: ONNX Runtime's MLAS summation orders where MLAS runs it (ort-kernels.js, bit-exact
 * with onnxruntime-web), a plain windowed sum for what MLAS does not take (ceil_mode, dilations, auto_pad).
 */
function averagePool(ctx, inputs, attrs) {
  const mlas = !attrs.ceil_mode && (attrs.dilations ?? [1, 1]).every((d) => d === 1) && (!attrs.auto_pad || attrs.auto_pad === 'NOTSET');
  return mlas ? floatAveragePool(ctx, inputs, attrs) : averagePoolWindowed(ctx, inputs, attrs);
}

function averagePoolWindowed(ctx, [x], attrs) {
  const w = where(ctx.node);
  floatData(x, w);
  const g = poolGeometry(x, attrs, w);
  const [h, wd] = g.dims.slice(2);
  const include = !!attrs.count_include_pad;
  const extent = (start, k, d, size, padEnd) => {
    // window taps inside [-padBegin, size + padEnd)
    let count = 0;
    for (let t = 0; t < k; t++) if (start + t * d < size + padEnd) count++;
    return count;
  };
  return poolFloat(x, g, 0, (a, v) => a + v, (a, valid, oy, ox) => {
    if (!include) return valid === 0 ? NaN : a / valid;
    const cy = extent(oy * g.stride[0] - g.pads[0], g.kernel[0], g.dilation[0], h, g.pads[2]);
    const cx = extent(ox * g.stride[1] - g.pads[1], g.kernel[1], g.dilation[1], wd, g.pads[3]);
    return a / (cy * cx);
  });
}

/** BatchNormalization (inference): y = (x - mean) / sqrt(var + epsilon) * scale + B per channel (axis 1). */
function batchNormalization(ctx, [x, scale, bias, mean, variance], attrs) {
  const w = where(ctx.node);
  if (attrs.training_mode) throw new UnsupportedError(`${w}: training_mode = 1 is not supported`);
  if (ctx.node.outputs.slice(1).some((o) => o)) throw new UnsupportedError(`${w}: the running mean / variance outputs (training) are not supported`);
  const d = floatData(x, w);
  const dims = dimsOf(x);
  if (dims.length < 2) throw new ModelFormatError(`${w}: input must be [N, C, ...], got shape [${dims}]`);
  const c = dims[1];
  const params = [scale, bias, mean, variance].map((v, i) => {
    const hv = toHost(v);
    if (hv.dtype !== 'float32' || hv.data.length !== c) throw new ModelFormatError(`${w}: input ${i + 1} must be ${c} float32 values (one per channel), got ${hv.dtype} shape [${hv.dims}]`);
    return hv.data;
  });
  const [s, bb, mu, v] = params;
  const eps = Math.fround(attrs.epsilon ?? 1e-5);
  // As ONNX Runtime: a per-channel multiplier and offset, in float32.
  const mul = Float32Array.from(s, (si, i) => si / Math.fround(Math.sqrt(Math.fround(v[i] + eps))));
  const add = Float32Array.from(bb, (bi, i) => bi - Math.fround(mu[i] * mul[i]));
  const inner = numel(dims.slice(2));
  const out = new Float32Array(d.length);
  for (let i = 0; i < d.length; i++) {
    const ch = Math.floor(i / inner) % c;
    out[i] = Math.fround(d[i] * mul[ch]) + add[ch];
  }
  return [host('float32', dims.slice(), out)];
}

function squeezeLike(unsqueeze) {
  return (ctx, [x, axesV], attrs) => {
    const dims = dimsOf(x);
    const axes = axesV ? Array.from(toHost(axesV).data, Number) : attrs.axes ?? [];
    let out;
    if (unsqueeze) {
      const rank = dims.length + axes.length;
      const norm = axes.map((a) => (a < 0 ? a + rank : a));
      out = [];
      let j = 0;
      for (let k = 0; k < rank; k++) out.push(norm.includes(k) ? 1 : dims[j++]);
    } else {
      const norm = axes.map((a) => (a < 0 ? a + dims.length : a));
      out = dims.filter((d, k) => (norm.length ? !norm.includes(k) : d !== 1));
    }
    return reshapeLike(ctx, x, out);
  };
}

/** The operator table: [domain, op type] -> implementation. */
export const KERNELS = new Map([
  ['QuantizeLinear', quantizeLinear],
  ['DequantizeLinear', dequantizeLinear],
  ['QLinearConv', qlinearConv],
  ['QLinearMatMul', qlinearMatMul],
  ['com.microsoft:QGemm', qgemm],
  ['com.microsoft:QLinearAdd', binaryQ('add')],
  ['com.microsoft:QLinearMul', binaryQ('mul')],
  ['com.microsoft:QLinearConcat', qlinearConcat],
  ['com.microsoft:QLinearSigmoid', qlinearLookup('sigmoid')],
  ['com.microsoft:QLinearLeakyRelu', qlinearLookup('leakyRelu')],
  ['com.microsoft:QLinearAveragePool', qlinearAveragePool(false)],
  ['com.microsoft:QLinearGlobalAveragePool', qlinearAveragePool(true)],
  ['com.microsoft:QLinearSoftmax', qlinearSoftmax],
  ['MaxPool', maxPool],
  ['Clip', clip],
  ['Flatten', flatten],
  ['Reshape', reshape],
  ['Cast', cast],
  ['Gather', gather],
  ['Relu', relu],
  ['LeakyRelu', floatUnary((v, attrs) => (v >= 0 ? v : Math.fround(Math.fround(attrs.alpha ?? 0.01) * v)))],
  ['Sigmoid', floatUnary(mlasLogistic)], // ORT's float Sigmoid is MlasComputeLogistic, as its QLinearSigmoid table
  ['Softmax', softmax],
  ['Shape', shape],
  ['Constant', constant],
  ['Identity', identity],
  ['DynamicQuantizeLinear', dynamicQuantizeLinear],
  ['MatMulInteger', matMulInteger],
  ['ConvInteger', convInteger],
  ['Add', binaryHost((a, b) => a + b, (a, b) => a + b)],
  ['Sub', binaryHost((a, b) => a - b, (a, b) => a - b)],
  ['Mul', binaryHost((a, b) => a * b, (a, b) => a * b)],
  ['Div', binaryHost((a, b) => a / b, (a, b) => a / b)],
  ['Transpose', transpose],
  ['Concat', concat],
  ['Split', split],
  ['MatMul', matmulHost],
  ['Gemm', gemm],
  ['GlobalAveragePool', globalAveragePool],
  ['Conv', convFloat],
  ['AveragePool', averagePool],
  ['BatchNormalization', batchNormalization],
  ['HardSigmoid', (ctx, [x], attrs) => floatUnary((v) => Math.max(0, Math.min(1, (attrs.alpha ?? 0.2) * v + (attrs.beta ?? 0.5))))(ctx, [x])],
  ['HardSwish', floatUnary((v) => v * Math.max(0, Math.min(1, v / 6 + 0.5)))],
  ['Squeeze', squeezeLike(false)],
  ['Unsqueeze', squeezeLike(true)],
]);

/** A node's key in KERNELS: 'OpType' for the default domain, 'domain:OpType' otherwise. */
export function operatorKey(node) {
  return node.domain && node.domain !== 'ai.onnx' ? `${node.domain}:${node.opType}` : node.opType;
}

export function kernelFor(node) {
  return KERNELS.get(operatorKey(node));
}
