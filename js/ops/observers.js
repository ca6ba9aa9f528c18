// Observers of torch.ao.quantization (PyTorch 1.13) with the same names, arguments, defaults and
// float arithmetic: MinMaxObserver, MovingAverageMinMaxObserver, PerChannelMinMaxObserver,
// MovingAveragePerChannelMinMaxObserver, HistogramObserver, FixedQParamsObserver,
// PlaceholderObserver, and the default qconfigs by backend name. The reductions and the histogram
// run in the C core (src/observers/); scale and zero point come from chooseQParams.
import { backend } from '../runtime/runtime.js';
import { NotImplementedError } from '../errors.js';
import { DTYPES } from '../tensor/dtype.js';
import { checkNumberArray, checkShape, numelOf, show } from '../tensor/check.js';
import { FLOAT32_EPS, QSCHEMES, chooseQParamsFor, quantRange } from '../tensor/qparams.js';


const f32 = Math.fround;
const PER_TENSOR = ['per_tensor_affine', 'per_tensor_symmetric'];
const PER_CHANNEL = ['per_channel_affine', 'per_channel_symmetric'];

function asFloat32(data, where) {
  if (data instanceof Float32Array) return data;
  return Float32Array.from(checkNumberArray(data, undefined, where, 'data'));
}

function checkData(data, shape, where) {
  const x = asFloat32(data, where);
  const dims = shape === undefined ? [x.length] : checkShape(shape, where);
  if (numelOf(dims) !== x.length) {
    throw new RangeError(`${where}: shape ${show(dims)} holds ${numelOf(dims)} elements but data has ${x.length}`);
  }
  return { x, dims };
}

/** torch.min / torch.max of two float32 values: NaN propagates. */
const tmin = (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b));
const tmax = (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b));

/** UniformQuantizationObserverBase: validates options in torch's order, with torch's messages. */
class UniformObserver {
  constructor(name, options, schemes, defaultScheme) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`${name}: options must be an object, got ${show(options)}`);
    }
    const {
      dtype = 'quint8',
      qscheme = defaultScheme,
      reduceRange = false,
      quantMin = null,
      quantMax = null,
      eps = FLOAT32_EPS,
    } = options;
    if (typeof qscheme !== 'string' || !Object.hasOwn(QSCHEMES, qscheme)) {
      throw new TypeError(`${name}: unknown qscheme ${show(qscheme)}; expected one of ${Object.keys(QSCHEMES).join(', ')}`);
    }
    if (!schemes.includes(qscheme)) {
      throw new NotImplementedError(
        `${name}: ${name}'s qscheme only support ${schemes === PER_TENSOR
          ? 'torch.per_tensor_symmetric and torch.per_tensor_affine.'
          : 'torch.per_channel_symmetric, torch.per_channel_affine and torch.per_channel_affine_float_qparams.'}`,
      );
    }
    if (typeof dtype !== 'string' || !Object.hasOwn(DTYPES, dtype)) {
      throw new TypeError(`${name}: Default Observer only works for qint8, quint8 and quint4x2 data type (qwasm: 'quint8', 'qint8', 'qint32'); got ${show(dtype)}`);
    }
    if (typeof reduceRange !== 'boolean') {
      throw new TypeError(`${name}: reduceRange must be a boolean, got ${show(reduceRange)}`);
    }
    if (typeof eps !== 'number' || !Number.isFinite(eps) || eps < 0) {
      throw new RangeError(`${name}: eps must be a finite number >= 0, got ${show(eps)}`);
    }
    const custom = quantMin != null && quantMax != null;
    if ((quantMin == null) !== (quantMax == null)) {
      throw new TypeError(`${name}: quantMin and quantMax must be given together, got ${show(quantMin)} and ${show(quantMax)}`);
    }
    if (custom) {
      for (const [k, v] of [['quantMin', quantMin], ['quantMax', quantMax]]) {
        if (!Number.isInteger(v) || v < -(2 ** 31) || v > 2 ** 31 - 1) {
          throw new RangeError(`${name}: ${k} must be a 32-bit integer, got ${show(v)}`);
        }
      }
      if (!(quantMin <= 0 && 0 <= quantMax)) {
        throw new RangeError(`${name}: Used-specified quantization range must include 0. Got [${quantMin}, ${quantMax}]`);
      }
      if (!(quantMin < quantMax)) {
        throw new RangeError(`${name}: qmin must be strictly less than qmax for user-specified quantization range. Got [${quantMin}, ${quantMax}]`);
      }
      const length = quantMax - quantMin + 1;
      if (dtype === 'qint8' && length > 256) {
        throw new RangeError(`${name}: quantization range should be positive and not exceed the maximum bit range (=256). Got [${quantMin}, ${quantMax}]`);
      }
      if (dtype === 'qint32' && length > 2 ** 31) {
        throw new RangeError(`${name}: quantization range should be positive and not exceed the maximum bit range (=4294967296). Got [${quantMin}, ${quantMax}]`);
      }
    }
    const range = quantRange(custom ? { dtype, reduceRange, quantMin, quantMax } : { dtype, reduceRange });
    this.name = name;
    this.dtype = dtype;
    this.qscheme = qscheme;
    this.reduceRange = reduceRange;
    this.hasCustomRange = custom;
    this.eps = f32(eps);
    this.quantMin = range.quantMin;
    this.quantMax = range.quantMax;
    this._custom = custom ? { quantMin, quantMax } : {};
  }

  _rejectSymmetricReducedQuint8(message) {
    if (this.qscheme.endsWith('symmetric') && this.reduceRange && this.dtype === 'quint8') {
      throw new NotImplementedError(`${this.name}: ${message}`);
    }
  }

  _qparams(min, max) {
    return chooseQParamsFor({
      min,
      max,
      dtype: this.dtype,
      qscheme: this.qscheme,
      reduceRange: this.reduceRange,
      eps: this.eps,
      ...this._custom,
    }, `${this.name}.calculateQparams`);
  }
}

/** MinMaxObserver: running min and max of everything observed. */
export class MinMaxObserver extends UniformObserver {
  constructor(options = {}, name = 'MinMaxObserver') {
    super(name, options, PER_TENSOR, 'per_tensor_affine');
    this._rejectSymmetricReducedQuint8('Cannot reduce range for symmetric quantization for quint8');
    this.minVal = Infinity;
    this.maxVal = -Infinity;
  }

  _aminmax(x) {
    const b = backend();
    return b.withBuffers([4 * x.length, 8], (px, out) => {
      b.f32(px, x.length).set(x);
      b.call(`${this.name}.observe`, 'qw_observe_minmax', x.length, px, out, out + 4);
      const [lo, hi] = b.f32(out, 2);
      return [lo, hi];
    });
  }

  /** Records data (a Float32Array of the given shape); empty data is ignored, as in torch. */
  observe(data, shape) {
    const { x } = checkData(data, shape, `${this.name}.observe`);
    if (x.length === 0) return this;
    const [lo, hi] = this._aminmax(x);
    this._update(lo, hi);
    return this;
  }

  _update(lo, hi) {
    this.minVal = tmin(lo, this.minVal);
    this.maxVal = tmax(hi, this.maxVal);
  }

  /** { scale, zeroPoint } as torch's calculate_qparams. */
  calculateQparams() {
    return this._qparams(this.minVal, this.maxVal);
  }

  reset() {
    this.minVal = Infinity;
    this.maxVal = -Infinity;
    return this;
  }

  state() {
    return { minVal: this.minVal, maxVal: this.maxVal };
  }
}

/** MovingAverageMinMaxObserver: min += c * (cur_min - min) in float32 after the first batch. */
export class MovingAverageMinMaxObserver extends MinMaxObserver {
  constructor(options = {}) {
    const { averagingConstant = 0.01, ...rest } = options ?? {};
    if (typeof averagingConstant !== 'number' || !Number.isFinite(averagingConstant)) {
      throw new TypeError(`MovingAverageMinMaxObserver: averagingConstant must be a finite number, got ${show(averagingConstant)}`);
    }
    super(rest, 'MovingAverageMinMaxObserver');
    this.averagingConstant = averagingConstant;
  }

  _update(lo, hi) {
    if (this.minVal === Infinity && this.maxVal === -Infinity) {
      this.minVal = lo;
      this.maxVal = hi;
      return;
    }
    const c = f32(this.averagingConstant);
    this.minVal = f32(this.minVal + f32(c * f32(lo - this.minVal)));
    this.maxVal = f32(this.maxVal + f32(c * f32(hi - this.maxVal)));
  }
}

/** PerChannelMinMaxObserver: running min and max per index of axis chAxis. */
export class PerChannelMinMaxObserver extends UniformObserver {
  constructor(options = {}, name = 'PerChannelMinMaxObserver') {
    const { chAxis = 0, ...rest } = options ?? {};
    super(name, rest, PER_CHANNEL, 'per_channel_affine');
    if (!Number.isInteger(chAxis)) {
      throw new TypeError(`${name}: chAxis must be an integer, got ${show(chAxis)}`);
    }
    this.chAxis = chAxis;
    this._rejectSymmetricReducedQuint8('Cannot reduce range for symmetric quantization for quint8');
    this.minVal = null; // Float32Array per channel once observed
    this.maxVal = null;
  }

  observe(data, shape) {
    const where = `${this.name}.observe`;
    const { x, dims } = checkData(data, shape, where);
    if (x.length === 0) return this;
    const rank = dims.length;
    // torch: new_axis_list[ch_axis] = 0 (a Python list index: -rank <= ch_axis < rank).
    if (!(this.chAxis >= -rank && this.chAxis < rank)) {
      throw new RangeError(`${where}: list assignment index out of range (chAxis ${this.chAxis} for a ${rank}-dimensional tensor)`);
    }
    const axis = this.chAxis < 0 ? this.chAxis + rank : this.chAxis;
    const channels = dims[axis];
    const outer = numelOf(dims.slice(0, axis));
    const inner = numelOf(dims.slice(axis + 1));
    if (this.minVal !== null && this.minVal.length !== channels) {
      throw new RangeError(`${where}: ${channels} channels along axis ${axis}, but earlier data had ${this.minVal.length}`);
    }
    const b = backend();
    const [lo, hi] = b.withBuffers([4 * x.length, 4 * channels, 4 * channels], (px, pmin, pmax) => {
      b.f32(px, x.length).set(x);
      b.call(where, 'qw_observe_minmax_per_channel', outer, channels, inner, px, pmin, pmax);
      return [b.f32(pmin, channels).slice(), b.f32(pmax, channels).slice()];
    });
    if (this.minVal === null) {
      this.minVal = lo;
      this.maxVal = hi;
    } else {
      this._update(lo, hi);
    }
    return this;
  }

  _update(lo, hi) {
    for (let c = 0; c < lo.length; c++) {
      this.minVal[c] = tmin(lo[c], this.minVal[c]);
      this.maxVal[c] = tmax(hi[c], this.maxVal[c]);
    }
  }

  /** { scales: Float32Array, zeroPoints: Int32Array }; ([1], [0]) before anything was observed, as torch. */
  calculateQparams() {
    if (this.minVal === null) return { scales: Float32Array.of(1), zeroPoints: Int32Array.of(0) };
    return this._qparams(Array.from(this.minVal), Array.from(this.maxVal));
  }

  reset() {
    this.minVal = null;
    this.maxVal = null;
    return this;
  }

  state() {
    return { minVal: this.minVal?.slice() ?? null, maxVal: this.maxVal?.slice() ?? null };
  }
}

/** MovingAveragePerChannelMinMaxObserver. */
export class MovingAveragePerChannelMinMaxObserver extends PerChannelMinMaxObserver {
  constructor(options = {}) {
    const { averagingConstant = 0.01, ...rest } = options ?? {};
    if (typeof averagingConstant !== 'number' || !Number.isFinite(averagingConstant)) {
      throw new TypeError(`MovingAveragePerChannelMinMaxObserver: averagingConstant must be a finite number, got ${show(averagingConstant)}`);
    }
    super(rest, 'MovingAveragePerChannelMinMaxObserver');
    this.averagingConstant = averagingConstant;
  }

  _update(lo, hi) {
    const c = f32(this.averagingConstant);
    for (let i = 0; i < lo.length; i++) {
      this.minVal[i] = this.minVal[i] + f32(c * f32(lo[i] - this.minVal[i]));
      this.maxVal[i] = this.maxVal[i] + f32(c * f32(hi[i] - this.maxVal[i]));
    }
  }
}

/**
 * HistogramObserver: a running histogram (bins = 2048, merged across calls by upsampling with
 * upsampleRate = 128) whose L2 search (_non_linear_param_search) narrows [min, max] before the
 * scale and zero point are chosen. Exactly torch 1.13's float arithmetic, including its histc call
 * with int()-truncated bounds (values outside [trunc(min), trunc(max)] are not counted there).
 */
export class HistogramObserver extends UniformObserver {
  constructor(options = {}) {
    const { bins = 2048, upsampleRate = 128, ...rest } = options ?? {};
    super('HistogramObserver', rest, PER_TENSOR, 'per_tensor_affine');
    if (!Number.isInteger(bins) || bins < 1 || bins > 2 ** 24) {
      throw new RangeError(`HistogramObserver: bins must be an integer in [1, 2^24], got ${show(bins)}`);
    }
    if (!Number.isInteger(upsampleRate) || upsampleRate < 1 || upsampleRate > 2 ** 20) {
      throw new RangeError(`HistogramObserver: upsampleRate must be an integer in [1, 2^20], got ${show(upsampleRate)}`);
    }
    this.bins = bins;
    this.upsampleRate = upsampleRate;
    this.dstNbins = 2 ** (DTYPES[this.dtype].bytes * 8);
    this.reset();
  }

  reset() {
    this.histogram = new Float32Array(this.bins);
    this.minVal = Infinity;
    this.maxVal = -Infinity;
    return this;
  }

  observe(data, shape) {
    const where = 'HistogramObserver.observe';
    const { x } = checkData(data, shape, where);
    if (x.length === 0) return this;
    const b = backend();
    const bins = this.bins;
    const ws = b.size('qw_histogram_workspace_size', bins);
    const ok = b.withBuffers([4 * x.length, 4 * bins, 8, ws], (px, ph, pmm, pws) => {
      b.f32(px, x.length).set(x);
      b.f32(ph, bins).set(this.histogram);
      b.f32(pmm, 2).set([this.minVal, this.maxVal]);
      const status = b.exports.qw_histogram_observe(x.length, px, bins, this.upsampleRate, ph, pmm, pmm + 4, pws);
      if (status !== 0) return status;
      this.histogram = b.f32(ph, bins).slice();
      [this.minVal, this.maxVal] = b.f32(pmm, 2);
      return 0;
    });
    if (ok === 1) {
      // torch: int(min_val) in forward raises on NaN / infinity before histc.
      const nan = x.some(Number.isNaN);
      throw new RangeError(`${where}: ${nan ? 'cannot convert float NaN to integer' : 'cannot convert float infinity to integer'} (the data holds a non-finite value)`);
    }
    if (ok !== 0) {
      throw new RangeError(`${where}: the new data's range is too far from the histogram's for torch's histogram merge (qw_histogram_observe status ${ok})`);
    }
    return this;
  }

  /** The [min, max] that _non_linear_param_search picks from the histogram. */
  search() {
    if (this.minVal === Infinity && this.maxVal === -Infinity) return null;
    const b = backend();
    const bins = this.bins;
    const ws = b.size('qw_histogram_workspace_size', bins);
    return b.withBuffers([4 * bins, 8, ws], (ph, out, pws) => {
      b.f32(ph, bins).set(this.histogram);
      b.call('HistogramObserver.calculateQparams', 'qw_histogram_search', bins, ph, this.minVal, this.maxVal, this.dstNbins, out, out + 4, pws);
      const [lo, hi] = b.f32(out, 2);
      return { min: lo, max: hi };
    });
  }

  /** { scale, zeroPoint }; (1.0, 0) before anything was observed, as torch (which also warns). */
  calculateQparams() {
    const range = this.search();
    if (range === null) return { scale: 1, zeroPoint: 0 };
    return this._qparams(range.min, range.max);
  }

  state() {
    return { minVal: this.minVal, maxVal: this.maxVal, histogram: this.histogram.slice(), bins: this.bins };
  }
}

/** FixedQParamsObserver: observe does nothing; calculateQparams returns the given qparams. */
export class FixedQParamsObserver {
  constructor(options = {}) {
    const { scale, zeroPoint, dtype = 'quint8', qscheme = 'per_tensor_affine', quantMin = 0, quantMax = 255 } = options ?? {};
    if (typeof scale !== 'number' || !Number.isFinite(scale) || !(f32(scale) > 0)) {
      throw new RangeError(`FixedQParamsObserver: scale must be a finite number > 0, got ${show(scale)}`);
    }
    if (!Number.isInteger(zeroPoint)) {
      throw new TypeError(`FixedQParamsObserver: zeroPoint must be an integer, got ${show(zeroPoint)}`);
    }
    if (typeof dtype !== 'string' || !Object.hasOwn(DTYPES, dtype)) {
      throw new TypeError(`FixedQParamsObserver: unknown dtype ${show(dtype)}`);
    }
    if (typeof qscheme !== 'string' || !Object.hasOwn(QSCHEMES, qscheme)) {
      throw new TypeError(`FixedQParamsObserver: unknown qscheme ${show(qscheme)}`);
    }
    Object.assign(this, { scale: f32(scale), zeroPoint, dtype, qscheme, quantMin, quantMax });
  }

  observe() {
    return this;
  }

  calculateQparams() {
    return { scale: this.scale, zeroPoint: this.zeroPoint };
  }

  reset() {
    return this;
  }

  state() {
    return { scale: this.scale, zeroPoint: this.zeroPoint };
  }
}

/** PlaceholderObserver: carries a dtype only; calculateQparams throws, as in torch. */
export class PlaceholderObserver {
  constructor(options = {}) {
    const { dtype = 'float32' } = options ?? {};
    this.dtype = dtype;
  }

  observe() {
    return this;
  }

  calculateQparams() {
    throw new TypeError('PlaceholderObserver: calculate_qparams should not be called for PlaceholderObserver');
  }

  reset() {
    return this;
  }
}

const HISTOGRAM = (reduceRange) => () => new HistogramObserver({ reduceRange });
const QCONFIGS = {
  x86: { activation: HISTOGRAM(true), weight: () => new PerChannelMinMaxObserver({ dtype: 'qint8', qscheme: 'per_channel_symmetric' }) },
  qnnpack: { activation: HISTOGRAM(false), weight: () => new MinMaxObserver({ dtype: 'qint8', qscheme: 'per_tensor_symmetric' }) },
};
QCONFIGS.fbgemm = QCONFIGS.x86;

/**
 * torch.ao.quantization.get_default_qconfig(backend) for 'x86', 'fbgemm' or 'qnnpack':
 * { activation, weight }, each a factory returning a fresh observer with torch's arguments.
 */
export function defaultQConfig(name = 'x86') {
  if (typeof name !== 'string' || !Object.hasOwn(QCONFIGS, name)) {
    throw new TypeError(`defaultQConfig: unknown backend ${show(name)}; expected 'x86', 'fbgemm' or 'qnnpack'`);
  }
  return { ...QCONFIGS[name] };
}
