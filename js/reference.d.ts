// Type declarations for qwasm/reference (js/reference.js): the per-element rules of quantized arithmetic in plain
// JavaScript, equal to the wasm kernels (tests/js/reference.test.js). No wasm needed: no init().

/** Math.fround: a number rounded to float32. */
export const f32: (x: number) => number;
export const INT32_MIN: -2147483648;
export const INT32_MAX: 2147483647;
/** [qmin, qmax] of each dtype, by PyTorch's and ONNX's names. */
export const RANGES: Readonly<Record<'quint8' | 'qint8' | 'qint32' | 'uint8' | 'int8' | 'int32', readonly [number, number]>>;

/** An integer reduced modulo 2^32 to int32. */
export function wrapInt32(v: number): number;
/** The nearest integer, ties to even (nearbyint). */
export function roundHalfEven(x: number): number;
/** The nearest integer, ties away from zero (C's round). */
export function roundHalfAway(x: number): number;

/** PyTorch's quantize: clamp(zp + nearbyint(x * (1 / scale)), qmin, qmax), every step in float32; NaN -> zp. */
export function quantizeTorch(x: number, scale: number, zeroPoint: number, qmin: number, qmax: number): number;
/** ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zp); NaN -> zp. */
export function quantizeOnnx(x: number, scale: number, zeroPoint: number, qmin: number, qmax: number): number;
/** scale * (float)(q - zp), the subtraction wrapping in int32. */
export function dequantize(q: number, scale: number, zeroPoint: number): number;
/**
 * ATen's ChooseQuantizationParams as PyTorch's dynamic linear picks its input's qparams: the range widened to 0 over
 * [qmin, qmax] (default [0, 255]; [0, 127] with reduce_range), double arithmetic, the scale at least 6.1e-5.
 * Throws a TypeError for non-numbers or non-integer qmin / qmax; a RangeError for non-finite min / max or qmin >= qmax.
 */
export function chooseQParamsDynamic(min: number, max: number, qmin?: number, qmax?: number): { scale: number; zeroPoint: number };
/** PyTorch's per-channel dequantize with a float64 channel scale. */
export function dequantizePerChannel(q: number, scale: number, zeroPoint: number): number;

/** TFLite's QuantizeMultiplier: m = m0 * 2^(shift - 31), m0 in [2^30, 2^31). */
export function quantizeMultiplier(m: number): { m0: number; shift: number };
/** gemmlowp's SaturatingRoundingDoublingHighMul. */
export function srdhm(a: number, b: number): number;
/** gemmlowp's RoundingDivideByPOT (0 <= e <= 31). */
export function rdbpot(x: number, e: number): number;

/** A requantization form (semantics.js `requantization`, without 'none'). */
export type RequantizationForm = 'qnnpack' | 'fbgemm' | 'onnx' | 'fixedpoint';
/** The per-channel constants of a form. */
export interface RequantizationParams {
  /** float32 multiplier of the fp32 forms. */
  multiplier: number;
  /** int32 added to the accumulator (the quantized bias, or the int32 bias given). */
  biasInt: number;
  /** float32 added after conversion (fbgemm's bias / (in_scale * w_scale)). */
  biasFloat: number;
  /** fixedpoint: Q31 multiplier and shift. */
  m0: number;
  shift: number;
}
/** The constants of a form from PyTorch's float64 scales; bias: float (qnnpack, fbgemm, fixedpoint) or int32 (onnx). */
export function requantizationParams(
  form: RequantizationForm,
  scales: { inScale: number; weightScale: number; outScale: number; bias?: number },
): RequantizationParams;
/** Every step of one requantized output (fixedpoint also gives left, right and high). */
export interface RequantizationSteps {
  /** acc + biasInt, wrapped to int32. */
  x: number;
  scaled: number;
  rounded: number;
  shifted: number;
  result: number;
  left?: number;
  right?: number;
  high?: number;
}
/** One output of a form with its intermediate values. */
export function requantizeSteps(form: RequantizationForm, acc: number, params: RequantizationParams, zeroPoint: number, qmin: number, qmax: number): RequantizationSteps;
/** One output: acc (the exact int32 sum) plus the bias, scaled, rounded, offset by the zero point, clamped. */
export function requantize(form: RequantizationForm, acc: number, params: RequantizationParams, zeroPoint: number, qmin: number, qmax: number): number;

/** Signal-to-quantization-noise ratio accumulated over (reference, approximation) pairs. */
export class Sqnr {
  signal: number;
  noise: number;
  count: number;
  add(reference: ArrayLike<number>, approx: ArrayLike<number>): this;
  /** dB; Infinity without error; null before anything was added. */
  readonly db: number | null;
}
/** SQNR in dB of one approximation. */
export function sqnrDb(reference: ArrayLike<number>, approx: ArrayLike<number>): number | null;

/** The uint8 qparams onnxruntime chooses at run time for a tensor (DynamicQuantizeLinear, DynamicQuantizeMatMul). */
export function dynamicQParams(values: Iterable<number>): { scale: number; zeroPoint: number; min: number; max: number };
/** One float output of DynamicQuantizeMatMul / MatMulIntegerToFloat: f32(acc) * f32(aScale * bScale) (+ bias). */
export function dynamicMatMulOutput(acc: number, aScale: number, bScale: number, bias?: number): number;
