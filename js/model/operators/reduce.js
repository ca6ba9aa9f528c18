// Reductions and scans on the host: ReduceMean / Sum / Max / Min / L2 / SumSquare / Prod and CumSum. In transformer
// files they mostly compute small things (a LayerNorm written out in ReduceMean is fused into LayerNormalization
// at load, passes/transformer.js, as onnxruntime does). float32 sums follow onnxruntime's CPU kernels
// (providers/cpu/reduction/reduction_ops.cc): the input shape is reduced to its "fast shape" (size-1 dimensions
// dropped, neighbours of the same kind merged). For Sum and Mean, a reduce-keep-reduce shape sums each inner block
// first (Eigen's sum, from its first element, one element after the other: the wasm build does not vectorize it)
// and adds the block sums to 0 in order, a keep-reduce-keep shape is a one-row MLAS GEMV against ones; every other
// shape (and every other reduction) takes each output's elements in input order from the first. Mean divides the
// sum by the count, L2 takes the square root of the sum of squares.
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { ARRAY, dtypeOf, host, numel, toHost } from '../values.js';
import { A } from './attributes.js';
import { axisOf } from './kernel-args.js';

const where = (node) => `${node.opType} node "${node.name}"`;
const f = Math.fround;

/** One float reduction: map each element, combine two partial results, finish (count = the elements reduced). */
const REDUCERS = {
  ReduceSum: { map: (v) => v, add: (a, b) => f(a + b), finish: (a) => a },
  ReduceMean: { map: (v) => v, add: (a, b) => f(a + b), finish: (a, count) => f(a / count) },
  ReduceMax: { map: (v) => v, add: (a, b) => (b > a || Number.isNaN(b) ? b : a), finish: (a) => a },
  ReduceMin: { map: (v) => v, add: (a, b) => (b < a || Number.isNaN(b) ? b : a), finish: (a) => a },
  ReduceProd: { map: (v) => v, add: (a, b) => f(a * b), finish: (a) => a },
  ReduceL2: { map: (v) => f(v * v), add: (a, b) => f(a + b), finish: (a) => f(Math.sqrt(a)) },
  ReduceSumSquare: { map: (v) => f(v * v), add: (a, b) => f(a + b), finish: (a) => a },
};

const INTEGER_REDUCERS = {
  ReduceSum: (a, v) => a + v,
  ReduceMax: (a, v) => (v > a ? v : a),
  ReduceMin: (a, v) => (v < a ? v : a),
  ReduceProd: (a, v) => a * v,
};

/** onnxruntime's fast shape: [{ size, reduced }] with size-1 dimensions dropped and same-kind neighbours merged. */
function fastShape(dims, reduced) {
  const out = [];
  dims.forEach((size, k) => {
    if (size === 1) return;
    const r = reduced.has(k);
    if (out.length && out.at(-1).reduced === r) out.at(-1).size *= size;
    else out.push({ size, reduced: r });
  });
  return out;
}

/** Sums for the reduce-keep-reduce shape [d0 (R), d1 (K), d2 (R)]: per output, 0 plus the d0 inner blocks' sums in order. */
function reduceRKR(data, [d0, d1, d2], r, out, count) {
  const block = (at) => {
    let s = r.map(data[at]);
    for (let i = 1; i < d2; i++) s = r.add(s, r.map(data[at + i]));
    return s;
  };
  for (let j = 0; j < d1; j++) {
    let s = 0;
    for (let i = 0; i < d0; i++) s = r.add(s, block(i * d1 * d2 + j * d2));
    out[j] = r.finish(s, count);
  }
}

/**
 * Sums for the keep-reduce-keep shape [d0 (K), d1 (R), d2 (K)]: onnxruntime multiplies a row of ones by each
 * [d1, d2] block (math::MatMul, MLAS's one-row GEMV): per column from the first row, then four rows at a time
 * added one by one, except the last d2 % 4 columns, which add the four summed first, ((a + b) + c) + d.
 */
function reduceKRK(data, [d0, d1, d2], r, out, count) {
  const vectorColumns = d2 - (d2 % 4);
  for (let o = 0; o < d0; o++) {
    const base = o * d1 * d2;
    for (let j = 0; j < d2; j++) {
      const x = (i) => data[base + i * d2 + j];
      let s = x(0);
      let i = 1;
      for (; d1 - i >= 4; i += 4) {
        s = j < vectorColumns ? f(f(f(f(s + x(i)) + x(i + 1)) + x(i + 2)) + x(i + 3)) : f(s + f(f(f(x(i) + x(i + 1)) + x(i + 2)) + x(i + 3)));
      }
      for (; i < d1; i++) s = f(s + x(i));
      out[o * d2 + j] = r.finish(s, count);
    }
  }
}

function reduce(opType) {
  const r = REDUCERS[opType];
  return {
    inputs: ['data: float32|int32|int64', 'axes?: int64 rank 1'],
    attributes: { axes: A.ints(undefined), keepdims: A.flag(1), noop_with_empty_axes: A.flag(0) },
    shapeFrom: [1],
    run(ctx, [x, axesV], attrs) {
      const w = where(ctx.node);
      const h = toHost(x);
      const rank = h.dims.length;
      let axes = axesV ? Array.from(toHost(axesV).data, Number) : attrs.axes ?? [];
      if (axes.length === 0) {
        if (attrs.noop_with_empty_axes) return [host(h.dtype, h.dims.slice(), h.data.slice())];
        axes = [...Array(rank).keys()];
      }
      const reduced = new Set(axes.map((a) => axisOf(a, rank, w)));
      const outDims = h.dims.map((d, k) => (reduced.has(k) ? 1 : d));
      const count = h.dims.reduce((p, d, k) => (reduced.has(k) ? p * d : p), 1);
      const n = numel(outDims);
      const integer = h.dtype !== 'float32';
      const istep = INTEGER_REDUCERS[opType];
      if (!ARRAY[h.dtype] || h.dtype === 'bool') throw new ModelFormatError(`${w}: cannot reduce ${h.dtype} data`);
      if (integer && !istep) throw new UnsupportedError(`${w}: ${opType} on ${h.dtype} is not supported`);
      if (count === 0) throw new UnsupportedError(`${w}: reducing an empty axis is not supported`);
      const out = new ARRAY[h.dtype](n);
      const dims = attrs.keepdims ? outDims : h.dims.filter((d, k) => !reduced.has(k));
      const fast = fastShape(h.dims, reduced);
      const sumLike = opType === 'ReduceSum' || opType === 'ReduceMean';
      if (!integer && sumLike && fast.length === 3) {
        (fast[0].reduced ? reduceRKR : reduceKRK)(h.data, fast.map((d) => d.size), r, out, count);
        return [host(h.dtype, dims, out)];
      }
      // every other shape: each output's elements in input order, from the first
      const acc = new Array(n).fill(undefined);
      const strides = [];
      let s = 1;
      for (let k = rank - 1; k >= 0; k--) {
        strides[k] = reduced.has(k) ? 0 : s;
        if (!reduced.has(k)) s *= h.dims[k];
      }
      const index = new Array(rank).fill(0);
      let o = 0;
      for (let i = 0; i < h.data.length; i++) {
        const v = h.data[i];
        if (integer) acc[o] = acc[o] === undefined ? v : istep(acc[o], v);
        else acc[o] = acc[o] === undefined ? r.map(v) : r.add(acc[o], r.map(v));
        for (let k = rank - 1; k >= 0; k--) {
          o += strides[k];
          if (++index[k] < h.dims[k]) break;
          o -= strides[k] * h.dims[k];
          index[k] = 0;
        }
      }
      for (let i = 0; i < n; i++) out[i] = integer ? acc[i] : r.finish(acc[i], count);
      return [host(h.dtype, dims, out)];
    },
  };
}

export const REDUCE_OPERATORS = {
  ReduceMean: reduce('ReduceMean'),
  ReduceSum: reduce('ReduceSum'),
  ReduceMax: reduce('ReduceMax'),
  ReduceMin: reduce('ReduceMin'),
  ReduceProd: reduce('ReduceProd'),
  ReduceL2: reduce('ReduceL2'),
  ReduceSumSquare: reduce('ReduceSumSquare'),

  /** CumSum along one axis (exclusive: each output excludes its own element; reverse: from the end), in order. */
  CumSum: {
    inputs: ['x: float32|int32|int64', 'axis: int32|int64 scalar'],
    attributes: { exclusive: A.flag(0), reverse: A.flag(0) },
    run(ctx, [x, axisV], attrs) {
      const w = where(ctx.node);
      const h = toHost(x);
      const type = dtypeOf(x);
      if (!['float32', 'int32', 'int64'].includes(type)) throw new UnsupportedError(`${w}: CumSum on ${type} is not supported`);
      const axis = axisOf(Number(toHost(axisV).data[0]), h.dims.length, w);
      const len = h.dims[axis];
      const inner = numel(h.dims.slice(axis + 1));
      const outer = numel(h.dims.slice(0, axis));
      const out = new ARRAY[type](h.data.length);
      const add = type === 'float32' ? (a, b) => f(a + b) : type === 'int32' ? (a, b) => (a + b) | 0 : (a, b) => BigInt.asIntN(64, a + b);
      const zero = type === 'int64' ? 0n : 0;
      for (let o = 0; o < outer; o++) {
        for (let i = 0; i < inner; i++) {
          let sum = zero;
          for (let t = 0; t < len; t++) {
            const j = attrs.reverse ? len - 1 - t : t;
            const at = (o * len + j) * inner + i;
            if (attrs.exclusive) {
              out[at] = sum;
              sum = add(sum, h.data[at]);
            } else {
              sum = add(sum, h.data[at]);
              out[at] = sum;
            }
          }
        }
      }
      return [host(type, h.dims.slice(), out)];
    },
  },
};
