// Operators that move, select or relabel data without arithmetic: Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Split, Gather, Cast, Shape, Constant, Identity. 8-bit values stay in wasm memory where the
// operator is a view (reshapes); the others work on host data.
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { MAX_RANK, checkBytes } from '../../tensor/check.js';
import { ARRAY, dimsOf, host, numel, qvalue, toHost, toInt64 } from '../values.js';
import { transposeHost } from './float.js';
import { A } from './attributes.js';

const where = (node) => `${node.opType} node "${node.name}"`;

/** ONNX TensorProto.DataType -> the element types qwasm casts to. */
const CAST_TO = Object.freeze({ 1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 9: 'bool' });

function reshapeLike(x, dims, label) {
  if (!(dims.length <= MAX_RANK) || numel(dims) !== numel(dimsOf(x))) {
    throw new ModelFormatError(`${label}: shape [${dims}] does not hold the ${numel(dimsOf(x))} elements of [${dimsOf(x)}]`);
  }
  if (x.kind === 'q') return [qvalue(x.q.reshape(dims))];
  return [host(x.dtype, dims, x.data)];
}

/** ONNX Reshape's target: 0 copies the input's dimension (unless allowzero), one -1 is inferred. */
function resolveReshape(dims, shape, allowZero, label) {
  const bad = () => new ModelFormatError(`${label}: cannot reshape [${dims}] to [${shape}]`);
  if (shape.some((d) => !Number.isSafeInteger(d) || d < -1) || shape.filter((d) => d === -1).length > 1) throw bad();
  const out = shape.map((d, i) => {
    if (d !== 0 || allowZero) return d;
    if (i >= dims.length) throw bad();
    return dims[i];
  });
  const known = out.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
  if (!out.includes(-1)) return out;
  if (known === 0 || numel(dims) % known !== 0) throw bad();
  return out.map((d) => (d === -1 ? numel(dims) / known : d));
}

/** Normalized, distinct axes of a `rank`-dimensional tensor (ModelFormatError otherwise). */
function axesOf(axes, rank, label) {
  const norm = axes.map((a) => axisOf(a, rank, label));
  if (new Set(norm).size !== norm.length) throw new ModelFormatError(`${label}: axes [${axes}] repeat an axis`);
  return norm;
}

/** A normalized axis of a `rank`-dimensional input (ModelFormatError when out of range). */
function axisOf(axis, rank, label, extra = 0) {
  const a = axis < 0 ? axis + rank + extra : axis;
  if (!(a >= 0 && a < rank + extra)) throw new ModelFormatError(`${label}: axis ${axis} is out of range for a ${rank}-dimensional input`);
  return a;
}

/** Squeeze / Unsqueeze: axes from the input (opset 13) or the attribute (earlier). */
function squeezeLike(unsqueeze) {
  return {
    inputs: ['data', 'axes?: int64 rank 1'],
    attributes: { axes: A.ints(undefined) },
    run(ctx, [x, axesV], attrs) {
      const dims = dimsOf(x);
      const axes = axesV ? Array.from(toHost(axesV).data, Number) : attrs.axes ?? [];
      const w = where(ctx.node);
      let out;
      if (unsqueeze) {
        const rank = dims.length + axes.length;
        const norm = axesOf(axes, rank, w);
        out = [];
        let j = 0;
        for (let k = 0; k < rank; k++) out.push(norm.includes(k) ? 1 : dims[j++]);
      } else {
        const norm = axesOf(axes, dims.length, w);
        if (norm.some((k) => dims[k] !== 1)) throw new ModelFormatError(`${w}: cannot squeeze axes [${axes}] of shape [${dims}]: they must have size 1`);
        out = dims.filter((d, k) => (norm.length ? !norm.includes(k) : d !== 1));
      }
      return reshapeLike(x, out, w);
    },
  };
}

export const SHAPE_OPERATORS = {
  Reshape: {
    inputs: ['data', 'shape: int64 rank 1'],
    attributes: { allowzero: A.int(0) },
    run(ctx, [x, shapeV], attrs) {
      const w = where(ctx.node);
      const shape = Array.from(toHost(shapeV).data, Number);
      return reshapeLike(x, resolveReshape(dimsOf(x), shape, attrs.allowzero, w), w);
    },
  },

  Flatten: {
    inputs: ['input'],
    attributes: { axis: A.int(1) },
    run(ctx, [x], attrs) {
      const dims = dimsOf(x);
      const w = where(ctx.node);
      const a = axisOf(attrs.axis, dims.length, w, 1);
      return reshapeLike(x, [numel(dims.slice(0, a)), numel(dims.slice(a))], w);
    },
  },

  Squeeze: squeezeLike(false),
  Unsqueeze: squeezeLike(true),

  Transpose: {
    inputs: ['data'],
    attributes: { perm: A.ints(undefined) },
    run(ctx, [x], attrs) {
      const h = toHost(x);
      const perm = attrs.perm ?? [...Array(h.dims.length).keys()].reverse();
      if (perm.length !== h.dims.length || perm.some((p, i) => !(p >= 0 && p < perm.length) || perm.indexOf(p) !== i)) {
        throw new ModelFormatError(`${where(ctx.node)}: perm [${perm}] is not a permutation of the ${h.dims.length} dimensions of [${h.dims}]`);
      }
      return [transposeHost(h, perm)];
    },
  },

  Concat: {
    inputs: ['inputs', '...'],
    attributes: { axis: A.int(0) },
    run(ctx, inputs, attrs) {
      const w = where(ctx.node);
      const hs = inputs.map(toHost);
      const rank = hs[0].dims.length;
      const axis = axisOf(attrs.axis, rank, w);
      hs.forEach((h, i) => {
        if (h.dtype !== hs[0].dtype) throw new ModelFormatError(`${w}: input ${i} is ${h.dtype}, input 0 is ${hs[0].dtype}`);
        if (h.dims.length !== rank || h.dims.some((d, k) => k !== axis && d !== hs[0].dims[k])) {
          throw new ModelFormatError(`${w}: input ${i} has shape [${h.dims}], which does not match [${hs[0].dims}] outside axis ${axis}`);
        }
      });
      const outer = numel(hs[0].dims.slice(0, axis));
      const dims = hs[0].dims.slice();
      dims[axis] = hs.reduce((s, h) => s + h.dims[axis], 0);
      const out = new ARRAY[hs[0].dtype](numel(dims));
      let at = 0;
      for (let o = 0; o < outer; o++) {
        for (const h of hs) {
          const run = numel(h.dims.slice(axis));
          out.set(h.data.subarray(o * run, (o + 1) * run), at);
          at += run;
        }
      }
      return [host(hs[0].dtype, dims, out)];
    },
  },

  /** Split (opset 13: sizes as an optional int64 input; opset < 13: the `split` attribute; else equal parts). */
  Split: {
    inputs: ['input', 'split?: int64 rank 1'],
    outputs: ['outputs', '...'],
    attributes: { axis: A.int(0), split: A.ints(undefined) },
    run(ctx, [x, sizesIn], attrs) {
      const w = where(ctx.node);
      const h = toHost(x);
      const axis = axisOf(attrs.axis, h.dims.length, w);
      const parts = ctx.node.outputs.length;
      const dim = h.dims[axis];
      let sizes = sizesIn ? Array.from(toHost(sizesIn).data, Number) : attrs.split ? attrs.split.slice() : null;
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
    },
  },

  /** Gather: the 8-bit lookup-table pattern of the exporter (a uint8 table indexed by a tensor), and ordinary gathers. */
  Gather: {
    inputs: ['data', 'indices: int32|int64'],
    attributes: { axis: A.int(0) },
    run(ctx, [data, indices], attrs) {
      const w = where(ctx.node);
      const d = toHost(data);
      const idx = toHost(indices);
      const a = axisOf(attrs.axis, d.dims.length, w);
      const outer = numel(d.dims.slice(0, a));
      const size = d.dims[a];
      const inner = numel(d.dims.slice(a + 1));
      const n = idx.data.length;
      checkBytes(outer * n * inner, 8, w, 'the output');
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
    },
  },

  Cast: {
    inputs: ['input'],
    attributes: { to: A.int(undefined), saturate: A.int(1) },
    prepare(attrs, node, opset, label) {
      if (attrs.to === undefined) throw new ModelFormatError(`${label}: attribute to is required`);
      if (!CAST_TO[attrs.to]) throw new UnsupportedError(`${label}: cast to type ${attrs.to} is not supported`);
      return { ...attrs, type: CAST_TO[attrs.to] };
    },
    run(ctx, [x], attrs) {
      const h = toHost(x);
      const to = attrs.type;
      const data = to === 'int64' ? BigInt64Array.from(h.data, toInt64) : ARRAY[to].from(h.data, (v) => Number(v));
      return [host(to, h.dims, data)];
    },
  },

  Shape: {
    inputs: ['data'],
    run(ctx, [x]) {
      return [host('int64', [dimsOf(x).length], BigInt64Array.from(dimsOf(x), BigInt))];
    },
  },

  Constant: {
    inputs: [],
    attributes: { value: A.tensor() },
    prepare(attrs, node, opset, label) {
      if (!attrs.value) throw new UnsupportedError(`${label}: only the 'value' form of Constant is supported`);
      return attrs;
    },
    run(ctx, inputs, attrs) {
      return [host(attrs.value.dtype, attrs.value.dims, attrs.value.data)];
    },
  },

  Identity: {
    inputs: ['input'],
    run(ctx, [x]) {
      return [x.kind === 'q' ? qvalue(x.q.clone()) : x];
    },
  },
};
