// Elementwise quantized operators with PyTorch semantics: add, mul, cat, and the unary ops
// (relu, relu6, hardtanh / clamp, hardswish, sigmoid). Exact formulas: docs/quantization.md.
import { backend } from './runtime.js';
import { dtypeInfo, roundingCode } from './dtype.js';
import { checkDim, checkScale, checkZeroPoint, numelOf, show } from './check.js';
import { QTensor, contiguousStrides, newStorage, perTensor, wrapStorage } from './qtensor.js';
import { broadcastShape, broadcastSourceIndex } from './layout.js';

const raw = (t, where) => QTensor[Symbol.for('qwasm.raw')](t, where);

/** Elements PyTorch's AVX2 kernels process per vector block (2 x 32 bytes); the rest is a scalar tail. */
const TORCH_VECTOR_BLOCK = 64;

function activation(t, where, name = 'input') {
  if (!(t instanceof QTensor)) throw new TypeError(`${where}: ${name} must be a QTensor, got ${show(t)}`);
  const r = raw(t, where);
  if (r.quant.scheme !== 'per_tensor_affine') throw new TypeError(`${where}: ${name} must be quantized per tensor, got ${r.quant.scheme}`);
  if (r.dtype.name === 'qint32') throw new TypeError(`${where}: ${name} must be quint8 or qint8, got qint32`);
  return r;
}

function outputQParams(options, dtype, where) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${where}: options must be { scale, zeroPoint, ... }, got ${show(options)}`);
  }
  checkScale(options.scale, where, 'scale');
  checkZeroPoint(options.zeroPoint, dtype, where, 'zeroPoint');
  const relu = options.relu ?? false;
  if (typeof relu !== 'boolean') throw new TypeError(`${where}: relu must be a boolean, got ${show(relu)}`);
  return { scale: options.scale, zeroPoint: options.zeroPoint, relu };
}

function newTensor(shape, dtype, scale, zeroPoint, strides = contiguousStrides(shape)) {
  const storage = newStorage(Math.max(1, numelOf(shape)) * dtype.bytes);
  return wrapStorage(storage, 0, shape, strides, dtype, perTensor(scale, zeroPoint));
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

/** Runs fn(ptr) on contiguous data of t. */
function withData(t, where, fn) {
  if (t.isContiguous()) return fn(raw(t, where).ptr);
  const c = t.contiguous();
  try {
    return fn(raw(c, where).ptr);
  } finally {
    c.dispose();
  }
}

function sameShape(a, b) {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * Quantized add (torch.ops.quantized.add / add_relu, FloatFunctional.add) with numpy broadcasting.
 * options: { scale, zeroPoint, relu = false, mode = 'qnnpack' }. mode 'qnnpack' is PyTorch's qnnpack
 * engine: same-shaped quint8 / qint8 operands take its fixed-point kernels (QNNPACK, XNNPACK),
 * broadcasting ones its float kernel; mode 'float' is the float kernel of the x86 / fbgemm / onednn
 * engines of PyTorch 1.13 (dequantize, add, quantize), reproduced with its AVX2 vector blocks; mode
 * 'fbgemm' the same kernel in PyTorch 2.x's x86 builds, whose scalar tail adds the zero point before
 * rounding (FBGEMM's quantize); mode 'onnx' is
 * com.microsoft QLinearAdd as ONNX Runtime computes it: ((a_s (a - za) + b_s (b - zb)) / y_s,
 * clamped, then the zero point added and rounded half to even (no relu).
 */
export function add(a, b, options) {
  const where = 'add';
  const ar = activation(a, where, 'a');
  const br = activation(b, where, 'b');
  if (ar.dtype !== br.dtype) throw new TypeError(`${where}: a is ${ar.dtype.name} but b is ${br.dtype.name}; they must match`);
  const out = outputQParams(options, ar.dtype, where);
  const mode = options.mode ?? 'qnnpack';
  if (mode !== 'qnnpack' && mode !== 'float' && mode !== 'fbgemm' && mode !== 'onnx') {
    throw new TypeError(`${where}: mode must be 'qnnpack', 'float', 'fbgemm' or 'onnx', got ${show(mode)}`);
  }
  if (mode === 'onnx' && out.relu) throw new TypeError(`${where}: relu is not part of mode 'onnx' (QLinearAdd); clamp afterwards`);
  const shape = broadcastShape(ar.shape, br.shape, where);
  const fixedPoint = mode === 'qnnpack' && sameShape(ar.shape, br.shape);
  const n = numelOf(shape);
  const order = sharedDenseOrder(ar, br);
  const y = newTensor(shape, ar.dtype, out.scale, out.zeroPoint, order ?? undefined);
  const b_ = backend();
  const data = order ? (t, _where, fn) => fn(raw(t, where).ptr) : withData;
  try {
    data(a, where, (pa) =>
      data(b, where, (pb) => {
        if (fixedPoint) {
          const status = b_.exports.qw_add(n, pa, ar.quant.scale, ar.quant.zeroPoint, pb, br.quant.scale,
            br.quant.zeroPoint, ar.dtype.code, raw(y, where).ptr, out.scale, out.zeroPoint, out.relu ? 1 : 0);
          if (status === 3) {
            throw new RangeError(`${where}: scale ratios a.scale / scale = ${ar.quant.scale / out.scale} and b.scale / scale = ${br.quant.scale / out.scale} must lie in [2^-14, 2^8) for the fixed-point kernel (PyTorch rejects them too)`);
          }
          if (status !== 0) throw new Error(`${where}: qw_add failed with status ${status}`);
          return;
        }
        const [ai, bi] = broadcastIndices(shape, ar.shape, br.shape);
        const inner = innermostRun(shape, ar.shape, br.shape);
        withIndexLists(b_, n, ai, bi, (pai, pbi) => {
          const args = [n, pa, pai, ar.quant.scale, ar.quant.zeroPoint, pb, pbi, br.quant.scale, br.quant.zeroPoint, ar.dtype.code,
            raw(y, where).ptr, out.scale, out.zeroPoint];
          if (mode === 'onnx') b_.call('qw_add_onnx', ...args);
          // 'fbgemm': PyTorch 2.x's x86 builds quantize the tail with FBGEMM's scalar rule (QW_ROUND_FBGEMM_SCALAR).
          else b_.call('qw_add_float', ...args, out.relu ? 1 : 0, inner, TORCH_VECTOR_BLOCK, mode === 'fbgemm' ? 3 : 0);
        });
      }),
    );
  } catch (error) {
    y.dispose();
    throw error;
  }
  return y;
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

/** Copies the index lists (null: none) into wasm memory for one call: fn(aIndexPtr, bIndexPtr), 0 for none. */
function withIndexLists(be, n, ai, bi, fn) {
  be.withBuffers([ai ? 4 * n : 0, bi ? 4 * n : 0], (pai, pbi) => {
    if (ai) be.i32(pai, n).set(ai);
    if (bi) be.i32(pbi, n).set(bi);
    fn(ai ? pai : 0, bi ? pbi : 0);
  });
}

/** Broadcasting of two shapes (numpy rules) to per-output source indices (null: the same shape). */
function broadcastIndices(shape, aShape, bShape) {
  return [sameShape(aShape, shape) ? null : broadcastSourceIndex(shape, aShape), sameShape(bShape, shape) ? null : broadcastSourceIndex(shape, bShape)];
}

/**
 * Quantized mul (torch.ops.quantized.mul / mul_relu) with numpy broadcasting:
 * rint((float)((a - za)(b - zb)) * ((a_s * b_s) * (1 / y_s))) + yz. options: { scale, zeroPoint, relu,
 * mode = 'qnnpack' }; mode 'onnx' is com.microsoft QLinearMul as ONNX Runtime computes it.
 */
export function mul(a, b, options) {
  const where = 'mul';
  const ar = activation(a, where, 'a');
  const br = activation(b, where, 'b');
  if (ar.dtype !== br.dtype) throw new TypeError(`${where}: a is ${ar.dtype.name} but b is ${br.dtype.name}; they must match`);
  const out = outputQParams(options, ar.dtype, where);
  const mode = options.mode ?? 'qnnpack';
  if (mode !== 'qnnpack' && mode !== 'onnx') throw new TypeError(`${where}: mode must be 'qnnpack' or 'onnx', got ${show(mode)}`);
  if (mode === 'onnx' && out.relu) throw new TypeError(`${where}: relu is not part of mode 'onnx' (QLinearMul); clamp afterwards`);
  const shape = broadcastShape(ar.shape, br.shape, where);
  const n = numelOf(shape);
  const [ai, bi] = broadcastIndices(shape, ar.shape, br.shape);
  const order = sharedDenseOrder(ar, br);
  const y = newTensor(shape, ar.dtype, out.scale, out.zeroPoint, order ?? undefined);
  const b_ = backend();
  const data = order ? (t, _where, fn) => fn(raw(t, where).ptr) : withData;
  try {
    data(a, where, (pa) =>
      data(b, where, (pb) =>
        withIndexLists(b_, n, ai, bi, (pai, pbi) => {
          const args = [n, pa, pai, ar.quant.scale, ar.quant.zeroPoint, pb, pbi, br.quant.scale, br.quant.zeroPoint, ar.dtype.code,
            raw(y, where).ptr, out.scale, out.zeroPoint];
          if (mode === 'onnx') b_.call('qw_mul_onnx', ...args);
          else b_.call('qw_mul', ...args, out.relu ? 1 : 0);
        }),
      ),
    );
  } catch (error) {
    y.dispose();
    throw error;
  }
  return y;
}

/**
 * Quantized cat (torch.ops.quantized.cat): every input requantized to the output qparams
 * (quantize(dequantize(q)) by options.rounding, 'torch' by default; 'fbgemm' for PyTorch 2.x's x86
 * builds), joined along dim. options: { scale, zeroPoint, rounding }, the qparams by default the first input's.
 */
export function cat(tensors, dim, options = {}) {
  const where = 'cat';
  if (!Array.isArray(tensors) || tensors.length === 0) throw new TypeError(`${where}: tensors must be a non-empty array of QTensors`);
  const rs = tensors.map((t, i) => activation(t, where, `tensors[${i}]`));
  const first = rs[0];
  const d = checkDim(dim, first.shape.length, where, 'dim');
  rs.forEach((r, i) => {
    if (r.dtype !== first.dtype) throw new TypeError(`${where}: tensors[${i}] is ${r.dtype.name}, tensors[0] is ${first.dtype.name}`);
    if (r.shape.length !== first.shape.length || r.shape.some((s, k) => k !== d && s !== first.shape[k])) {
      throw new RangeError(`${where}: tensors[${i}] has shape ${show(r.shape)}, which does not match ${show(first.shape)} outside dim ${d}`);
    }
  });
  // Without output qparams torch keeps the first input's.
  const out = outputQParams(
    { scale: options?.scale ?? first.quant.scale, zeroPoint: options?.zeroPoint ?? first.quant.zeroPoint },
    first.dtype,
    where,
  );
  const shape = first.shape.slice();
  shape[d] = rs.reduce((s, r) => s + r.shape[d], 0);
  const y = newTensor(shape, first.dtype, out.scale, out.zeroPoint);
  let offset = 0;
  try {
    const b = backend();
    for (const t of tensors) {
      const part = t.requantize(out.scale, out.zeroPoint, first.dtype.name, { rounding: options?.rounding }); // contiguous, output qparams
      const view = y.slice(d, offset, offset + t.shape[d]);
      try {
        const pr = raw(part, where);
        const vr = raw(view, where);
        const rank = pr.shape.length;
        b.withBuffers([4 * rank, 4 * rank, 4 * rank], (pshape, psrc, pdst) => {
          b.i32(pshape, rank).set(pr.shape);
          b.i32(psrc, rank).set(pr.strides);
          b.i32(pdst, rank).set(vr.strides);
          b.call('qw_copy_strided', pr.dtype.bytes, rank, pshape, pr.ptr, psrc, vr.ptr, pdst);
        });
      } finally {
        view.dispose();
        part.dispose();
      }
      offset += t.shape[d];
    }
  } catch (error) {
    y.dispose();
    throw error;
  }
  return y;
}

// ---- unary ops -----------------------------------------------------------------------------------

/** y[i] = table[byte of x[i]] with the output qparams given (for the model loader's ONNX Runtime tables). */
export function applyTable(x, table, outScale, outZeroPoint, where) {
  const r = activation(x, where);
  const n = numelOf(r.shape);
  const y = newTensor(r.shape, r.dtype, outScale, outZeroPoint);
  const b = backend();
  try {
    withData(x, where, (px) =>
      b.withBuffers([256], (pt) => {
        b.u8(pt, 256).set(table);
        b.call('qw_lut8', n, px, pt, raw(y, where).ptr);
      }),
    );
  } catch (error) {
    y.dispose();
    throw error;
  }
  return y;
}

/** The input integer of a real bound, by the rounding rule (torch's by default) with the input's qparams. */
function quantizeBound(value, r, where, rounding) {
  if (typeof value !== 'number' || Number.isNaN(value)) throw new TypeError(`${where}: bounds must be numbers, got ${show(value)}`);
  const b = backend();
  return b.withBuffers([4, 4], (pf, pq) => {
    b.f32(pf, 1)[0] = value;
    b.call('qw_quantize', 1, pf, pq, 2, roundingCode(rounding, where), r.quant.scale, r.quant.zeroPoint);
    const q = b.i32(pq, 1)[0];
    return Math.min(Math.max(q, r.dtype.min), r.dtype.max);
  });
}

/**
 * clamp (torch.clamp): min(max(q, quantize(minValue)), quantize(maxValue)), the bounds quantized with
 * the INPUT's qparams (torch's rule); the output keeps the input's qparams. As in torch, minValue >
 * maxValue is allowed and gives quantize(maxValue) everywhere. Seed 003: with scale 0.0197434, 6.0 is
 * 303.9 steps, so that upper bound saturates at 255. options.rounding quantizes the bounds ('fbgemm' for
 * PyTorch 2.x's x86 builds, whose quantize_val adds the zero point before rounding).
 */
export function clamp(x, minValue = -Infinity, maxValue = Infinity, options = {}) {
  return clampInts(x, minValue, maxValue, 'clamp', options?.rounding);
}

function clampInts(x, minValue, maxValue, where, rounding) {
  const r = activation(x, where);
  const lo = minValue === -Infinity ? r.dtype.min : quantizeBound(minValue, r, where, rounding);
  const hi = maxValue === Infinity ? r.dtype.max : quantizeBound(maxValue, r, where, rounding);
  const table = new Uint8Array(256);
  for (let byte = 0; byte < 256; byte++) {
    const q = r.dtype.name === 'qint8' ? (byte << 24) >> 24 : byte;
    table[byte] = Math.min(Math.max(q, lo), hi) & 0xff;
  }
  return applyTable(x, table, r.quant.scale, r.quant.zeroPoint, where);
}

/** hardtanh (torch.ao.nn.quantized.functional.hardtanh): clamp with minValue <= maxValue required. */
export function hardtanh(x, minValue = -1, maxValue = 1, options = {}) {
  if (minValue > maxValue) throw new RangeError(`hardtanh: minValue ${minValue} is greater than maxValue ${maxValue}`);
  return clampInts(x, minValue, maxValue, 'hardtanh', options?.rounding);
}
/** relu: max(q, zero point), the input's qparams kept. */
export const relu = (x) => clampInts(x, 0, Infinity, 'relu');
/** relu6: min(max(q, zero point), quantize(6.0)), the input's qparams kept; options.rounding as for clamp. */
export const relu6 = (x, options = {}) => clampInts(x, 0, 6, 'relu6', options?.rounding);

function qnnpackTable(op, x, outScale, outZeroPoint, where) {
  const r = activation(x, where);
  if (r.dtype.name !== 'quint8') throw new TypeError(`${where}: only quint8 input is supported (PyTorch's qint8 path is a different, float kernel)`);
  checkScale(outScale, where, 'scale');
  checkZeroPoint(outZeroPoint, r.dtype, where, 'zeroPoint');
  const b = backend();
  const table = b.withBuffers([256], (pt) => {
    b.call('qw_unary_table', op, r.dtype.code, r.quant.scale, r.quant.zeroPoint, outScale, outZeroPoint, 0, pt);
    return b.u8(pt, 256).slice();
  });
  return applyTable(x, table, outScale, outZeroPoint, where);
}

/**
 * Quantized hardswish (torch.ao.nn.quantized.Hardswish). options: { scale, zeroPoint, mode }: mode 'qnnpack'
 * (default; quint8) is QNNPACK's table; 'fbgemm' PyTorch 2.x's generic kernel on x86 (quint8 or qint8).
 */
export function hardswish(x, options) {
  if (options?.mode === 'fbgemm') {
    const r = activation(x, 'hardswish');
    const out = outputQParams(options, r.dtype, 'hardswish');
    return genericUnary(4, x, r, out.scale, out.zeroPoint, 0, 'hardswish');
  }
  checkMode(options?.mode, 'hardswish');
  const out = outputQParams(options, dtypeInfo('quint8', 'hardswish'), 'hardswish');
  return qnnpackTable(0, x, out.scale, out.zeroPoint, 'hardswish');
}

/**
 * Quantized sigmoid (torch.sigmoid). options.mode 'qnnpack' (default; quint8): QNNPACK's table, output qparams
 * fixed at (1/256, 0); 'fbgemm': PyTorch 2.x's generic kernel on x86, (1/256, 0) for quint8, (1/256, -128) for qint8.
 */
export function sigmoid(x, options = {}) {
  if (options?.mode === 'fbgemm') {
    const r = activation(x, 'sigmoid');
    return genericUnary(5, x, r, 1 / 256, r.dtype.name === 'qint8' ? -128 : 0, 0, 'sigmoid');
  }
  checkMode(options?.mode, 'sigmoid');
  return qnnpackTable(1, x, 1 / 256, 0, 'sigmoid');
}

function checkMode(mode, where) {
  if (mode !== undefined && mode !== 'qnnpack') throw new TypeError(`${where}: mode must be 'qnnpack' or 'fbgemm', got ${show(mode)}`);
}

/** A two-table generic kernel (qw_unary_table op >= 2) applied in PyTorch's vector blocks and tail. */
function genericUnary(op, x, r, outScale, outZeroPoint, param, where) {
  const b = backend();
  const n = numelOf(r.shape);
  const y = newTensor(r.shape, r.dtype, outScale, outZeroPoint);
  try {
    withData(x, where, (px) =>
      b.withBuffers([512], (pt) => {
        b.call('qw_unary_table', op, r.dtype.code, r.quant.scale, r.quant.zeroPoint, outScale, outZeroPoint, param, pt);
        b.call('qw_lut8_blocked', n, px, pt, TORCH_VECTOR_BLOCK, raw(y, where).ptr);
      }),
    );
  } catch (error) {
    y.dispose();
    throw error;
  }
  return y;
}


/**
 * Quantized leaky_relu (torch.ao.nn.quantized.LeakyReLU / functional.leaky_relu): y = x > 0 ? x : x *
 * negativeSlope, requantized to { scale, zeroPoint } (default: the input's). Reproduces PyTorch's
 * generic CPU kernel on AVX2, which dequantizes whole blocks of 64 elements with an FMA and the tail
 * without; exact for tensors of up to 32768 elements (beyond, PyTorch splits the loop across threads).
 * options.mode 'fbgemm': the same kernel in PyTorch 2.x's x86 builds (the tail adds the zero point before
 * rounding).
 */
export function leakyRelu(x, negativeSlope = 0.01, options) {
  const where = 'leakyRelu';
  options ??= {};
  const r = activation(x, where);
  if (typeof negativeSlope !== 'number' || !Number.isFinite(negativeSlope)) {
    throw new TypeError(`${where}: negativeSlope must be a finite number, got ${show(negativeSlope)}`);
  }
  if (options.mode !== undefined && options.mode !== 'float' && options.mode !== 'fbgemm') {
    throw new TypeError(`${where}: mode must be 'float' or 'fbgemm', got ${show(options.mode)}`);
  }
  const out = outputQParams({ scale: options.scale ?? r.quant.scale, zeroPoint: options.zeroPoint ?? r.quant.zeroPoint }, r.dtype, where);
  return genericUnary(options.mode === 'fbgemm' ? 3 : 2, x, r, out.scale, out.zeroPoint, negativeSlope, where);
}
