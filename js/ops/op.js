// What every operator family shares: operand checks, output allocation, contiguous views of operands,
// broadcast index lists and output qparams. One copy, so every operator checks and names things alike.
import { backend } from '../runtime/runtime.js';
import { checkBytes, checkScale, checkZeroPoint, numelOf, show } from '../tensor/check.js';
import { QTensor, contiguousStrides, newStorage, perTensor, rawTensor, wrapStorage } from '../tensor/qtensor.js';
import { broadcastSourceIndex } from '../tensor/layout.js';

/** The raw fields of a QTensor operand (TypeError when it is not one, Error when it was disposed). */
export function tensorOperand(t, where, name = 'input') {
  if (!(t instanceof QTensor)) throw new TypeError(`${where}: ${name} must be a QTensor, got ${show(t)}`);
  return rawTensor(t, where);
}

/** An 8-bit per-tensor operand: what activations of every quantized operator are. */
export function activationOperand(t, where, name = 'input') {
  const r = tensorOperand(t, where, name);
  if (r.quant.scheme !== 'per_tensor_affine') throw new TypeError(`${where}: ${name} must be quantized per tensor, got ${r.quant.scheme}`);
  if (r.dtype.name === 'qint32') throw new TypeError(`${where}: ${name} must be quint8 or qint8, got qint32`);
  return r;
}

/** The raw fields of a tensor made by this module (no checks). */
export const raw = (t, where) => rawTensor(t, where);

/**
 * A new tensor with per-tensor qparams (storage of at least one byte), row-major unless strides are given; `where`
 * names the operator in the RangeError of a shape too large for one buffer.
 */
export function newTensor(shape, dtype, scale, zeroPoint, strides = Object.freeze(contiguousStrides(shape)), where = 'qwasm') {
  checkBytes(numelOf(shape), dtype.bytes, where, () => `the output of shape ${show(shape)}`);
  const storage = newStorage(Math.max(1, numelOf(shape)) * dtype.bytes, where);
  return wrapStorage(storage, 0, shape, strides, dtype, perTensor(scale, zeroPoint));
}

/** Runs fill(y) and returns y; y is disposed when fill throws (an operator's output on its error path). */
export function produce(y, fill) {
  try {
    fill(y);
  } catch (error) {
    y.dispose();
    throw error;
  }
  return y;
}

/** Runs fn(ptr) on row-major contiguous data of t: its own storage when contiguous, else a copy freed after. */
export function withContiguous(t, where, fn) {
  if (t.isContiguous()) return fn(rawTensor(t, where).ptr);
  const c = t.contiguous();
  try {
    return fn(rawTensor(c, where).ptr);
  } finally {
    c.dispose();
  }
}

/** { scale, zeroPoint, relu } of an operator's output, checked for `dtype`. */
export function outputQParams(options, dtype, where) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${where}: options must be { scale, zeroPoint, ... }, got ${show(options)}`);
  }
  checkScale(options.scale, where, 'scale');
  checkZeroPoint(options.zeroPoint, dtype, where, 'zeroPoint');
  const relu = options.relu ?? false;
  if (typeof relu !== 'boolean') throw new TypeError(`${where}: relu must be a boolean, got ${show(relu)}`);
  return { scale: options.scale, zeroPoint: options.zeroPoint, relu };
}

/** Whether two shapes are equal (the same array first: QTensors and model memos share frozen shapes). */
export function sameShape(a, b) {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** What a prepared operator records of an operand it was made for (raw fields; a QTensor's shape and strides are frozen). */
export function operandRecord(r) {
  return { dtype: r.dtype, quant: r.quant, shape: r.shape, strides: r.strides };
}

/** Whether raw fields r describe an operand like `record`: dtype, per-tensor scale and zero point, shape, strides. */
export function matchesRecord(r, record) {
  return r.dtype === record.dtype && r.quant.scheme === 'per_tensor_affine' && r.quant.scale === record.quant.scale &&
    r.quant.zeroPoint === record.quant.zeroPoint && sameShape(r.shape, record.shape) && sameShape(r.strides, record.strides);
}

/** Per-output source indices of a numpy broadcast of two shapes to `shape` (null: that operand has the shape). */
export function broadcastIndices(shape, aShape, bShape, where = 'qwasm') {
  const same = [sameShape(aShape, shape), sameShape(bShape, shape)];
  if (!same[0] || !same[1]) checkBytes(numelOf(shape), 4, where, () => `the broadcast index lists of shape ${show(shape)}`);
  return [same[0] ? null : broadcastSourceIndex(shape, aShape), same[1] ? null : broadcastSourceIndex(shape, bShape)];
}

/** Copies index lists (null: none) into wasm memory for one call: fn(aIndexPtr, bIndexPtr), 0 for none. */
export function withIndexLists(n, ai, bi, fn, where = 'qwasm') {
  const b = backend();
  return b.withBuffers([ai ? 4 * n : 0, bi ? 4 * n : 0], (pai, pbi) => {
    if (ai) b.i32(pai, n).set(ai);
    if (bi) b.i32(pbi, n).set(bi);
    return fn(ai ? pai : 0, bi ? pbi : 0);
  }, where);
}
