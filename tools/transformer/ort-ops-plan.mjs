// The cases of tests/fixtures/ort_ops (single ONNX / com.microsoft nodes) as calls of qwasm's C exports, for the
// C test's fixture: planCase turns a node's attributes and shapes into the exports' arguments, as the model
// loader's operators do (js/model/operators/: broadcast strides, softmax's [outer, axis, inner], layer norm rows,
// one 2-D product per batch of a MatMul, weights packed once for the dynamic int8 matmuls).
// tools/transformer/ort_ops_c_fixture.mjs writes the plans into generated/ort_ops_cases.h, which
// tests/c/test_transformer_ops.c replays against the native and wasm builds. (The JS test runs the same cases
// through the model loader: tests/js/ort-ops.test.js.)
//
// A plan: { tensors: [{ dtype, dims, data? }] (the case's inputs, then its outputs), steps: [{ kind, ints,
// floats, inputs: [tensor index or -1], output: tensor index }] }. Each kind is one C export (or a packing
// export and its product) with the arguments in ints / floats in the order the export takes them.

import { batchOffsets, broadcastStrides } from '../../js/model/operators/kernel-args.js';
import { contiguousStrides } from '../../js/tensor/qtensor.js';

const SIZES = { float32: 4, int64: 8, int32: 4, bool: 1, uint8: 1, int8: 1 };
const ONNX_TYPE = { float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9 };
const UNARY = { Exp: 0, Erf: 1, Tanh: 2, Sqrt: 3 };
const BINARY = { Add: 0, Sub: 1, Mul: 2, Div: 3, Pow: 4 };

/** Step kinds; the numbers are the C test's (tests/c/test_transformer_ops.c). */
export const KIND = Object.freeze({
  UNARY: 0, GELU: 1, SOFTMAX: 2, LAYER_NORM: 3, BINARY: 4, WHERE: 5, CAST: 6, MATMUL: 7, DYNAMIC_MATMUL: 8,
  MATMUL_INTEGER_TO_FLOAT: 9, DYNAMIC_QUANTIZE: 10,
});

const product = (dims) => dims.reduce((a, b) => a * b, 1);
const WHERE = 'ort-ops plan';

/**
 * MatMul / FusedMatMul / Gemm: one 2-D product per batch (onnxruntime's MatMulComputeHelper offsets). Gemm's C
 * (input ic, broadcast over [m, n]) is written into y times beta first and the product accumulated onto it,
 * as onnxruntime does (GemmBroadcastBias, then MLAS with beta 1).
 */
function matmulSteps(a, b, ia, ib, out, { alpha = 1, transB = 0, bPrepacked = 0, c = null, ic = -1, beta = 1 }) {
  const aDims = a.dims.length === 1 ? [1, a.dims[0]] : a.dims;
  const bDims = b.dims.length === 1 ? [b.dims[0], 1] : b.dims;
  const [m, k] = aDims.slice(-2);
  const n = transB ? bDims.at(-2) : bDims.at(-1);
  const { dims: batch } = broadcastStrides([aDims.slice(0, -2), bDims.slice(0, -2)], WHERE);
  const steps = [];
  const operands = [{ dims: aDims.slice(0, -2), strides: contiguousStrides(aDims) }, { dims: bDims.slice(0, -2), strides: contiguousStrides(bDims) },
    { dims: batch, strides: contiguousStrides([...batch, m, n]) }];
  for (const [offA, offB, offY] of batchOffsets(batch, operands)) {
    // ints: m, n, k, lda, ldb, transpose_b, b_prepacked, ldy, element offsets of a, b, y, then C's row and column
    // strides (when there is a C); floats: alpha, beta
    if (b.dims.length === 1) {
      // A 1-D B: onnxruntime computes each output row as its own 1 x K by K x 1 product.
      for (let r = 0; r < m; r++) {
        steps.push({ kind: KIND.MATMUL, ints: [1, 1, k, k, 1, 0, 0, 1, offA + r * k, offB, offY + r], floats: [alpha, 0], inputs: [ia, ib], output: out });
      }
    } else {
      const withC = c && beta !== 0;
      const cStrides = withC ? broadcastStrides([c.dims, [m, n]], WHERE).strides[0] : [];
      steps.push({
        kind: KIND.MATMUL, ints: [m, n, k, k, transB ? k : n, transB, bPrepacked, n, offA, offB, offY, ...cStrides],
        floats: [alpha, withC ? beta : 0], inputs: withC ? [ia, ib, ic] : [ia, ib], output: out,
      });
    }
  }
  return steps;
}

/** The plan of one case (see the header comment). */
export function planCase(c) {
  const tensors = [...c.inputs.map((i) => (i.absent ? null : i)), ...c.outputs.map((o) => ({ dtype: o.dtype, dims: o.dims }))];
  const index = (name) => c.inputs.findIndex((i) => i.name === name && !i.absent);
  const at = (i) => (c.inputs[i] && !c.inputs[i].absent ? i : -1);
  const out = c.inputs.length;
  const x = c.inputs[0];
  const attrs = c.attrs;
  const n = product(x.dims);
  const step = (kind, ints, inputs, floats = [], output = out) => ({ kind, ints, floats, inputs, output });
  let steps;
  switch (c.op) {
    case 'Exp': case 'Erf': case 'Tanh': case 'Sqrt':
      steps = [step(KIND.UNARY, [UNARY[c.op], n], [0])];
      break;
    case 'Gelu': case 'FastGelu': case 'BiasGelu': {
      const tanh = c.op === 'FastGelu' || attrs.approximate === 'tanh';
      const cols = at(1) >= 0 ? product(c.inputs[1].dims) : n;
      steps = [step(KIND.GELU, [tanh ? 1 : 0, n / cols, cols], [0, at(1)])];
      break;
    }
    case 'Softmax': {
      const rank = x.dims.length;
      const axis = ((attrs.axis ?? (c.opset >= 13 ? -1 : 1)) + rank) % rank;
      const outer = product(x.dims.slice(0, axis));
      const len = c.opset >= 13 ? x.dims[axis] : product(x.dims.slice(axis));
      const inner = c.opset >= 13 ? product(x.dims.slice(axis + 1)) : 1;
      steps = [step(KIND.SOFTMAX, [outer, len, inner], [0])];
      break;
    }
    case 'LayerNormalization': case 'SkipLayerNormalization': {
      const skipForm = c.op === 'SkipLayerNormalization';
      const rank = x.dims.length;
      const axis = skipForm ? rank - 1 : ((attrs.axis ?? -1) + rank) % rank;
      const cols = product(x.dims.slice(axis));
      // inputs: x, skip, bias, gamma, beta
      const inputs = skipForm ? [0, 1, at(4), 2, at(3)] : [0, -1, -1, 1, at(2)];
      const skipRows = skipForm ? product(c.inputs[1].dims) / cols : 0;
      steps = [step(KIND.LAYER_NORM, [n / cols, cols, skipRows], inputs, [attrs.epsilon ?? 1e-5])];
      break;
    }
    case 'Add': case 'Sub': case 'Mul': case 'Div': case 'Pow': {
      const { dims, strides } = broadcastStrides([c.inputs[0].dims, c.inputs[1].dims], WHERE);
      steps = [step(KIND.BINARY, [BINARY[c.op], dims.length, ...dims, ...strides[0], ...strides[1]], [0, 1])];
      break;
    }
    case 'Where': {
      const { dims, strides } = broadcastStrides(c.inputs.map((i) => i.dims), WHERE);
      steps = [step(KIND.WHERE, [SIZES[c.inputs[1].dtype], dims.length, ...dims, ...strides.flat()], [0, 1, 2])];
      break;
    }
    case 'Cast':
      steps = [step(KIND.CAST, [n, ONNX_TYPE[x.dtype], attrs.to], [0])];
      break;
    case 'MatMul':
      steps = matmulSteps(c.inputs[0], c.inputs[1], 0, 1, out, { bPrepacked: c.inputs[1].initializer && c.inputs[1].dims.length === 2 ? 1 : 0 });
      break;
    case 'FusedMatMul':
      steps = matmulSteps(c.inputs[0], c.inputs[1], 0, 1, out, { alpha: attrs.alpha ?? 1, transB: attrs.transB ?? 0 });
      break;
    case 'Gemm': case 'FusedGemm': {
      const b = c.inputs[1];
      steps = matmulSteps(c.inputs[0], b, 0, 1, out, {
        alpha: attrs.alpha ?? 1, beta: attrs.beta ?? 1, transB: attrs.transB ?? 0, bPrepacked: b.initializer ? 1 : 0,
        c: at(2) >= 0 ? c.inputs[2] : null, ic: at(2),
      });
      if (c.op === 'FusedGemm') {
        if (attrs.activation !== 'Tanh') throw new Error(`FusedGemm activation ${attrs.activation} has no plan`);
        steps.push(step(KIND.UNARY, [UNARY.Tanh, product(c.outputs[0].dims)], [out])); // in place on y
      }
      break;
    }
    case 'DynamicQuantizeMatMul': case 'MatMulIntegerToFloat': {
      const w = c.inputs[index('b')];
      const [k, cols] = w.dims;
      const wZero = index('b_zero_point') >= 0 ? Number(c.inputs[index('b_zero_point')].data[0]) : 0;
      // ints: m, n, k, weight dtype (qw_dtype), weight zero point[, a zero point]
      const ints = [n / k, cols, k, w.dtype === 'int8' ? 1 : 0, wZero];
      steps = c.op === 'DynamicQuantizeMatMul'
        ? [step(KIND.DYNAMIC_MATMUL, ints, [0, index('b'), index('b_scale'), index('bias')])]
        : [step(KIND.MATMUL_INTEGER_TO_FLOAT, [...ints, index('a_zero_point') >= 0 ? Number(c.inputs[index('a_zero_point')].data[0]) : 0],
          [0, index('b'), index('b_scale'), index('bias')], [c.inputs[index('a_scale')].data[0]])];
      break;
    }
    case 'DynamicQuantizeLinear':
      steps = [step(KIND.DYNAMIC_QUANTIZE, [n], [0], [], out)];
      break;
    default:
      throw new Error(`no qwasm plan for ${c.op}`);
  }
  return { tensors, steps };
}
