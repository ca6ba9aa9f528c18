// Quantized pooling with PyTorch's semantics, including which of its kernels a call reaches (the
// qnnpack engine's, or the generic ones), since they round differently. Outputs keep the input's
// qparams and are stored channels-last, like convolutions.
import { backend } from './runtime.js';
import { numelOf, show } from './check.js';
import { QTensor, newStorage, wrapStorage } from './qtensor.js';
import { channelsLastStrides, pair, withChannelsLast } from './layout.js';

const raw = (t, where) => QTensor[Symbol.for('qwasm.raw')](t, where);

const AVG = {
  qnnpack: 0, generic: 1, genericChannelsLast: 2, adaptive: 3, adaptiveChannelsLast: 4, mean: 5,
  genericChannelsLastFbgemm: 6, adaptiveChannelsLastFbgemm: 7,
};

/**
 * Which PyTorch engine's pooling kernels to reproduce: 'qnnpack' (default; QNNPACK for quint8 where it
 * takes the call), 'generic' (PyTorch 1.13's other engines) or 'fbgemm' (PyTorch 2.x's x86 builds: the
 * generic kernels, whose channels-last scalar loop adds the zero point before rounding).
 */
function poolMode(mode, where) {
  if (mode !== 'qnnpack' && mode !== 'generic' && mode !== 'fbgemm') {
    throw new TypeError(`${where}: unknown mode ${show(mode)}; expected 'qnnpack', 'generic' or 'fbgemm'`);
  }
  return mode;
}

function input4d(x, where) {
  if (!(x instanceof QTensor)) throw new TypeError(`${where}: input must be a QTensor, got ${show(x)}`);
  const r = raw(x, where);
  if (r.quant.scheme !== 'per_tensor_affine') throw new TypeError(`${where}: input must be quantized per tensor`);
  if (r.dtype.name === 'qint32') throw new TypeError(`${where}: input must be quint8 or qint8, got qint32`);
  if (r.shape.length !== 4) throw new RangeError(`${where}: input must be [N, C, H, W], got shape ${show(r.shape)}`);
  return r;
}

/** A channels-last output of [N, C, outH, outW] from run(backend, shapePtr, xPtr, yPtr) over NHWC data. */
function pool(x, r, outH, outW, where, run) {
  const b = backend();
  const shape = [r.shape[0], r.shape[1], outH, outW];
  const storage = newStorage(Math.max(1, numelOf(shape)) * r.dtype.bytes);
  const y = wrapStorage(storage, 0, shape, channelsLastStrides(shape), r.dtype, r.quant);
  try {
    withChannelsLast(r, (xp) => b.withBuffers([56], (ps) => run(b, ps, xp, raw(y, where).ptr)));
  } catch (error) {
    y.dispose();
    throw error;
  }
  return y;
}

function outputSize(b, where, inSize, k, s, p, d, ceil, dim) {
  const o = b.exports.qw_pool_output_size(inSize, k, s, p, d, ceil ? 1 : 0);
  if (o <= 0) {
    throw new RangeError(`${where}: kernel ${k}, stride ${s}, padding ${p}, dilation ${d} do not fit input size ${inSize} along ${dim} (padding must be at most half the kernel)`);
  }
  return o;
}

function poolShape(r, outH, outW, k, s, p, d) {
  const [n, c, h, w] = r.shape;
  return [n, h, w, c, outH, outW, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]];
}

/**
 * Quantized max_pool2d. options: { kernelSize, stride = kernelSize, padding = 0, dilation = 1,
 * ceilMode = false }. Without ceilMode on quint8, PyTorch's qnnpack engine reads window positions
 * outside the input as the nearest edge pixel (visible only when dilation > 1 meets padding); qwasm
 * does the same there, and skips them elsewhere, as PyTorch's generic kernel does (always, in modes
 * 'generic' and 'fbgemm').
 */
export function maxPool2d(x, { kernelSize, stride, padding = 0, dilation = 1, ceilMode = false, mode = 'qnnpack' } = {}) {
  const where = 'maxPool2d';
  const r = input4d(x, where);
  const k = pair(kernelSize, 'kernelSize', where, 1);
  const s = pair(stride ?? k, 'stride', where, 1);
  const p = pair(padding, 'padding', where, 0);
  const d = pair(dilation, 'dilation', where, 1);
  const b = backend();
  const oh = outputSize(b, where, r.shape[2], k[0], s[0], p[0], d[0], ceilMode, 'H');
  const ow = outputSize(b, where, r.shape[3], k[1], s[1], p[1], d[1], ceilMode, 'W');
  const qnnpack = poolMode(mode, where) === 'qnnpack' && r.dtype.name === 'quint8' && !ceilMode;
  return pool(x, r, oh, ow, where, (be, ps, xp, yp) => {
    const shape = poolShape(r, oh, ow, k, s, p, d);
    be.i32(ps, 14).set(shape);
    be.withBuffers([be.exports.qw_max_pool2d_workspace_size(ps)], (ws) => be.call('qw_max_pool2d', ps, xp, r.dtype.code, yp, ws, qnnpack ? 1 : 0));
  });
}

/**
 * Quantized avg_pool2d. options: { kernelSize, stride = kernelSize, padding = 0, ceilMode = false,
 * countIncludePad = true, divisorOverride }. Like PyTorch's qnnpack engine, quint8 without ceilMode
 * counts padding as the zero point and divides by kH * kW whatever countIncludePad and
 * divisorOverride say; the other calls follow the generic kernel.
 */
export function avgPool2d(x, options = {}) {
  return avgPool2dAs(x, options, false);
}

/**
 * avg_pool2d as PyTorch computes it for a tensor in channels_last memory format: the generic path takes
 * its channels-last kernel (zero point added after rounding). For the model loader, whose files say
 * which layout PyTorch saw (QLinearAveragePool channels_last = 1).
 */
export function avgPool2dChannelsLast(x, options = {}) {
  return avgPool2dAs(x, options, true);
}

function avgPool2dAs(x, { kernelSize, stride, padding = 0, ceilMode = false, countIncludePad = true, divisorOverride = null, mode = 'qnnpack' } = {}, channelsLast) {
  const where = 'avgPool2d';
  const r = input4d(x, where);
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
  // A tensor with C == 1 or H * W == 1 is channels-last as well as contiguous; PyTorch then takes that kernel.
  const m = poolMode(mode, where);
  const lastForm = m === 'fbgemm' ? AVG.genericChannelsLastFbgemm : AVG.genericChannelsLast;
  const form = m === 'qnnpack' && r.dtype.name === 'quint8' && !ceilMode ? AVG.qnnpack : channelsLast || c === 1 || h * w === 1 ? lastForm : AVG.generic;
  return pool(x, r, oh, ow, where, (be, ps, xp, yp) => {
    be.i32(ps, 14).set(poolShape(r, oh, ow, k, s, p, [1, 1]));
    be.call('qw_avg_pool2d', ps, xp, r.dtype.code, r.quant.scale, r.quant.zeroPoint, yp, form, countIncludePad ? 1 : 0, divisorOverride ?? 0);
  });
}

/**
 * Quantized adaptive_avg_pool2d to outputSize ([h, w] or a number). Sizes that divide the input run
 * as a QNNPACK average pool (quint8); others as PyTorch's generic kernel, which averages the raw
 * integers without subtracting the zero point.
 */
export function adaptiveAvgPool2d(x, outputSize, { mode = 'qnnpack' } = {}) {
  const where = 'adaptiveAvgPool2d';
  const m = poolMode(mode, where);
  const r = input4d(x, where);
  const [oh, ow] = pair(outputSize, 'outputSize', where, 1);
  const [, c, h, w] = r.shape;
  const divides = h % oh === 0 && w % ow === 0;
  const k = [h / oh, w / ow];
  return pool(x, r, oh, ow, where, (be, ps, xp, yp) => {
    if (m === 'qnnpack' && divides && r.dtype.name === 'quint8') {
      be.i32(ps, 14).set(poolShape(r, oh, ow, k, k, [0, 0], [1, 1]));
      be.call('qw_avg_pool2d', ps, xp, r.dtype.code, r.quant.scale, r.quant.zeroPoint, yp, AVG.qnnpack, 1, 0);
    } else {
      be.i32(ps, 14).set(poolShape(r, oh, ow, [1, 1], [1, 1], [0, 0], [1, 1]));
      const lastForm = m === 'fbgemm' ? AVG.adaptiveChannelsLastFbgemm : AVG.adaptiveChannelsLast;
      const form = c === 1 || h * w === 1 ? lastForm : AVG.adaptive;
      be.call('qw_avg_pool2d', ps, xp, r.dtype.code, r.quant.scale, r.quant.zeroPoint, yp, form, 1, 0);
    }
  });
}

/**
 * Quantized mean over the spatial dimensions [2, 3]. options.mode: 'qnnpack' (default: PyTorch's qnnpack
 * engine, whose quint8 mean is QNNPACK's global average pool, zp + rint(sum(q - zp) * (s / (s * n))))
 * or 'generic' / 'fbgemm' (the other engines, x86 and fbgemm). qint8, and quint8 outside 'qnnpack', take ATen's
 * qmean_inner_dim_kernel: rint((float)sum(q) / n), the zero point never subtracted. Input qparams kept.
 */
export function mean(x, dims, keepdim = false, { mode = 'qnnpack' } = {}) {
  const where = 'mean';
  const r = input4d(x, where);
  if (!Array.isArray(dims) || dims.length !== 2 || dims[0] !== 2 || dims[1] !== 3) {
    throw new RangeError(`${where}: only dims [2, 3] (global average pooling) are supported, got ${show(dims)}`);
  }
  const [, , h, w] = r.shape;
  const form = poolMode(mode, where) === 'qnnpack' && r.dtype.name === 'quint8' ? AVG.qnnpack : AVG.mean;
  const y = pool(x, r, 1, 1, where, (be, ps, xp, yp) => {
    be.i32(ps, 14).set(poolShape(r, 1, 1, [h, w], [h, w], [0, 0], [1, 1]));
    be.call('qw_avg_pool2d', ps, xp, r.dtype.code, r.quant.scale, r.quant.zeroPoint, yp, form, 1, 0);
  });
  if (keepdim) return y;
  try {
    return y.reshape([r.shape[0], r.shape[1]]);
  } finally {
    y.dispose();
  }
}
