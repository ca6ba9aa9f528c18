// The model view's arithmetic, free of the DOM: which tensor carries which qparams, what each layer's
// weights look like, and one output element of a linear / conv layer recomputed step by step in integers
// (and float32 where the model's semantics use it), exactly as qwasm's kernels do
// (src/operators/requantization-init.c, src/requantization/requantization.h, docs/quantization.md).

const f32 = Math.fround;
const RANGE = { uint8: [0, 255], int8: [-128, 127], int32: [-2147483648, 2147483647] };

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
      weight = {
        ...w,
        data,
        perChannel: w.scales.length > 1,
        symmetric: w.zeroPoints.every((v) => v === mid),
        scaleMin: Math.min(...w.scales),
        scaleMax: Math.max(...w.scales),
        intMin: Math.min(...data),
        intMax: Math.max(...data),
      };
    }
    const bias = layer.bias ? model.initializer(layer.bias.name) : null;
    return { index, layer, input: layer.input, output: layer.output, weight, bias };
  });
}

/** Dequantized weights (Float32Array), per tensor or per channel along weight.axis. */
export function dequantizeWeight(weight) {
  const { dims, data, scales, zeroPoints, axis } = weight;
  const out = new Float32Array(data.length);
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const channels = dims[axis];
  for (let i = 0; i < data.length; i++) {
    const c = scales.length > 1 ? Math.floor(i / inner) % channels : 0;
    out[i] = f32(f32(scales[c]) * (data[i] - zeroPoints[zeroPoints.length > 1 ? c : 0]));
  }
  return out;
}

/** A captured tensor as real values: 8-bit data through its qparams, float data as it is. */
export function dequantizeValue(tensor, qparams) {
  if (tensor.dtype === 'float32') return Float32Array.from(tensor.data);
  if (!qparams) return Float32Array.from(tensor.data, Number);
  const s = f32(qparams.scale);
  return Float32Array.from(tensor.data, (v) => f32(s * (Number(v) - qparams.zeroPoint)));
}

export function softmax(values) {
  const max = Math.max(...values);
  const e = Array.from(values, (v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

/** nearbyint under the default rounding mode: half to even. */
export function roundHalfEven(v) {
  const r = Math.round(v);
  return Math.abs(v - Math.trunc(v)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** TFLite's QuantizeMultiplier (src/operators/requantization-init.c): m = m0 * 2^-31 * 2^shift, m0 in [2^30, 2^31). */
export function quantizeMultiplier(m) {
  if (!(m > 0)) return { m0: 0, shift: 0 };
  let e = Math.floor(Math.log2(m)) + 1;
  let q = m / 2 ** e;
  while (q >= 1) { q /= 2; e++; }
  while (q < 0.5) { q *= 2; e--; }
  let m0 = Math.round(q * 2 ** 31); // C round(): half away from zero (q > 0)
  if (m0 === 2 ** 31) { m0 /= 2; e++; }
  if (e < -31) return { m0: 0, shift: 0 };
  if (e > 30) return { m0: 2147483647, shift: 30 };
  return { m0, shift: e };
}

/** gemmlowp's SaturatingRoundingDoublingHighMul: round(a * b / 2^31), ties toward +infinity. */
export function srdhm(a, b) {
  if (a === b && a === -2147483648) return 2147483647;
  const ab = BigInt(a) * BigInt(b);
  const nudge = ab >= 0n ? 1n << 30n : 1n - (1n << 30n);
  return Number((ab + nudge) / (1n << 31n)); // BigInt division truncates toward zero, as C's
}

/** gemmlowp's RoundingDivideByPOT: x / 2^e rounded half away from zero. */
export function rdbpot(x, e) {
  if (e === 0) return x;
  const mask = 2 ** e - 1;
  const remainder = Number(BigInt(x) & BigInt(mask));
  const threshold = Math.floor(mask / 2) + (x < 0 ? 1 : 0);
  return Math.floor(x / 2 ** e) + (remainder > threshold ? 1 : 0);
}

const wrap32 = (v) => Number(BigInt.asIntN(32, BigInt(v)));

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
 * integer output; flat: the element's row-major index in y; semantics: 'onnx' | 'pytorch-qnnpack'.
 * Returns every intermediate quantity, and whether the result equals the kernel's.
 */
export function explainElement(info, x, y, flat, semantics) {
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
  const ws = f32(w.scales[w.scales.length > 1 ? channel : 0]);
  const xs = f32(input.scale);
  const ys = f32(output.scale);
  let acc = 0;
  for (const t of terms) {
    t.product = (t.x - input.zeroPoint) * (t.w - wz);
    acc += t.product;
  }
  acc = wrap32(acc);
  const b = bias ? Number(bias.data[channel]) : 0;
  const biasDtype = bias ? bias.dtype : null;
  const sum = wrap32(acc + b);
  // the float32 multiplier exactly as requantization-init.c forms it for the model's mode
  const multiplier = semantics === 'pytorch-qnnpack' ? f32(f32(ws * xs) * f32(1 / ys)) : f32(f32(xs * ws) / ys);
  const exact = (xs * ws) / ys;
  const scaled = f32(f32(sum) * multiplier);
  const rounded = roundHalfEven(scaled);
  // the output range: the dtype's, narrowed by a Clip the loader fused into the layer (ReLU, ReLU6)
  const [dmin, dmax] = RANGE[output.dtype] ?? RANGE.uint8;
  const fused = layer.attributes.qwasm_output_range ?? null;
  const qmin = fused ? Math.max(dmin, fused[0]) : dmin;
  const qmax = fused ? Math.min(dmax, fused[1]) : dmax;
  const shifted = rounded + output.zeroPoint;
  const result = Math.min(Math.max(shifted, qmin), qmax);
  // the integer-only form (gemmlowp / TFLite), for comparison
  const { m0, shift } = quantizeMultiplier(exact);
  const left = Math.max(shift, 0);
  const right = Math.max(-shift, 0);
  const high = srdhm(wrap32(sum * 2 ** left), m0);
  const fixedScaled = rdbpot(high, right);
  const fixedResult = Math.min(Math.max(fixedScaled + output.zeroPoint, qmin), qmax);
  const kernel = Number(y.data[flat]);
  return {
    opType: layer.opType, coords, channel, terms, xZero: input.zeroPoint, wZero: wz, xScale: xs, wScale: ws, yScale: ys,
    yZero: output.zeroPoint, acc, bias: b, biasDtype, sum, multiplier, exact, scaled, rounded, shifted, qmin, qmax, fused,
    result, m0, shift, right, left, high, fixedScaled, fixedResult, kernel, matches: result === kernel,
    real: ys * (result - output.zeroPoint), semantics,
  };
}
