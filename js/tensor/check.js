// Argument checks shared by the public API. Every message names the function, the argument and
// the offending value.

import { QW_MAX_BYTES, QW_MAX_RANK } from '../runtime/abi.js';

export const MAX_RANK = QW_MAX_RANK;
/** The largest buffer the C core takes, in bytes (and the largest element count): 2^31 - 1. */
export const MAX_BYTES = QW_MAX_BYTES;

/**
 * Checks that `count` elements of `elementBytes` bytes fit in one buffer (before anything is allocated). `what`: a
 * string, or a function that makes it (for messages that cost something to format on every call).
 */
export function checkBytes(count, elementBytes, where, what) {
  if (count * elementBytes > MAX_BYTES) {
    throw new RangeError(`${where}: ${typeof what === 'function' ? what() : what} would take ${count * elementBytes} bytes; one buffer holds at most 2^31 - 1 (QW_MAX_BYTES)`);
  }
}

function show(value) {
  if (typeof value === 'bigint') return `${value}n (a BigInt)`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === undefined) return 'undefined';
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return String(value);
  }
}
export { show };

/**
 * A shape: an array (or typed array) of at most MAX_RANK non-negative safe integers whose element count, at
 * `elementBytes` bytes each (the largest buffer the caller will make for it), fits in one buffer.
 */
export function checkShape(shape, where, name = 'shape', elementBytes = 1) {
  if (!Array.isArray(shape) && !(ArrayBuffer.isView(shape) && !(shape instanceof DataView))) {
    throw new TypeError(`${where}: ${name} must be an array of dimension sizes, got ${show(shape)}`);
  }
  const dims = Array.from(shape);
  if (dims.length > MAX_RANK) {
    throw new RangeError(`${where}: ${name} has ${dims.length} dimensions; at most ${MAX_RANK} are supported`);
  }
  let numel = 1;
  dims.forEach((d, i) => {
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new RangeError(`${where}: ${name}[${i}] must be a non-negative integer, got ${show(d)}`);
    }
    numel *= d;
  });
  if (numel * elementBytes > MAX_BYTES) {
    throw new RangeError(`${where}: ${name} ${show(dims)} has ${numel} elements of ${elementBytes} bytes; one buffer holds at most 2^31 - 1 bytes (QW_MAX_BYTES)`);
  }
  return dims;
}

/**
 * dims[start, end) as a new array (negative bounds from the end). For shapes, which QTensors keep frozen: V8 slices a
 * frozen array on a slow path (Node 20 and Chromium 156: 0.15 µs for two elements, 7x an unfrozen array's).
 */
export function sliceDims(dims, start = 0, end = dims.length) {
  const n = dims.length;
  const lo = start < 0 ? Math.max(n + start, 0) : Math.min(start, n);
  const hi = end < 0 ? Math.max(n + end, 0) : Math.min(end, n);
  const out = [];
  for (let i = lo; i < hi; i++) out.push(dims[i]);
  return out;
}

export function numelOf(shape) {
  return shape.reduce((a, b) => a * b, 1);
}

/** A scale the kernels can use: finite and > 0 as float32, with a finite float32 reciprocal. */
export function checkScale(scale, where, name = 'scale') {
  const f = typeof scale === 'number' ? Math.fround(scale) : NaN;
  if (!Number.isFinite(f) || !(f > 0) || !Number.isFinite(Math.fround(1 / f))) {
    throw new RangeError(`${where}: ${name} must be a finite number > 0 (at least 2.9e-39 in float32), got ${show(scale)}`);
  }
  return scale;
}

export function checkZeroPoint(zeroPoint, dtype, where, name = 'zeroPoint') {
  if (!Number.isInteger(zeroPoint) || zeroPoint < dtype.min || zeroPoint > dtype.max) {
    throw new RangeError(
      `${where}: ${name} must be an integer in [${dtype.min}, ${dtype.max}] for ${dtype.name}, got ${show(zeroPoint)}`,
    );
  }
  return zeroPoint;
}

/** A dimension index in [-rank, rank), normalized to [0, rank). */
/** Whether perm is an array holding each of 0..rank-1 once (a Transpose's or a view's axis order). */
export function isPermutation(perm, rank = perm?.length) {
  return Array.isArray(perm) && perm.length === rank && perm.every((p, i) => Number.isInteger(p) && p >= 0 && p < rank && perm.indexOf(p) === i);
}

export function checkDim(dim, rank, where, name = 'dim') {
  if (!Number.isInteger(dim) || dim < -rank || dim >= rank || rank === 0) {
    const range = rank === 0 ? 'none (the tensor is 0-dimensional)' : `[${-rank}, ${rank - 1}]`;
    throw new RangeError(`${where}: ${name} must be an integer in ${range}, got ${show(dim)}`);
  }
  return dim < 0 ? dim + rank : dim;
}

export function checkNumberArray(data, length, where, name) {
  if (!Array.isArray(data) && !(ArrayBuffer.isView(data) && !(data instanceof DataView))) {
    throw new TypeError(`${where}: ${name} must be an array or a typed array, got ${show(data)}`);
  }
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
    throw new TypeError(`${where}: ${name} must hold numbers, not BigInts`);
  }
  if (length !== undefined && data.length !== length) {
    throw new RangeError(`${where}: ${name} has ${data.length} elements but ${length} are needed`);
  }
  if (Array.isArray(data)) {
    for (let i = 0; i < data.length; i++) {
      if (typeof data[i] !== 'number') {
        throw new TypeError(`${where}: ${name}[${i}] must be a number, got ${show(data[i])}`);
      }
    }
  }
  return data;
}
