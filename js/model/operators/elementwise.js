// Elementwise operators with numpy broadcasting, as onnxruntime-web computes them: float32 in wasm memory on the
// transformer kernels (qw_f32_binary, qw_f32_unary, qw_where, qw_cast: one IEEE operation per element, MLAS's erf /
// tanh / exp, docs/transformer-ops.md), integer and bool tensors (shape arithmetic, masks) on the host with
// ONNX Runtime's integer semantics (wrapping two's complement, division truncating toward zero).
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { QW_F32_BINARY_OP, QW_F32_UNARY_OP, QW_TENSOR_TYPE } from '../../runtime/abi.js';
import { backend } from '../../runtime/runtime.js';
import { ARRAY, BYTES, dimsOf, dtypeOf, host, numel, ptrOf, toHost, viewValue } from '../values.js';
import { A } from './attributes.js';
import { broadcastArgs, broadcastStrides, produce, withWasm } from './kernel-args.js';

const where = (node) => `${node.opType} node "${node.name}"`;

/** ONNX TensorProto.DataType -> element type, for Cast's `to`. */
export const ONNX_TYPES = Object.freeze({ 1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 9: 'bool' });
const TYPE_CODE = Object.freeze({ float32: QW_TENSOR_TYPE.QW_TYPE_FLOAT32, uint8: QW_TENSOR_TYPE.QW_TYPE_UINT8, int8: QW_TENSOR_TYPE.QW_TYPE_INT8, int32: QW_TENSOR_TYPE.QW_TYPE_INT32, int64: QW_TENSOR_TYPE.QW_TYPE_INT64, bool: QW_TENSOR_TYPE.QW_TYPE_BOOL });

/**
 * out[i] = fn(inputs at i) over the numpy broadcast of the inputs' shapes, on host data: the integer and bool
 * tensors of shape arithmetic and masks.
 */
export function hostBroadcast(values, outType, fn, w) {
  const hs = values.map(toHost);
  const { dims, strides } = broadcastStrides(hs.map((h) => h.dims), w);
  const n = numel(dims);
  const out = new ARRAY[outType](n);
  const rank = dims.length;
  const index = new Array(rank).fill(0);
  const offsets = new Array(hs.length).fill(0);
  const args = new Array(hs.length);
  for (let i = 0; i < n; i++) {
    for (let o = 0; o < hs.length; o++) args[o] = hs[o].data[offsets[o]];
    out[i] = fn(...args);
    for (let k = rank - 1; k >= 0; k--) {
      for (let o = 0; o < hs.length; o++) offsets[o] += strides[o][k];
      if (++index[k] < dims[k]) break;
      for (let o = 0; o < hs.length; o++) offsets[o] -= strides[o][k] * dims[k];
      index[k] = 0;
    }
  }
  return host(outType, dims, out);
}

const INT_BINARY = {
  Add: (a, b) => a + b,
  Sub: (a, b) => a - b,
  Mul: (a, b) => a * b,
  Div: (a, b, w) => {
    if (b === 0 || b === 0n) throw new RangeError(`${w}: integer division by zero`);
    return a / b; // BigInt division truncates toward zero, as C++'s
  },
};

/** Wraps an integer result to the element type (two's complement, as ONNX Runtime's C++ arithmetic). */
const WRAP = {
  int64: (v) => BigInt.asIntN(64, v),
  int32: (v) => BigInt.asIntN(32, v),
  int8: (v) => BigInt.asIntN(8, v),
  uint8: (v) => BigInt.asUintN(8, v),
};

/** Add / Sub / Mul / Div / Pow: float32 in wasm (qw_f32_binary), integers on the host. */
function binary(opType) {
  const code = QW_F32_BINARY_OP[`QW_F32_${opType.toUpperCase()}`];
  return {
    inputs: opType === 'Pow' ? ['X: float32 ~int32 ~int64', 'Y: float32 ~int32 ~int64'] : ['A: float32|int32|int64|uint8|int8', 'B: =A'],
    run(ctx, [a, b]) {
      const w = where(ctx.node);
      const type = dtypeOf(a);
      if (opType !== 'Pow' && dtypeOf(b) !== type) throw new ModelFormatError(`${w}: A is ${type} and B is ${dtypeOf(b)}; ${opType} needs one type`);
      if (type === 'float32') {
        if (dtypeOf(b) !== 'float32') throw new UnsupportedError(`${w}: a ${dtypeOf(b)} exponent for a float32 base is not supported`);
        const args = ctx.memo([a, b], () => broadcastArgs([dimsOf(a), dimsOf(b)], w));
        return withWasm(ctx, [a, b], (wa, wb) => [produce('float32', args.dims, (y) =>
          backend().call(w, 'qw_f32_binary', code, args.rank, args.ptrs[0], ptrOf(wa), args.ptrs[1], ptrOf(wb), args.ptrs[2], y))]);
      }
      const wrap = WRAP[type];
      if (!wrap || opType === 'Pow') throw new UnsupportedError(`${w}: ${opType} on ${type} is not supported`);
      const fn = INT_BINARY[opType];
      const big = type === 'int64';
      return [hostBroadcast([a, b], type, (x, y) => {
        const r = wrap(fn(BigInt(x), BigInt(y), w));
        return big ? r : Number(r);
      }, w)];
    },
  };
}

/** Equal / Less / Greater / ...: a bool tensor, on the host (masks and shape tests). */
function compare(fn) {
  return {
    inputs: ['A: float32|int32|int64|uint8|int8|bool', 'B: =A'],
    run(ctx, [a, b]) {
      const w = where(ctx.node);
      if (dtypeOf(a) !== dtypeOf(b)) throw new ModelFormatError(`${w}: A is ${dtypeOf(a)} and B is ${dtypeOf(b)}; ${ctx.node.opType} needs one type`);
      return [hostBroadcast([a, b], 'bool', (x, y) => (fn(x, y) ? 1 : 0), w)];
    },
  };
}

function logical(fn) {
  return {
    inputs: ['A: bool', 'B: bool'],
    run(ctx, [a, b]) {
      const w = where(ctx.node);
      if (dtypeOf(a) !== 'bool' || dtypeOf(b) !== 'bool') throw new ModelFormatError(`${w}: inputs must be bool, got ${dtypeOf(a)} and ${dtypeOf(b)}`);
      return [hostBroadcast([a, b], 'bool', (x, y) => (fn(x !== 0, y !== 0) ? 1 : 0), w)];
    },
  };
}

/** Erf / Tanh / Exp / Sqrt on float32: MLAS's approximations in wasm (qw_f32_unary). */
function unary(opType) {
  const code = QW_F32_UNARY_OP[`QW_F32_${opType.toUpperCase()}`];
  return {
    inputs: ['input: float32 ~int32 ~int64 ~uint8 ~int8'],
    run(ctx, [x]) {
      const w = where(ctx.node);
      if (dtypeOf(x) !== 'float32') throw new UnsupportedError(`${w}: ${opType} on ${dtypeOf(x)} is not supported (float32 only)`);
      return withWasm(ctx, [x], (wx) => [produce('float32', dimsOf(x), (y) => backend().call(w, 'qw_f32_unary', code, numel(dimsOf(x)), ptrOf(wx), y))]);
    },
  };
}

/** Host conversions between integer and bool types (exact: wrapping, != 0). */
function castHost(h, to) {
  const from = h.dtype;
  if (to === 'bool') return ARRAY.bool.from(h.data, (v) => (v !== 0 && v !== 0n ? 1 : 0));
  if (from === 'bool') return to === 'int64' ? BigInt64Array.from(h.data, (v) => BigInt(v)) : ARRAY[to].from(h.data);
  const wrap = WRAP[to];
  return to === 'int64' ? BigInt64Array.from(h.data, (v) => BigInt(v)) : ARRAY[to].from(h.data, (v) => Number(wrap(BigInt(v))));
}

export const ELEMENTWISE_OPERATORS = {
  Add: binary('Add'),
  Sub: binary('Sub'),
  Mul: binary('Mul'),
  Div: binary('Div'),
  /** Pow with a float exponent: onnxruntime's PowImpl (x * x, x * x * x for a constant 2 or 3, powf otherwise). */
  Pow: binary('Pow'),

  Erf: unary('Erf'),
  Tanh: unary('Tanh'),
  Exp: unary('Exp'),
  Sqrt: unary('Sqrt'), // IEEE square root in wasm: the bits of every other implementation

  Equal: compare((x, y) => x === y),
  Less: compare((x, y) => x < y),
  Greater: compare((x, y) => x > y),
  LessOrEqual: compare((x, y) => x <= y),
  GreaterOrEqual: compare((x, y) => x >= y),
  And: logical((x, y) => x && y),
  Or: logical((x, y) => x || y),
  Xor: logical((x, y) => x !== y),
  Not: {
    inputs: ['X: bool'],
    run(ctx, [x]) {
      const w = where(ctx.node);
      if (dtypeOf(x) !== 'bool') throw new ModelFormatError(`${w}: input must be bool, got ${dtypeOf(x)}`);
      const h = toHost(x);
      return [host('bool', h.dims.slice(), ARRAY.bool.from(h.data, (v) => (v ? 0 : 1)))];
    },
  },

  /** Where: selection with broadcasting; in wasm (qw_where) when the data is there or float32, else on the host. */
  Where: {
    inputs: ['condition: bool', 'X', 'Y: =X'],
    run(ctx, [c, x, y]) {
      const w = where(ctx.node);
      if (dtypeOf(c) !== 'bool') throw new ModelFormatError(`${w}: condition must be bool, got ${dtypeOf(c)}`);
      const type = dtypeOf(x);
      if (dtypeOf(y) !== type) throw new ModelFormatError(`${w}: X is ${type} and Y is ${dtypeOf(y)}`);
      if (type !== 'float32' && ![c, x, y].some((v) => v.kind === 'wasm')) {
        return [hostBroadcast([c, x, y], type, (k, p, q) => (k ? p : q), w)];
      }
      const args = ctx.memo([c, x, y], () => broadcastArgs([dimsOf(c), dimsOf(x), dimsOf(y)], w));
      return withWasm(ctx, [c, x, y], (wc, wx, wy) => [produce(type, args.dims, (out) =>
        backend().call(w, 'qw_where', BYTES[type], args.rank, args.ptrs[0], ptrOf(wc), args.ptrs[1], ptrOf(wx), args.ptrs[2], ptrOf(wy), args.ptrs[3], out))]);
    },
  },

  /**
   * Cast: conversions involving float32 (or data already in wasm memory) run qw_cast (onnxruntime-web's: float to
   * integer truncates toward zero, saturating; integer to float rounds to nearest even); integer and bool
   * conversions of host data are exact on the host.
   */
  Cast: {
    inputs: ['input'],
    attributes: { to: A.int(undefined), saturate: A.flag(1) },
    prepare(attrs, node, opset, label) {
      if (attrs.to === undefined) throw new ModelFormatError(`${label}: attribute to is required`);
      if (!ONNX_TYPES[attrs.to]) throw new UnsupportedError(`${label}: cast to type ${attrs.to} is not supported (float32, uint8, int8, int32, int64, bool)`);
      return { ...attrs, type: ONNX_TYPES[attrs.to] };
    },
    run(ctx, [x], attrs) {
      const w = where(ctx.node);
      const from = dtypeOf(x);
      const to = attrs.type;
      if (!TYPE_CODE[from]) throw new UnsupportedError(`${w}: casting ${from} is not supported`);
      if (x.kind === 'q') x = toHost(x);
      if (from === to) return [x.kind === 'wasm' ? viewValue(x, x.dims) : x];
      if (x.kind === 'host' && from !== 'float32' && to !== 'float32') {
        const h = toHost(x);
        return [host(to, h.dims.slice(), castHost(h, to))];
      }
      const n = numel(dimsOf(x));
      return withWasm(ctx, [x], (wx) => [produce(to, dimsOf(x), (y) => backend().call(w, 'qw_cast', n, ptrOf(wx), TYPE_CODE[from], y, TYPE_CODE[to]))]);
    },
  },
};
