// Reductions and scans on the host: ReduceMean / Sum / Max / Min / L2 / Prod and CumSum. In transformer files they
// mostly compute small things (a LayerNorm written out in ReduceMean is fused into LayerNormalization at load,
// passes/transformer.js, as onnxruntime does); float32 sums run in the order of onnxruntime's CPU kernels (one
// element after the other, rounded to float32 at each step: Eigen's unvectorized reduction in the wasm build).
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { ARRAY, dtypeOf, host, numel, toHost } from '../values.js';
import { A } from './attributes.js';
import { axisOf } from './kernel-args.js';

const where = (node) => `${node.opType} node "${node.name}"`;
const f = Math.fround;

/** One reduction: start value, step, finish (count = the number of reduced elements). */
const REDUCERS = {
  ReduceSum: { init: 0, step: (a, v) => f(a + v), finish: (a) => a },
  ReduceMean: { init: 0, step: (a, v) => f(a + v), finish: (a, count) => f(a / count) },
  ReduceMax: { init: -Infinity, step: (a, v) => (v > a || Number.isNaN(v) ? v : a), finish: (a) => a },
  ReduceMin: { init: Infinity, step: (a, v) => (v < a || Number.isNaN(v) ? v : a), finish: (a) => a },
  ReduceProd: { init: 1, step: (a, v) => f(a * v), finish: (a) => a },
  ReduceL2: { init: 0, step: (a, v) => f(a + f(v * v)), finish: (a) => f(Math.sqrt(a)) },
  ReduceSumSquare: { init: 0, step: (a, v) => f(a + f(v * v)), finish: (a) => a },
};

const INTEGER_REDUCERS = {
  ReduceSum: (a, v) => a + v,
  ReduceMax: (a, v) => (v > a ? v : a),
  ReduceMin: (a, v) => (v < a ? v : a),
  ReduceProd: (a, v) => a * v,
};

function reduce(opType) {
  const r = REDUCERS[opType];
  return {
    inputs: ['data', 'axes?'],
    attributes: { axes: A.ints(undefined), keepdims: A.int(1), noop_with_empty_axes: A.int(0) },
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
      if (integer && !istep) throw new UnsupportedError(`${w}: ${opType} on ${h.dtype} is not supported`);
      if (!ARRAY[h.dtype] || h.dtype === 'bool') throw new ModelFormatError(`${w}: cannot reduce ${h.dtype} data`);
      const out = new ARRAY[h.dtype](n);
      // out index of every input element, in input order: each output accumulates its elements in that order
      const acc = integer ? Array.from({ length: n }, () => null) : new Array(n).fill(r.init);
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
        if (integer) acc[o] = acc[o] === null ? v : istep(acc[o], v);
        else acc[o] = r.step(acc[o], v);
        for (let k = rank - 1; k >= 0; k--) {
          o += strides[k];
          if (++index[k] < h.dims[k]) break;
          o -= strides[k] * h.dims[k];
          index[k] = 0;
        }
      }
      for (let i = 0; i < n; i++) {
        if (integer) {
          if (acc[i] === null) throw new ModelFormatError(`${w}: reducing an empty axis of integers`);
          out[i] = acc[i];
        } else {
          out[i] = r.finish(acc[i], count);
        }
      }
      const dims = attrs.keepdims ? outDims : h.dims.filter((d, k) => !reduced.has(k));
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
    inputs: ['x', 'axis'],
    attributes: { exclusive: A.int(0), reverse: A.int(0) },
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
