// Quantized linear algebra on QTensors: linear, conv2d, matmul (and the packed-weight objects they reuse), and
// ONNX's dynamic quantization ops. How an int32 accumulator becomes an 8-bit output is the requantization form
// of the call's semantics (semantics.js), or `mode`. Convolutions compute channels-last (NHWC) internally; their
// outputs are NCHW-shaped tensors stored channels-last (torch's channels_last memory format), so chained
// convolutions never transpose.
import { backend } from '../runtime/runtime.js';
import { QW_DTYPE, QW_REQUANT_MODE, QW_ROUNDING } from '../runtime/abi.js';
import { semanticsOf } from '../semantics.js';
import { dtypeInfo } from '../tensor/dtype.js';
import { checkBytes, checkNumberArray, checkScale, checkShape, checkZeroPoint, numelOf, show, sliceDims } from '../tensor/check.js';
import { chooseQParamsDynamic, dynamicQParams, fmaf } from '../reference.js';
import { contiguousStrides, newStorage, perTensor, quantizePerTensor, tensorPtr, wrapStorage } from '../tensor/qtensor.js';
import { broadcastShape, channelsLastStrides, convGeometry, convOutputSize, convShapeStruct, isChannelsLast, withChannelsLast } from '../tensor/layout.js';
import { Allocations, forget, releaseWhenCollected } from '../runtime/owned.js';
import { activationOperand, matchesRecord, newTensor, operandRecord, produce, raw, tensorOperand, withContiguous } from './op.js';

/** Requantization modes and their C codes (qw_requant_mode): the forms of semantics.js's `requantization` family. */
export const REQUANT_MODES = Object.freeze({
  qnnpack: QW_REQUANT_MODE.QW_REQUANT_QNNPACK,
  fbgemm: QW_REQUANT_MODE.QW_REQUANT_FBGEMM,
  onnx: QW_REQUANT_MODE.QW_REQUANT_ONNX,
  fixedpoint: QW_REQUANT_MODE.QW_REQUANT_FIXEDPOINT,
  none: QW_REQUANT_MODE.QW_REQUANT_NONE,
  onednn: QW_REQUANT_MODE.QW_REQUANT_ONEDNN,
});

/**
 * The requantization form of a call: options.mode, or the form of options.semantics (default `defaultSemantics`).
 * 'x86' is not a kernel but PyTorch's x86 engine choosing one by the weights: packed weights resolve it (x86Form).
 */
function requantizationOf(options, where, defaultSemantics) {
  return semanticsOf(options, where, defaultSemantics).form('requantization', options?.mode);
}

const INT32_OUTPUT = Object.freeze({ scale: 1, zeroPoint: 0, dtype: dtypeInfo('qint32', ''), clampMin: -Infinity, clampMax: Infinity, outputRange: null });

/** Output qparams and fused clamp of an operator call in requantization form `mode` ('none': the raw int32 sums). */
function outputSpec(options, where, mode) {
  if (mode === 'none') return INT32_OUTPUT;
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${where}: options must be { scale, zeroPoint, ... }, got ${show(options)}`);
  }
  const { scale, zeroPoint, dtype = 'quint8', relu = false, clampMin = -Infinity, clampMax = Infinity, outputRange = null } = options;
  const info = dtypeInfo(dtype, where);
  if (info.name === 'qint32') throw new TypeError(`${where}: the output dtype must be quint8 or qint8`);
  checkScale(scale, where, 'scale');
  checkZeroPoint(zeroPoint, info, where, 'zeroPoint');
  if (typeof relu !== 'boolean') throw new TypeError(`${where}: relu must be a boolean, got ${show(relu)}`);
  if (typeof clampMin !== 'number' || typeof clampMax !== 'number' || Number.isNaN(clampMin) || Number.isNaN(clampMax) || clampMin > clampMax) {
    throw new RangeError(`${where}: clampMin / clampMax must be numbers with clampMin <= clampMax, got ${show(clampMin)}, ${show(clampMax)}`);
  }
  if (outputRange !== null && !(Array.isArray(outputRange) && outputRange.length === 2 && outputRange.every(Number.isInteger) &&
    outputRange[0] <= outputRange[1])) {
    throw new RangeError(`${where}: outputRange must be [lo, hi], integers with lo <= hi, got ${show(outputRange)}`);
  }
  return { scale, zeroPoint, dtype: info, clampMin: relu ? Math.max(clampMin, 0) : clampMin, clampMax, outputRange };
}

/** The requantization form and output spec of a call on packed weights: the call's own form, else the packing's. */
function callSpec(options, weights, where) {
  // A frozen options object (a model layer's, made once) cannot have changed since the weights' last call with it.
  const last = weights.lastCallSpec;
  if (last !== null && last.options === options) return last.spec;
  const overrides = options?.mode !== undefined || options?.semantics !== undefined;
  const mode = overrides ? weights.x86Form(requantizationOf(options, where, 'pytorch-qnnpack')) : weights.mode;
  const spec = { mode, out: outputSpec(options, where, mode) };
  if (isDeepFrozen(options)) weights.lastCallSpec = { options, spec };
  return spec;
}

function isDeepFrozen(options) {
  return options !== null && typeof options === 'object' && Object.isFrozen(options) &&
    Object.values(options).every((v) => v === null || typeof v !== 'object' || Object.isFrozen(v));
}

/**
 * Weight-side state shared by linear, conv2d and matmul: the packed bytes, the weight qparams, the
 * bias and the requantization mode, plus a cache of the last requantization blob (it depends on the
 * input scale and the output qparams of a call).
 */
class PackedWeights {
  #backend;
  #mem; // packed, blob, workspace: freed by dispose(), or when the object is collected undisposed
  #blobKey = null;
  #workspaceBytes = 0;
  /** @internal { options, spec } of the last call made with frozen options (callSpec). */
  lastCallSpec = null;

  constructor(where, weight, bias, mode, channels, packFn) {
    const w = tensorOperand(weight, where, 'weight');
    if (w.dtype.name === 'qint32') throw new TypeError(`${where}: weight must be qint8 or quint8, got qint32`);
    this.channels = channels;
    this.weightDtype = w.dtype;
    // Scales stay float64, as torch keeps them; the C core rounds them where each mode does.
    this.perChannel = w.quant.scheme !== 'per_tensor_affine';
    if (!this.perChannel) {
      this.weightScales = Float64Array.of(w.quant.scale);
      this.weightZeroPoints = Int32Array.of(w.quant.zeroPoint);
    } else {
      if (w.quant.axis !== 0) {
        throw new RangeError(`${where}: per-channel weights must be quantized along axis 0 (output channels), got axis ${w.quant.axis}`);
      }
      this.weightScales = Float64Array.from(w.quant.scales);
      this.weightZeroPoints = Int32Array.from(w.quant.zeroPoints);
    }
    this.mode = this.x86Form(mode);
    this.bias = checkBias(bias, channels, this.mode, where);
    const b = backend();
    this.#backend = b;
    const contiguous = weight.contiguous();
    let packed;
    try {
      packed = packFn(b, raw(contiguous, where), this.weightZeroPoints);
    } finally {
      contiguous.dispose();
    }
    const mem = new Allocations(b);
    mem.set('packed', packed);
    this.#mem = mem;
    releaseWhenCollected(this, mem);
  }

  /**
   * A requantization form with 'x86' resolved for these weights: PyTorch's x86 engine runs linear layers and
   * matmuls through FBGEMM (PackedConv2d overrides this).
   */
  x86Form(form) {
    return form === 'x86' ? 'fbgemm' : form;
  }

  get packedPtr() {
    const ptr = this.#mem.get('packed');
    if (ptr === 0) throw new TypeError(`${this.constructor.name}: the packed weights were disposed`);
    return ptr;
  }

  /**
   * The requantization blob for an input scale, an output spec and a requantization form (cached for repeated calls);
   * 'x86' is resolved here for these weights (an unpacked matmul operand passed it through: qnnpack's code 0 ran).
   */
  requantization(inScale, out, modeName, where) {
    void this.packedPtr; // throws once disposed, before anything is allocated
    const b = this.#backend;
    const mode = REQUANT_MODES[this.x86Form(modeName)];
    if (mode === undefined) throw new Error(`qwasm internal error: ${where}: requantization form ${modeName}`);
    if (mode === REQUANT_MODES.onnx && this.bias !== null && !(this.bias instanceof Int32Array)) {
      throw new TypeError(`${where}: mode 'onnx' takes an int32 bias (Int32Array)`);
    }
    const last = this.#blobKey;
    if (last !== null && last.inScale === inScale && last.scale === out.scale && last.zeroPoint === out.zeroPoint &&
        last.dtype === out.dtype && last.clampMin === out.clampMin && last.clampMax === out.clampMax && last.mode === mode &&
        last.outputRange?.[0] === out.outputRange?.[0] && last.outputRange?.[1] === out.outputRange?.[1]) {
      return this.#mem.get('blob');
    }
    // The blob lives with the weights, not with the call: no part of a model run's memory plan.
    return b.outsidePlan(() => this.#initRequantization(inScale, out, mode, where));
  }

  #initRequantization(inScale, out, mode, where) {
    const b = this.#backend;
    const key = { inScale, scale: out.scale, zeroPoint: out.zeroPoint, dtype: out.dtype, clampMin: out.clampMin, clampMax: out.clampMax, mode, outputRange: out.outputRange };
    const n = this.channels;
    if (this.#mem.get('blob') === 0) this.#mem.set('blob', b.alloc(b.bytes(where, 'the requantization parameters', 'qw_requantization_size', n), where));
    const blob = this.#mem.get('blob');
    this.#blobKey = null; // until the blob holds these parameters
    const ws = this.weightScales.length;
    const floatBias = this.bias instanceof Float32Array && mode !== REQUANT_MODES.onnx;
    b.withBuffers([8 * ws, 4 * ws, 4 * n], (ps, pz, pb) => {
      b.view(Float64Array, ps, ws).set(this.weightScales);
      b.i32(pz, ws).set(this.weightZeroPoints);
      if (this.bias !== null) b.view(this.bias.constructor, pb, n).set(this.bias);
      b.call(where, 'qw_requantization_init', blob, n, mode, inScale, ps, ws, pz, this.weightDtype.code,
        floatBias ? pb : 0, this.bias !== null && !floatBias ? pb : 0, out.scale, out.zeroPoint, out.dtype.code,
        out.clampMin, out.clampMax, this.perChannel ? 1 : 0);
      // An integer clamp (an ONNX Clip with 8-bit bounds fused into the layer) narrows the output range exactly.
      if (out.outputRange) b.call(where, 'qw_requantization_clamp', blob, n, out.outputRange[0], out.outputRange[1]);
    }, where);
    this.#blobKey = key;
    return blob;
  }

  /** @internal A buffer of `bytes` owned by the weights (freed with them), allocated under `name` on first use. */
  ownedBuffer(name, bytes, where) {
    void this.packedPtr;
    let ptr = this.#mem.get(name);
    if (ptr === 0) {
      ptr = this.#backend.outsidePlan(() => this.#backend.alloc(bytes, where));
      this.#mem.set(name, ptr);
    }
    return ptr;
  }

  /** Scratch memory for a call, kept between calls (grown when a call needs more). */
  workspace(bytes, where = 'qwasm') {
    void this.packedPtr;
    if (bytes > this.#workspaceBytes) {
      this.#mem.free('workspace');
      this.#workspaceBytes = 0;
      this.#mem.set('workspace', this.#backend.outsidePlan(() => this.#backend.alloc(bytes, where)));
      this.#workspaceBytes = bytes;
    }
    return this.#mem.get('workspace');
  }

  get disposed() {
    return this.#mem.get('packed') === 0;
  }

  /** Frees the packed weights. Idempotent. */
  dispose() {
    if (this.disposed) return;
    forget(this);
    this.#mem.freeAll();
    this.#blobKey = null;
    this.#workspaceBytes = 0;
    this.lastCallSpec = null;
  }
}

if (typeof Symbol.dispose === 'symbol') {
  PackedWeights.prototype[Symbol.dispose] = PackedWeights.prototype.dispose;
}

function checkBias(bias, channels, mode, where) {
  if (bias === null || bias === undefined) return null;
  if (bias instanceof Int32Array) {
    checkNumberArray(bias, channels, where, 'bias');
    return Int32Array.from(bias);
  }
  checkNumberArray(bias, channels, where, 'bias');
  if (mode === 'onnx') {
    throw new TypeError(`${where}: mode 'onnx' takes an int32 bias (Int32Array at scale in_scale * w_scale), got ${bias.constructor.name}`);
  }
  const b = Float32Array.from(bias);
  const bad = b.findIndex(Number.isNaN);
  if (bad >= 0) throw new RangeError(`${where}: bias[${bad}] is NaN; a bias must be a number (an infinite one saturates)`);
  return b;
}

// ---- linear -------------------------------------------------------------------------------------

/** Packs W[n][k] (row-major [n, k] in wasm memory) for the GEMM microkernels (src/gemm/gemm.h). */
function packGemm(b, where, ptr, dtype, n, k, zeroPoints) {
  return b.withBuffers([4 * zeroPoints.length], (pz) => {
    b.i32(pz, zeroPoints.length).set(zeroPoints);
    const packed = b.alloc(b.bytes(where, `the packed ${n} x ${k} weights`, 'qw_gemm_pack_size', n, k), where);
    try {
      b.call(where, 'qw_gemm_pack', n, k, ptr, dtype.code, k, 1, pz, zeroPoints.length, packed);
    } catch (error) {
      b.free(packed);
      throw error;
    }
    return packed;
  });
}

/** Weights of a GEMM ([n, k] output channels x depth). */
class PackedGemm extends PackedWeights {
  constructor(where, weight, bias, mode, n, k) {
    if (n === 0 || k === 0 || k >= 32768) throw new RangeError(`${where}: a ${n} x ${k} weight is not supported (need n > 0 and 0 < K < 32768)`);
    super(where, weight, bias, mode, n, (b, r, zeroPoints) => packGemm(b, where, r.ptr, r.dtype, n, k, zeroPoints));
    this.n = n;
    this.k = k;
    this.workspaceBytes = backend().bytes(where, 'the workspace', 'qw_gemm_workspace_size', n, k);
  }
}

/** Weights of a fully-connected layer, packed once: y = x W^T + b. */
export class PackedLinear extends PackedGemm {
  constructor(weight, bias, options) {
    const where = 'packLinear';
    const w = tensorOperand(weight, where, 'weight');
    if (w.shape.length !== 2) throw new RangeError(`${where}: weight must be [outFeatures, inFeatures], got shape ${show(w.shape)}`);
    const [n, k] = w.shape;
    super(where, weight, bias, requantizationOf(options, where, 'pytorch-qnnpack'), n, k);
    this.outFeatures = n;
    this.inFeatures = k;
  }
}

/**
 * Packs a [outFeatures, inFeatures] weight (qint8 / quint8, per tensor or per channel on axis 0).
 * options: { semantics = 'pytorch-qnnpack', mode } (mode: a requantization form, overriding the semantics').
 */
export function packLinear(weight, bias = null, options = {}) {
  return new PackedLinear(weight, bias, options);
}

/** Runs one GEMM: m rows of 8-bit activations at xp times packed weights, into y's storage. */
function gemm(where, weights, blob, m, xp, xr, yp, yStride, ws = weights.workspace(weights.workspaceBytes)) {
  const b = backend();
  b.call(where, 'qw_gemm', m, weights.n, weights.k, xp, weights.k, xr.dtype.code, xr.quant.zeroPoint, weights.packedPtr, blob, yp, yStride, ws);
}

/**
 * Quantized linear layer (torch.ao.nn.quantized.Linear): x [..., inFeatures] -> [..., outFeatures].
 * options: { scale, zeroPoint, dtype = 'quint8', relu = false, clampMin, clampMax, semantics, mode }; without
 * semantics / mode, the requantization form the weights were packed with.
 */
export function linear(x, weights, options) {
  const where = 'linear';
  const xr = activationOperand(x, where);
  if (!(weights instanceof PackedLinear)) throw new TypeError(`${where}: weights must come from packLinear(), got ${show(weights)}`);
  const { mode, out } = callSpec(options, weights, where);
  const k = weights.inFeatures;
  const n = weights.outFeatures;
  if (xr.shape.length === 0 || xr.shape[xr.shape.length - 1] !== k) {
    throw new RangeError(`${where}: input shape ${show(xr.shape)} must end in inFeatures = ${k}`);
  }
  const m = numelOf(xr.shape) / k;
  const blob = weights.requantization(xr.quant.scale, out, mode, where);
  return produce(newTensor(xr.shape.with(-1, n), out.dtype, out.scale, out.zeroPoint, undefined, where), (y) =>
    withContiguous(x, where, (xp) => gemm(where, weights, blob, m, xp, xr, raw(y, where).ptr, n * out.dtype.bytes)));
}

// ---- conv2d -------------------------------------------------------------------------------------

/**
 * PyTorch's x86 engine (2.x) sends a convolution to oneDNN when its weights are symmetric (every zero point 0) and
 * groups <= 100 (on AVX512-VNNI hosts, where it was measured: docs/pytorch2.md), every other one to FBGEMM.
 */
function x86ConvForm(weightZeroPoints, groups) {
  return Array.from(weightZeroPoints).every((z) => z === 0) && groups <= 100 ? 'onednn' : 'fbgemm';
}

/** Weights of a 2-D convolution, packed once, with the convolution's geometry. */
export class PackedConv2d extends PackedWeights {
  x86Form(form) {
    return form === 'x86' ? x86ConvForm(this.weightZeroPoints, this.geometry.groups) : form;
  }

  constructor(weight, bias, options = {}) {
    const where = 'packConv2d';
    const { stride = 1, padding = 0, dilation = 1, groups = 1 } = options ?? {};
    const w = tensorOperand(weight, where, 'weight');
    if (w.shape.length !== 4) throw new RangeError(`${where}: weight must be [outChannels, inChannels / groups, kH, kW], got shape ${show(w.shape)}`);
    const geometry = convGeometry(w.shape, { stride, padding, dilation, groups }, where);
    const { outC, kh, kw } = geometry;
    const inCg = w.shape[1];
    if (outC === 0 || inCg === 0 || kh === 0 || kw === 0) throw new RangeError(`${where}: weight shape ${show(w.shape)} has an empty dimension`);
    const form = requantizationOf(options, where, 'pytorch-qnnpack');
    const weightZps = w.quant.scheme === 'per_tensor_affine' ? [w.quant.zeroPoint] : w.quant.zeroPoints;
    super(where, weight, bias, form === 'x86' ? x86ConvForm(weightZps, geometry.groups) : form, outC, (b, r, zeroPoints) => {
      // The packing needs channels and kernel only; the spatial size of a call comes later.
      const shape = convShapeStruct(geometry, 1, (kh - 1) * geometry.dilation[0] + 1, (kw - 1) * geometry.dilation[1] + 1);
      return b.withBuffers([64, 4 * zeroPoints.length], (ps, pz) => {
        b.i32(ps, 16).set(shape);
        b.i32(pz, zeroPoints.length).set(zeroPoints);
        const ptr = b.alloc(b.bytes(where, `the packed weights of shape ${show(w.shape)}`, 'qw_conv2d_pack_size', ps), where);
        try {
          b.call(where, 'qw_conv2d_pack', ps, r.ptr, r.dtype.code, pz, zeroPoints.length, ptr);
        } catch (error) {
          b.free(ptr);
          throw error;
        }
        return ptr;
      });
    });
    this.geometry = geometry;
  }

  #lastCall = null;

  dispose() {
    this.#lastCall = null;
    super.dispose();
  }

  /**
   * @internal What a call on an input [batch, inC, h, w] needs besides its data: the output shape and strides, and
   * the qw_conv2d_shape in wasm memory (owned by the weights). Kept for the next call of the same size (a model's
   * layer sees one size run after run).
   */
  callGeometry(batch, h, w, where) {
    const last = this.#lastCall;
    if (last !== null && last.batch === batch && last.h === h && last.w === w) return last;
    const g = this.geometry;
    const [oh, ow] = convOutputSize(g, h, w, where);
    const shape = Object.freeze([batch, g.outC, oh, ow]);
    checkBytes(numelOf(shape), 1, where, () => `the output of shape ${show(shape)}`);
    const b = backend();
    this.#lastCall = null;
    const shapePtr = this.ownedBuffer('shape', 64, where);
    b.i32(shapePtr, 16).set(convShapeStruct(g, batch, h, w));
    this.#lastCall = { batch, h, w, shape, strides: Object.freeze(channelsLastStrides(shape)), shapePtr };
    return this.#lastCall;
  }
}

/**
 * Packs a convolution weight [outChannels, inChannels / groups, kH, kW]. options: { stride, padding
 * (number, [h, w] or [top, left, bottom, right]), dilation, groups, semantics, mode }.
 */
export function packConv2d(weight, bias = null, options = {}) {
  return new PackedConv2d(weight, bias, options);
}

/**
 * Quantized 2-D convolution (torch.ao.nn.quantized.Conv2d): x [N, C, H, W] -> [N, outC, outH, outW],
 * returned stored channels-last. options: { scale, zeroPoint, dtype, relu, clampMin, clampMax, semantics, mode }.
 */
export function conv2d(x, weights, options) {
  return conv2dAs('conv2d', x, weights, options);
}

/** What a conv2d call computes before its kernel: every check, the kept geometry and the requantization blob. */
function conv2dSetup(where, x, weights, options) {
  const xr = activationOperand(x, where);
  if (!(weights instanceof PackedConv2d)) throw new TypeError(`${where}: weights must come from packConv2d(), got ${show(weights)}`);
  const { mode, out } = callSpec(options, weights, where);
  const g = weights.geometry;
  if (xr.shape.length !== 4 || xr.shape[1] !== g.inC) {
    throw new RangeError(`${where}: input must be [N, ${g.inC}, H, W], got shape ${show(xr.shape)}`);
  }
  const [batch, , h, w] = xr.shape;
  const call = weights.callGeometry(batch, h, w, where);
  checkBytes(numelOf(call.shape), out.dtype.bytes, where, () => `the output of shape ${show(call.shape)}`);
  const blob = weights.requantization(xr.quant.scale, out, mode, where);
  return { xr, mode, out, call, blob };
}

function conv2dAs(where, x, weights, options) {
  const { xr, out, call, blob } = conv2dSetup(where, x, weights, options);
  const b = backend();
  return produce(newTensor(call.shape, out.dtype, out.scale, out.zeroPoint, call.strides, where), (y) =>
    withChannelsLast(xr, where, (xp) => {
      const ws = weights.workspace(b.bytes(where, 'the workspace', 'qw_conv2d_workspace_size', call.shapePtr), where);
      b.call(where, 'qw_conv2d', call.shapePtr, xp, xr.dtype.code, xr.quant.zeroPoint, weights.packedPtr, blob, raw(y, where).ptr, ws);
    }));
}

/**
 * @internal conv2d(x, weights, options) prepared for a model layer, which calls it run after run with inputs of one
 * shape and options that do not change (frozen): the checks, the geometry and the output's qparams settled once
 * from x. Returns null when x is not stored channels-last, else { accepts(t), run(t), dispose() }: run(t) equals
 * conv2d(t, weights, options) for every t that accepts(t) (x's shape, dtype, per-tensor qparams and channels-last
 * strides); dispose() frees the shape struct it keeps in wasm memory.
 */
export function preparedConv2d(x, weights, options) {
  const where = 'conv2d';
  const { xr, mode, out, call } = conv2dSetup(where, x, weights, options);
  if (!isChannelsLast(xr)) return null;
  const b = backend();
  const shapePtr = b.outsidePlan(() => b.alloc(64, where)); // its own: the weights keep only the last call's
  b.i32(shapePtr, 16).set(b.i32(call.shapePtr, 16));
  const { shape, strides } = call;
  const xRecord = operandRecord(xr);
  const { dtype, quant: { scale, zeroPoint } } = xr;
  const yQuant = perTensor(out.scale, out.zeroPoint);
  const yBytes = Math.max(1, numelOf(shape)) * out.dtype.bytes;
  const wsBytes = b.bytes(where, 'the workspace', 'qw_conv2d_workspace_size', shapePtr);
  let alive = true;
  return {
    accepts: (t) => alive && matchesRecord(raw(t, where), xRecord),
    run(t) {
      const blob = weights.requantization(scale, out, mode, where); // the weights' cached blob (checks disposal)
      const ws = weights.workspace(wsBytes, where);
      const storage = newStorage(yBytes, where);
      try {
        b.call(where, 'qw_conv2d', shapePtr, tensorPtr(t, where), dtype.code, zeroPoint, weights.packedPtr, blob, storage.ptr, ws);
      } catch (error) {
        storage.release();
        throw error;
      }
      return wrapStorage(storage, 0, shape, strides, out.dtype, yQuant);
    },
    dispose() {
      if (alive) b.free(shapePtr);
      alive = false;
    },
  };
}

// ---- matmul (ONNX QLinearMatMul) ---------------------------------------------------------------

/** Weights of a matmul's right operand B [K, N], packed once. */
export class PackedMatMul extends PackedGemm {
  constructor(bMatrix, options = {}, where = 'packMatMul') {
    const r = tensorOperand(bMatrix, where, 'b');
    if (r.shape.length !== 2) throw new RangeError(`${where}: b must be [K, N], got shape ${show(r.shape)}`);
    const [k, n] = r.shape;
    // Per-column qparams live on axis 1 of B; the kernels want them per output channel.
    const q = r.quant;
    if (q.scheme === 'per_channel_affine' && q.axis !== 1) {
      throw new RangeError(`${where}: per-channel b must be quantized along axis 1 (columns), got axis ${q.axis}`);
    }
    const mode = requantizationOf(options, where, 'onnx');
    const asOutputChannels = bMatrix.transpose(0, 1); // [N, K]: columns become output channels
    try {
      super(where, asOutputChannels, null, mode, n, k);
    } finally {
      asOutputChannels.dispose();
    }
  }
}

/** Packs a matmul's right operand b [K, N]. options: { semantics = 'onnx', mode }. */
export function packMatMul(b, options = {}) {
  return new PackedMatMul(b, options);
}

/**
 * Quantized matmul (ONNX QLinearMatMul): a [..., M, K] x b [..., K, N] -> [..., M, N] with numpy
 * broadcasting of the batch dimensions. b is a QTensor (packed per call) or a PackedMatMul (2-D).
 * options: { scale, zeroPoint, dtype, semantics = 'onnx', mode }.
 */
export function matmul(a, b, options) {
  return matmulAs('matmul', a, b, options);
}

function matmulAs(where, a, bIn, options) {
  const ar = activationOperand(a, where, 'a');
  const packed = bIn instanceof PackedMatMul;
  const overrides = options?.mode !== undefined || options?.semantics !== undefined;
  const mode = packed && !overrides ? bIn.mode : requantizationOf(options, where, 'onnx');
  const out = outputSpec(options, where, mode);
  const rank = ar.shape.length;
  if (rank < 2) throw new RangeError(`${where}: a must have at least 2 dimensions, got shape ${show(ar.shape)}`);
  const m = ar.shape[rank - 2], k = ar.shape[rank - 1];
  if (packed) {
    if (bIn.k !== k) throw new RangeError(`${where}: a's K = ${k} does not match b's K = ${bIn.k}`);
    return runMatMul(a, ar, [bIn], ar.shape.with(-1, bIn.n), out, mode, where, pickOnly);
  }
  const br = tensorOperand(bIn, where, 'b');
  if (br.shape.length < 2) throw new RangeError(`${where}: b must have at least 2 dimensions, got shape ${show(br.shape)}`);
  const kb = br.shape[br.shape.length - 2], n = br.shape[br.shape.length - 1];
  if (kb !== k) throw new RangeError(`${where}: a [..., ${m}, ${k}] and b [..., ${kb}, ${n}] do not multiply`);
  const bBatch = sliceDims(br.shape, 0, -2);
  const batch = broadcastShape(sliceDims(ar.shape, 0, -2), bBatch, where);
  // One packed B per batch matrix of b; each output batch picks its a and b matrices by broadcasting.
  const packs = [];
  try {
    for (let i = 0; i < numelOf(bBatch); i++) {
      const idx = unravel(i, bBatch);
      let view = bIn;
      for (let d = 0; d < idx.length; d++) {
        const next = view.select(0, idx[d]);
        if (view !== bIn) view.dispose();
        view = next;
      }
      try {
        packs.push(new PackedMatMul(view, { mode }, where));
      } finally {
        if (view !== bIn) view.dispose();
      }
    }
    return runMatMul(a, ar, packs, [...batch, m, n], out, mode, where, (outIndex) => broadcastIndex(outIndex, batch, bBatch));
  } finally {
    for (const p of packs) p.dispose();
  }
}

/** The b matrix of every output batch when b is one matrix. */
const pickOnly = () => 0;

function runMatMul(a, ar, packs, shape, out, mode, where, pickB) {
  const batch = sliceDims(shape, 0, -2);
  const aBatch = sliceDims(ar.shape, 0, -2);
  const m = shape[shape.length - 2], n = shape[shape.length - 1];
  const blobs = packs.map((p) => p.requantization(ar.quant.scale, out, mode, where));
  const ws = packs[0].workspace(packs[0].workspaceBytes); // every pack has the same n and k
  return produce(newTensor(shape, out.dtype, out.scale, out.zeroPoint, undefined, where), (y) =>
    withContiguous(a, where, (ap) => {
      const yp = raw(y, where).ptr;
      const aBytes = m * packs[0].k * ar.dtype.bytes;
      for (let i = 0; i < numelOf(batch); i++) {
        const ai = batch.length === 0 ? 0 : broadcastIndex(i, batch, aBatch);
        const p = pickB(i);
        gemm(where, packs[p], blobs[p], m, ap + ai * aBytes, ar, yp + i * m * n * out.dtype.bytes, n * out.dtype.bytes, ws);
      }
    }));
}

function unravel(i, shape) {
  const idx = new Array(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    idx[d] = i % shape[d];
    i = Math.floor(i / shape[d]);
  }
  return idx;
}

/** The flat index in `src` (broadcast to `full`) of flat index i of `full`. */
function broadcastIndex(i, full, src) {
  const idx = unravel(i, full).slice(full.length - src.length);
  let flat = 0;
  for (let d = 0; d < src.length; d++) flat = flat * src[d] + (src[d] === 1 ? 0 : idx[d]);
  return flat;
}

// ---- dynamic quantization (ONNX DynamicQuantizeLinear, MatMulInteger, ConvInteger) -------------

/**
 * ONNX DynamicQuantizeLinear: uint8 qparams from the data's range (widened to include 0), then the
 * onnx-rule quantize. Returns { y, scale, zeroPoint } with ONNX's y_scale and y_zero_point; for an
 * all-zero input ONNX's scale is 0, and y (all zeros) carries scale 1 so that it stays a valid tensor.
 */
export function dynamicQuantizeLinear(data, shape) {
  const where = 'dynamicQuantizeLinear';
  const b = backend();
  const dims = checkShape(shape ?? [data?.length], where, 'shape', 4);
  const n = numelOf(dims);
  checkNumberArray(data, n, where, 'data');
  return b.withBuffers([4 * n], (px) => {
    b.f32(px, n).set(data);
    return dynamicQuantizeAt(px, dims, where);
  }, where);
}

/**
 * dynamicQuantizeLinear of float32 data already in wasm memory at `ptr` (the model's activations). With
 * { onnxruntime: true } the qparams are onnxruntime's where the ONNX function body has none (an all-zero or
 * subnormal range: reference.js dynamicQParams, which its DynamicQuantizeLinear and DynamicQuantizeMatMul share).
 */
export function dynamicQuantizeAt(ptr, dims, where, { onnxruntime = false } = {}) {
  const b = backend();
  const n = numelOf(dims);
  const storage = newStorage(Math.max(1, n), where);
  let [scale, zeroPoint] = b.withBuffers([8], (pq) => {
    const status = b.exports.qw_dynamic_quantize(n, ptr, storage.ptr, pq, pq + 4);
    if (status !== 0) {
      storage.release();
      throw new RangeError(`${where}: data must be finite numbers (NaN or Infinity has no uint8 range)`);
    }
    return [b.f32(pq, 1)[0], b.i32(pq + 4, 1)[0]];
  }, where);
  if (onnxruntime && (scale === 0 || !Number.isFinite(Math.fround(1 / scale)))) {
    ({ scale, zeroPoint } = dynamicQParams(b.f32(ptr, n)));
    b.call(where, 'qw_quantize', n, ptr, storage.ptr, QW_DTYPE.QW_QUINT8, QW_ROUNDING.QW_ROUND_ONNX, scale, zeroPoint);
  }
  const y = wrapStorage(storage, 0, dims, contiguousStrides(dims), dtypeInfo('quint8', where), perTensor(scale === 0 ? 1 : scale, zeroPoint));
  return { y, scale, zeroPoint };
}

/** ONNX MatMulInteger: the exact int32 sums of (a - a_zp)(b - b_zp) as a qint32 tensor (scale 1). */
export function matmulInteger(a, b) {
  return matmulAs('matmulInteger', a, b, { mode: 'none' });
}

/** ONNX ConvInteger: the exact int32 sums as a qint32 tensor (scale 1); weights from packConv2d(w, null, { mode: 'none', ... }). */
export function convInteger(x, weights) {
  return conv2dAs('convInteger', x, weights, { mode: 'none' });
}

// ---- dynamic linear (torch.ao.nn.quantized.dynamic.Linear, com.microsoft DynamicQuantizeMatMul) ---------------

/**
 * Dynamic quantized linear: float x [..., inFeatures] (data and shape) times packed int8 weights, float output.
 * The input is quantized per call with qparams from its own range. Forms (semantics.js `dynamic`, options.mode):
 *   'qnnpack'  PyTorch's qnnpack engine (quantize_dynamic's Linear): ATen's ChooseQuantizationParams over [0, 255],
 *              quantize by the profile's rounding ('torch' for pytorch-qnnpack, 'fbgemm' for pytorch2-qnnpack),
 *              exact int32 sums, y = (float)acc * (x_s * w_s) + bias, two roundings;
 *   'fbgemm'   PyTorch 2.x's fbgemm / x86 engines: ChooseQuantizationParams over [0, 127] (reduceRange, the module's
 *              default), FBGEMM's quantize, y = fma((float)acc, x_s * w_s, bias) (one rounding);
 *   'onnx'     com.microsoft DynamicQuantizeMatMul as ONNX Runtime computes it (uint8 over [min(x, 0), max(x, 0)]).
 * The bias is the one packed with the weights (floats). options: { semantics = 'pytorch-qnnpack', mode, relu =
 * false, reduceRange (default: true for 'fbgemm', as the module calls it; ignored by 'qnnpack', as PyTorch does) }.
 * Returns { data: Float32Array, shape, scale, zeroPoint } (the input's dynamic qparams).
 */
export function dynamicLinear(x, shape, weights, options = {}) {
  const where = 'dynamicLinear';
  if (!(weights instanceof PackedLinear)) throw new TypeError(`${where}: weights must come from packLinear(), got ${show(weights)}`);
  const semantics = semanticsOf(options, where, 'pytorch-qnnpack');
  const form = semantics.form('dynamic', options?.mode);
  const dims = checkShape(shape ?? [x?.length], where);
  const k = weights.inFeatures;
  const n = weights.outFeatures;
  if (dims.length === 0 || dims[dims.length - 1] !== k) throw new RangeError(`${where}: shape ${show(dims)} must end in inFeatures = ${k}`);
  const count = numelOf(dims);
  checkNumberArray(x, count, where, 'x');
  const { relu = false, reduceRange = form === 'fbgemm' } = options ?? {};
  if (typeof relu !== 'boolean' || typeof reduceRange !== 'boolean') throw new TypeError(`${where}: relu and reduceRange must be booleans`);
  const bias = weights.bias;
  if (bias !== null && !(bias instanceof Float32Array)) throw new TypeError(`${where}: the weights' bias must be floats (packLinear with a number array or Float32Array), got Int32Array`);
  const m = count / k;
  const outShape = [...dims.slice(0, -1), n];
  if (form === 'onnx') return ortDynamicMatMul(x, m, n, k, weights, relu, outShape, where);
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < count; i++) {
    const v = Math.fround(x[i]);
    if (!Number.isFinite(v)) throw new RangeError(`${where}: x must be finite numbers, got ${show(x[i])} at ${i}`);
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (count === 0) lo = hi = 0;
  const { scale, zeroPoint } = chooseQParamsDynamic(lo, hi, 0, form === 'fbgemm' && reduceRange ? 127 : 255);
  const rounding = form === 'fbgemm' ? 'fbgemm' : semantics.form('rounding', options?.rounding);
  const xq = quantizePerTensor(x, dims, scale, zeroPoint, 'quint8', { rounding });
  let acc;
  try {
    acc = linear(xq, weights, { mode: 'none' });
  } finally {
    xq.dispose();
  }
  let sums;
  try {
    sums = acc.intRepr();
  } finally {
    acc.dispose();
  }
  const ws = weights.weightScales;
  const mult = Float32Array.from({ length: n }, (_, c) => Math.fround(Math.fround(scale) * Math.fround(ws[ws.length === 1 ? 0 : c])));
  const data = new Float32Array(m * n);
  for (let i = 0; i < m * n; i++) {
    const c = i % n;
    const a = Math.fround(sums[i]);
    let y;
    if (bias === null) y = Math.fround(a * mult[c]);
    else if (form === 'fbgemm') y = fmaf(a, mult[c], bias[c]);
    else y = Math.fround(Math.fround(a * mult[c]) + bias[c]);
    data[i] = relu && y < 0 ? 0 : y;
  }
  return { data, shape: outShape, scale, zeroPoint };
}

/** The 'onnx' form: qw_dynamic_matmul (ONNX Runtime's DynamicQuantizeMatMul) on the packed weights. */
function ortDynamicMatMul(x, m, n, k, weights, relu, shape, where) {
  const b = backend();
  const ws = weights.weightScales;
  const bias = weights.bias;
  const out = b.withBuffers([4 * m * k, 4 * ws.length, 4 * n, 4 * m * n, b.size('qw_dynamic_matmul_workspace_size', m, n, k)], (px, ps, pb, py, pw) => {
    b.f32(px, m * k).set(x);
    b.f32(ps, ws.length).set(Float32Array.from(ws));
    if (bias !== null) b.f32(pb, n).set(bias);
    b.call(where, 'qw_dynamic_matmul', m, n, k, px, weights.packedPtr, ps, ws.length, bias === null ? 0 : pb, py, pw);
    return Float32Array.from(b.f32(py, m * n));
  });
  if (relu) for (let i = 0; i < out.length; i++) if (out[i] < 0) out[i] = 0;
  return { data: out, shape, scale: null, zeroPoint: null };
}
