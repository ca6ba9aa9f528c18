// Choosing scale and zero point from an observed range, exactly as PyTorch 1.13's observers do
// (torch/ao/quantization/observer.py _calculate_qparams). The arithmetic runs in the C core.
import { backend } from '../runtime/runtime.js';
import { dtypeInfo } from './dtype.js';
import { checkNumberArray, show } from './check.js';
import { QW_QSCHEME } from '../runtime/abi.js';

export const QSCHEMES = Object.freeze({
  per_tensor_affine: QW_QSCHEME.QW_PER_TENSOR_AFFINE,
  per_tensor_symmetric: QW_QSCHEME.QW_PER_TENSOR_SYMMETRIC,
  per_channel_affine: QW_QSCHEME.QW_PER_CHANNEL_AFFINE,
  per_channel_symmetric: QW_QSCHEME.QW_PER_CHANNEL_SYMMETRIC,
});

/** float32 machine epsilon, PyTorch's default eps. */
export const FLOAT32_EPS = 2 ** -23;

/**
 * The integer range an observer quantizes to (torch.ao.quantization.utils.calculate_qmin_qmax).
 * Returns { quantMin, quantMax }.
 */
export function quantRange(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`quantRange: options must be { dtype, reduceRange, quantMin, quantMax }, got ${show(options)}`);
  return resolveRange(options, 'quantRange');
}

function resolveRange({ dtype = 'quint8', reduceRange = false, quantMin, quantMax }, where) {
  const info = dtypeInfo(dtype, where);
  if (typeof reduceRange !== 'boolean') {
    throw new TypeError(`${where}: reduceRange must be a boolean, got ${show(reduceRange)}`);
  }
  const custom = quantMin != null || quantMax != null;
  if (custom) {
    if (quantMin == null || quantMax == null) {
      throw new TypeError(`${where}: quantMin and quantMax must be given together, got ${show(quantMin)} and ${show(quantMax)}`);
    }
    for (const [name, v] of [['quantMin', quantMin], ['quantMax', quantMax]]) {
      if (!Number.isInteger(v) || v < -(2 ** 31) || v > 2 ** 31 - 1) {
        throw new RangeError(`${where}: ${name} must be a 32-bit integer, got ${show(v)}`);
      }
    }
    // torch's _validate_qmin_qmax and calculate_qmin_qmax checks, in its order.
    if (!(quantMin <= 0 && 0 <= quantMax)) {
      throw new RangeError(`${where}: the range [quantMin, quantMax] must include 0, got [${quantMin}, ${quantMax}]`);
    }
    if (!(quantMin < quantMax)) {
      throw new RangeError(`${where}: quantMin must be less than quantMax, got [${quantMin}, ${quantMax}]`);
    }
    const length = quantMax - quantMin + 1;
    const limit = info.name === 'qint8' ? 256 : info.name === 'qint32' ? 2 ** 31 : Infinity;
    if (length > limit) {
      throw new RangeError(`${where}: the range [${quantMin}, ${quantMax}] holds ${length} values; ${info.name} allows at most ${limit}`);
    }
  }
  const b = backend();
  return b.withBuffers([8], (out) => {
    b.call(where, 'qw_quant_range', info.code, reduceRange ? 1 : 0, custom ? 1 : 0, quantMin ?? 0, quantMax ?? 0, out, out + 4);
    const [lo, hi] = b.i32(out, 2);
    return { quantMin: lo, quantMax: hi };
  });
}

function checkEps(eps, where) {
  if (typeof eps !== 'number' || !Number.isFinite(eps) || eps < 0) {
    throw new RangeError(`${where}: eps must be a finite number >= 0, got ${show(eps)}`);
  }
  return Math.fround(eps);
}

function checkMinMax(min, max, where, label = '') {
  if (typeof min !== 'number' || typeof max !== 'number') {
    throw new TypeError(`${where}: min${label} and max${label} must be numbers, got ${show(min)} and ${show(max)}`);
  }
  if (min === Infinity && max === -Infinity) return; // nothing observed: torch's (1.0, 0)
  if (!Number.isFinite(min) || !Number.isFinite(max)) {
    throw new RangeError(`${where}: min${label} and max${label} must be finite, got ${min} and ${max}`);
  }
  if (Math.fround(min) > Math.fround(max)) {
    throw new RangeError(`${where}: min${label} ${min} is greater than max${label} ${max}`);
  }
}

/**
 * Scale and zero point for an observed range, bit-exact with PyTorch 1.13.
 * options: { min, max, dtype = 'quint8', qscheme = 'per_tensor_affine', reduceRange = false,
 *            quantMin, quantMax, eps = 2^-23 }. For per-channel schemes min and max are arrays.
 * Returns { scale, zeroPoint } or, per channel, { scales: Float32Array, zeroPoints: Int32Array }.
 */
export function chooseQParams(options) {
  return chooseQParamsFor(options, 'chooseQParams');
}

/** chooseQParams on behalf of the public function `where` (an observer's calculateQparams): errors name it. */
export function chooseQParamsFor(options, where) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${where}: expected an options object { min, max, dtype, qscheme, ... }, got ${show(options)}`);
  }
  const { min, max, dtype = 'quint8', qscheme = 'per_tensor_affine', eps = FLOAT32_EPS } = options;
  const info = dtypeInfo(dtype, where);
  if (typeof qscheme !== 'string' || !Object.hasOwn(QSCHEMES, qscheme)) {
    throw new TypeError(`${where}: unknown qscheme ${show(qscheme)}; expected one of ${Object.keys(QSCHEMES).join(', ')}`);
  }
  const { quantMin, quantMax } = resolveRange(options, where);
  const custom = options.quantMin != null;
  const epsF = checkEps(eps, where);
  const schemeCode = QSCHEMES[qscheme];
  const b = backend();
  if (!qscheme.startsWith('per_channel')) {
    checkMinMax(min, max, where);
    return b.withBuffers([8], (out) => {
      b.call(where, 'qw_choose_qparams', min, max, info.code, schemeCode, quantMin, quantMax, custom ? 1 : 0, epsF, out, out + 4);
      return { scale: b.f32(out, 1)[0], zeroPoint: b.i32(out + 4, 1)[0] };
    });
  }
  checkNumberArray(min, undefined, where, 'min');
  checkNumberArray(max, min.length, where, 'max');
  const n = min.length;
  for (let c = 0; c < n; c++) {
    checkMinMax(min[c], max[c], where, `[${c}]`);
    if (!Number.isFinite(min[c])) {
      throw new RangeError(`${where}: min[${c}] and max[${c}] must be finite, got ${min[c]} and ${max[c]}`);
    }
  }
  return b.withBuffers([4 * n, 4 * n, 4 * n, 4 * n], (pmin, pmax, pscale, pzp) => {
    b.f32(pmin, n).set(min);
    b.f32(pmax, n).set(max);
    b.call(where, 'qw_choose_qparams_per_channel', n, pmin, pmax, info.code, schemeCode, quantMin, quantMax, custom ? 1 : 0,
      epsF, pscale, pzp);
    return { scales: b.f32(pscale, n).slice(), zeroPoints: b.i32(pzp, n).slice() };
  });
}
