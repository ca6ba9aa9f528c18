// Semantics profiles: the one place that says how each reference framework computes each quantized operation.
// A profile names a framework and engine and fixes, per family of operations, the form qwasm reproduces:
//   rounding        quantize: how a real value meets the scale
//   requantization  linear / conv / matmul: int32 accumulator (+ bias) -> 8-bit output
//   add, mul        elementwise add / mul of quantized tensors
//   pooling         average / max / adaptive pooling and mean
//   sigmoid, hardswish, leakyRelu   the table-driven activations
// Every operator takes { semantics } (a profile name) and, where it always had one, `mode` / `rounding` to
// override its own family's form. Model, quantizeStatic and the demo use the same profiles.
// Adding a profile: one entry in PROFILES (and its tests). Adding a form: one entry in FORMS, a kernel, tests.
import { UnsupportedError } from './errors.js';

/** Every form of every family, with what it computes and whether qwasm has its kernel. */
export const FORMS = deepFreeze({
  rounding: {
    torch: { does: 'x * (1 / scale) in float32, ties to even, zero point added in float32 (PyTorch)' },
    onnx: { does: 'x / scale in float32, ties to even, zero point added exactly (ONNX QuantizeLinear)' },
    tflite: { does: 'x / scale, ties away from zero (TFLite Quantize)', missing: true },
  },
  requantization: {
    qnnpack: { does: 'float bias rounded to int32 at in_scale * w_scale; fp32 multiplier w_scale * in_scale * (1 / out_scale)' },
    fbgemm: { does: 'bias kept float, added as bias / (in_scale * w_scale); multiplier (in_scale * w_scale) / out_scale; lrintf' },
    onnx: { does: 'int32 bias given; multiplier in_scale * w_scale / out_scale; ties to even' },
    fixedpoint: { does: 'integer only: Q31 multiplier and shift, SaturatingRoundingDoublingHighMul then RoundingDivideByPOT' },
    none: { does: 'no requantization: the exact int32 sums (ONNX MatMulInteger / ConvInteger)' },
  },
  add: {
    qnnpack: { does: 'same shapes: QNNPACK (quint8) / XNNPACK (qint8) fixed point; broadcasting: dequantize, add, quantize' },
    float: { does: 'dequantize, add in float32 (AVX2 FMA blocks of 64), quantize: the x86 / fbgemm / onednn engines' },
    onnx: { does: 'com.microsoft QLinearAdd as ONNX Runtime computes it (MLAS)' },
    tflite: { does: "TFLite's fixed-point add (left shift 20, per-input Q31 multipliers)", missing: true },
  },
  mul: {
    pytorch: { does: 'zp + rint((float)((a - za)(b - zb)) * ((a_s * b_s) * (1 / y_s)))' },
    onnx: { does: 'com.microsoft QLinearMul as ONNX Runtime computes it (MLAS)' },
    tflite: { does: "TFLite's fixed-point mul (one Q31 multiplier)", missing: true },
  },
  pooling: {
    qnnpack: { does: "PyTorch's qnnpack engine: QNNPACK's average / global pooling for quint8 without ceil_mode, max pooling clamped to the edge; generic kernels elsewhere" },
    generic: { does: "PyTorch's generic (x86 / fbgemm engine) quantized pooling kernels" },
    onnx: { does: "ONNX Runtime's QLinearAveragePool / QLinearGlobalAveragePool and MaxPool" },
    tflite: { does: "TFLite's integer average pooling (rounded integer division)", missing: true },
  },
  sigmoid: {
    qnnpack: { does: "QNNPACK's table, output qparams fixed at (1/256, 0)" },
    generic: { does: "PyTorch's generic float sigmoid kernel", missing: true },
    onnx: { does: "ONNX Runtime's QLinearSigmoid table (MLAS logistic)" },
    tflite: { does: "TFLite's int8 logistic", missing: true },
  },
  hardswish: {
    qnnpack: { does: "QNNPACK's table" },
    generic: { does: "PyTorch's generic float hardswish kernel", missing: true },
    onnx: { does: 'ONNX has no quantized HardSwish (QDQ graphs run it in float)', missing: true },
    tflite: { does: "TFLite's int8 hard_swish", missing: true },
  },
  leakyRelu: {
    generic: { does: "PyTorch's generic kernel (AVX2 blocks of 64 dequantized with FMA), every engine" },
    onnx: { does: "ONNX Runtime's QLinearLeakyRelu table" },
    tflite: { does: "TFLite's leaky_relu", missing: true },
  },
});

/** Earlier names of forms, still accepted where a call names a form itself (`mode`). */
const ALIASES = Object.freeze({ add: Object.freeze({ fbgemm: 'float' }), mul: Object.freeze({ qnnpack: 'pytorch' }) });

/** The profiles: a reference framework and engine, and the form of every family. */
export const PROFILES = deepFreeze({
  'pytorch-qnnpack': {
    reference: "PyTorch's qnnpack engine (torch.backends.quantized.engine = 'qnnpack')",
    rounding: 'torch', requantization: 'qnnpack', add: 'qnnpack', mul: 'pytorch', pooling: 'qnnpack',
    sigmoid: 'qnnpack', hardswish: 'qnnpack', leakyRelu: 'generic',
  },
  'pytorch-fbgemm': {
    reference: "PyTorch's x86 / fbgemm engine, the default on x86 (torch.backends.quantized.engine = 'x86' or 'fbgemm')",
    rounding: 'torch', requantization: 'fbgemm', add: 'float', mul: 'pytorch', pooling: 'generic',
    sigmoid: 'generic', hardswish: 'generic', leakyRelu: 'generic',
  },
  onnx: {
    reference: 'the ONNX specification, and ONNX Runtime (onnxruntime-web) for its com.microsoft operators',
    rounding: 'onnx', requantization: 'onnx', add: 'onnx', mul: 'onnx', pooling: 'onnx',
    sigmoid: 'onnx', hardswish: 'onnx', leakyRelu: 'onnx',
  },
  tflite: {
    reference: 'TensorFlow Lite integer-only kernels (fixed-point multipliers, no float at run time)',
    rounding: 'tflite', requantization: 'fixedpoint', add: 'tflite', mul: 'tflite', pooling: 'tflite',
    sigmoid: 'tflite', hardswish: 'tflite', leakyRelu: 'tflite',
  },
});

export const SEMANTICS_NAMES = Object.freeze(Object.keys(PROFILES));

/** A profile with per-call overrides resolved. */
class Semantics {
  constructor(name, where) {
    this.name = name;
    this.profile = PROFILES[name];
    this.where = where;
  }

  /**
   * The form of `family` for this call: `override` (a form name the caller gave through `mode` /
   * `rounding`) or the profile's. Throws TypeError for an unknown form, UnsupportedError for a form qwasm
   * has no kernel for.
   */
  form(family, override) {
    const forms = FORMS[family];
    let name = override ?? this.profile[family];
    if (override !== undefined && override !== null) {
      if (typeof override !== 'string' || (!Object.hasOwn(forms, override) && !Object.hasOwn(ALIASES[family] ?? {}, override))) {
        const known = [...Object.keys(forms), ...Object.keys(ALIASES[family] ?? {})].map((f) => `'${f}'`).join(', ');
        throw new TypeError(`${this.where}: unknown ${family} form ${show(override)}; expected one of ${known}, or { semantics: ${SEMANTICS_NAMES.map((n) => `'${n}'`).join(' | ')} }`);
      }
      name = ALIASES[family]?.[override] ?? override;
    }
    if (forms[name].missing) {
      const source = override == null ? `the '${this.name}' semantics' ${family} form` : `the ${family} form '${name}'`;
      throw new UnsupportedError(`${this.where}: ${source} (${forms[name].does}) is not implemented`);
    }
    return name;
  }
}

/**
 * The semantics of a call: options.semantics (a profile name) or `defaultName`. Operators then ask it for the
 * form of their family: semanticsOf(options, 'add', 'pytorch-qnnpack').form('add', options.mode).
 */
export function semanticsOf(options, where, defaultName) {
  const name = options?.semantics ?? defaultName;
  if (typeof name !== 'string' || !Object.hasOwn(PROFILES, name)) {
    throw new TypeError(`${where}: unknown semantics ${show(name)}; expected one of ${SEMANTICS_NAMES.map((n) => `'${n}'`).join(', ')}`);
  }
  return new Semantics(name, where);
}

function show(v) {
  return typeof v === 'string' ? `'${v}'` : String(v);
}

function deepFreeze(o) {
  for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o);
}
