// The ONNX operators a quantized model needs, over two kinds of runtime values:
//   { kind: 'host', dtype, dims, data }  a JS typed array (float32 and index tensors, small things)
//   { kind: 'q', q: QTensor }            8-bit / int32 data in wasm memory
// QOperator graphs carry a tensor's qparams at its consumers (x_scale, x_zero_point inputs), so a 'q'
// value's own qparams are nominal; each consumer views it with its own (zero copy).
import * as qw from '../index.js';
import { applyTable } from '../elementwise.js';
import { broadcastSourceIndex } from '../layout.js';
import { avgPool2dChannelsLast } from '../pooling.js';
import { leakyReluTable, sigmoidTable } from './ort-tables.js';
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
// ctx: { semantics: 'pytorch-qnnpack' | 'onnx', rounding, mode, node, prepared, opset }

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
  let packed = ctx.prepared.get(ctx.node);
  if (!packed) {
    if (!ctx.isConstant(ctx.node.inputs[3])) throw new UnsupportedError(`${w}: weights that are not constant are not supported`);
    const weight = weightTensor(wv, ws, wz, 0, w);
    try {
      const bias = b ? Int32Array.from(toHost(b).data) : null;
      packed = qw.packConv2d(weight, bias, { ...convAttrs(attrs, weight.shape.length - 2, w), mode: ctx.mode });
    } finally {
      weight.dispose();
    }
    ctx.prepared.set(ctx.node, packed);
  }
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
  let packed = ctx.prepared.get(ctx.node);
  if (!packed) {
    if (!ctx.isConstant(ctx.node.inputs[3])) throw new UnsupportedError(`${w}: weights that are not constant are not supported`);
    const weight = weightTensor(bv, bs, bz, 0, w);
    try {
      packed = qw.packLinear(weight, c ? Int32Array.from(toHost(c).data) : null, { mode: ctx.mode });
    } finally {
      weight.dispose();
    }
    ctx.prepared.set(ctx.node, packed);
  }
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
  if (dtypeOf(x) === 'float32') throw new UnsupportedError(`${w}: float MaxPool is not supported`);
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
  return (ctx, [x], attrs) => [host('float32', x.dims, floatData(x, where(ctx.node)).map((v) => fn(v, attrs)))];
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
  let packed = ctx.prepared.get(ctx.node);
  if (!packed) {
    if (!ctx.isConstant(ctx.node.inputs[1])) throw new UnsupportedError(`${w}: weights that are not constant are not supported`);
    const wh = toHost(wv);
    const weight = qw.fromIntRepr(wh.data, wh.dims, 1, wz ? scalar(wz, w) : 0, QDTYPE[wh.dtype]);
    try {
      packed = qw.packConv2d(weight, null, { ...convAttrs(attrs, wh.dims.length - 2, w), mode: 'none' });
    } finally {
      weight.dispose();
    }
    ctx.prepared.set(ctx.node, packed);
  }
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
    const ia = broadcastSourceIndex(dims, x.dims);
    const ib = broadcastSourceIndex(dims, y.dims);
    const out = new ARRAY[x.dtype](ia.length);
    const op = x.dtype === 'int64' ? fnBig : fn;
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

/** Float matrix product of [m, k] x [k, n] blocks (row-major). */
function matmulFloat(a, b, m, k, n, out, outOffset) {
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
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
  if (attrs.transB) [y] = transpose(ctx, [y], {});
  const [m, k] = x.dims;
  const n = y.dims[1];
  if (y.dims[0] !== k) throw new ModelFormatError(`${w}: [${x.dims}] x [${y.dims}] do not multiply`);
  const out = new Float32Array(m * n);
  matmulFloat(floatData(x, w), floatData(y, w), m, k, n, out, 0);
  const alpha = attrs.alpha ?? 1;
  const beta = attrs.beta ?? 1;
  const bias = c ? toHost(c) : null;
  const ib = bias ? broadcastSourceIndex([m, n], bias.dims) : null;
  for (let i = 0; i < out.length; i++) out[i] = alpha * out[i] + (bias ? beta * bias.data[ib[i]] : 0);
  return [host('float32', [m, n], out)];
}

function globalAveragePool(ctx, [x]) {
  const h = toHost(x);
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
  ['Relu', floatUnary((v) => (v > 0 ? v : 0))],
  ['LeakyRelu', floatUnary((v, attrs) => (v >= 0 ? v : Math.fround(Math.fround(attrs.alpha ?? 0.01) * v)))],
  ['Sigmoid', floatUnary((v) => 1 / (1 + Math.exp(-v)))],
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
  ['AveragePool', floatAveragePool],
  ['HardSigmoid', (ctx, [x], attrs) => floatUnary((v) => Math.max(0, Math.min(1, (attrs.alpha ?? 0.2) * v + (attrs.beta ?? 0.5))))(ctx, [x])],
  ['HardSwish', floatUnary((v) => v * Math.max(0, Math.min(1, v / 6 + 0.5)))],
  ['Squeeze', squeezeLike(false)],
  ['Unsqueeze', squeezeLike(true)],
]);

export function kernelFor(node) {
  return KERNELS.get(node.domain && node.domain !== 'ai.onnx' ? `${node.domain}:${node.opType}` : node.opType);
}
