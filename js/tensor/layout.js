// Shape helpers shared by the operators: [h, w] pairs, numpy broadcasting, and channels-last data.
import { backend } from '../runtime/runtime.js';
import { QW_CONV2D_SHAPE, structValues } from '../runtime/abi.js';
import { numelOf, show } from './check.js';
import { contiguousStrides, copyStrided } from './qtensor.js';

/** The largest value of a geometry field: the C core takes them as int32. */
const INT32_MAX = 2 ** 31 - 1;

/** A number or [h, w] of integers in [min, 2^31 - 1], as [h, w]. */
export function pair(v, name, where, min) {
  const p = typeof v === 'number' ? [v, v] : v;
  if (!Array.isArray(p) || p.length !== 2 || !p.every((e) => Number.isInteger(e) && e >= min && e <= INT32_MAX)) {
    throw new RangeError(`${where}: ${name} must be an integer in [${min}, 2^31 - 1] or [h, w] of them, got ${show(v)}`);
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
  if (!Number.isInteger(groups) || groups < 1 || groups > INT32_MAX || outC % groups !== 0) {
    throw new RangeError(`${where}: groups must be a positive integer dividing outChannels ${outC}, got ${show(groups)}`);
  }
  let pads;
  if (Array.isArray(padding) && padding.length === 4) {
    if (!padding.every((e) => Number.isInteger(e) && e >= 0 && e <= INT32_MAX)) throw new RangeError(`${where}: padding must be integers in [0, 2^31 - 1], got ${show(padding)}`);
    pads = padding.slice(); // [top, left, bottom, right]
  } else {
    const [h, w] = pair(padding, 'padding', where, 0);
    pads = [h, w, h, w];
  }
  const g = {
    inC: inCg * groups, outC, kh, kw, groups,
    stride: pair(stride, 'stride', where, 1),
    dilation: pair(dilation, 'dilation', where, 1),
    padding: pads,
  };
  // the C core's coordinates are int32: the padded kernel window must fit (qw_conv2d_output_size)
  if ((kh - 1) * g.dilation[0] + 1 + pads[0] + pads[2] > INT32_MAX || (kw - 1) * g.dilation[1] + 1 + pads[1] + pads[3] > INT32_MAX) {
    throw new RangeError(`${where}: padding ${show(pads)} and the kernel pass 2^31 - 1`);
  }
  return g;
}

/**
 * [outH, outW] of a convolution geometry over an input of inH x inW: floor((in + pads - dilated kernel) / stride) + 1
 * per axis. A RangeError naming `where` when the kernel does not fit the padded input, or the padded input passes
 * the C core's int32 coordinates (qw_conv2d_output_size).
 */
export function convOutputSize(g, inH, inW, where) {
  const axes = [[inH, g.kh, g.padding[0], g.padding[2], g.stride[0], g.dilation[0]], [inW, g.kw, g.padding[1], g.padding[3], g.stride[1], g.dilation[1]]];
  const fits = axes.every(([size, k, p0, p1, , d]) => size > 0 && (k - 1) * d + 1 <= size + p0 + p1);
  if (!fits) throw new RangeError(`${where}: the kernel ${g.kh}x${g.kw} (dilation ${g.dilation}) does not fit the padded input ${inH}x${inW}`);
  return axes.map(([size, k, p0, p1, s, d]) => {
    const padded = size + p0 + p1;
    if (padded > 2 ** 31 - 1) throw new RangeError(`${where}: the padded input (${size} + padding ${p0} + ${p1}) is larger than 2^31 - 1`);
    return Math.floor((padded - ((k - 1) * d + 1)) / s) + 1;
  });
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
