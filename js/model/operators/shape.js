// Operators that move, select or relabel data without arithmetic: Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Split, Slice, Gather, Expand, Pad, Shape, Size, ConstantOfShape, Range, Constant, Identity.
// Reshapes are views (zero copy) of wasm, 8-bit and host data alike. The others copy bytes: float32 results and
// anything read from wasm memory are written to wasm memory (strided copies in C where the data is there), the
// integer tensors of shape arithmetic stay on the host. A node whose inputs are constants or shapes runs once
// per input shape (js/model/shape-plans.js); `shapeFrom` names the inputs whose values decide the output shape.
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { backend } from '../../runtime/runtime.js';
import { contiguousStrides, copyStrided } from '../../tensor/qtensor.js';
import { ARRAY, BYTES, dimsOf, dtypeOf, host, numel, ptrOf, qvalue, toHost, viewValue, wasmValue } from '../values.js';
import { MAX_RANK, isPermutation } from '../../tensor/check.js';
import { transposeHost } from './float.js';
import { A } from './attributes.js';
import { axisOf, broadcastStrides, produce, withWasm } from './kernel-args.js';

const where = (node) => `${node.opType} node "${node.name}"`;

/** The values of an integer (shape) input as JS numbers. */
const ints = (v) => Array.from(toHost(v).data, Number);

/** The dimensions a shape tensor's elements give (Expand, ConstantOfShape and its fold at load): whole numbers >= 0. */
export function checkShapeDims(data, label) {
  const dims = Array.from(data, Number);
  const bad = dims.findIndex((d) => !Number.isSafeInteger(d) || d < 0);
  if (bad >= 0) throw new ModelFormatError(`${label}: shape [${data.join(',')}] has an invalid dimension ${data[bad]} (${dims[bad] < 0 ? 'negative' : 'too large'})`);
  return dims;
}

function reshapeLike(x, dims, label) {
  if (!(dims.length <= MAX_RANK) || numel(dims) !== numel(dimsOf(x))) {
    throw new ModelFormatError(`${label}: shape [${dims}] does not hold the ${numel(dimsOf(x))} elements of [${dimsOf(x)}]`);
  }
  if (x.kind === 'q') return [qvalue(x.q.reshape(dims))];
  if (x.kind === 'wasm') return [viewValue(x, dims)];
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

/** Gather copies rows of a constant table of at least this many bytes in wasm (the table uploaded once); smaller
 * ones, such as a shape's dimensions, stay on the host. */
const GATHER_UPLOAD_BYTES = 256;

/** 8-bit QTensor values are read as host data by the copying operators. */
const plain = (v) => (v.kind === 'q' ? toHost(v) : v);

/** Where a copying operator's result lives: wasm memory for float32 or data read from there, the host otherwise. */
function newValue(inputs, dtype, dims) {
  return dtype === 'float32' || inputs.some((v) => v.kind === 'wasm') ? wasmValue(dtype, dims) : host(dtype, dims, new ARRAY[dtype](numel(dims)));
}

/** The bytes of a host or wasm value's elements (a view: take it after the last wasm allocation). */
function bytesOf(v) {
  const n = numel(v.dims) * BYTES[v.dtype];
  return v.kind === 'wasm' ? backend().u8(ptrOf(v), n) : new Uint8Array(v.data.buffer, v.data.byteOffset, n);
}

/**
 * y[index] = x[offset + index . srcStrides] over `shape` (element strides >= 0), y contiguous from dstOffset with
 * dstStrides: a C strided copy when both are in wasm memory, a JS walk otherwise.
 */
function stridedCopy(x, srcOffset, srcStrides, y, dstOffset, dstStrides, shape, w) {
  const size = BYTES[x.dtype];
  if (numel(shape) === 0) return;
  if (x.kind === 'wasm' && y.kind === 'wasm' && srcStrides.every((s) => s >= 0)) {
    copyStrided(backend(), w, size, shape, ptrOf(x) + srcOffset * size, srcStrides, ptrOf(y) + dstOffset * size, dstStrides);
    return;
  }
  const src = x.kind === 'wasm' ? backend().view(ARRAY[x.dtype], ptrOf(x), numel(x.dims)) : x.data;
  const dst = y.kind === 'wasm' ? backend().view(ARRAY[y.dtype], ptrOf(y), numel(y.dims)) : y.data;
  const rank = shape.length;
  if (rank === 0) {
    dst[dstOffset] = src[srcOffset];
    return;
  }
  // Runs along the innermost dimension: one block copy where both layouts are contiguous there, one fill where the
  // source repeats a value (a broadcast), else element by element. (Element by element, an int64 mask expanded to
  // 128 x 128 took 180 us: every read of a BigInt64Array makes a BigInt.)
  const len = shape[rank - 1], ss = srcStrides[rank - 1], ds = dstStrides[rank - 1];
  const index = new Array(rank - 1).fill(0);
  let s = srcOffset;
  let d = dstOffset;
  for (let i = numel(shape) / len; i > 0; i--) {
    if (ds === 1 && ss === 1) dst.set(src.subarray(s, s + len), d);
    else if (ds === 1 && ss === 0) dst.fill(src[s], d, d + len);
    else for (let j = 0; j < len; j++) dst[d + j * ds] = src[s + j * ss];
    for (let k = rank - 2; k >= 0; k--) {
      s += srcStrides[k];
      d += dstStrides[k];
      if (++index[k] < shape[k]) break;
      s -= srcStrides[k] * shape[k];
      d -= dstStrides[k] * shape[k];
      index[k] = 0;
    }
  }
}

/** Squeeze / Unsqueeze: axes from the input (opset 13) or the attribute (earlier). */
function squeezeLike(unsqueeze) {
  return {
    inputs: ['data', 'axes?: int64 rank 1'],
    attributes: { axes: A.ints(undefined) },
    shapeFrom: [1],
    run(ctx, [x, axesV], attrs) {
      const w = where(ctx.node);
      const dims = dimsOf(x);
      const axes = axesV ? ints(axesV) : attrs.axes ?? [];
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

/** ONNX Slice's [start, end) and step along one axis of size dim, clamped as the spec says. */
function sliceRange(start, end, step, dim) {
  let s = start < 0 ? start + dim : start;
  let e = end < 0 ? end + dim : end;
  if (step > 0) {
    s = Math.min(Math.max(s, 0), dim);
    e = Math.min(Math.max(e, 0), dim);
  } else {
    s = Math.min(Math.max(s, 0), dim - 1);
    e = Math.min(Math.max(e, -1), dim - 1);
  }
  return { start: s, size: Math.max(0, Math.ceil((e - s) / step)) };
}

export const SHAPE_OPERATORS = {
  Reshape: {
    inputs: ['data', 'shape: int64 rank 1'],
    attributes: { allowzero: A.flag(0) },
    shapeFrom: [1],
    run(ctx, [x, shapeV], attrs) {
      const w = where(ctx.node);
      return reshapeLike(x, resolveReshape(dimsOf(x), ints(shapeV), attrs.allowzero, w), w);
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

  /** Transpose: wasm data by a C strided copy, host and 8-bit data on the host. */
  Transpose: {
    inputs: ['data'],
    attributes: { perm: A.ints(undefined) },
    run(ctx, [x], attrs) {
      const w = where(ctx.node);
      const dims = dimsOf(x);
      const perm = attrs.perm ?? [...Array(dims.length).keys()].reverse();
      if (!isPermutation(perm, dims.length)) {
        throw new ModelFormatError(`${w}: perm [${perm}] is not a permutation of the ${dims.length} dimensions of [${dims}]`);
      }
      if (x.kind !== 'wasm') return [transposeHost(toHost(x), perm)];
      const strides = contiguousStrides(dims);
      const out = wasmValue(x.dtype, perm.map((p) => dims[p]));
      stridedCopy(x, 0, perm.map((p) => strides[p]), out, 0, contiguousStrides(out.dims), out.dims, w);
      return [out];
    },
  },

  Concat: {
    inputs: ['inputs', '...'],
    attributes: { axis: A.int(0) },
    run(ctx, inputs, attrs) {
      const w = where(ctx.node);
      const xs = inputs.map(plain);
      const type = xs[0].dtype;
      const rank = xs[0].dims.length;
      const axis = axisOf(attrs.axis, rank, w);
      xs.forEach((x, i) => {
        if (x.dtype !== type) throw new ModelFormatError(`${w}: input ${i} is ${x.dtype}, input 0 is ${type}`);
        if (x.dims.length !== rank || x.dims.some((d, k) => k !== axis && d !== xs[0].dims[k])) {
          throw new ModelFormatError(`${w}: input ${i} has shape [${x.dims}], which does not match [${xs[0].dims}] outside axis ${axis}`);
        }
      });
      const dims = xs[0].dims.slice();
      dims[axis] = xs.reduce((s, x) => s + x.dims[axis], 0);
      const out = newValue(xs, type, dims);
      const outer = numel(dims.slice(0, axis));
      const size = BYTES[type];
      const dst = bytesOf(out);
      const rowBytes = numel(dims.slice(axis)) * size;
      let at = 0;
      for (const x of xs) {
        const src = bytesOf(x);
        const run = numel(x.dims.slice(axis)) * size;
        for (let o = 0; o < outer; o++) dst.set(src.subarray(o * run, (o + 1) * run), o * rowBytes + at);
        at += run;
      }
      return [out];
    },
  },

  /** Split (opset 13: sizes as an optional int64 input; opset < 13: the `split` attribute; 18: num_outputs; else equal parts). */
  Split: {
    inputs: ['input', 'split?: int64 rank 1'],
    outputs: ['outputs', '...'],
    attributes: { axis: A.int(0), split: A.ints(undefined), num_outputs: A.int(undefined) },
    shapeFrom: [1],
    run(ctx, [xIn, sizesIn], attrs) {
      const w = where(ctx.node);
      const x = plain(xIn);
      const axis = axisOf(attrs.axis, x.dims.length, w);
      const parts = ctx.node.outputs.length;
      const dim = x.dims[axis];
      let sizes = sizesIn ? ints(sizesIn) : attrs.split ? attrs.split.slice() : null;
      if (!sizes) {
        if (attrs.num_outputs !== undefined) {
          const chunk = Math.ceil(dim / attrs.num_outputs);
          sizes = Array.from({ length: parts }, (_, i) => Math.max(0, Math.min(chunk, dim - i * chunk)));
        } else {
          if (dim % parts !== 0) throw new UnsupportedError(`${w}: ${dim} does not split into ${parts} equal parts`);
          sizes = new Array(parts).fill(dim / parts);
        }
      }
      if (sizes.length !== parts || sizes.some((s) => !Number.isInteger(s) || s < 0) || sizes.reduce((a, b) => a + b, 0) !== dim) {
        throw new ModelFormatError(`${w}: split sizes [${sizes}] do not divide dimension ${axis} (${dim}) into ${parts} outputs`);
      }
      const outer = numel(x.dims.slice(0, axis));
      const inner = numel(x.dims.slice(axis + 1)) * BYTES[x.dtype];
      const outs = sizes.map((s) => {
        const dims = x.dims.slice();
        dims[axis] = s;
        return newValue([x], x.dtype, dims);
      });
      const src = bytesOf(x);
      let start = 0;
      sizes.forEach((s, i) => {
        const dst = bytesOf(outs[i]);
        for (let o = 0; o < outer; o++) dst.set(src.subarray((o * dim + start) * inner, (o * dim + start + s) * inner), o * s * inner);
        start += s;
      });
      return outs;
    },
  },

  /** Slice (opset 10 on: starts / ends / axes / steps as inputs; earlier: attributes). */
  Slice: {
    inputs: ['data', 'starts?: int32|int64 rank 1', 'ends?: int32|int64 rank 1', 'axes?: int32|int64 rank 1', 'steps?: int32|int64 rank 1'],
    attributes: { starts: A.ints(undefined), ends: A.ints(undefined), axes: A.ints(undefined) },
    shapeFrom: [1, 2, 3, 4],
    run(ctx, [xIn, startsV, endsV, axesV, stepsV], attrs) {
      const w = where(ctx.node);
      const x = plain(xIn);
      const dims = x.dims;
      const starts = startsV ? ints(startsV) : attrs.starts;
      const ends = endsV ? ints(endsV) : attrs.ends;
      if (!starts || !ends || starts.length !== ends.length) throw new ModelFormatError(`${w}: starts and ends must be given, of one length`);
      const axes = (axesV ? ints(axesV) : attrs.axes ?? starts.map((_, i) => i)).map((a) => axisOf(a, dims.length, w));
      const steps = stepsV ? ints(stepsV) : starts.map(() => 1);
      if (axes.length !== starts.length || steps.length !== starts.length || new Set(axes).size !== axes.length) throw new ModelFormatError(`${w}: starts, ends, axes and steps must have one length and distinct axes`);
      const begin = dims.map(() => 0);
      const step = dims.map(() => 1);
      const outDims = dims.slice();
      axes.forEach((a, i) => {
        if (steps[i] === 0) throw new ModelFormatError(`${w}: step 0 along axis ${a}`);
        const r = sliceRange(starts[i], ends[i], steps[i], dims[a]);
        begin[a] = r.start;
        step[a] = steps[i];
        outDims[a] = r.size;
      });
      const strides = contiguousStrides(dims);
      const out = newValue([x], x.dtype, outDims);
      const offset = begin.reduce((s, b, k) => s + b * strides[k], 0);
      stridedCopy(x, offset, strides.map((s, k) => s * step[k]), out, 0, contiguousStrides(outDims), outDims, w);
      return [out];
    },
  },

  /** Gather along an axis: an embedding lookup writes rows of the (host) table straight into wasm memory. */
  Gather: {
    inputs: ['data', 'indices: int32|int64'],
    attributes: { axis: A.int(0) },
    run(ctx, [dataIn, indices], attrs) {
      const w = where(ctx.node);
      const d = plain(dataIn);
      const idx = toHost(indices);
      const a = axisOf(attrs.axis, d.dims.length, w);
      const outer = numel(d.dims.slice(0, a));
      const size = d.dims[a];
      const inner = numel(d.dims.slice(a + 1)) * BYTES[d.dtype];
      const n = idx.data.length;
      // every index checked before the output is allocated (an error leaves nothing behind)
      const rows = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const v = Number(idx.data[i]);
        const j = v < 0 ? v + size : v;
        if (!(j >= 0 && j < size)) throw new RangeError(`${w}: index ${idx.data[i]} is out of range for axis ${a} of size ${size}`);
        rows[i] = j;
      }
      const outDims = [...d.dims.slice(0, a), ...idx.dims, ...d.dims.slice(a + 1)];
      if (d.kind === 'wasm' || (ctx.isConstant(ctx.node.inputs[0]) && numel(d.dims) * BYTES[d.dtype] >= GATHER_UPLOAD_BYTES)) {
        // rows copied in wasm (qw_gather), a constant table uploaded once: an embedding lookup's 128 rows took 66 us
        // as typed-array copies out of the host table (a subarray per row), and its consumer then uploaded them
        return withWasm(ctx, [d], (wd) => [produce(d.dtype, outDims, (py) => backend().withBuffers([4 * n], (pi) => {
          backend().i32(pi, n).set(rows);
          backend().call(w, 'qw_gather', outer, size, inner, ptrOf(wd), n, pi, py);
        }))]);
      }
      const out = newValue([d], d.dtype, outDims);
      const src = bytesOf(d);
      const dst = bytesOf(out);
      for (let i = 0; i < n; i++) {
        const j = rows[i];
        for (let o = 0; o < outer; o++) dst.set(src.subarray((o * size + j) * inner, (o * size + j + 1) * inner), (o * n + i) * inner);
      }
      return [out];
    },
  },

  /** Expand: numpy broadcast of the input to `shape` (both ways). */
  Expand: {
    inputs: ['input', 'shape: int64 rank 1'],
    shapeFrom: [1],
    run(ctx, [xIn, shapeV]) {
      const w = where(ctx.node);
      const x = plain(xIn);
      const { dims, strides } = broadcastStrides([x.dims, checkShapeDims(toHost(shapeV).data, w)], w);
      const out = newValue([x], x.dtype, dims);
      stridedCopy(x, 0, strides[0], out, 0, contiguousStrides(dims), dims, w);
      return [out];
    },
  },

  /** Pad: constant (any dtype), edge and reflect modes; pads (and constant_value, axes) as inputs from opset 11. */
  Pad: {
    inputs: ['data', 'pads?: int64 rank 1', 'constant_value?: =data', 'axes?: int32|int64 rank 1'],
    attributes: { mode: A.string('constant', ['constant', 'reflect', 'edge', 'wrap']), pads: A.ints(undefined), value: A.float(0) },
    shapeFrom: [1, 3],
    run(ctx, [xIn, padsV, valueV, axesV], attrs) {
      const w = where(ctx.node);
      const x = plain(xIn);
      const rank = x.dims.length;
      const given = padsV ? ints(padsV) : attrs.pads;
      if (!given) throw new ModelFormatError(`${w}: pads are required`);
      const axes = axesV ? ints(axesV).map((a) => axisOf(a, rank, w)) : [...Array(rank).keys()];
      if (given.length !== 2 * axes.length) throw new ModelFormatError(`${w}: ${given.length} pads for ${axes.length} axes`);
      const before = new Array(rank).fill(0);
      const after = new Array(rank).fill(0);
      axes.forEach((a, i) => {
        before[a] = given[i];
        after[a] = given[i + axes.length];
      });
      if (before.some((p) => p < 0) || after.some((p) => p < 0)) throw new UnsupportedError(`${w}: negative pads (cropping) are not supported`);
      const dims = x.dims.map((d, k) => d + before[k] + after[k]);
      const mode = attrs.mode;
      if (mode === 'wrap') throw new UnsupportedError(`${w}: mode 'wrap' is not supported`);
      if (mode !== 'constant' && x.dims.some((d, k) => d === 0 && (before[k] || after[k]))) throw new ModelFormatError(`${w}: mode '${mode}' cannot pad an empty axis`);
      const out = newValue([x], x.dtype, dims);
      const outStrides = contiguousStrides(dims);
      if (mode === 'constant') {
        const value = valueV ? toHost(valueV).data[0] : x.dtype === 'int64' ? BigInt(Math.trunc(attrs.value)) : attrs.value;
        (out.kind === 'wasm' ? backend().view(ARRAY[out.dtype], ptrOf(out), numel(dims)) : out.data).fill(value);
        const offset = before.reduce((s, b, k) => s + b * outStrides[k], 0);
        stridedCopy(x, 0, contiguousStrides(x.dims), out, offset, outStrides, x.dims, w);
        return [out];
      }
      // edge / reflect: each output element reads one input element (index mapped per axis)
      const src = toHost(x).data;
      const dst = out.kind === 'wasm' ? backend().view(ARRAY[out.dtype], ptrOf(out), numel(dims)) : out.data;
      const inStrides = contiguousStrides(x.dims);
      const map = (i, k) => {
        const n = x.dims[k];
        let j = i - before[k];
        if (mode === 'edge') return Math.min(Math.max(j, 0), n - 1);
        if (n === 1) return 0;
        const period = 2 * (n - 1);
        j = ((j % period) + period) % period;
        return j < n ? j : period - j;
      };
      const index = new Array(rank).fill(0);
      for (let o = 0; o < dst.length; o++) {
        let s = 0;
        for (let k = 0; k < rank; k++) s += map(index[k], k) * inStrides[k];
        dst[o] = src[s];
        for (let k = rank - 1; k >= 0; k--) {
          if (++index[k] < dims[k]) break;
          index[k] = 0;
        }
      }
      return [out];
    },
  },

  /** Shape (opset 15: start / end select a range of the dimensions). */
  /** Shape (start / end from opset 15); qwasm_perm (the transformer pass's): the dimensions of the input transposed by it. */
  Shape: {
    inputs: ['data'],
    attributes: { start: A.int(0), end: A.int(undefined), qwasm_perm: A.ints(undefined) },
    readsShapeOnly: true,
    run(ctx, [x], attrs) {
      let dims = dimsOf(x);
      if (attrs.qwasm_perm) {
        if (!isPermutation(attrs.qwasm_perm) || attrs.qwasm_perm.length !== dims.length) throw new ModelFormatError(`${where(ctx.node)}: qwasm_perm [${attrs.qwasm_perm}] is not a permutation of ${dims.length} dimensions`);
        dims = attrs.qwasm_perm.map((p) => dims[p]);
      }
      const clamp = (v) => Math.min(Math.max(v < 0 ? v + dims.length : v, 0), dims.length);
      const picked = dims.slice(clamp(attrs.start), attrs.end === undefined ? dims.length : clamp(attrs.end));
      return [host('int64', [picked.length], BigInt64Array.from(picked, BigInt))];
    },
  },

  Size: {
    inputs: ['data'],
    readsShapeOnly: true,
    run(ctx, [x]) {
      return [host('int64', [], BigInt64Array.of(BigInt(numel(dimsOf(x)))))];
    },
  },

  /** ConstantOfShape: a tensor of the given shape filled with `value` (float32 0 by default). */
  ConstantOfShape: {
    inputs: ['input: int64 rank 1'],
    attributes: { value: A.tensor() },
    shapeFrom: [0],
    run(ctx, [shapeV], attrs) {
      const w = where(ctx.node);
      const dims = checkShapeDims(toHost(shapeV).data, w);
      const value = attrs.value ?? { dtype: 'float32', data: Float32Array.of(0) };
      if (!ARRAY[value.dtype] || value.data.length !== 1) throw new UnsupportedError(`${w}: value must be one element of a supported type`);
      if (numel(dims) > 2 ** 28) throw new RangeError(`${w}: shape [${dims}] is too large`);
      return [host(value.dtype, dims, new ARRAY[value.dtype](numel(dims)).fill(value.data[0]))];
    },
  },

  /** Range as onnxruntime's CPU kernel: n = ceil((limit - start) / delta), each value the previous one plus delta, in the type. */
  Range: {
    inputs: ['start: float32|int32|int64 scalar', 'limit: =start scalar', 'delta: =start scalar'],
    shapeFrom: [0, 1, 2],
    run(ctx, [s, l, d]) {
      const w = where(ctx.node);
      const type = dtypeOf(s);
      if (dtypeOf(l) !== type || dtypeOf(d) !== type) throw new ModelFormatError(`${w}: start, limit and delta must have one type`);
      if (![s, l, d].every((v) => numel(dimsOf(v)) === 1)) throw new ModelFormatError(`${w}: start, limit and delta must be scalars`);
      const [start, limit, delta] = [s, l, d].map((v) => toHost(v).data[0]);
      const Arr = ARRAY[type];
      if (!['float32', 'int32', 'int64'].includes(type)) throw new UnsupportedError(`${w}: Range on ${type} is not supported`);
      if (Number(delta) === 0) throw new ModelFormatError(`${w}: delta is 0`);
      const span = type === 'float32' ? Math.fround(limit - start) : Number(limit - start);
      const n = Math.max(0, Math.ceil(span / Number(delta)));
      if (n > 2 ** 28) throw new RangeError(`${w}: ${n} elements are too many`);
      const out = new Arr(n);
      let v = start;
      for (let i = 0; i < n; i++) {
        out[i] = v;
        v = type === 'float32' ? Math.fround(v + delta) : type === 'int32' ? (v + delta) | 0 : BigInt.asIntN(64, v + delta);
      }
      return [host(type, [n], out)];
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
      if (x.kind === 'q') return [qvalue(x.q.clone())];
      return [x.kind === 'wasm' ? viewValue(x, x.dims) : x];
    },
  },
};
