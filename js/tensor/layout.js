// Shape helpers shared by the operators: [h, w] pairs, numpy broadcasting, and channels-last data.
import { backend } from '../runtime/runtime.js';
import { QW_CONV2D_SHAPE, structValues } from '../runtime/abi.js';
import { numelOf, show } from './check.js';
import { contiguousStrides, copyStrided } from './qtensor.js';

/** A number or [h, w] of integers >= min, as [h, w]. */
export function pair(v, name, where, min) {
  const p = typeof v === 'number' ? [v, v] : v;
  if (!Array.isArray(p) || p.length !== 2 || !p.every((e) => Number.isInteger(e) && e >= min)) {
    throw new RangeError(`${where}: ${name} must be an integer >= ${min} or [h, w], got ${show(v)}`);
  }
  return [p[0], p[1]];
}

/**
 * A 2-D convolution's geometry from its weight shape [outC, inC / groups, kH, kW] and options
 * { stride, padding (number, [h, w] or [top, left, bottom, right]), dilation, groups }: what the int8
 * and float convolutions share (src/include/qwasm.h qw_conv2d_shape).
 */
export function convGeometry(weightShape, { stride = 1, padding = 0, dilation = 1, groups = 1 }, where) {
  const [outC, inCg, kh, kw] = weightShape;
  if (!Number.isInteger(groups) || groups < 1 || outC % groups !== 0) {
    throw new RangeError(`${where}: groups must be a positive integer dividing outChannels ${outC}, got ${show(groups)}`);
  }
  let pads;
  if (Array.isArray(padding) && padding.length === 4) {
    if (!padding.every((e) => Number.isInteger(e) && e >= 0)) throw new RangeError(`${where}: padding must be non-negative integers, got ${show(padding)}`);
    pads = padding.slice(); // [top, left, bottom, right]
  } else {
    const [h, w] = pair(padding, 'padding', where, 0);
    pads = [h, w, h, w];
  }
  return {
    inC: inCg * groups, outC, kh, kw, groups,
    stride: pair(stride, 'stride', where, 1),
    dilation: pair(dilation, 'dilation', where, 1),
    padding: pads,
  };
}

/** The int32 values of the qw_conv2d_shape of a geometry for an input [batch, inC, inH, inW]. */
export function convShapeStruct(g, batch, inH, inW) {
  const [pt, pl, pb, pr] = g.padding;
  return structValues(QW_CONV2D_SHAPE, {
    batch, in_h: inH, in_w: inW, in_c: g.inC, out_c: g.outC, kernel_h: g.kh, kernel_w: g.kw, stride_h: g.stride[0],
    stride_w: g.stride[1], pad_top: pt, pad_left: pl, pad_bottom: pb, pad_right: pr, dilation_h: g.dilation[0],
    dilation_w: g.dilation[1], groups: g.groups,
  });
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
export function withChannelsLast(r, where, fn) {
  if (isChannelsLast(r)) return fn(r.ptr);
  const b = backend();
  const [n, c, h, w] = r.shape;
  const nhwc = [n, h, w, c];
  return b.withBuffers([Math.max(1, numelOf(r.shape)) * r.dtype.bytes], (tmp) => {
    const srcStrides = [r.strides[0], r.strides[2], r.strides[3], r.strides[1]];
    copyStrided(b, where, r.dtype.bytes, nhwc, r.ptr, srcStrides, tmp, contiguousStrides(nhwc));
    return fn(tmp);
  });
}

/** Strides of an NCHW shape stored channels-last. */
export function channelsLastStrides([, c, h, w]) {
  return [h * w * c, 1, w * c, c];
}
