// Elementwise quantized operators: add, mul, cat, and the unary ops (relu, relu6, hardtanh / clamp,
// hardswish, sigmoid, leakyRelu). Each computes the form its semantics names (semantics.js); exact formulas:
// docs/quantization.md.
import { backend } from '../runtime/runtime.js';
import { QW_ROUNDING, QW_STATUS, QW_UNARY_OP, statusError } from '../runtime/abi.js';
import { semanticsOf } from '../semantics.js';
import { INT32_MAX, INT32_MIN, f32, quantizeFbgemmScalar, quantizeOnnx, quantizeTorch } from '../reference.js';
import { DTYPES } from '../tensor/dtype.js';
import { checkDim, numelOf, show } from '../tensor/check.js';
import { contiguousStrides, copyStrided, newStorage, perTensor, tensorPtr, wrapStorage } from '../tensor/qtensor.js';
import { broadcastShape } from '../tensor/layout.js';
import { mlasLogistic } from './mlas.js';
import {
  activationOperand, broadcastIndices, matchesRecord, newTensor, operandRecord, outputQParams, produce, raw, sameShape,
  withContiguous, withIndexLists,
} from './op.js';

/** Elements PyTorch's AVX2 kernels process per vector block (2 x 32 bytes); the rest is a scalar tail. */
const TORCH_VECTOR_BLOCK = 64;

/**
 * What add and mul check and resolve alike: both operands (same 8-bit dtype, per tensor), the output qparams, the
 * form of `family` in the call's semantics (ONNX Runtime's forms have no fused relu), the broadcast shape.
 */
function binaryCall(a, b, options, family, where) {
  const ar = activationOperand(a, where, 'a');
  const br = activationOperand(b, where, 'b');
  if (ar.dtype !== br.dtype) throw new TypeError(`${where}: a is ${ar.dtype.name} but b is ${br.dtype.name}; they must match`);
  const out = outputQParams(options, ar.dtype, where);
  const form = semanticsOf(options, where, 'pytorch-qnnpack').form(family, options.mode);
  if (form === 'onnx' && out.relu) {
    throw new TypeError(`${where}: relu is not part of the 'onnx' ${family} (QLinear${family === 'add' ? 'Add' : 'Mul'}); clamp afterwards`);
  }
  const shape = broadcastShape(ar.shape, br.shape, where);
  return { ar, br, out, form, shape, n: numelOf(shape) };
}

/**
 * The strides of a and b when both are stored in one dense order other than row-major (the
 * channels-last activations convolutions return): an elementwise op on same-shaped operands then
 * runs over the storage as it is and writes its output in that order too, instead of copying both
 * inputs to row-major (and the next convolution copying its output back). null otherwise.
 */
function sharedDenseOrder(ar, br) {
  if (!sameShape(ar.shape, br.shape)) return null;
  const dims = [];
  for (let k = 0; k < ar.shape.length; k++) {
    if (ar.shape[k] === 1) continue;
    if (ar.strides[k] !== br.strides[k]) return null;
    dims.push(k);
  }
  dims.sort((x, y) => ar.strides[x] - ar.strides[y]);
  let expected = 1;
  for (const k of dims) {
    if (ar.strides[k] !== expected) return null;
    expected *= ar.shape[k];
  }
  const rowMajor = contiguousStrides(ar.shape);
  return dims.every((k) => ar.strides[k] === rowMajor[k]) ? null : ar.strides.slice();
}

/**
 * Runs fn(pa, pb, y) for a binary op: the output allocated in the operands' shared storage order (or row-major),
 * the operands' data as stored (shared order) or as row-major copies.
 */
function binary(a, b, ar, br, shape, out, where, fn) {
  const order = sharedDenseOrder(ar, br);
  const data = order ? (t, fn2) => fn2(raw(t, where).ptr) : (t, fn2) => withContiguous(t, where, fn2);
  return produce(newTensor(shape, ar.dtype, out.scale, out.zeroPoint, order ?? undefined, where), (y) =>
    data(a, (pa) => data(b, (pb) => fn(pa, pb, raw(y, where).ptr))));
}

/**
 * Quantized add with numpy broadcasting. options: { scale, zeroPoint, relu = false, semantics = 'pytorch-qnnpack',
 * mode }. The forms (semantics.js `add`): 'qnnpack' (torch.ops.quantized.add / add_relu on PyTorch's qnnpack engine:
 * same-shaped quint8 / qint8 operands take its fixed-point kernels, QNNPACK / XNNPACK, broadcasting ones its float
 * kernel); 'float' (PyTorch 1.13's x86 / fbgemm / onednn kernel: dequantize, add, quantize, reproduced with its AVX2
 * vector blocks); 'fbgemm' (that kernel in PyTorch 2.x's x86 builds, whose scalar tail adds the zero point before
 * rounding); 'onnx' (com.microsoft QLinearAdd as ONNX Runtime computes it:
 * (a_s (a - za) + b_s (b - zb)) / y_s, clamped, then the zero point added and rounded half to even; no relu).
 */
export function add(a, b, options) {
  const where = 'add';
  const { ar, br, out, form, shape, n } = binaryCall(a, b, options, 'add', where);
  const be = backend();
  return binary(a, b, ar, br, shape, out, where, (pa, pb, py) => addKernel(be, form, ar, br, shape, n, out, pa, pb, py, where));
}

/** The kernel call of add in form `form`: operands at pa, pb (as stored, or row-major copies), output at py. */
function addKernel(be, form, ar, br, shape, n, out, pa, pb, py, where) {
  if ((form === 'qnnpack' || form === 'qnnpack2') && sameShape(ar.shape, br.shape)) {
    const status = be.exports.qw_add(n, pa, ar.quant.scale, ar.quant.zeroPoint, pb, br.quant.scale, br.quant.zeroPoint,
      ar.dtype.code, py, out.scale, out.zeroPoint, out.relu ? 1 : 0);
    if (status === QW_STATUS.QW_UNSUPPORTED) {
      throw new RangeError(`${where}: scale ratios a.scale / scale = ${ar.quant.scale / out.scale} and b.scale / scale = ${br.quant.scale / out.scale} must lie in [2^-14, 2^8) for the fixed-point kernel (PyTorch rejects them too)`);
    }
    if (status !== QW_STATUS.QW_OK) throw statusError(status, where, 'qw_add');
    return;
  }
  const withIndices = (pai, pbi) => {
    const args = [n, pa, pai, ar.quant.scale, ar.quant.zeroPoint, pb, pbi, br.quant.scale, br.quant.zeroPoint, ar.dtype.code, py, out.scale, out.zeroPoint];
    if (form === 'onnx') be.call(where, 'qw_add_onnx', ...args);
    else {
      const tail = form === 'fbgemm' || form === 'qnnpack2' ? QW_ROUNDING.QW_ROUND_FBGEMM_SCALAR : QW_ROUNDING.QW_ROUND_TORCH;
      be.call(where, 'qw_add_float', ...args, out.relu ? 1 : 0, innermostRun(shape, ar.shape, br.shape), TORCH_VECTOR_BLOCK, tail);
    }
  };
  if (sameShape(ar.shape, shape) && sameShape(br.shape, shape)) return withIndices(0, 0); // no index lists to copy
  const [ai, bi] = broadcastIndices(shape, ar.shape, br.shape, where);
  return withIndexLists(n, ai, bi, withIndices, where);
}

/**
 * @internal add(a, b, options) prepared for a model layer, which calls it run after run with operands of one shape
 * and layout and options that do not change: the checks and qparams settled once from a and b. Returns null unless
 * a and b have the same shape and one dense storage order (a convolution's channels-last outputs, or row-major),
 * else { accepts(x, y), run(x, y) }: run(x, y) equals add(x, y, options) for every pair accepts takes (the shapes,
 * strides, dtypes and per-tensor qparams of a and b).
 */
export function preparedAdd(a, b, options) {
  const where = 'add';
  const { ar, br, out, form, shape, n } = binaryCall(a, b, options, 'add', where);
  if (!sameShape(ar.shape, br.shape)) return null;
  const rowMajor = contiguousStrides(shape);
  const strides = sharedDenseOrder(ar, br) ?? (sameShape(ar.strides, rowMajor) && sameShape(br.strides, rowMajor) ? rowMajor : null);
  if (strides === null) return null;
  const [aRef, bRef] = [operandRecord(ar), operandRecord(br)];
  const be = backend();
  const yQuant = perTensor(out.scale, out.zeroPoint);
  const bytes = Math.max(1, n) * ar.dtype.bytes;
  return {
    accepts: (x, y) => matchesRecord(raw(x, where), aRef) && matchesRecord(raw(y, where), bRef),
    run(x, y) {
      const storage = newStorage(bytes, where);
      try {
        addKernel(be, form, aRef, bRef, shape, n, out, tensorPtr(x, where), tensorPtr(y, where), storage.ptr, where);
      } catch (error) {
        storage.release();
        throw error;
      }
      return wrapStorage(storage, 0, shape, strides, aRef.dtype, yQuant);
    },
  };
}

/**
 * Length of the innermost dimension PyTorch's TensorIterator loops over for a broadcast of a and b
 * to `shape`: size-1 dimensions dropped, neighbours merged while every operand stays contiguous
 * across them.
 */
function innermostRun(shape, aShape, bShape) {
  const rank = shape.length;
  const stridesOf = (src) => {
    const s = [...new Array(rank - src.length).fill(1), ...src];
    return contiguousStrides(s).map((st, k) => (s[k] === 1 ? 0 : st));
  };
  const operands = [contiguousStrides(shape), stridesOf(aShape), stridesOf(bShape)];
  const dims = [];
  for (let k = 0; k < rank; k++) {
    if (shape[k] === 1) continue;
    const last = dims[dims.length - 1];
    if (last && operands.every((st) => st[last.k] === st[k] * shape[k])) {
      last.size *= shape[k];
      last.k = k;
    } else {
      dims.push({ k, size: shape[k] });
    }
  }
  return dims.length === 0 ? 1 : dims[dims.length - 1].size;
}

/**
 * Quantized mul with numpy broadcasting. options: { scale, zeroPoint, relu, semantics = 'pytorch-qnnpack', mode }.
 * Forms (semantics.js `mul`): 'pytorch' (torch.ops.quantized.mul / mul_relu:
 * rint((float)((a - za)(b - zb)) * ((a_s * b_s) * (1 / y_s))) + yz); 'onnx' (com.microsoft QLinearMul as ONNX
 * Runtime computes it).
 */
export function mul(a, b, options) {
  const where = 'mul';
  const { ar, br, out, form, shape, n } = binaryCall(a, b, options, 'mul', where);
  const [ai, bi] = broadcastIndices(shape, ar.shape, br.shape, where);
  const be = backend();
  return binary(a, b, ar, br, shape, out, where, (pa, pb, py) =>
    withIndexLists(n, ai, bi, (pai, pbi) => {
      const args = [n, pa, pai, ar.quant.scale, ar.quant.zeroPoint, pb, pbi, br.quant.scale, br.quant.zeroPoint, ar.dtype.code, py, out.scale, out.zeroPoint];
      if (form === 'onnx') be.call(where, 'qw_mul_onnx', ...args);
      else be.call(where, 'qw_mul', ...args, out.relu ? 1 : 0);
    }, where));
}

/**
 * Quantized cat (torch.ops.quantized.cat, ONNX Runtime's QLinearConcat): every input requantized to the output
 * qparams (quantize(dequantize(q)) with the semantics' rounding rule, or `rounding`), joined along dim. options:
 * { scale, zeroPoint, semantics = 'pytorch-qnnpack', rounding }, the qparams by default the first input's (as torch).
 */
export function cat(tensors, dim, options = {}) {
  const where = 'cat';
  if (!Array.isArray(tensors) || tensors.length === 0) throw new TypeError(`${where}: tensors must be a non-empty array of QTensors`);
  const rs = tensors.map((t, i) => activationOperand(t, where, `tensors[${i}]`));
  const first = rs[0];
  const d = checkDim(dim, first.shape.length, where, 'dim');
  rs.forEach((r, i) => {
    if (r.dtype !== first.dtype) throw new TypeError(`${where}: tensors[${i}] is ${r.dtype.name}, tensors[0] is ${first.dtype.name}`);
    if (r.shape.length !== first.shape.length || r.shape.some((s, k) => k !== d && s !== first.shape[k])) {
      throw new RangeError(`${where}: tensors[${i}] has shape ${show(r.shape)}, which does not match ${show(first.shape)} outside dim ${d}`);
    }
  });
  const out = outputQParams({ scale: options?.scale ?? first.quant.scale, zeroPoint: options?.zeroPoint ?? first.quant.zeroPoint }, first.dtype, where);
  const rounding = semanticsOf(options, where, 'pytorch-qnnpack').form('rounding', options?.rounding);
  const shape = first.shape.slice();
  shape[d] = rs.reduce((s, r) => s + r.shape[d], 0);
  const be = backend();
  return produce(newTensor(shape, first.dtype, out.scale, out.zeroPoint, undefined, where), (y) => {
    let offset = 0;
    for (const t of tensors) {
      const part = t.requantize(out.scale, out.zeroPoint, first.dtype.name, { rounding }); // contiguous, output qparams
      const view = y.slice(d, offset, offset + t.shape[d]);
      try {
        const pr = raw(part, where);
        const vr = raw(view, where);
        copyStrided(be, where, pr.dtype.bytes, pr.shape, pr.ptr, pr.strides, vr.ptr, vr.strides);
      } finally {
        view.dispose();
        part.dispose();
      }
      offset += t.shape[d];
    }
  });
}

// ---- unary ops: 256-entry tables over the input bytes -----------------------------------------------

/** y[i] = table[byte of x[i]] (for qint8 the entry of q is at (uint8)q), with the output qparams given. */
function applyTable(x, r, table, outScale, outZeroPoint, where) {
  const be = backend();
  return produce(newTensor(r.shape, r.dtype, outScale, outZeroPoint), (y) =>
    withContiguous(x, where, (px) =>
      be.withBuffers([256], (pt) => {
        be.u8(pt, 256).set(table);
        be.call(where, 'qw_lut8', numelOf(r.shape), px, pt, raw(y, where).ptr);
      })));
}

/** The table of a per-value function on the integers of dtype: entry (uint8)q = fn(q) & 0xff. */
function integerTable(dtype, fn) {
  const table = new Uint8Array(256);
  for (let byte = 0; byte < 256; byte++) table[byte] = fn(dtype.name === 'qint8' ? (byte << 24) >> 24 : byte) & 0xff;
  return table;
}

/** PyTorch's quantize of a real bound with the input's qparams, by a rounding form, saturated to the dtype. */
const BOUND_RULES = {
  torch: (v, r) => quantizeTorch(v, r.quant.scale, r.quant.zeroPoint, r.dtype.min, r.dtype.max),
  onnx: (v, r) => quantizeOnnx(v, r.quant.scale, r.quant.zeroPoint, r.dtype.min, r.dtype.max),
  // quantize_val: FBGEMM's scalar rule to int32 (PyTorch 2.x on x86), then the dtype's range
  fbgemm: (v, r) => Math.min(Math.max(quantizeFbgemmScalar(v, r.quant.scale, r.quant.zeroPoint, INT32_MIN, INT32_MAX), r.dtype.min), r.dtype.max),
};

function quantizeBound(value, r, rounding, where) {
  if (typeof value !== 'number' || Number.isNaN(value)) throw new TypeError(`${where}: bounds must be numbers, got ${show(value)}`);
  return BOUND_RULES[rounding](value, r);
}

/**
 * clamp (torch.clamp): min(max(q, quantize(minValue)), quantize(maxValue)), the bounds quantized with the INPUT's
 * qparams by the semantics' rounding rule (options: { semantics = 'pytorch-qnnpack', rounding }); the output keeps
 * the input's qparams. As in torch, minValue > maxValue is allowed and gives quantize(maxValue) everywhere. Seed 003:
 * with scale 0.0197434, 6.0 is 303.9 steps, so that upper bound saturates at 255.
 */
export function clamp(x, minValue = -Infinity, maxValue = Infinity, options = {}) {
  return clampInts(x, minValue, maxValue, options, 'clamp');
}

function clampInts(x, minValue, maxValue, options, where) {
  const r = activationOperand(x, where);
  const rounding = semanticsOf(options, where, 'pytorch-qnnpack').form('rounding', options?.rounding);
  const lo = minValue === -Infinity ? r.dtype.min : quantizeBound(minValue, r, rounding, where);
  const hi = maxValue === Infinity ? r.dtype.max : quantizeBound(maxValue, r, rounding, where);
  return applyTable(x, r, integerTable(r.dtype, (q) => Math.min(Math.max(q, lo), hi)), r.quant.scale, r.quant.zeroPoint, where);
}

/** hardtanh (torch.ao.nn.quantized.functional.hardtanh): clamp with minValue <= maxValue required. options as clamp's. */
export function hardtanh(x, minValue = -1, maxValue = 1, options = {}) {
  for (const [name, v] of [['minValue', minValue], ['maxValue', maxValue]]) {
    if (typeof v !== 'number' || Number.isNaN(v)) throw new TypeError(`hardtanh: ${name} must be a number, got ${show(v)}`);
  }
  if (minValue > maxValue) throw new RangeError(`hardtanh: minValue ${minValue} is greater than maxValue ${maxValue}`);
  return clampInts(x, minValue, maxValue, options, 'hardtanh');
}
/** relu: max(q, zero point), the input's qparams kept. */
export const relu = (x) => clampInts(x, 0, Infinity, {}, 'relu');
/** relu6: min(max(q, zero point), quantize(6.0)), the input's qparams kept; options as clamp's. */
export const relu6 = (x, options = {}) => clampInts(x, 0, 6, options, 'relu6');

/** QNNPACK's table of a unary op (quint8 only), made by the C core. */
function qnnpackTable(op, r, outScale, outZeroPoint, where) {
  if (r.dtype.name !== 'quint8') throw new TypeError(`${where}: only quint8 input is supported (PyTorch's qint8 path is a different, float kernel)`);
  const be = backend();
  return be.withBuffers([256], (pt) => {
    be.call(where, 'qw_unary_table', op, r.dtype.code, r.quant.scale, r.quant.zeroPoint, outScale, outZeroPoint, 0, pt);
    return be.u8(pt, 256).slice();
  });
}

/**
 * ONNX Runtime's table for com.microsoft QLinearSigmoid / QLinearLeakyRelu (qlinear_lookup_table.cc): each byte
 * dequantized (x_scale * (x - x_zp), float32), the float function applied, then QuantizeLinear's rule.
 */
function ortTable(fn, r, outScale, outZeroPoint) {
  const [qmin, qmax] = [r.dtype.min, r.dtype.max];
  const xs = f32(r.quant.scale);
  return integerTable(r.dtype, (q) => quantizeOnnx(fn(f32(xs * (q - r.quant.zeroPoint))), outScale, outZeroPoint, qmin, qmax));
}

/** Output { scale, zeroPoint } of a unary op: options' or the defaults given, checked for dtype. */
function unaryOutput(options, r, defaults, where) {
  return outputQParams({ scale: options?.scale ?? defaults.scale, zeroPoint: options?.zeroPoint ?? defaults.zeroPoint }, r.dtype, where);
}

/** A two-table kernel of PyTorch's generic vectorized loops (qw_unary_table op >= 2): blocks of 64, then the tail. */
function blockedTable(x, r, op, param, outScale, outZeroPoint, where) {
  const be = backend();
  return produce(newTensor(r.shape, r.dtype, outScale, outZeroPoint), (y) =>
    withContiguous(x, where, (px) =>
      be.withBuffers([512], (pt) => {
        be.call(where, 'qw_unary_table', op, r.dtype.code, r.quant.scale, r.quant.zeroPoint, outScale, outZeroPoint, param, pt);
        be.call(where, 'qw_lut8_blocked', numelOf(r.shape), px, pt, TORCH_VECTOR_BLOCK, raw(y, where).ptr);
      })));
}

/**
 * Quantized hardswish (torch.ao.nn.quantized.Hardswish). options: { scale, zeroPoint, semantics = 'pytorch-qnnpack',
 * mode }. Forms: 'qnnpack' (QNNPACK's table, quint8 only); 'fbgemm' (PyTorch 2.x's generic kernel on x86, quint8 or
 * qint8).
 */
export function hardswish(x, options) {
  const where = 'hardswish';
  const r = activationOperand(x, where);
  const form = semanticsOf(options, where, 'pytorch-qnnpack').form('hardswish', options?.mode);
  if (form === 'fbgemm') {
    const out = outputQParams(options, r.dtype, where);
    return blockedTable(x, r, QW_UNARY_OP.QW_UNARY_HARDSWISH_FBGEMM, 0, out.scale, out.zeroPoint, where);
  }
  const out = outputQParams(options, DTYPES.quint8, where);
  return applyTable(x, r, qnnpackTable(QW_UNARY_OP.QW_UNARY_HARDSWISH_QNNPACK, r, out.scale, out.zeroPoint, where), out.scale, out.zeroPoint, where);
}

/**
 * Quantized sigmoid. options: { semantics = 'pytorch-qnnpack', mode, scale, zeroPoint }. Forms: 'qnnpack'
 * (torch.sigmoid on quint8 with PyTorch's qnnpack engine: QNNPACK's table, output qparams fixed at (1/256, 0));
 * 'fbgemm' (PyTorch 2.x's generic kernel on x86: (1/256, 0) for quint8, (1/256, -128) for qint8); 'onnx'
 * (com.microsoft QLinearSigmoid: MLAS's logistic, output qparams from options).
 */
export function sigmoid(x, options = {}) {
  const where = 'sigmoid';
  const r = activationOperand(x, where);
  const form = semanticsOf(options, where, 'pytorch-qnnpack').form('sigmoid', options?.mode);
  if (form === 'onnx') {
    const out = unaryOutput(options, r, {}, where);
    return applyTable(x, r, ortTable(mlasLogistic, r, out.scale, out.zeroPoint), out.scale, out.zeroPoint, where);
  }
  if (form === 'fbgemm') return blockedTable(x, r, QW_UNARY_OP.QW_UNARY_SIGMOID_FBGEMM, 0, 1 / 256, r.dtype.name === 'qint8' ? -128 : 0, where);
  return applyTable(x, r, qnnpackTable(QW_UNARY_OP.QW_UNARY_SIGMOID_QNNPACK, r, 1 / 256, 0, where), 1 / 256, 0, where);
}

/**
 * Quantized leaky_relu: y = x > 0 ? x : x * negativeSlope, requantized to { scale, zeroPoint } (default: the
 * input's). Forms: 'generic' (torch.ao.nn.quantized.LeakyReLU on PyTorch 1.13, every engine: its generic CPU kernel on
 * AVX2, which dequantizes whole blocks of 64 elements with an FMA and the tail without; exact for tensors of up to
 * 32768 elements, beyond which PyTorch splits the loop across threads); 'fbgemm' (the same kernel in PyTorch 2.x's x86
 * builds: the tail adds the zero point before rounding); 'onnx' (com.microsoft QLinearLeakyRelu's table).
 * options: { scale, zeroPoint, semantics = 'pytorch-qnnpack', mode }.
 */
export function leakyRelu(x, negativeSlope = 0.01, options = {}) {
  const where = 'leakyRelu';
  const r = activationOperand(x, where);
  if (typeof negativeSlope !== 'number' || !Number.isFinite(negativeSlope)) {
    throw new TypeError(`${where}: negativeSlope must be a finite number, got ${show(negativeSlope)}`);
  }
  const form = semanticsOf(options, where, 'pytorch-qnnpack').form('leakyRelu', options?.mode);
  const out = unaryOutput(options, r, { scale: r.quant.scale, zeroPoint: r.quant.zeroPoint }, where);
  if (form === 'onnx') {
    const alpha = f32(negativeSlope);
    return applyTable(x, r, ortTable((v) => (v >= 0 ? v : f32(alpha * v)), r, out.scale, out.zeroPoint), out.scale, out.zeroPoint, where);
  }
  const op = form === 'fbgemm' ? QW_UNARY_OP.QW_UNARY_LEAKY_RELU_FBGEMM : QW_UNARY_OP.QW_UNARY_LEAKY_RELU;
  return blockedTable(x, r, op, negativeSlope, out.scale, out.zeroPoint, where);
}
