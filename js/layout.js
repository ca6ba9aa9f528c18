// Shape helpers shared by the operators: [h, w] pairs, numpy broadcasting, and channels-last data.
import { backend } from './runtime.js';
import { numelOf, show } from './check.js';
import { contiguousStrides } from './qtensor.js';

/** A number or [h, w] of integers >= min, as [h, w]. */
export function pair(v, name, where, min) {
  const p = typeof v === 'number' ? [v, v] : v;
  if (!Array.isArray(p) || p.length !== 2 || !p.every((e) => Number.isInteger(e) && e >= min)) {
    throw new RangeError(`${where}: ${name} must be an integer >= ${min} or [h, w], got ${show(v)}`);
  }
  return [p[0], p[1]];
}

/** For each element of `shape` (row-major), the flat index of the element of `srcShape` it broadcasts from. */
export function broadcastSourceIndex(shape, srcShape) {
  const rank = shape.length;
  const s = [...new Array(rank - srcShape.length).fill(1), ...srcShape];
  const strides = contiguousStrides(s).map((st, k) => (s[k] === 1 ? 0 : st));
  const n = numelOf(shape);
  const out = new Int32Array(n);
  const pos = new Array(rank).fill(0);
  for (let i = 0; i < n; i++) {
    let off = 0;
    for (let k = 0; k < rank; k++) off += pos[k] * strides[k];
    out[i] = off;
    for (let k = rank - 1; k >= 0; k--) {
      if (++pos[k] < shape[k]) break;
      pos[k] = 0;
    }
  }
  return out;
}

/** The numpy broadcast of two shapes. */
export function broadcastShape(a, b, where) {
  const rank = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < rank; i++) {
    const x = a[a.length - rank + i] ?? 1;
    const y = b[b.length - rank + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new RangeError(`${where}: shapes ${show(a)} and ${show(b)} do not broadcast`);
    out.push(x === 1 ? y : x);
  }
  return out;
}

/** True when the raw fields of an NCHW-shaped tensor are stored channels-last (NHWC). */
export function isChannelsLast(r) {
  const [n, c, h, w] = r.shape;
  const s = r.strides;
  return (c === 1 || s[1] === 1) && (w === 1 || s[3] === c) && (h === 1 || s[2] === w * c) && (n === 1 || s[0] === h * w * c);
}

/**
 * Runs fn(ptr) on channels-last (NHWC) data of an NCHW-shaped tensor's raw fields: its own storage
 * when it is stored so, else a transposed copy freed afterwards.
 */
export function withChannelsLast(r, fn) {
  if (isChannelsLast(r)) return fn(r.ptr);
  const b = backend();
  const [n, c, h, w] = r.shape;
  const nhwc = [n, h, w, c];
  return b.withBuffers([Math.max(1, numelOf(r.shape)) * r.dtype.bytes], (tmp) => {
    b.withBuffers([16, 16, 16], (pshape, psrc, pdst) => {
      b.i32(pshape, 4).set(nhwc);
      b.i32(psrc, 4).set([r.strides[0], r.strides[2], r.strides[3], r.strides[1]]);
      b.i32(pdst, 4).set(contiguousStrides(nhwc));
      b.call('qw_copy_strided', r.dtype.bytes, 4, pshape, r.ptr, psrc, tmp, pdst);
    });
    return fn(tmp);
  });
}

/** Strides of an NCHW shape stored channels-last. */
export function channelsLastStrides([, c, h, w]) {
  return [h * w * c, 1, w * c, c];
}
