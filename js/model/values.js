// The values a model run passes between operators, three kinds:
//   { kind: 'host', dtype, dims, data }          a JS typed array (shape arithmetic, constants, small things)
//   { kind: 'wasm', dtype, dims, storage, offset } plain tensor data in wasm memory (float32 activations, masks):
//                                                what the float kernels read and write, so activations never
//                                                cross to JS between two wasm operators
//   { kind: 'q', q: QTensor }                    8-bit / int32 data in wasm memory
// QOperator graphs carry a tensor's qparams at its consumers (x_scale, x_zero_point inputs), so a 'q' value's
// own qparams are nominal; each consumer views it with its own (zero copy). A 'wasm' value holds one reference to
// its storage (reference-counted, shared by reshapes): release() gives it back.
import { ModelFormatError } from '../errors.js';
import { backend } from '../runtime/runtime.js';
import { fromIntRepr, fromIntReprPerChannel, newStorage, withQParams } from '../tensor/qtensor.js';
import { sliceDims } from '../tensor/check.js';

/** ONNX element type -> qwasm quantized dtype, and back. */
export const QDTYPE = Object.freeze({ uint8: 'quint8', int8: 'qint8', int32: 'qint32' });
export const ONNX_OF = Object.freeze({ quint8: 'uint8', qint8: 'int8', qint32: 'int32' });
/** Typed array of each ONNX element type qwasm handles on the host. */
export const ARRAY = Object.freeze({ float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array });
/** Bytes per element of each element type. */
export const BYTES = Object.freeze({ float32: 4, uint8: 1, int8: 1, int32: 4, int64: 8, bool: 1 });

export const host = (dtype, dims, data) => ({ kind: 'host', dtype, dims, data });

/**
 * An initializer as a value that every run shares: frozen (with its dims), so that reading it is free and what is
 * derived from it (qparamsOf) can be kept with it.
 */
export function constantValue(init) {
  return Object.freeze(host(init.dtype, Object.freeze(init.dims.slice()), init.data));
}
export const qvalue = (q) => ({ kind: 'q', q });
export const numel = (dims) => dims.reduce((a, b) => a * b, 1);

/** A new wasm value of the given type and shape (uninitialized; from the run's arena while a model runs). */
export function wasmValue(dtype, dims) {
  return { kind: 'wasm', dtype, dims, storage: newStorage(Math.max(1, numel(dims) * BYTES[dtype])), offset: 0 };
}

/** The same wasm data under other dims (a reshape: shares the storage, takes a reference). */
export function viewValue(v, dims) {
  return { kind: 'wasm', dtype: v.dtype, dims, storage: v.storage.retain(), offset: v.offset };
}

/** The wasm address of a wasm value's first element. */
export const ptrOf = (v) => v.storage.ptr + v.offset;

/** A typed-array view of a wasm value's elements (valid until the next wasm allocation). */
export function wasmView(v) {
  return backend().view(ARRAY[v.dtype], ptrOf(v), numel(v.dims));
}

/** Gives back what a value holds in wasm memory (its storage reference, or its QTensor). */
export function releaseValue(v) {
  if (v?.kind === 'q') v.q.dispose();
  else if (v?.kind === 'wasm') v.storage.release();
}

export function dtypeOf(v) {
  return v.kind === 'q' ? ONNX_OF[v.q.dtype] : v.dtype;
}

export function dimsOf(v) {
  return v.kind === 'q' ? sliceDims(v.q.shape) : v.dims;
}

/** A value's dimensions for reading only (no copy: a QTensor's shape is frozen). */
export function dimsView(v) {
  return v.kind === 'q' ? v.q.shape : v.dims;
}

/** A value's data on the host (wasm data is copied out). */
export function toHost(v) {
  if (v.kind === 'host') return v;
  if (v.kind === 'wasm') return host(v.dtype, v.dims.slice(), wasmView(v).slice());
  return host(ONNX_OF[v.q.dtype], v.q.shape.slice(), v.q.intRepr());
}

/** A value as a QTensor with the given qparams (a view, or a copy into wasm memory). */
export function toQ(v, scale, zeroPoint, where) {
  if (v.kind === 'q') return withQParams(v.q, scale, zeroPoint);
  if (!QDTYPE[v.dtype] || v.dtype === 'int32') throw new ModelFormatError(`${where}: expected uint8 or int8 data, got ${v.dtype}`);
  return fromIntRepr(toHost(v).data, v.dims, scale, zeroPoint, QDTYPE[v.dtype]);
}

/**
 * toQ for an operand the caller only reads during one call: a QTensor value's own tensor when it already has these
 * per-tensor qparams (no new view: a layer's input usually carries the scale and zero point the layer reads it with),
 * else toQ's view or copy. Give it back with giveBackQ, not dispose().
 */
export function borrowQ(v, scale, zeroPoint, where) {
  if (v.kind === 'q' && v.q.qscheme === 'per_tensor_affine' && v.q.qScale() === scale && v.q.qZeroPoint() === zeroPoint) return v.q;
  return toQ(v, scale, zeroPoint, where);
}

/** Ends a borrowQ: disposes what it made, leaves the value's own tensor alone. */
export function giveBackQ(q, v) {
  if (!(v.kind === 'q' && q === v.q)) q.dispose();
}

/** The one number of a one-element value. */
export function scalar(v, where) {
  const h = toHost(v);
  if (h.data.length !== 1) throw new ModelFormatError(`${where}: expected a scalar, got ${h.data.length} values`);
  return Number(h.data[0]);
}

/** A float32 value's data. */
export function floatData(v, where) {
  if (dtypeOf(v) !== 'float32') throw new ModelFormatError(`${where}: expected float32 data, got ${dtypeOf(v)}`);
  return toHost(v).data;
}

/** Scale(s) and zero point(s) of a (possibly per-axis) quantization: { scales, zps, perAxis, dtype }. */
export function qparamsOf(scaleV, zpV, where) {
  // Constant qparams (frozen values, see constantValue) are read once per pair of values.
  if (!Object.isFrozen(scaleV) || (zpV && !Object.isFrozen(zpV))) return readQParams(scaleV, zpV, where);
  let byZp = qparamsMemo.get(scaleV);
  if (!byZp) qparamsMemo.set(scaleV, (byZp = new Map()));
  let q = byZp.get(zpV ?? null);
  if (!q) {
    const r = readQParams(scaleV, zpV, where);
    q = Object.freeze({ ...r, scales: Object.freeze(r.scales), zps: Object.freeze(r.zps) });
    byZp.set(zpV ?? null, q);
  }
  return q;
}

const qparamsMemo = new WeakMap();

function readQParams(scaleV, zpV, where) {
  const s = toHost(scaleV);
  const z = zpV ? toHost(zpV) : null;
  const scales = Array.from(s.data, Number);
  const zps = z ? Array.from(z.data, Number) : scales.map(() => 0);
  if (zps.length !== scales.length) throw new ModelFormatError(`${where}: ${scales.length} scales but ${zps.length} zero points`);
  return { scales, zps, perAxis: s.dims.length === 1 && scales.length > 1, dtype: z ? z.dtype : 'uint8' };
}

/** An 8-bit weight value with its qparams as a QTensor (per axis along `axis` when there are several scales). */
export function weightTensor(v, s, z, axis, where) {
  const { scales, zps, perAxis } = qparamsOf(s, z, where);
  const h = toHost(v);
  const qd = QDTYPE[h.dtype];
  if (qd !== 'quint8' && qd !== 'qint8') throw new ModelFormatError(`${where}: weights must be uint8 or int8, got ${h.dtype}`);
  return perAxis ? fromIntReprPerChannel(h.data, h.dims, scales, zps, axis, qd) : fromIntRepr(h.data, h.dims, scales[0], zps[0], qd);
}

/** A number as an int64 the way qw_cast converts floats (ONNX Cast): truncated toward zero, saturated, NaN 0. */
export function toInt64(v) {
  if (typeof v === 'bigint') return v;
  if (Number.isNaN(v)) return 0n;
  if (v >= 2 ** 63) return 2n ** 63n - 1n;
  if (v <= -(2 ** 63)) return -(2n ** 63n);
  return BigInt(Math.trunc(v));
}

/** { scale, zeroPoint, dtype } of an operator's 8-bit output, from its y_scale / y_zero_point values. */
export function outputQParams(s, z, where) {
  const { scales, zps, dtype } = qparamsOf(s, z, where);
  return { scale: scales[0], zeroPoint: zps[0], dtype: QDTYPE[dtype] };
}
