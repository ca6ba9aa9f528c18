// QTensor: a quantized tensor whose integers live in wasm memory, modelled on PyTorch's quantized
// tensor API. Views (transpose, permute, select, slice, reshape of contiguous data) share storage,
// as in torch; the storage is freed when the last tensor using it is disposed.
import { backend } from '../runtime/runtime.js';
import { dtypeInfo, roundingCode } from './dtype.js';
import {
  checkBytes,
  checkDim,
  checkNumberArray,
  checkScale,
  checkShape,
  checkZeroPoint,
  numelOf,
  show,
} from './check.js';
import { decode, encode } from './serialize.js';
import { keepTracked, trackTensor } from './scope.js';

const INTERNAL = Symbol('qwasm.QTensor.internal');

/** Set by QTensor's static block: the raw fields of a live tensor (see rawTensor). */
let rawFields;
let dataPtr;

/** Reference-counted wasm allocation shared by a tensor and its views. */
class Storage {
  constructor(b, bytes, where) {
    this.backend = b;
    this.bytes = bytes;
    this.ptr = b.alloc(bytes, where);
    this.refs = 1;
    // A slot of a model run's arena: the run releases it before it returns (MemoryPlan.run checks), so its tensors
    // get no finalizer. One would have nothing to free after the run, and firing during a later run it would free
    // the slot's new occupant; registering one cost MobileNetV2 about 50 us a run in Node 24 (69 tensors a run).
    this.inArena = b.inArena(this.ptr);
  }
  retain() {
    this.refs++;
    return this;
  }
  release() {
    if (--this.refs === 0) {
      this.backend.free(this.ptr);
      this.ptr = 0;
    }
  }
}

// Safety net only: tensors that are garbage-collected without dispose() give back their storage.
const finalizer = new FinalizationRegistry((storage) => storage.release());

function contiguousStrides(shape) {
  const strides = new Array(shape.length);
  let s = 1;
  for (let k = shape.length - 1; k >= 0; k--) {
    strides[k] = s;
    s *= shape[k];
  }
  return strides;
}

function perTensor(scale, zeroPoint) {
  return Object.freeze({ scheme: 'per_tensor_affine', scale, zeroPoint });
}

function perChannel(scales, zeroPoints, axis) {
  return Object.freeze({ scheme: 'per_channel_affine', scales, zeroPoints, axis });
}

/** The qparams of a sub-tensor, as torch's create_subtensor_quantizer: one channel left -> per-tensor. */
function subQuant(quant, scales, zeroPoints, axis) {
  if (scales.length === 1) return perTensor(scales[0], zeroPoints[0]);
  return perChannel(scales, zeroPoints, axis);
}

function checkPerChannel(scales, zeroPoints, axis, shape, dtype, where) {
  const ax = checkDim(axis, shape.length, where, 'axis');
  const channels = shape[ax];
  checkNumberArray(scales, undefined, where, 'scales');
  checkNumberArray(zeroPoints, undefined, where, 'zeroPoints');
  if (scales.length !== channels) {
    throw new RangeError(`${where}: scales has ${scales.length} elements but shape[${ax}] is ${channels}`);
  }
  if (zeroPoints.length !== channels) {
    throw new RangeError(`${where}: zeroPoints has ${zeroPoints.length} elements but shape[${ax}] is ${channels}`);
  }
  for (let c = 0; c < channels; c++) {
    checkScale(scales[c], where, `scales[${c}]`);
    checkZeroPoint(zeroPoints[c], dtype, where, `zeroPoints[${c}]`);
  }
  return perChannel(Float64Array.from(scales), Int32Array.from(zeroPoints), ax);
}

/** [outer, channels, inner] of a contiguous tensor around the channel axis. */
function channelBlocks(shape, axis) {
  return [numelOf(shape.slice(0, axis)), shape[axis], numelOf(shape.slice(axis + 1))];
}

export class QTensor {
  #storage;
  #offset; // in elements
  #shape;
  #strides; // in elements
  #dtype;
  #quant;

  /** @internal Use quantizePerTensor, quantizePerChannel, fromIntRepr, empty or QTensor.fromBytes. */
  constructor(token, storage, offset, shape, strides, dtype, quant) {
    if (token !== INTERNAL) {
      throw new TypeError('QTensor: use quantizePerTensor(), quantizePerChannel(), fromIntRepr() or empty()');
    }
    this.#storage = storage;
    this.#offset = offset;
    // Frozen arrays are shared as they are (a prepared layer's output shape, run after run): equal shapes are then
    // often the same array, which the shape comparisons of model runs test first.
    this.#shape = Object.isFrozen(shape) ? shape : Object.freeze(shape.slice());
    this.#strides = Object.isFrozen(strides) ? strides : Object.freeze(strides.slice());
    this.#dtype = dtype;
    this.#quant = quant;
    if (!storage.inArena) finalizer.register(this, storage, this);
    trackTensor(this);
  }

  // ---- internals ---------------------------------------------------------------------------

  static {
    dataPtr = (t, where) => {
      t.#live(where);
      return t.#ptr();
    };
    rawFields = (t, where) => {
      const storage = t.#live(where);
      return { storage, ptr: t.#ptr(), offset: t.#offset, shape: t.#shape, strides: t.#strides, dtype: t.#dtype, quant: t.#quant };
    };
  }

  #live(where) {
    if (this.#storage === null) {
      throw new TypeError(`QTensor.${where}: this tensor was disposed`);
    }
    return this.#storage;
  }

  #view(shape, strides, offset, quant) {
    return new QTensor(INTERNAL, this.#storage.retain(), offset, shape, strides, this.#dtype, quant);
  }

  /** Pointer to this tensor's first element. */
  #ptr() {
    return this.#storage.ptr + this.#offset * this.#dtype.bytes;
  }

  /** Runs fn(ptr) on a contiguous copy of the elements (or the storage itself when contiguous). */
  #withContiguous(where, fn) {
    const b = this.#storage.backend;
    if (this.isContiguous()) return fn(this.#ptr());
    return b.withBuffers([this.numel() * this.#dtype.bytes], (tmp) => {
      this.#copyStrided(where, this.#ptr(), this.#strides, tmp, contiguousStrides(this.#shape));
      return fn(tmp);
    }, where);
  }

  #copyStrided(where, src, srcStrides, dst, dstStrides) {
    copyStrided(this.#storage.backend, where, this.#dtype.bytes, this.#shape, src, srcStrides, dst, dstStrides);
  }

  // ---- inspection --------------------------------------------------------------------------

  get shape() {
    this.#live('shape');
    return this.#shape;
  }
  get ndim() {
    this.#live('ndim');
    return this.#shape.length;
  }
  get dtype() {
    this.#live('dtype');
    return this.#dtype.name;
  }
  get qscheme() {
    this.#live('qscheme');
    return this.#quant.scheme;
  }
  /** Strides in elements, as torch's stride(). */
  get strides() {
    this.#live('strides');
    return this.#strides; // frozen
  }
  get disposed() {
    return this.#storage === null;
  }

  numel() {
    this.#live('numel');
    return numelOf(this.#shape);
  }

  isContiguous() {
    this.#live('isContiguous');
    const shape = this.#shape, strides = this.#strides; // no allocation: operators ask this on every call
    for (let k = shape.length - 1, dense = 1; k >= 0; dense *= shape[k], k--) {
      if (shape[k] > 1 && strides[k] !== dense) return false;
    }
    return true;
  }

  qScale() {
    this.#live('qScale');
    if (this.#quant.scheme !== 'per_tensor_affine') {
      throw new TypeError('QTensor.qScale: the tensor is per_channel_affine; use qPerChannelScales()');
    }
    return this.#quant.scale;
  }

  qZeroPoint() {
    this.#live('qZeroPoint');
    if (this.#quant.scheme !== 'per_tensor_affine') {
      throw new TypeError('QTensor.qZeroPoint: the tensor is per_channel_affine; use qPerChannelZeroPoints()');
    }
    return this.#quant.zeroPoint;
  }

  #perChannelOnly(where) {
    this.#live(where);
    if (this.#quant.scheme !== 'per_channel_affine') {
      throw new TypeError(`QTensor.${where}: the tensor is per_tensor_affine; use qScale() / qZeroPoint()`);
    }
    return this.#quant;
  }

  /** Per-channel scales as float64, as torch keeps them. */
  qPerChannelScales() {
    return this.#perChannelOnly('qPerChannelScales').scales.slice();
  }
  qPerChannelZeroPoints() {
    return this.#perChannelOnly('qPerChannelZeroPoints').zeroPoints.slice();
  }
  qPerChannelAxis() {
    return this.#perChannelOnly('qPerChannelAxis').axis;
  }

  /** The integers, row-major, in a new Uint8Array / Int8Array / Int32Array. */
  intRepr() {
    this.#live('intRepr');
    const n = this.numel();
    const b = this.#storage.backend;
    return this.#withContiguous('QTensor.intRepr', (ptr) => b.view(this.#dtype.IntArray, ptr, n).slice());
  }

  /** The real values scale * (q - zero_point), row-major, as a new Float32Array. */
  dequantize() {
    this.#live('dequantize');
    const n = this.numel();
    const b = this.#storage.backend;
    const q = this.#quant;
    const where = 'QTensor.dequantize';
    checkBytes(n, 4, where, 'the float32 values');
    return this.#withContiguous(where, (src) =>
      b.withBuffers([4 * n], (out) => {
        if (q.scheme === 'per_tensor_affine') {
          b.call(where, 'qw_dequantize', n, src, out, this.#dtype.code, q.scale, q.zeroPoint);
        } else {
          const [outer, channels, inner] = channelBlocks(this.#shape, q.axis);
          b.withBuffers([8 * channels, 4 * channels], (ps, pz) => {
            b.view(Float64Array, ps, channels).set(q.scales);
            b.i32(pz, channels).set(q.zeroPoints);
            b.call(where, 'qw_dequantize_per_channel', outer, channels, inner, src, out, this.#dtype.code, ps, pz);
          });
        }
        return b.f32(out, n).slice();
      }, where),
    );
  }

  /** The single real value of a one-element tensor. */
  item() {
    this.#live('item');
    const n = this.numel();
    if (n !== 1) {
      throw new RangeError(`QTensor.item: the tensor has ${n} elements; item() needs exactly one`);
    }
    return this.dequantize()[0];
  }

  // ---- views -------------------------------------------------------------------------------

  /** Swaps two dimensions (a view). */
  transpose(dim0, dim1) {
    this.#live('transpose');
    const rank = this.#shape.length;
    const a = checkDim(dim0, rank, 'QTensor.transpose', 'dim0');
    const c = checkDim(dim1, rank, 'QTensor.transpose', 'dim1');
    const order = [...Array(rank).keys()];
    [order[a], order[c]] = [order[c], order[a]];
    return this.permute(order);
  }

  /** Reorders dimensions: result dim k is this tensor's dim dims[k] (a view). */
  permute(dims) {
    this.#live('permute');
    const rank = this.#shape.length;
    if (!Array.isArray(dims) || dims.length !== rank) {
      throw new RangeError(`QTensor.permute: dims must list all ${rank} dimensions, got ${show(dims)}`);
    }
    const order = dims.map((d, i) => checkDim(d, rank, 'QTensor.permute', `dims[${i}]`));
    if (new Set(order).size !== rank) {
      throw new RangeError(`QTensor.permute: dims must be a permutation of 0..${rank - 1}, got ${show(dims)}`);
    }
    const q = this.#quant;
    const quant = q.scheme === 'per_channel_affine' ? perChannel(q.scales, q.zeroPoints, order.indexOf(q.axis)) : q;
    return this.#view(
      order.map((d) => this.#shape[d]),
      order.map((d) => this.#strides[d]),
      this.#offset,
      quant,
    );
  }

  /** A contiguous tensor with the same values: a view when already contiguous, else a copy. */
  contiguous() {
    this.#live('contiguous');
    if (this.isContiguous()) return this.#view(this.#shape, contiguousStrides(this.#shape), this.#offset, this.#quant);
    return this.clone();
  }

  /**
   * The same elements in a new shape (one entry may be -1). A view of contiguous data, a copy
   * otherwise. A per-channel tensor keeps its channel dimension intact or the call throws.
   */
  reshape(shape) {
    this.#live('reshape');
    const where = 'QTensor.reshape';
    if (!Array.isArray(shape)) throw new TypeError(`${where}: shape must be an array, got ${show(shape)}`);
    const n = this.numel();
    const inferred = shape.indexOf(-1);
    if (inferred !== shape.lastIndexOf(-1)) throw new RangeError(`${where}: only one dimension can be -1, got ${show(shape)}`);
    let dims = shape.slice();
    if (inferred >= 0) {
      const known = numelOf(dims.filter((d, i) => i !== inferred));
      checkShape(dims.map((d) => (d === -1 ? 0 : d)), where);
      if (known === 0 || n % known !== 0) {
        throw new RangeError(`${where}: cannot infer -1 in ${show(shape)} for ${n} elements`);
      }
      dims[inferred] = n / known;
    }
    dims = checkShape(dims, where);
    if (numelOf(dims) !== n) {
      throw new RangeError(`${where}: shape ${show(dims)} has ${numelOf(dims)} elements, the tensor has ${n}`);
    }
    let quant = this.#quant;
    if (quant.scheme === 'per_channel_affine') {
      const lead = numelOf(this.#shape.slice(0, quant.axis));
      const channels = this.#shape[quant.axis];
      const axis = dims.findIndex((d, k) => d === channels && numelOf(dims.slice(0, k)) === lead);
      if (axis < 0) {
        throw new RangeError(
          `${where}: shape ${show(dims)} splits or merges the channel axis ${quant.axis} (size ${channels}) of a per-channel tensor`,
        );
      }
      quant = perChannel(quant.scales, quant.zeroPoints, axis);
    }
    const base = this.contiguous();
    try {
      return base.#view(dims, contiguousStrides(dims), base.#offset, quant);
    } finally {
      base.dispose();
    }
  }

  /** torch.flatten: dimensions startDim..endDim merged into one (a view of contiguous data). */
  flatten(startDim = 0, endDim = -1) {
    this.#live('flatten');
    const rank = this.#shape.length;
    if (rank === 0) return this.reshape([1]);
    const a = checkDim(startDim, rank, 'QTensor.flatten', 'startDim');
    const b = checkDim(endDim, rank, 'QTensor.flatten', 'endDim');
    if (a > b) throw new RangeError(`QTensor.flatten: startDim ${startDim} comes after endDim ${endDim}`);
    return this.reshape([...this.#shape.slice(0, a), numelOf(this.#shape.slice(a, b + 1)), ...this.#shape.slice(b + 1)]);
  }

  /** The sub-tensor at `index` along `dim`, with that dimension removed (a view), like t[index]. */
  select(dim, index) {
    this.#live('select');
    const where = 'QTensor.select';
    const d = checkDim(dim, this.#shape.length, where);
    const size = this.#shape[d];
    if (!Number.isInteger(index) || index < -size || index >= size) {
      throw new RangeError(`${where}: index must be an integer in [${-size}, ${size - 1}] for dim ${d}, got ${show(index)}`);
    }
    const i = index < 0 ? index + size : index;
    const shape = this.#shape.filter((_, k) => k !== d);
    const strides = this.#strides.filter((_, k) => k !== d);
    let quant = this.#quant;
    if (quant.scheme === 'per_channel_affine') {
      // Selecting one channel leaves one (scale, zero point): the result is per-tensor, as in torch.
      if (quant.axis === d) quant = perTensor(quant.scales[i], quant.zeroPoints[i]);
      else quant = subQuant(quant, quant.scales, quant.zeroPoints, quant.axis > d ? quant.axis - 1 : quant.axis);
    }
    return this.#view(shape, strides, this.#offset + i * this.#strides[d], quant);
  }

  /** Elements start <= i < end (step > 0) along dim, Python-style negative bounds (a view). */
  slice(dim, start = 0, end = undefined, step = 1) {
    this.#live('slice');
    const where = 'QTensor.slice';
    const d = checkDim(dim, this.#shape.length, where);
    const size = this.#shape[d];
    if (!Number.isInteger(step) || step <= 0) throw new RangeError(`${where}: step must be a positive integer, got ${show(step)}`);
    const bound = (v, name, fallback) => {
      if (v === undefined || v === null) return fallback;
      if (!Number.isInteger(v)) throw new TypeError(`${where}: ${name} must be an integer, got ${show(v)}`);
      return Math.min(Math.max(v < 0 ? v + size : v, 0), size);
    };
    const lo = bound(start, 'start', 0);
    const hi = Math.max(bound(end, 'end', size), lo);
    const count = Math.ceil((hi - lo) / step);
    const shape = this.#shape.slice();
    shape[d] = count;
    const strides = this.#strides.slice();
    strides[d] = this.#strides[d] * step;
    let quant = this.#quant;
    if (quant.scheme === 'per_channel_affine') {
      const pick = (arr) => (quant.axis === d ? arr.constructor.from({ length: count }, (_, j) => arr[lo + j * step]) : arr);
      quant = subQuant(quant, pick(quant.scales), pick(quant.zeroPoints), quant.axis);
    }
    return this.#view(shape, strides, this.#offset + (count > 0 ? lo * this.#strides[d] : 0), quant);
  }

  /** t.at(i, j) is t[i][j]: successive selects along the leading dimensions (a view). */
  at(...indices) {
    this.#live('at');
    if (indices.length > this.#shape.length) {
      throw new RangeError(`QTensor.at: ${indices.length} indices for a ${this.#shape.length}-dimensional tensor`);
    }
    indices.forEach((index, k) => {
      const size = this.#shape[k];
      if (!Number.isInteger(index) || index < -size || index >= size) {
        throw new RangeError(`QTensor.at: index ${k} must be an integer in [${-size}, ${size - 1}] for dimension ${k} of size ${size}, got ${show(index)}`);
      }
    });
    let t = this.#view(this.#shape, this.#strides, this.#offset, this.#quant);
    for (const i of indices) {
      const next = t.select(0, i);
      t.dispose();
      t = next;
    }
    return t;
  }

  // ---- copies --------------------------------------------------------------------------------

  /** A contiguous copy with new storage and the same qparams. */
  clone() {
    this.#live('clone');
    const n = this.numel();
    const storage = new Storage(this.#storage.backend, n * this.#dtype.bytes, 'QTensor.clone');
    try {
      this.#copyStrided('QTensor.clone', this.#ptr(), this.#strides, storage.ptr, contiguousStrides(this.#shape));
    } catch (error) {
      storage.release();
      throw error;
    }
    return new QTensor(INTERNAL, storage, 0, this.#shape, contiguousStrides(this.#shape), this.#dtype, this.#quant);
  }

  /**
   * Writes other's values into this tensor, requantized to THIS tensor's dtype and qparams:
   * quantize(other.dequantize()). Shapes must match. Views write through to their base.
   * (torch 1.13's copy_ instead copies the integers and adopts the source's qparams; see
   * docs/quantization.md.) options: { rounding: 'torch' | 'onnx' }.
   */
  copyFrom(other, options = {}) {
    this.#live('copyFrom');
    const where = 'QTensor.copyFrom';
    if (!(other instanceof QTensor)) throw new TypeError(`${where}: other must be a QTensor, got ${show(other)}`);
    other.#live('copyFrom (source)');
    const mode = roundingCode(options, where);
    if (other.#shape.length !== this.#shape.length || other.#shape.some((d, k) => d !== this.#shape[k])) {
      throw new RangeError(`${where}: shape ${show(other.#shape)} does not match ${show(this.#shape)}`);
    }
    const n = this.numel();
    const b = this.#storage.backend;
    checkBytes(n, 4, where, 'the float32 values');
    const values = other.dequantize();
    b.withBuffers([4 * n, n * this.#dtype.bytes], (pf, pq) => {
      b.f32(pf, n).set(values);
      quantizeInto(b, where, pf, pq, this.#shape, this.#dtype, this.#quant, mode);
      this.#copyStrided(where, pq, contiguousStrides(this.#shape), this.#ptr(), this.#strides);
    }, where);
    return this;
  }

  /**
   * A new per-tensor tensor holding this tensor's values requantized to (scale, zeroPoint, dtype):
   * quantize(dequantize(q)) through the C core's fused qw_requantize. options: { rounding }.
   */
  requantize(scale, zeroPoint, dtype = this.dtype, options = {}) {
    this.#live('requantize');
    const where = 'QTensor.requantize';
    const info = dtypeInfo(dtype, where);
    checkScale(scale, where);
    checkZeroPoint(zeroPoint, info, where);
    const mode = roundingCode(options, where);
    const n = this.numel();
    const b = this.#storage.backend;
    if (this.#quant.scheme !== 'per_tensor_affine') checkBytes(n, 4, where, 'the float32 values');
    const out = new Storage(b, n * info.bytes, where);
    try {
      const q = this.#quant;
      if (q.scheme === 'per_tensor_affine') {
        this.#withContiguous(where, (src) =>
          b.call(where, 'qw_requantize', n, src, this.#dtype.code, q.scale, q.zeroPoint, out.ptr, info.code, scale, zeroPoint, mode),
        );
      } else {
        const values = this.dequantize();
        b.withBuffers([4 * n], (pf) => {
          b.f32(pf, n).set(values);
          b.call(where, 'qw_quantize', n, pf, out.ptr, info.code, mode, scale, zeroPoint);
        }, where);
      }
    } catch (error) {
      out.release();
      throw error;
    }
    const shape = this.#shape.slice();
    return new QTensor(INTERNAL, out, 0, shape, contiguousStrides(shape), info, perTensor(scale, zeroPoint));
  }

  // ---- serialization -----------------------------------------------------------------------

  /** A compact byte string (docs/qtensor-format.md) that QTensor.fromBytes turns back into an equal tensor. */
  toBytes() {
    this.#live('toBytes');
    return encode({ dtype: this.#dtype, shape: this.#shape, quant: this.#quant, ints: this.intRepr() });
  }

  static fromBytes(bytes) {
    const { dtype, shape, quant, ints } = decode(bytes);
    const where = 'QTensor.fromBytes';
    if (quant.scheme === 'per_tensor_affine') {
      return perTensorFromInts(ints, shape, quant.scale, quant.zeroPoint, dtype.name, where);
    }
    return perChannelFromInts(ints, shape, quant.scales, quant.zeroPoints, quant.axis, dtype.name, where);
  }

  // ---- lifetime ------------------------------------------------------------------------------

  /** Releases this tensor's hold on its wasm storage. Idempotent; any later use throws. */
  dispose() {
    if (this.#storage === null) return;
    if (!this.#storage.inArena) finalizer.unregister(this);
    this.#storage.release();
    this.#storage = null;
  }

  // ---- printing ------------------------------------------------------------------------------

  /** In the spirit of torch's print: values, size, dtype, scheme, scale, zero_point. */
  toString() {
    if (this.#storage === null) return 'QTensor(<disposed>)';
    const values = this.dequantize();
    const q = this.#quant;
    const size = `(${this.#shape.join(', ')}${this.#shape.length === 1 ? ',' : ''})`;
    const fmt = chooseFormat(values);
    const body = formatNested(values, this.#shape, fmt);
    const params =
      q.scheme === 'per_tensor_affine'
        ? `scale=${q.scale}, zero_point=${q.zeroPoint}`
        : `scale=[${Array.from(q.scales).join(', ')}], zero_point=[${Array.from(q.zeroPoints).join(', ')}], axis=${q.axis}`;
    return `QTensor(${body}, size=${size}, dtype=${this.#dtype.name},\n        quantization_scheme=${q.scheme}, ${params})`;
  }

  get [Symbol.toStringTag]() {
    return 'QTensor';
  }
}

if (typeof Symbol.dispose === 'symbol') {
  QTensor.prototype[Symbol.dispose] = QTensor.prototype.dispose;
}

/** Marks t so that no tidy() scope disposes it (its own dispose() still does). Returns t. */
export function keep(t) {
  if (!(t instanceof QTensor)) {
    const got = t === null ? 'null' : typeof t === 'object' ? (t.constructor?.name ?? 'object') : typeof t;
    throw new TypeError(`keep: expected a QTensor, got ${got}`);
  }
  return keepTracked(t);
}

// ---- printing helpers ----------------------------------------------------------------------

function chooseFormat(values) {
  let maxAbs = 0;
  let minAbs = Infinity;
  let integral = true;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    const a = Math.abs(v);
    maxAbs = Math.max(maxAbs, a);
    if (a > 0) minAbs = Math.min(minAbs, a);
    if (!Number.isInteger(v)) integral = false;
  }
  if (integral && maxAbs < 1e8) return (v) => `${v}.`;
  if (maxAbs >= 1e8 || (minAbs < 1e-4 && minAbs !== Infinity)) return (v) => v.toExponential(4);
  return (v) => v.toFixed(4);
}

function formatNested(values, shape, fmt) {
  if (shape.length === 0) return fmt(values[0]);
  const summarize = values.length > 1000;
  const rec = (offset, dim, indent) => {
    const size = shape[dim];
    const stride = numelOf(shape.slice(dim + 1));
    const idx = summarize && size > 6 ? [0, 1, 2, null, size - 3, size - 2, size - 1] : [...Array(size).keys()];
    const parts = idx.map((i) => (i === null ? '...' : dim === shape.length - 1 ? fmt(values[offset + i]) : rec(offset + i * stride, dim + 1, indent + ' ')));
    const sep = dim === shape.length - 1 ? ', ' : `,\n${indent} `;
    return `[${parts.join(sep)}]`;
  };
  return rec(0, 0, '       ');
}

// ---- creation ------------------------------------------------------------------------------

function quantizeInto(b, where, src, dst, shape, dtype, quant, mode) {
  const n = numelOf(shape);
  if (quant.scheme === 'per_tensor_affine') {
    b.call(where, 'qw_quantize', n, src, dst, dtype.code, mode, quant.scale, quant.zeroPoint);
    return;
  }
  const [outer, channels, inner] = channelBlocks(shape, quant.axis);
  b.withBuffers([4 * channels, 4 * channels], (ps, pz) => {
    b.f32(ps, channels).set(quant.scales); // torch casts each float64 scale to float for quantize
    b.i32(pz, channels).set(quant.zeroPoints);
    b.call(where, 'qw_quantize_per_channel', outer, channels, inner, src, dst, dtype.code, mode, ps, pz);
  });
}

function createQuantized(data, shape, dtype, quant, mode, where) {
  const b = backend();
  const n = numelOf(shape);
  checkNumberArray(data, n, where, 'data');
  const storage = new Storage(b, n * dtype.bytes, where);
  try {
    b.withBuffers([4 * n], (pf) => {
      b.f32(pf, n).set(data);
      quantizeInto(b, where, pf, storage.ptr, shape, dtype, quant, mode);
    }, where);
  } catch (error) {
    storage.release();
    throw error;
  }
  return new QTensor(INTERNAL, storage, 0, shape, contiguousStrides(shape), dtype, quant);
}

/**
 * torch.quantize_per_tensor: q = clamp(round(x / scale) + zeroPoint) with the chosen rounding rule
 * ('torch', the default: x * (1/scale); 'onnx': x / scale). data: numbers (float32 after conversion).
 */
export function quantizePerTensor(data, shape, scale, zeroPoint, dtype, options = {}) {
  const where = 'quantizePerTensor';
  const dims = checkShape(shape, where, 'shape', 4); // quantized from a float32 copy
  const info = dtypeInfo(dtype, where);
  checkScale(scale, where);
  checkZeroPoint(zeroPoint, info, where);
  return createQuantized(data, dims, info, perTensor(scale, zeroPoint), roundingCode(options, where), where);
}

/** torch.quantize_per_channel: one (scale, zero point) per index along `axis`. */
export function quantizePerChannel(data, shape, scales, zeroPoints, axis, dtype, options = {}) {
  const where = 'quantizePerChannel';
  const dims = checkShape(shape, where, 'shape', 4);
  const info = dtypeInfo(dtype, where);
  const quant = checkPerChannel(scales, zeroPoints, axis, dims, info, where);
  return createQuantized(data, dims, info, quant, roundingCode(options, where), where);
}

function createFromInts(ints, shape, dtype, quant, where) {
  const n = numelOf(shape);
  checkNumberArray(ints, n, where, 'ints');
  if (!(ints instanceof dtype.IntArray)) {
    for (let i = 0; i < n; i++) {
      const v = ints[i];
      if (!Number.isInteger(v) || v < dtype.min || v > dtype.max) {
        throw new RangeError(`${where}: ints[${i}] must be an integer in [${dtype.min}, ${dtype.max}] for ${dtype.name}, got ${show(v)}`);
      }
    }
  }
  const b = backend();
  const storage = new Storage(b, n * dtype.bytes, where);
  b.view(dtype.IntArray, storage.ptr, n).set(ints);
  return new QTensor(INTERNAL, storage, 0, shape, contiguousStrides(shape), dtype, quant);
}

/**
 * Wraps integers you quantized yourself (torch._make_per_tensor_quantized_tensor): real values
 * are scale * (ints[i] - zeroPoint). Seed 000's case: quantize with your own method, then use
 * qwasm's ops on the result.
 */
export function fromIntRepr(ints, shape, scale, zeroPoint, dtype) {
  return perTensorFromInts(ints, shape, scale, zeroPoint, dtype, 'fromIntRepr');
}

/** Per-channel counterpart of fromIntRepr (torch._make_per_channel_quantized_tensor). */
export function fromIntReprPerChannel(ints, shape, scales, zeroPoints, axis, dtype) {
  return perChannelFromInts(ints, shape, scales, zeroPoints, axis, dtype, 'fromIntReprPerChannel');
}

function perTensorFromInts(ints, shape, scale, zeroPoint, dtype, where) {
  const info = dtypeInfo(dtype, where);
  const dims = checkShape(shape, where, 'shape', info.bytes);
  checkScale(scale, where);
  checkZeroPoint(zeroPoint, info, where);
  return createFromInts(ints, dims, info, perTensor(scale, zeroPoint), where);
}

function perChannelFromInts(ints, shape, scales, zeroPoints, axis, dtype, where) {
  const info = dtypeInfo(dtype, where);
  const dims = checkShape(shape, where, 'shape', info.bytes);
  const quant = checkPerChannel(scales, zeroPoints, axis, dims, info, where);
  return createFromInts(ints, dims, info, quant, where);
}

/**
 * A tensor of the given shape whose every element is its zero point (so it dequantizes to 0).
 * qparams: { dtype, scale, zeroPoint } or { dtype, scales, zeroPoints, axis }.
 */
export function empty(shape, qparams) {
  const where = 'empty';
  if (qparams === null || typeof qparams !== 'object') {
    throw new TypeError(`${where}: qparams must be { dtype, scale, zeroPoint } or { dtype, scales, zeroPoints, axis }, got ${show(qparams)}`);
  }
  const info = dtypeInfo(qparams.dtype, where);
  const dims = checkShape(shape, where, 'shape', info.bytes);
  const perChannel = qparams.scales !== undefined || qparams.zeroPoints !== undefined || qparams.axis !== undefined;
  if (perChannel && (qparams.scale !== undefined || qparams.zeroPoint !== undefined)) {
    throw new TypeError(`${where}: qparams has both per-tensor (scale, zeroPoint) and per-channel (scales, zeroPoints, axis) fields; give one form`);
  }
  const n = numelOf(dims);
  const ints = new info.IntArray(n);
  if (perChannel) {
    const quant = checkPerChannel(qparams.scales, qparams.zeroPoints, qparams.axis, dims, info, where);
    const [outer, channels, inner] = channelBlocks(dims, quant.axis);
    for (let o = 0; o < outer; o++) {
      for (let c = 0; c < channels; c++) {
        ints.fill(quant.zeroPoints[c], (o * channels + c) * inner, (o * channels + c + 1) * inner);
      }
    }
    return createFromInts(ints, dims, info, quant, where);
  }
  checkScale(qparams.scale, where);
  checkZeroPoint(qparams.zeroPoint, info, where);
  ints.fill(qparams.zeroPoint);
  return createFromInts(ints, dims, info, perTensor(qparams.scale, qparams.zeroPoint), where);
}

// ---- internal access for the operators (js/ops/); not re-exported by index.js ------------------

/**
 * The raw fields of a live QTensor: { storage, ptr, offset, shape, strides, dtype, quant } (ptr: the wasm
 * address of its first element). For the operators only; throws when the tensor was disposed.
 */
export function rawTensor(t, where) {
  return rawFields(t, where);
}

/** The wasm address of a live QTensor's first element (rawTensor(t, where).ptr without the object). */
export function tensorPtr(t, where) {
  return dataPtr(t, where);
}

/** Copies a strided view (element strides) of `shape` between wasm addresses, through qw_copy_strided. */
export function copyStrided(b, where, elemBytes, shape, src, srcStrides, dst, dstStrides) {
  const rank = shape.length;
  b.withBuffers([4 * rank, 4 * rank, 4 * rank], (pshape, ps, pd) => {
    b.i32(pshape, rank).set(shape);
    b.i32(ps, rank).set(srcStrides);
    b.i32(pd, rank).set(dstStrides);
    b.call(where, 'qw_copy_strided', elemBytes, rank, pshape, src, ps, dst, pd);
  }, where);
}

/** Wraps raw tensor fields; shares `storage` (which the caller already holds one reference to). */
export function wrapStorage(storage, offset, shape, strides, dtype, quant) {
  return new QTensor(INTERNAL, storage, offset, shape, strides, dtype, quant);
}

/** Allocates reference-counted storage of `bytes` in the active backend (`where` names the caller in errors). */
export function newStorage(bytes, where) {
  return new Storage(backend(), bytes, where);
}

export { contiguousStrides, perTensor, perChannel };

/** The same storage viewed with other per-tensor qparams (zero copy): QOperator graphs carry a
 * tensor's qparams at its consumers. */
export function withQParams(t, scale, zeroPoint) {
  const r = rawFields(t, 'withQParams');
  checkScale(scale, 'withQParams');
  checkZeroPoint(zeroPoint, r.dtype, 'withQParams');
  return new QTensor(INTERNAL, r.storage.retain(), r.offset, r.shape, r.strides, r.dtype, perTensor(scale, zeroPoint)); // frozen: shared
}
