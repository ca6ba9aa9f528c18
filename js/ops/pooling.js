// Quantized pooling in the form the call's semantics names (semantics.js `pooling`, or options.mode): PyTorch's
// qnnpack engine ('qnnpack': QNNPACK's kernels where that engine reaches them, quint8 without ceil_mode, the generic
// ones elsewhere), PyTorch 1.13's generic kernels ('generic'), those kernels in PyTorch 2.x's x86 builds ('fbgemm':
// their channels-last scalar loops add the zero point before rounding), or ONNX Runtime's ('onnx'). They round
// differently. Outputs keep the input's qparams (ONNX Runtime's forms may be given others) and the
// torch forms store them channels-last, like convolutions.
import { backend } from '../runtime/runtime.js';
import { QW_AVG_POOL, QW_POOL2D_SHAPE, structValues } from '../runtime/abi.js';
import { UnsupportedError } from '../errors.js';
import { semanticsOf } from '../semantics.js';
import { f32, roundHalfEven } from '../reference.js';
import { checkBytes, show } from '../tensor/check.js';
import { fromIntRepr } from '../tensor/qtensor.js';
import { channelsLastStrides, pair, withChannelsLast } from '../tensor/layout.js';
import { activationOperand, newTensor, produce, raw } from './op.js';

/** The pooling form of a call: options.mode, or its semantics' (default 'pytorch-qnnpack'). */
const poolingForm = (options, where) => semanticsOf(options, where, 'pytorch-qnnpack').form('pooling', options?.mode);
/** Forms that take QNNPACK's kernels where PyTorch's qnnpack engine does (quint8, no ceil_mode). */
const QNNPACK_FORMS = new Set(['qnnpack', 'qnnpack2']);
/** Forms whose generic kernels are PyTorch 2.x's x86 builds' (their scalar loops add the zero point before rounding). */
const FBGEMM_GENERIC = new Set(['fbgemm', 'qnnpack2']);

/**
 * PyTorch 2.x's channels-last average pooling kernels run whole vectors of channels through a vector loop that
 * rounds differently from their scalar loop: the channels below floor(C / width) * width, width by ATen's CPU
 * dispatch level (torch.backends.cpu.get_cpu_capability(): 16 for AVX512, 8 for AVX2, none without AVX).
 * options.cpuCapability: 'avx512' (default: the machine qwasm's PyTorch 2.x profiles were checked on), 'avx2' or
 * 'default'.
 */
const VECTOR_WIDTH = Object.freeze({ avx512: 16, avx2: 8, default: 0 });

function vectorChannels(options, channels, where) {
  const capability = options?.cpuCapability ?? 'avx512';
  const width = typeof capability === 'string' ? VECTOR_WIDTH[capability.toLowerCase()] : undefined;
  if (width === undefined) throw new TypeError(`${where}: cpuCapability must be 'avx512', 'avx2' or 'default', got ${show(capability)}`);
  return width === 0 ? 0 : Math.floor(channels / width) * width;
}

function input4d(x, where) {
  const r = activationOperand(x, where);
  if (r.shape.length !== 4) throw new RangeError(`${where}: input must be [N, C, H, W], got shape ${show(r.shape)}`);
  return r;
}

/** A channels-last output [N, C, outH, outW] with the input's qparams, filled by run(backend, shapePtr, xPtr, yPtr) over NHWC data. */
function pool(r, outH, outW, where, run) {
  const b = backend();
  const shape = [r.shape[0], r.shape[1], outH, outW];
  return produce(newTensor(shape, r.dtype, r.quant.scale, r.quant.zeroPoint, channelsLastStrides(shape)), (y) =>
    withChannelsLast(r, where, (xp) => b.withBuffers([4 * QW_POOL2D_SHAPE.length], (ps) => run(b, ps, xp, raw(y, where).ptr))));
}

function outputSize(b, where, inSize, k, s, p, d, ceil, dim) {
  const o = b.exports.qw_pool_output_size(inSize, k, s, p, d, ceil ? 1 : 0);
  if (o <= 0) {
    throw new RangeError(`${where}: kernel ${k}, stride ${s}, padding ${p}, dilation ${d} do not fit input size ${inSize} along ${dim} (padding must be at most half the kernel)`);
  }
  return o;
}

/** Writes the qw_pool2d_shape of a pooling of r into wasm memory at ps. */
function writePoolShape(b, ps, r, outH, outW, k, s, p, d) {
  const [n, c, h, w] = r.shape;
  b.i32(ps, QW_POOL2D_SHAPE.length).set(structValues(QW_POOL2D_SHAPE, {
    batch: n, in_h: h, in_w: w, channels: c, out_h: outH, out_w: outW, kernel_h: k[0], kernel_w: k[1], stride_h: s[0],
    stride_w: s[1], pad_top: p[0], pad_left: p[1], dilation_h: d[0], dilation_w: d[1],
  }));
}

/**
 * Quantized max_pool2d. options: { kernelSize, stride = kernelSize, padding = 0, dilation = 1, ceilMode = false,
 * semantics = 'pytorch-qnnpack' }. With the 'qnnpack' form on quint8 without ceilMode, window positions outside the
 * input read the nearest edge pixel (QNNPACK's behaviour, visible only when dilation > 1 meets padding); the other
 * forms skip them.
 */
export function maxPool2d(x, options = {}) {
  const where = 'maxPool2d';
  const r = input4d(x, where);
  const { kernelSize, stride, padding = 0, dilation = 1, ceilMode = false } = options ?? {};
  const form = poolingForm(options, where);
  const k = pair(kernelSize, 'kernelSize', where, 1);
  const s = pair(stride ?? k, 'stride', where, 1);
  const p = pair(padding, 'padding', where, 0);
  const d = pair(dilation, 'dilation', where, 1);
  const b = backend();
  const oh = outputSize(b, where, r.shape[2], k[0], s[0], p[0], d[0], ceilMode, 'H');
  const ow = outputSize(b, where, r.shape[3], k[1], s[1], p[1], d[1], ceilMode, 'W');
  const clampToEdge = QNNPACK_FORMS.has(form) && r.dtype.name === 'quint8' && !ceilMode;
  return pool(r, oh, ow, where, (be, ps, xp, yp) => {
    writePoolShape(be, ps, r, oh, ow, k, s, p, d);
    be.withBuffers([be.size('qw_max_pool2d_workspace_size', ps)], (ws) =>
      be.call(where, 'qw_max_pool2d', ps, xp, r.dtype.code, yp, ws, clampToEdge ? 1 : 0));
  });
}

/**
 * Quantized avg_pool2d. options: { kernelSize, stride = kernelSize, padding = 0 (number, [h, w]), ceilMode = false,
 * countIncludePad = true, divisorOverride, semantics = 'pytorch-qnnpack', scale, zeroPoint }. Forms: 'qnnpack'
 * (PyTorch's qnnpack engine: quint8 without ceilMode counts padding as the zero point and divides by kH * kW
 * whatever countIncludePad and divisorOverride say; other calls take the generic kernel), 'generic' (PyTorch's
 * generic kernel), 'onnx' (ONNX Runtime's QLinearAveragePool, NCHW; padding may be [top, left, bottom, right];
 * output qparams { scale, zeroPoint } default to the input's).
 */
export function avgPool2d(x, options = {}) {
  const form = poolingForm(options, 'avgPool2d');
  return form === 'onnx' ? ortAvgPool2d(x, options, 'avgPool2d') : torchAvgPool2d(x, options ?? {}, form, false);
}

/**
 * avg_pool2d as PyTorch computes it for a tensor in channels_last memory format: the generic path takes its
 * channels-last kernel (zero point added after rounding). For the model loader, whose files say which layout
 * PyTorch saw (QLinearAveragePool channels_last = 1). Not part of the public API.
 */
export function avgPool2dChannelsLast(x, options = {}) {
  return torchAvgPool2d(x, options, poolingForm(options, 'avgPool2d'), true);
}

function torchAvgPool2d(x, options, form, channelsLast) {
  const where = 'avgPool2d';
  const r = input4d(x, where);
  const { kernelSize, stride, padding = 0, ceilMode = false, countIncludePad = true, divisorOverride = null } = options;
  checkKeepsQParams(options, r, where);
  const k = pair(kernelSize, 'kernelSize', where, 1);
  const s = pair(stride ?? k, 'stride', where, 1);
  const p = pair(padding, 'padding', where, 0);
  if (divisorOverride !== null && !(Number.isInteger(divisorOverride) && divisorOverride > 0)) {
    throw new RangeError(`${where}: divisorOverride must be a positive integer, got ${show(divisorOverride)}`);
  }
  const b = backend();
  const oh = outputSize(b, where, r.shape[2], k[0], s[0], p[0], 1, ceilMode, 'H');
  const ow = outputSize(b, where, r.shape[3], k[1], s[1], p[1], 1, ceilMode, 'W');
  const [, c, h, w] = r.shape;
  const vector = vectorChannels(options, c, where);
  // A tensor with C == 1 or H * W == 1 is channels-last as well as contiguous; PyTorch then takes that kernel.
  const lastKernel = FBGEMM_GENERIC.has(form) ? QW_AVG_POOL.QW_AVG_POOL_GENERIC_CHANNELS_LAST_FBGEMM : QW_AVG_POOL.QW_AVG_POOL_GENERIC_CHANNELS_LAST;
  const kernel = QNNPACK_FORMS.has(form) && r.dtype.name === 'quint8' && !ceilMode ? QW_AVG_POOL.QW_AVG_POOL_QNNPACK
    : channelsLast || c === 1 || h * w === 1 ? lastKernel : QW_AVG_POOL.QW_AVG_POOL_GENERIC;
  return pool(r, oh, ow, where, (be, ps, xp, yp) => {
    writePoolShape(be, ps, r, oh, ow, k, s, p, [1, 1]);
    be.call(where, 'qw_avg_pool2d', ps, xp, r.dtype.code, r.quant.scale, r.quant.zeroPoint, yp, kernel, countIncludePad ? 1 : 0, divisorOverride ?? 0, vector);
  });
}

/** PyTorch's pooling keeps the input's qparams: options may not ask for others. */
function checkKeepsQParams(options, r, where) {
  if ((options.scale !== undefined && options.scale !== r.quant.scale) || (options.zeroPoint !== undefined && options.zeroPoint !== r.quant.zeroPoint)) {
    throw new UnsupportedError(`${where}: PyTorch's quantized pooling keeps the input's qparams; output qparams that differ need { semantics: 'onnx' }`);
  }
}

/**
 * Quantized adaptive_avg_pool2d to outputSize ([h, w] or a number). options: { semantics = 'pytorch-qnnpack', mode,
 * cpuCapability }. With the 'qnnpack' form, sizes that divide the input run as a QNNPACK average pool (quint8);
 * everything else as PyTorch's generic kernel, which averages the raw integers without subtracting the zero point.
 */
export function adaptiveAvgPool2d(x, outputSize, options = {}) {
  return torchAdaptiveAvgPool2d(x, outputSize, options, false);
}

/**
 * adaptive_avg_pool2d as PyTorch computes it for a tensor in channels_last memory format: the 'qnnpack' form as
 * adaptiveAvgPool2d, the generic forms take the channels-last kernel (the zero point subtracted; in PyTorch 2.x's
 * x86 builds ('fbgemm') whole vectors of channels rounded by FBGEMM's quantize, see cpuCapability).
 */
export function adaptiveAvgPool2dChannelsLast(x, outputSize, options = {}) {
  return torchAdaptiveAvgPool2d(x, outputSize, options, true);
}

function torchAdaptiveAvgPool2d(x, outputSize, options, channelsLast) {
  const where = 'adaptiveAvgPool2d';
  const r = input4d(x, where);
  const form = poolingForm(options, where);
  if (form === 'onnx') throw new UnsupportedError(`${where}: ONNX has no adaptive average pooling`);
  const [oh, ow] = pair(outputSize, 'outputSize', where, 1);
  const [, c, h, w] = r.shape;
  const qnnpack = QNNPACK_FORMS.has(form) && h % oh === 0 && w % ow === 0 && r.dtype.name === 'quint8';
  const k = [h / oh, w / ow];
  const vector = vectorChannels(options, c, where);
  return pool(r, oh, ow, where, (be, ps, xp, yp) => {
    if (qnnpack) {
      writePoolShape(be, ps, r, oh, ow, k, k, [0, 0], [1, 1]);
      be.call(where, 'qw_avg_pool2d', ps, xp, r.dtype.code, r.quant.scale, r.quant.zeroPoint, yp, QW_AVG_POOL.QW_AVG_POOL_QNNPACK, 1, 0, 0);
    } else {
      writePoolShape(be, ps, r, oh, ow, [1, 1], [1, 1], [0, 0], [1, 1]);
      const lastKernel = FBGEMM_GENERIC.has(form) ? QW_AVG_POOL.QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST_FBGEMM : QW_AVG_POOL.QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST;
      const kernel = channelsLast || c === 1 || h * w === 1 ? lastKernel : QW_AVG_POOL.QW_AVG_POOL_ADAPTIVE;
      be.call(where, 'qw_avg_pool2d', ps, xp, r.dtype.code, r.quant.scale, r.quant.zeroPoint, yp, kernel, 1, 0, vector);
    }
  });
}

/**
 * Quantized mean over the spatial dimensions [2, 3] (global average pooling). options: { semantics =
 * 'pytorch-qnnpack', mode, scale, zeroPoint }. Forms: 'qnnpack' (PyTorch's qnnpack engine: quint8 takes QNNPACK's
 * global average pool, zp + rint(sum(q - zp) * (s / (s * n)))); 'generic' / 'fbgemm' (the other engines), and qint8
 * on any PyTorch engine: ATen's qmean_inner_dim kernel, rint((float)sum(q) / n), the zero point never subtracted;
 * 'onnx' (ONNX Runtime's QLinearGlobalAveragePool; output qparams default to the input's). PyTorch's forms keep the
 * input's qparams.
 */
export function mean(x, dims, keepdim = false, options = {}) {
  const where = 'mean';
  const r = input4d(x, where);
  if (!Array.isArray(dims) || dims.length !== 2 || dims[0] !== 2 || dims[1] !== 3) {
    throw new RangeError(`${where}: only dims [2, 3] (global average pooling) are supported, got ${show(dims)}`);
  }
  const form = poolingForm(options, where);
  let y;
  if (form === 'onnx') {
    y = ortGlobalAvgPool(x, r, options, where);
  } else {
    checkKeepsQParams(options ?? {}, r, where);
    const [, , h, w] = r.shape;
    const kernel = QNNPACK_FORMS.has(form) && r.dtype.name === 'quint8' ? QW_AVG_POOL.QW_AVG_POOL_QNNPACK : QW_AVG_POOL.QW_AVG_POOL_MEAN;
    y = pool(r, 1, 1, where, (be, ps, xp, yp) => {
      writePoolShape(be, ps, r, 1, 1, [h, w], [h, w], [0, 0], [1, 1]);
      be.call(where, 'qw_avg_pool2d', ps, xp, r.dtype.code, r.quant.scale, r.quant.zeroPoint, yp, kernel, 1, 0, 0);
    });
  }
  if (keepdim) return y;
  try {
    return y.reshape([r.shape[0], r.shape[1]]);
  } finally {
    y.dispose();
  }
}

// ---- ONNX Runtime's forms (contrib_ops/cpu/quantization/qlinear_pool.cc, mlas/lib/qlgavgpool.cpp), NCHW --------
// They run on the host: small, and their float steps are easiest to follow one by one.

/** Output qparams of an ONNX Runtime pooling: options' or the input's. */
function ortOutput(options, r) {
  return { scale: options?.scale ?? r.quant.scale, zeroPoint: options?.zeroPoint ?? r.quant.zeroPoint };
}

/**
 * QLinearGlobalAveragePool: integer sum minus x_zero_point * N, times scale = x_scale / (y_scale * N) (float32),
 * rounded half to even, + y_zero_point, saturated (qw_global_avg_pool_ort, on the channels-last data). ONNX Runtime
 * rejects a scale outside [2^-32, 256).
 */
function ortGlobalAvgPool(x, r, options, where) {
  const [nb, c, h, w] = r.shape;
  const out = ortOutput(options, r);
  const n = h * w;
  const scale = f32(f32(r.quant.scale) / f32(f32(out.scale) * n));
  if (!(scale >= 2 ** -32 && scale < 256)) throw new UnsupportedError(`${where}: x_scale / (y_scale * ${n}) = ${scale} is outside ONNX Runtime's range [2^-32, 256)`);
  const shape = [nb, c, 1, 1];
  const b = backend();
  return produce(newTensor(shape, r.dtype, out.scale, out.zeroPoint, channelsLastStrides(shape)), (y) =>
    withChannelsLast(r, where, (xp) => b.call(where, 'qw_global_avg_pool_ort', nb, n, c, xp, r.dtype.code, r.quant.zeroPoint, scale, out.zeroPoint, raw(y, where).ptr)));
}

/** ONNX pooling's output size along one axis: floor, or ceil (a last window may not start in the tail padding). */
function ortOutputSize(inSize, k, stride, padHead, padTail, ceil) {
  const span = (inSize + padHead + padTail - k) / stride + 1;
  if (!ceil) return Math.floor(span);
  let out = Math.ceil(span);
  if ((out - 1) * stride >= inSize + padHead) out--;
  return out;
}

/**
 * QLinearAveragePool (2-D): every input dequantized to float32 (x_scale * (x - x_zero_point)), summed in window
 * order in float32, divided by the window size (the clipped window unless countIncludePad), then
 * y = saturate(nearbyint(sum / y_scale + y_zero_point)). The zero point is added in float32 before rounding, so an
 * int8 group and the same group converted to uint8 can round differently. A kernel covering the whole unpadded
 * image is the global pool.
 */
function ortAvgPool2d(x, options, where) {
  const r = input4d(x, where);
  const { kernelSize, stride, padding = 0, ceilMode = false, countIncludePad = false } = options;
  const k = pair(kernelSize, 'kernelSize', where, 1);
  const strides = pair(stride ?? 1, 'stride', where, 1);
  const pads = Array.isArray(padding) && padding.length === 4 ? padding : [...pair(padding, 'padding', where, 0), ...pair(padding, 'padding', where, 0)];
  if (!pads.every((v) => Number.isInteger(v) && v >= 0)) throw new RangeError(`${where}: padding must be non-negative integers, got ${show(padding)}`);
  const [nb, c, h, w] = r.shape;
  if (k[0] === h && k[1] === w && pads.every((v) => v === 0)) return ortGlobalAvgPool(x, r, options, where); // as ORT does
  const out = ortOutput(options, r);
  const oh = ortOutputSize(h, k[0], strides[0], pads[0], pads[2], ceilMode);
  const ow = ortOutputSize(w, k[1], strides[1], pads[1], pads[3], ceilMode);
  if (!(oh > 0 && ow > 0)) throw new RangeError(`${where}: kernel ${show(k)} does not fit the padded input ${h}x${w}`);
  checkBytes(nb * c * oh * ow, 1, where, () => `the output of shape ${show([nb, c, oh, ow])}`);
  const data = x.intRepr();
  const sx = f32(r.quant.scale);
  const sy = f32(out.scale);
  const deq = new Float32Array(256);
  const off = r.dtype.name === 'qint8' ? 128 : 0;
  for (let v = 0; v < 256; v++) deq[v] = f32(sx * (v - off - r.quant.zeroPoint));
  const y = new data.constructor(nb * c * oh * ow);
  for (let p = 0; p < nb * c; p++) {
    const base = p * h * w;
    for (let ph = 0; ph < oh; ph++) {
      let hs = ph * strides[0] - pads[0];
      const he = Math.min(hs + k[0], h);
      hs = Math.max(hs, 0);
      for (let pw = 0; pw < ow; pw++) {
        let ws = pw * strides[1] - pads[1];
        const we = Math.min(ws + k[1], w);
        ws = Math.max(ws, 0);
        let sum = 0;
        for (let yy = hs; yy < he; yy++) for (let xx = ws; xx < we; xx++) sum = f32(sum + deq[data[base + yy * w + xx] + off]);
        const count = countIncludePad ? k[0] * k[1] : (he - hs) * (we - ws);
        const avg = f32(sum / count);
        y[(p * oh + ph) * ow + pw] = Math.min(r.dtype.max, Math.max(r.dtype.min, roundHalfEven(f32(f32(avg / sy) + out.zeroPoint))));
      }
    }
  }
  return fromIntRepr(y, [nb, c, oh, ow], out.scale, out.zeroPoint, r.dtype.name);
}
