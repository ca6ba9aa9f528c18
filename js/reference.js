// qwasm/reference: the per-element rules of quantized arithmetic in plain JavaScript, one value at a time,
// written to read like the formulas in docs/quantization.md. They compute exactly what the wasm kernels compute
// (tests/js/reference.test.js sweeps both, as QNNPACK's requantization tester does: exact powers of two,
// INT32_MIN / INT32_MAX, ties), so a page or a test can show every step of an integer computation without a
// second implementation. A leaf module: it needs no wasm and imports nothing.
//
// float32 arithmetic is written with Math.fround after every operation, as C evaluates it with
// -ffp-contract=off (no FMA). Integers are plain numbers; int32 wrap-around is made explicit with wrapInt32.

const fr = Math.fround; // float32 rounding inside this module (f32, below, is the checked public form)

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;

// Arguments are checked the way the rest of qwasm checks them (a TypeError naming the function and argument): numbers
// must be numbers (NaN and the infinities included: the rules say what they give), integers integers.
function describe(v) {
  return typeof v === 'bigint' ? `${v}n (a BigInt)` : typeof v === 'string' ? JSON.stringify(v) : typeof v === 'symbol' ? 'a symbol' : String(v);
}

/** Checks that each of values is a number: names[i] is its argument name. */
function numbers(fn, names, values) {
  for (let i = 0; i < values.length; i++) {
    if (typeof values[i] !== 'number') throw new TypeError(`${fn}: ${names[i]} must be a number, got ${describe(values[i])}`);
  }
}

/** Math.fround with its argument checked: a number rounded to float32. */
export function f32(x) {
  numbers('f32', ['x'], [x]);
  return fr(x);
}

/** Checks that each of values is an integer (a number with no fraction). */
function integers(fn, names, values) {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isInteger(values[i])) throw new TypeError(`${fn}: ${names[i]} must be an integer, got ${describe(values[i])}`);
  }
}

/** The integer range of each dtype, by PyTorch's and ONNX's names. */
export const RANGES = Object.freeze({
  quint8: Object.freeze([0, 255]), qint8: Object.freeze([-128, 127]), qint32: Object.freeze([INT32_MIN, INT32_MAX]),
  uint8: Object.freeze([0, 255]), int8: Object.freeze([-128, 127]), int32: Object.freeze([INT32_MIN, INT32_MAX]),
});

/** An integer reduced modulo 2^32 to int32, as C's unsigned arithmetic and wasm's i32 wrap. */
export function wrapInt32(v) {
  integers('wrapInt32', ['v'], [v]);
  return Number(BigInt.asIntN(32, BigInt(v)));
}

/** nearbyint under the default rounding mode: the nearest integer, ties to even. */
export function roundHalfEven(x) {
  numbers('roundHalfEven', ['x'], [x]);
  const r = Math.round(x); // ties toward +infinity
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** C's round(): the nearest integer, ties away from zero. */
export function roundHalfAway(x) {
  numbers('roundHalfAway', ['x'], [x]);
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

const clamp = (v, lo, hi) => (v < lo ? lo : v > hi ? hi : v);

/** A float32 value clamped to [qmin, qmax] as floats, to int32 (2^31, qint32's float qmax, saturates). */
function clampedFloatToInt32(t) {
  return t >= 2147483648 ? INT32_MAX : Math.trunc(t);
}

/**
 * PyTorch's quantize (rounding 'torch'): q = clamp(zp + nearbyint(x * (1 / scale)), qmin, qmax), every step in
 * float32: the reciprocal, the product, and the zero point added after rounding (visible for qint32 beyond 2^24).
 * NaN gives the zero point (PyTorch 1.13 gives qmin through an int64 overflow; qwasm chooses not to).
 */
const QUANTIZE_ARGS = ['x', 'scale', 'zeroPoint', 'qmin', 'qmax'];

export function quantizeTorch(x, scale, zeroPoint, qmin, qmax) {
  numbers('quantizeTorch', QUANTIZE_ARGS, [x, scale, zeroPoint, qmin, qmax]);
  const r = roundHalfEven(fr(fr(x) * fr(1 / fr(scale))));
  if (Number.isNaN(r)) return zeroPoint;
  const t = clamp(fr(r + fr(zeroPoint)), fr(qmin), fr(qmax));
  return clampedFloatToInt32(t);
}

/**
 * fmaf: a * b + c with one rounding to float32 (a, b, c float32). a * b is exact in float64; the sum is rounded
 * once there, and where that lands on a float32 midpoint the rounding error says which way the exact sum lies.
 */
export function fmaf(a, b, c) {
  numbers('fmaf', ['a', 'b', 'c'], [a, b, c]);
  const p = fr(a) * fr(b);
  const cc = fr(c);
  const s = p + cc;
  if (!Number.isFinite(s)) return fr(s);
  const t = s - p;
  const err = (p - (s - t)) + (cc - t); // the exact p + cc is s + err (TwoSum)
  const r = fr(s);
  if (err === 0 || r === s) return r;
  const other = fr(r < s ? nextUp(r) : nextDown(r)); // the float32 on the other side of s
  if ((r + other) / 2 !== s) return r; // not a midpoint: s and the exact sum round alike
  return (err > 0) === (other > r) ? other : r;
}

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
function nextUp(x) {
  if (x === 0) return 2 ** -149;
  F32[0] = x;
  U32[0] += x > 0 ? 1 : -1;
  return F32[0];
}
function nextDown(x) {
  return -nextUp(-x);
}

/**
 * PyTorch 2.x on x86 (rounding 'fbgemm'), 8-bit quantize_per_tensor (FBGEMM's QuantizeAvx2):
 * q = clamp(nearbyint(fmaf(x, 1 / scale, zp))), one rounding with the zero point added first; NaN and +Inf give qmax.
 */
export function quantizeFbgemm(x, scale, zeroPoint, qmin, qmax) {
  numbers('quantizeFbgemm', QUANTIZE_ARGS, [x, scale, zeroPoint, qmin, qmax]);
  const t = fmaf(x, fr(1 / fr(scale)), zeroPoint);
  if (Number.isNaN(t)) return qmax;
  return clampedFloatToInt32(roundHalfEven(clamp(t, fr(qmin), fr(qmax))));
}

/**
 * FBGEMM's scalar Quantize (rounding 'fbgemm' per channel, for qint32, and in the generic kernels' tails):
 * q = clamp(nearbyint((float)zp + x * (1 / scale))), two float32 roundings; NaN gives INT32_MIN's low byte (0) for
 * 8-bit types, qmin for qint32.
 */
export function quantizeFbgemmScalar(x, scale, zeroPoint, qmin, qmax) {
  numbers('quantizeFbgemmScalar', QUANTIZE_ARGS, [x, scale, zeroPoint, qmin, qmax]);
  const t = roundHalfEven(fr(fr(zeroPoint) + fr(fr(x) * fr(1 / fr(scale)))));
  if (Number.isNaN(t)) return qmin === INT32_MIN ? INT32_MIN : 0;
  return clampedFloatToInt32(clamp(t, fr(qmin), fr(qmax)));
}

/**
 * ATen's quant_utils::ChooseQuantizationParams, as PyTorch's dynamic linear quantizes its float input per call: the
 * range [min(x, 0), max(x, 0)] over [qmin, qmax] ([0, 255], or [0, 127] with reduce_range) in double arithmetic; a
 * scale that is 0 or whose reciprocal overflows becomes 0.1, one below 6.1e-5 is raised to it (the range widened
 * with it); the zero point from whichever end gives the smaller error, rounded half to even. Returns the float32
 * scale and the zero point.
 */
export function chooseQParamsDynamic(min, max, qmin = 0, qmax = 255) {
  numbers('chooseQParamsDynamic', ['min', 'max'], [min, max]);
  integers('chooseQParamsDynamic', ['qmin', 'qmax'], [qmin, qmax]);
  if (!(qmin < qmax)) throw new RangeError(`chooseQParamsDynamic: qmin ${qmin} must be below qmax ${qmax}`);
  if (!Number.isFinite(min) || !Number.isFinite(max)) throw new RangeError(`chooseQParamsDynamic: min and max must be finite, got ${min}, ${max}`);
  const SMALL = 6.1e-5;
  let lo = Math.min(f32(min), 0);
  let hi = Math.max(f32(max), 0);
  let scale = (hi - lo) / (qmax - qmin);
  if (f32(scale) === 0 || !Number.isFinite(f32(1 / f32(scale)))) scale = 0.1;
  if (scale < SMALL) {
    const org = scale;
    scale = SMALL;
    if (lo === 0) hi = f32(SMALL * (qmax - qmin));
    else if (hi === 0) lo = f32(-SMALL * (qmax - qmin));
    else {
      const amp = f32(SMALL / org);
      lo = f32(lo * amp);
      hi = f32(hi * amp);
    }
  }
  const fromMin = qmin - lo / scale;
  const fromMax = qmax - hi / scale;
  const zp = Math.abs(qmin) - Math.abs(lo / scale) < Math.abs(qmax) - Math.abs(hi / scale) ? fromMin : fromMax;
  return { scale: f32(scale), zeroPoint: zp < qmin ? qmin : zp > qmax ? qmax : roundHalfEven(zp) };
}

/** ONNX QuantizeLinear (rounding 'onnx'): q = saturate(round_half_even(x / scale) + zp), the addition exact. */
export function quantizeOnnx(x, scale, zeroPoint, qmin, qmax) {
  numbers('quantizeOnnx', QUANTIZE_ARGS, [x, scale, zeroPoint, qmin, qmax]);
  const r = roundHalfEven(fr(fr(x) / fr(scale)));
  if (Number.isNaN(r)) return zeroPoint;
  return clamp(clamp(r, -(2 ** 33), 2 ** 33) + zeroPoint, qmin, qmax);
}

/**
 * real = scale * (float)(q - zp): the subtraction exact in int32 (wrapping), then the difference converted to float32
 * (inexact beyond 2^24, for qint32) and one float32 product.
 */
export function dequantize(q, scale, zeroPoint) {
  numbers('dequantize', ['scale'], [scale]);
  integers('dequantize', ['q', 'zeroPoint'], [q, zeroPoint]);
  return fr(fr(scale) * fr(wrapInt32(q - zeroPoint)));
}

/** PyTorch's per-channel dequantize, with the channel's float64 scale: (float)((double)((float)q - (float)zp) * scale). */
export function dequantizePerChannel(q, scale, zeroPoint) {
  numbers('dequantizePerChannel', ['q', 'scale', 'zeroPoint'], [q, scale, zeroPoint]);
  return fr(fr(fr(q) - fr(zeroPoint)) * scale);
}

// ---- dynamic quantization (ONNX DynamicQuantizeLinear, onnxruntime's DynamicQuantizeMatMul) -------------

/**
 * The uint8 qparams onnxruntime chooses for a whole tensor at run time (DynamicQuantizeLinear,
 * DynamicQuantizeMatMul, util/qmath.h GetQuantizationParameter): the range widened to include 0,
 * scale = (max - min) / 255 in float32 (1 when the range is empty), zero point = round_half_even(clamp(0 - min /
 * scale, 0, 255)). The values are then quantized with quantizeOnnx. NaN or infinite values have no range (RangeError).
 */
export function dynamicQParams(values) {
  if (!Array.isArray(values) && !(ArrayBuffer.isView(values) && !(values instanceof DataView))) {
    throw new TypeError(`dynamicQParams: values must be an array or a typed array of numbers, got ${describe(values)}`);
  }
  let lo = 0;
  let hi = 0;
  for (const v of values) {
    if (typeof v !== 'number') throw new TypeError(`dynamicQParams: values must be numbers, got ${describe(v)}`);
    if (!Number.isFinite(v)) throw new RangeError(`dynamicQParams: ${v} has no uint8 range`);
    const x = f32(v);
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  const scale = hi === lo ? 1 : f32(f32(hi - lo) / 255);
  const zp = clamp(f32(0 - f32(lo / scale)), 0, 255);
  return { scale, zeroPoint: roundHalfEven(zp), min: lo, max: hi };
}

/**
 * One float output of a dynamic int8 matrix product (com.microsoft DynamicQuantizeMatMul, MatMulIntegerToFloat;
 * MLAS's float output stage): the exact int32 sum converted to float32, times the float32 product of the two scales,
 * plus the bias when there is one.
 */
export function dynamicMatMulOutput(acc, aScale, bScale, bias) {
  integers('dynamicMatMulOutput', ['acc'], [acc]);
  numbers('dynamicMatMulOutput', ['aScale', 'bScale'], [aScale, bScale]);
  if (bias !== undefined) numbers('dynamicMatMulOutput', ['bias'], [bias]);
  const scaled = f32(f32(acc) * f32(f32(aScale) * f32(bScale)));
  return bias === undefined ? scaled : f32(scaled + f32(bias));
}

// ---- requantization of int32 accumulators (linear / conv / matmul) -------------------------------------

/** TFLite's QuantizeMultiplier: m = m0 * 2^(shift - 31) with m0 a Q31 integer in [2^30, 2^31). */
export function quantizeMultiplier(m) {
  numbers('quantizeMultiplier', ['m'], [m]);
  if (m === Infinity) return { m0: INT32_MAX, shift: 30 }; // not representable: saturated, as below
  if (!(m > 0)) return { m0: 0, shift: 0 };
  // frexp: m = q * 2^e with q in [0.5, 1); dividing by a power of two is exact
  let e = Math.floor(Math.log2(m)) + 1;
  let q = m / 2 ** e;
  while (q >= 1) { q /= 2; e++; }
  while (q < 0.5) { q *= 2; e--; }
  let m0 = roundHalfAway(q * 2 ** 31);
  if (m0 === 2 ** 31) { m0 /= 2; e++; }
  if (e < -31) return { m0: 0, shift: 0 };
  if (e > 30) return { m0: INT32_MAX, shift: 30 }; // not representable: saturated, as TFLite does
  return { m0, shift: e };
}

/** gemmlowp's SaturatingRoundingDoublingHighMul: round(a * b / 2^31), ties toward +infinity, saturated. */
export function srdhm(a, b) {
  integers('srdhm', ['a', 'b'], [a, b]);
  if (a === INT32_MIN && b === INT32_MIN) return INT32_MAX;
  const ab = BigInt(a) * BigInt(b);
  const nudge = ab >= 0n ? 1n << 30n : 1n - (1n << 30n);
  return Number((ab + nudge) / (1n << 31n)); // BigInt division truncates toward zero, as C's
}

/** gemmlowp's RoundingDivideByPOT: x / 2^e (0 <= e <= 31), rounded half away from zero. */
export function rdbpot(x, e) {
  integers('rdbpot', ['x'], [x]);
  if (!(Number.isInteger(e) && e >= 0 && e <= 31)) throw new RangeError(`rdbpot: e must be an integer in [0, 31], got ${describe(e)}`);
  const mask = Number((1n << BigInt(e)) - 1n) | 0;
  const remainder = x & mask;
  const threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (remainder > threshold ? 1 : 0);
}

/**
 * The per-channel constants of a requantization form (semantics.js: 'qnnpack', 'fbgemm', 'onednn', 'onnx',
 * 'fixedpoint'), computed as qw_requantization_init computes them from PyTorch's float64 scales:
 * { multiplier (float32), biasInt (int32 added to the accumulator), biasFloat (float32 added after it), m0, shift,
 * overflowToMin, srcScale, dstInvScale }. `bias` is the float bias (qnnpack / fbgemm / onednn / fixedpoint) or the
 * int32 bias (onnx), or 0; `perChannel`: the weights have per-channel qparams (FBGEMM scales a per-tensor bias by a
 * reciprocal, a per-channel one by a division).
 */
export function requantizationParams(form, scales) {
  if (scales === null || typeof scales !== 'object') throw new TypeError(`requantizationParams: scales must be { inScale, weightScale, outScale, bias, perChannel }, got ${describe(scales)}`);
  const { inScale, weightScale, outScale, bias = 0, perChannel = false } = scales;
  numbers('requantizationParams', ['inScale', 'weightScale', 'outScale', 'bias'], [inScale, weightScale, outScale, bias]);
  const [sIn, sW, sOut] = [fr(inScale), fr(weightScale), fr(outScale)];
  switch (form) {
    case 'qnnpack':
    case 'fixedpoint': {
      // PyTorch's qnnpack: requant_scale = w_scale * in_scale * (1 / out_scale) in float32; the float bias
      // quantized to int32 by torch's rule at scale (float)(w_scale * in_scale), that product in float64.
      const biasInt = bias === 0 ? 0 : quantizeTorch(bias, fr(weightScale * inScale), 0, INT32_MIN, INT32_MAX);
      const params = { multiplier: fr(fr(sW * sIn) * fr(1 / sOut)), biasInt, biasFloat: 0, m0: 0, shift: 0 };
      if (form === 'fixedpoint') Object.assign(params, quantizeMultiplier((inScale * weightScale) / outScale));
      return params;
    }
    case 'fbgemm': {
      // FBGEMM: act_times_w_scale = in_scale * w_scale; the float bias enters as bias / act_times_w_scale per channel,
      // times the float64 reciprocal (rounded to float32) per tensor; a scaled value beyond int32 gives qmin.
      const act = fr(sIn * sW);
      const biasFloat = bias === 0 ? 0 : perChannel ? fr(fr(bias) / act) : fr(fr(bias) * fr(1 / act));
      return { multiplier: fr(act / sOut), biasInt: 0, biasFloat, m0: 0, shift: 0, overflowToMin: true };
    }
    case 'onednn':
      // oneDNN as PyTorch 2.x's x86 engine drives it: the scales pass through 1 / scale in float64 and float32.
      return {
        multiplier: sW, biasInt: 0, biasFloat: fr(bias), m0: 0, shift: 0,
        srcScale: fr(1 / fr(1 / inScale)), dstInvScale: fr(1 / fr(1 / fr(1 / outScale))),
      };
    case 'onnx':
      return { multiplier: fr(fr(sIn * sW) / sOut), biasInt: bias, biasFloat: 0, m0: 0, shift: 0 };
    default:
      throw new TypeError(`requantizationParams: unknown form ${describe(form)}`);
  }
}

/**
 * One output of a requantization form, every step kept (what a page shows): acc (the exact int32 sum of products)
 * plus the int32 bias (x, wrapping), then
 *   fp32 forms: scaled = ((float)x + biasFloat) * multiplier in float32, rounded = nearbyint(scaled) (ties to even),
 *               shifted = rounded + zp in float32, result = clamp(shifted, qmin, qmax) (NaN gives the zero point);
 *   fixedpoint: high = SaturatingRoundingDoublingHighMul(x << left, m0), scaled = RoundingDivideByPOT(high, right),
 *               shifted = scaled + zp, result = clamp(shifted, qmin, qmax): two integer roundings, no float.
 */
export function requantizeSteps(form, acc, params, zeroPoint, qmin, qmax) {
  if (!['qnnpack', 'fbgemm', 'onednn', 'onnx', 'fixedpoint'].includes(form)) throw new TypeError(`requantizeSteps: unknown form ${describe(form)}`);
  if (params === null || typeof params !== 'object') throw new TypeError(`requantizeSteps: params must come from requantizationParams(), got ${describe(params)}`);
  integers('requantizeSteps', ['acc', 'zeroPoint', 'qmin', 'qmax'], [acc, zeroPoint, qmin, qmax]);
  const x = wrapInt32(acc + params.biasInt);
  if (form === 'onednn') {
    // v = ((float)x * S) * w_scale + bias; then v * (1 / out_scale) + zp, rounded once (NaN: qmin)
    const v = fr(fr(fr(fr(x) * params.srcScale) * params.multiplier) + params.biasFloat);
    const t = fr(fr(v * params.dstInvScale) + fr(zeroPoint));
    if (Number.isNaN(t)) return { x, scaled: v, rounded: NaN, shifted: t, result: qmin };
    const result = roundHalfEven(clamp(t, fr(qmin), fr(qmax)));
    return { x, scaled: v, rounded: result, shifted: t, result };
  }
  if (form === 'fixedpoint') {
    const left = Math.max(params.shift, 0);
    const right = Math.max(-params.shift, 0);
    const high = srdhm(wrapInt32(x * 2 ** left), params.m0);
    const scaled = rdbpot(high, right);
    const shifted = scaled + zeroPoint;
    return { x, left, right, high, scaled, rounded: scaled, shifted, result: clamp(shifted, qmin, qmax) };
  }
  const scaled = fr(fr(fr(x) + params.biasFloat) * params.multiplier);
  if (params.overflowToMin && !(Math.abs(scaled) < 2147483648)) return { x, scaled, rounded: NaN, shifted: NaN, result: qmin };
  const rounded = roundHalfEven(scaled);
  if (Number.isNaN(rounded)) return { x, scaled, rounded, shifted: NaN, result: clamp(zeroPoint, qmin, qmax) };
  const shifted = fr(rounded + fr(zeroPoint));
  return { x, scaled, rounded, shifted, result: clampedFloatToInt32(clamp(shifted, fr(qmin), fr(qmax))) };
}

/** One output of a requantization form: requantizeSteps(...).result. */
export function requantize(form, acc, params, zeroPoint, qmin, qmax) {
  return requantizeSteps(form, acc, params, zeroPoint, qmin, qmax).result;
}

// ---- measuring quantization error ------------------------------------------------------------------------

/**
 * Signal-to-quantization-noise ratio, accumulated over any number of (reference, approximation) pairs:
 * 10 log10(sum ref^2 / sum (ref - approx)^2) dB; Infinity without error, null before anything was added.
 */
export class Sqnr {
  signal = 0;
  noise = 0;
  count = 0;

  add(reference, approx) {
    for (const [name, v] of [['reference', reference], ['approx', approx]]) {
      if (!Array.isArray(v) && !ArrayBuffer.isView(v)) throw new TypeError(`Sqnr.add: ${name} must be an array or a typed array of numbers, got ${describe(v)}`);
    }
    if (reference.length !== approx.length) throw new RangeError(`Sqnr.add: ${reference.length} reference values but ${approx.length} approximations`);
    for (let i = 0; i < reference.length; i++) {
      const r = Number(reference[i]);
      const d = r - Number(approx[i]);
      this.signal += r * r;
      this.noise += d * d;
    }
    this.count += reference.length;
    return this;
  }

  get db() {
    if (this.count === 0) return null;
    return this.noise === 0 ? Infinity : 10 * Math.log10(this.signal / this.noise);
  }
}

/** SQNR in dB of one approximation of a reference. */
export function sqnrDb(reference, approx) {
  return new Sqnr().add(reference, approx).db;
}
