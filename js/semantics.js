// Semantics profiles: the one place that says how each reference framework computes each quantized operation.
// A profile names a framework and engine and fixes, per family of operations, the form qwasm reproduces:
//   rounding        quantize: how a real value meets the scale
//   requantization  linear / conv / matmul: int32 accumulator (+ bias) -> 8-bit output
//   add, mul        elementwise add / mul of quantized tensors
//   pooling         average / max / adaptive pooling and mean
//   sigmoid, hardswish, leakyRelu   the table-driven activations
//   dynamic         dynamic linear: the float input quantized per call, int8 weights, float output
// Every operator takes { semantics } (a profile name) and, where it always had one, `mode` / `rounding` to
// override its own family's form. Model, quantizeStatic and the demo use the same profiles.
// Adding a profile: one entry in PROFILES (and its tests). Adding a form: one entry in FORMS, a kernel, tests.
import { UnsupportedError } from './errors.js';

/** Every form of every family, with what it computes and whether qwasm has its kernel. */
export const FORMS = deepFreeze({
  rounding: {
    torch: { does: "zp + nearbyint(x * (1 / scale)), the zero point added after rounding, in float32 (PyTorch without FBGEMM: Debian's 1.13)" },
    fbgemm: { does: "nearbyint(x * (1 / scale) + zp), the zero point added before rounding (PyTorch 2.x on x86, FBGEMM's Quantize; two float roundings per channel and for qint32)" },
    onnx: { does: 'x / scale in float32, ties to even, zero point added exactly (ONNX QuantizeLinear)' },
    tflite: { does: 'x / scale, ties away from zero (TFLite Quantize)', missing: true },
  },
  requantization: {
    qnnpack: { does: 'float bias rounded to int32 at in_scale * w_scale; fp32 multiplier w_scale * in_scale * (1 / out_scale)' },
    fbgemm: { does: 'bias kept float, added as bias / (in_scale * w_scale) (per tensor: times its reciprocal); multiplier (in_scale * w_scale) / out_scale; nearest even, beyond int32 the lowest output' },
    onednn: { does: "oneDNN's int8 convolution: ((float)acc * in_scale) * w_scale + bias, times 1 / out_scale, + zp before rounding" },
    x86: { does: "PyTorch 2.x's x86 engine: convolutions with symmetric weights and groups <= 100 as oneDNN (on AVX512-VNNI hosts), everything else as FBGEMM" },
    onnx: { does: 'int32 bias given; multiplier in_scale * w_scale / out_scale; ties to even' },
    fixedpoint: { does: 'integer only: Q31 multiplier and shift, SaturatingRoundingDoublingHighMul then RoundingDivideByPOT' },
    none: { does: 'no requantization: the exact int32 sums (ONNX MatMulInteger / ConvInteger)' },
  },
  add: {
    qnnpack: { does: 'same shapes: QNNPACK (quint8) / XNNPACK (qint8) fixed point; broadcasting: dequantize, add, quantize' },
    float: { does: "dequantize, add in float32 (AVX2 FMA blocks of 64), quantize: PyTorch 1.13's x86 / fbgemm / onednn kernel" },
    fbgemm: { does: "the float kernel in PyTorch 2.x's x86 builds: its scalar tail adds the zero point before rounding" },
    qnnpack2: { does: "PyTorch 2.x's qnnpack engine in x86 builds: same shapes as 'qnnpack' (fixed point), broadcasting by the 'fbgemm' float kernel" },
    onnx: { does: 'com.microsoft QLinearAdd as ONNX Runtime computes it (MLAS)' },
    tflite: { does: "TFLite's fixed-point add (left shift 20, per-input Q31 multipliers)", missing: true },
  },
  mul: {
    pytorch: { does: 'zp + rint((float)((a - za)(b - zb)) * ((a_s * b_s) * (1 / y_s))), every PyTorch engine' },
    onnx: { does: 'com.microsoft QLinearMul as ONNX Runtime computes it (MLAS)' },
    tflite: { does: "TFLite's fixed-point mul (one Q31 multiplier)", missing: true },
  },
  pooling: {
    qnnpack: { does: "PyTorch's qnnpack engine: QNNPACK's average / global pooling for quint8 without ceil_mode, max pooling clamped to the edge; generic kernels elsewhere" },
    generic: { does: "PyTorch 1.13's generic quantized pooling kernels" },
    fbgemm: { does: "the generic kernels in PyTorch 2.x's x86 builds: their channels-last scalar loops add the zero point before rounding, their vector loops take whole vectors of channels (cpuCapability)" },
    qnnpack2: { does: "PyTorch 2.x's qnnpack engine in x86 builds: QNNPACK's kernels where 'qnnpack' takes them, the 'fbgemm' generic kernels elsewhere" },
    onnx: { does: "ONNX Runtime's QLinearAveragePool / QLinearGlobalAveragePool and MaxPool" },
    tflite: { does: "TFLite's integer average pooling (rounded integer division)", missing: true },
  },
  sigmoid: {
    qnnpack: { does: "QNNPACK's table (quint8), output qparams fixed at (1/256, 0)" },
    fbgemm: { does: "PyTorch 2.x's generic kernel on x86: output (1/256, 0) for quint8, (1/256, -128) for qint8" },
    onnx: { does: "ONNX Runtime's QLinearSigmoid table (MLAS logistic)" },
    tflite: { does: "TFLite's int8 logistic", missing: true },
  },
  hardswish: {
    qnnpack: { does: "QNNPACK's table (quint8)" },
    fbgemm: { does: "PyTorch 2.x's generic kernel on x86 (quint8 or qint8, vector blocks of 64)" },
    onnx: { does: 'ONNX has no quantized HardSwish (QDQ graphs run it in float)', missing: true },
    tflite: { does: "TFLite's int8 hard_swish", missing: true },
  },
  dynamic: {
    qnnpack: { does: "PyTorch's qnnpack engine (quantize_dynamic's Linear): the input's qparams by ATen's ChooseQuantizationParams over [0, 255] (reduce_range ignored), quantized by the profile's rounding, exact int32 sums, (float)acc * (x_s * w_s) + bias with two roundings" },
    fbgemm: { does: "PyTorch 2.x's fbgemm / x86 engines: ChooseQuantizationParams over [0, 127] (the module's reduce_range), FBGEMM's quantize, exact sums, fma((float)acc, x_s * w_s, bias)" },
    onnx: { does: "com.microsoft DynamicQuantizeMatMul as ONNX Runtime computes it: uint8 over [min(x, 0), max(x, 0)], x / s, (float)acc * (x_s * w_s) + bias" },
    tflite: { does: "TFLite's dynamic-range fully connected", missing: true },
  },
  leakyRelu: {
    generic: { does: "PyTorch 1.13's generic kernel (AVX2 blocks of 64 dequantized with FMA), every engine" },
    fbgemm: { does: "the generic kernel in PyTorch 2.x's x86 builds: its tail adds the zero point before rounding" },
    onnx: { does: "ONNX Runtime's QLinearLeakyRelu table" },
    tflite: { does: "TFLite's leaky_relu", missing: true },
  },
});

/** Earlier names of forms, still accepted where a call names a form itself (`mode`). */
const ALIASES = Object.freeze({ mul: Object.freeze({ qnnpack: 'pytorch' }), leakyRelu: Object.freeze({ float: 'generic' }) });

/** The profiles: a reference framework and engine, and the form of every family. */
export const PROFILES = deepFreeze({
  'pytorch-qnnpack': {
    reference: "PyTorch's qnnpack engine (torch.backends.quantized.engine = 'qnnpack'), as Debian's PyTorch 1.13 (built without FBGEMM) computes it",
    rounding: 'torch', requantization: 'qnnpack', add: 'qnnpack', mul: 'pytorch', pooling: 'qnnpack',
    sigmoid: 'qnnpack', hardswish: 'qnnpack', leakyRelu: 'generic', dynamic: 'qnnpack',
  },
  'pytorch2-qnnpack': {
    reference: "PyTorch's qnnpack engine in an x86 build with FBGEMM (every PyPI wheel; checked against torch 2.13): QNNPACK's kernels, but quantize and the generic kernels' scalar code round as FBGEMM does",
    rounding: 'fbgemm', requantization: 'qnnpack', add: 'qnnpack2', mul: 'pytorch', pooling: 'qnnpack2',
    sigmoid: 'qnnpack', hardswish: 'qnnpack', leakyRelu: 'fbgemm', dynamic: 'qnnpack',
  },
  'pytorch-fbgemm': {
    reference: "PyTorch 2.x's fbgemm engine on x86 (torch.backends.quantized.engine = 'fbgemm'; checked against torch 2.13 from PyPI)",
    rounding: 'fbgemm', requantization: 'fbgemm', add: 'fbgemm', mul: 'pytorch', pooling: 'fbgemm',
    sigmoid: 'fbgemm', hardswish: 'fbgemm', leakyRelu: 'fbgemm', dynamic: 'fbgemm',
  },
  'pytorch-x86': {
    reference: "PyTorch 2.x's x86 engine, the default on x86 (engine = 'x86'): the fbgemm engine's kernels, but convolutions with symmetric weights through oneDNN (AVX512-VNNI hosts; checked against torch 2.13)",
    rounding: 'fbgemm', requantization: 'x86', add: 'fbgemm', mul: 'pytorch', pooling: 'fbgemm',
    sigmoid: 'fbgemm', hardswish: 'fbgemm', leakyRelu: 'fbgemm', dynamic: 'fbgemm',
  },
  onnx: {
    reference: 'the ONNX specification, and ONNX Runtime (onnxruntime-web) for its com.microsoft operators',
    rounding: 'onnx', requantization: 'onnx', add: 'onnx', mul: 'onnx', pooling: 'onnx',
    sigmoid: 'onnx', hardswish: 'onnx', leakyRelu: 'onnx', dynamic: 'onnx',
  },
  tflite: {
    reference: 'TensorFlow Lite integer-only kernels (fixed-point multipliers, no float at run time)',
    rounding: 'tflite', requantization: 'fixedpoint', add: 'tflite', mul: 'tflite', pooling: 'tflite',
    sigmoid: 'tflite', hardswish: 'tflite', leakyRelu: 'tflite', dynamic: 'tflite',
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
