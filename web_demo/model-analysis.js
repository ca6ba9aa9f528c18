// The model view's bookkeeping, free of the DOM (the model worker uses it too): which tensor carries which qparams,
// what each layer's weights look like, how an 8x8 image feeds a model, and one output element of a linear / conv
// layer taken apart step by step. The arithmetic is
// qwasm/reference's (js/reference.js: the same rules as the wasm kernels, tested against them) and the forms are
// the model's semantics profile's (js/semantics.js): this file computes nothing of its own but sums of products.
import { SEMANTICS } from './qwasm/js/index.js';
import { INT32_MAX, INT32_MIN, RANGES, dequantize, quantizeOnnx, requantizationParams, requantizeSteps, wrapInt32 } from './qwasm/js/reference.js';

/** The layers the explainer can take apart. */
export const LINEAR_OPS = new Set(['QLinearConv', 'QGemm', 'QLinearMatMul']);

/**
 * Every layer with what the page shows of it: { index, layer, input, output, weight, bias }. The qparams
 * come from Model.layers (the library knows where each operator keeps them); the weight gains its
 * integers and summary figures, the bias its values.
 */
export function describeLayers(model) {
  return model.layers.map((layer, index) => {
    let weight = null;
    if (layer.weight) {
      const w = layer.weight;
      const { data } = model.initializer(w.name);
      const mid = w.dtype === 'uint8' ? 128 : 0;
      const [scaleMin, scaleMax] = extent(w.scales);
      const [intMin, intMax] = extent(data);
      weight = { ...w, data, perChannel: w.scales.length > 1, symmetric: w.zeroPoints.every((v) => v === mid), scaleMin, scaleMax, intMin, intMax };
    }
    const bias = layer.bias ? model.initializer(layer.bias.name) : null;
    return { index, layer, input: layer.input, output: layer.output, weight, bias };
  });
}

/** [min, max] of an array of any length (a spread into Math.min overflows the stack past ~100k elements). */
export function extent(values) {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = Number(values[i]);
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return [min, max];
}

/** True when the model computes in integers somewhere (a quantized layer), false for a float model. */
export function isQuantized(layers) {
  return layers.some(({ layer, weight }) => weight?.dtype === 'int8' || weight?.dtype === 'uint8' || /^(Q|Dequantize|Quantize|DynamicQuantize|MatMulInteger|ConvInteger)/.test(layer.opType));
}

/**
 * The feeds that give `model` an 8x8 image (values in [0, 1]): a 4-D input gets it in every batch item and channel,
 * resampled (nearest) to its H x W; an input of 64k values gets it k times.
 */
export function feedFor(model, image) {
  if (model.inputs.length !== 1) throw new Error(`the demo feeds one image; this model has ${model.inputs.length} inputs`);
  const spec = model.inputs[0];
  if (spec.dtype !== 'float32') throw new Error(`the demo feeds float32 images; input "${spec.name}" is ${spec.dtype}`);
  const dims = spec.dims.map((d) => (typeof d === 'number' ? d : 1));
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  if (dims.length === 4) {
    const [, , H, W] = dims;
    for (let i = 0; i < n; i++) {
      const y = Math.floor(i / W) % H;
      const x = i % W;
      data[i] = image[Math.min(7, Math.floor((y * 8) / H)) * 8 + Math.min(7, Math.floor((x * 8) / W))];
    }
  } else if (n % 64 === 0) {
    for (let i = 0; i < n; i++) data[i] = image[i % 64];
  } else {
    throw new Error(`the demo cannot turn an 8x8 image into input "${spec.name}" of shape [${spec.dims}]`);
  }
  return { [spec.name]: { data, dims } };
}

/** Dequantized weights (Float32Array), per tensor or per channel along weight.axis. */
export function dequantizeWeight(weight) {
  const { dims, data, scales, zeroPoints, axis } = weight;
  const out = new Float32Array(data.length);
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const channels = dims[axis];
  for (let i = 0; i < data.length; i++) {
    const c = scales.length > 1 ? Math.floor(i / inner) % channels : 0;
    out[i] = dequantize(data[i], scales[c], zeroPoints[zeroPoints.length > 1 ? c : 0]);
  }
  return out;
}

/** A captured tensor as real values: 8-bit data through its qparams, float data as it is. */
export function dequantizeValue(tensor, qparams) {
  if (tensor.dtype === 'float32') return Float32Array.from(tensor.data);
  if (!qparams) return Float32Array.from(tensor.data, Number);
  return Float32Array.from(tensor.data, (v) => dequantize(Number(v), qparams.scale, qparams.zeroPoint));
}

export function softmax(values) {
  const [, max] = extent(values);
  const e = Array.from(values, (v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

/** The output coordinates of a linear / conv layer's output, given its flat (row-major) index. */
export function unravel(index, dims) {
  const out = [];
  for (let k = dims.length - 1; k >= 0; k--) {
    out.unshift(index % dims[k]);
    index = Math.floor(index / dims[k]);
  }
  return out;
}

/**
 * One output element of a QLinearConv / QGemm / QLinearMatMul layer, recomputed from the integers.
 * info: an entry of describeLayers; x: the layer's captured integer input { dims, data }; y: its captured
 * integer output; flat: the element's row-major index in y; semantics: the model's profile; compareWith: another
 * profile to recompute the element under (or null).
 * Returns every intermediate quantity, and whether the result equals the kernel's.
 */
export function explainElement(info, x, y, flat, semantics, compareWith = null) {
  const { layer, input, output, weight, bias } = info;
  const w = weight;
  const coords = unravel(flat, y.dims);
  const terms = []; // { x, w, where }
  let channel;
  if (layer.opType === 'QLinearConv') {
    const [n, oc, oh, ow] = coords;
    const [, C, H, W] = x.dims;
    const [OC, ICg, KH, KW] = w.dims;
    const a = layer.attributes;
    const [sh, sw] = a.strides ?? [1, 1];
    const [dh, dw] = a.dilations ?? [1, 1];
    const pads = a.pads ?? [0, 0, 0, 0];
    const groups = a.group ?? 1;
    const g = Math.floor(oc / (OC / groups));
    channel = oc;
    for (let ic = 0; ic < ICg; ic++) {
      const c = g * ICg + ic;
      for (let kh = 0; kh < KH; kh++) {
        for (let kw = 0; kw < KW; kw++) {
          const ih = oh * sh - pads[0] + kh * dh;
          const iw = ow * sw - pads[1] + kw * dw;
          const inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
          const xv = inside ? Number(x.data[((n * C + c) * H + ih) * W + iw]) : input.zeroPoint; // padding is the zero point
          terms.push({ x: xv, w: Number(w.data[((oc * ICg + ic) * KH + kh) * KW + kw]), where: inside ? `x[${c},${ih},${iw}]` : 'pad' });
        }
      }
    }
  } else if (layer.opType === 'QGemm') {
    const [m, n] = coords;
    const K = x.dims[1];
    channel = n;
    for (let k = 0; k < K; k++) terms.push({ x: Number(x.data[m * K + k]), w: Number(w.data[n * K + k]), where: `a[${m},${k}]` });
  } else if (layer.opType === 'QLinearMatMul') {
    if (w.dims.length !== 2) return null;
    const n = coords[coords.length - 1];
    const row = Math.floor(flat / y.dims[y.dims.length - 1]);
    const [K, N] = w.dims;
    channel = n;
    for (let k = 0; k < K; k++) terms.push({ x: Number(x.data[row * K + k]), w: Number(w.data[k * N + n]), where: `a[${row},${k}]` });
  } else {
    return null;
  }
  const wz = w.zeroPoints[w.zeroPoints.length > 1 ? channel : 0];
  const ws = w.scales[w.scales.length > 1 ? channel : 0];
  let sum = 0;
  for (const t of terms) {
    t.product = (t.x - input.zeroPoint) * (t.w - wz);
    sum += t.product;
  }
  const acc = wrapInt32(sum);
  const b = bias ? Number(bias.data[channel]) : 0;
  const biasDtype = bias ? bias.dtype : null;
  // the output range: the dtype's, narrowed by a Clip the loader fused into the layer (ReLU, ReLU6)
  const [dmin, dmax] = RANGES[output.dtype] ?? RANGES.uint8;
  const fused = layer.attributes.qwasm_output_range ?? null;
  const qmin = fused ? Math.max(dmin, fused[0]) : dmin;
  const qmax = fused ? Math.min(dmax, fused[1]) : dmax;
  // the model's form (as the kernel ran it), the integer-only form, and, if asked, another profile's form
  const scales = { inScale: input.scale, weightScale: ws, outScale: output.scale, perChannel: w.scales.length > 1 };
  const run = (sem) => {
    const form = requantizationForm(sem, info);
    const params = requantizationOf(form, scales, b, biasDtype);
    return { semantics: sem, form, params, steps: requantizeSteps(form, acc, params, output.zeroPoint, qmin, qmax) };
  };
  const own = run(semantics);
  const { params, steps, form } = own;
  const fixedParams = requantizationOf('fixedpoint', scales, b, biasDtype);
  const fixed = requantizeSteps('fixedpoint', acc, fixedParams, output.zeroPoint, qmin, qmax);
  const other = compareWith && compareWith !== semantics ? run(compareWith) : null;
  const kernel = Number(y.data[flat]);
  return {
    opType: layer.opType, coords, channel, terms, xZero: input.zeroPoint, wZero: wz, xScale: Math.fround(input.scale),
    wScale: Math.fround(ws), yScale: Math.fround(output.scale), yZero: output.zeroPoint, acc, bias: b, biasDtype, sum: steps.x,
    form, multiplier: params.multiplier, biasFloat: params.biasFloat, exact: (input.scale * ws) / output.scale, scaled: steps.scaled,
    rounded: steps.rounded, shifted: steps.shifted, qmin, qmax, fused, result: steps.result, m0: fixedParams.m0,
    shift: fixedParams.shift, right: fixed.right, left: fixed.left, high: fixed.high, fixedScaled: fixed.scaled,
    fixedResult: fixed.result, kernel, matches: steps.result === kernel,
    real: Math.fround(output.scale) * (steps.result - output.zeroPoint), semantics,
    other: other && { semantics: other.semantics, form: other.form, multiplier: other.params.multiplier, biasInt: other.params.biasInt,
      biasFloat: other.params.biasFloat, scaled: other.steps.scaled, result: other.steps.result },
  };
}

/**
 * The requantization form a profile gives this layer: its `requantization`, with 'x86' resolved as PyTorch's x86
 * engine (and js/ops/linear.js) resolve it: a convolution with symmetric weights and groups <= 100 goes to oneDNN.
 */
export function requantizationForm(semantics, info) {
  const form = SEMANTICS[semantics].requantization;
  if (form !== 'x86') return form;
  const symmetric = info.weight.zeroPoints.every((z) => z === 0);
  return info.layer.opType === 'QLinearConv' && symmetric && (info.layer.attributes.group ?? 1) <= 100 ? 'onednn' : 'fbgemm';
}

/**
 * A form's constants for this layer's bias: a float32 bias (files for PyTorch's fbgemm / x86 engines keep it float)
 * enters through the form's own bias rule; an int32 bias (QLinearConv / QGemm's B at scale in_scale * w_scale) is
 * added as it is by the int32 forms, and enters the float-bias forms dequantized (b * in_scale * w_scale).
 */
function requantizationOf(form, scales, b, biasDtype) {
  const floatForm = form === 'fbgemm' || form === 'onednn';
  if (biasDtype === 'float32') {
    if (form === 'onnx') return { ...requantizationParams(form, scales), biasInt: quantizeOnnx(b, Math.fround(scales.inScale * scales.weightScale), 0, INT32_MIN, INT32_MAX) };
    return requantizationParams(form, { ...scales, bias: b });
  }
  if (floatForm) return requantizationParams(form, { ...scales, bias: Math.fround(b * Math.fround(Math.fround(scales.inScale) * Math.fround(scales.weightScale))) });
  return { ...requantizationParams(form, scales), biasInt: b };
}
