// The transformer panel's bookkeeping, free of the DOM: which models take token ids, the dynamic int8 products of
// a loaded encoder (com.microsoft DynamicQuantizeMatMul / MatMulIntegerToFloat, what the loader makes of
// quantize_dynamic's chains), the activation qparams each chose in a run, and one output element recomputed from
// the integers. The rules are qwasm/reference's (dynamicQParams, quantizeOnnx, dynamicMatMulOutput: tested
// against the kernels); this file computes nothing of its own but a sum of integer products.
import { dynamicMatMulOutput, dynamicQParams, quantizeOnnx } from './qwasm/js/reference.js';

/** The dynamic int8 products the explainer takes apart. */
export const DYNAMIC_OPS = new Set(['DynamicQuantizeMatMul', 'MatMulIntegerToFloat']);

/** A model whose inputs are all integer tensors: token ids, attention masks, token types (a text encoder). */
export function isTokenModel(model) {
  return model.inputs.length > 0 && model.inputs.every((i) => i.dtype === 'int64' || i.dtype === 'int32');
}

/** The model's feeds for one sequence of token ids: masks are ones, token types / segments zeros, other inputs the ids. */
export function tokenFeeds(model, ids) {
  const feeds = {};
  for (const input of model.inputs) {
    const values = /mask/i.test(input.name) ? ids.map(() => 1) : /type|segment/i.test(input.name) ? ids.map(() => 0) : ids;
    const data = input.dtype === 'int64' ? BigInt64Array.from(values, (v) => BigInt(v)) : Int32Array.from(values);
    feeds[input.name] = { data, dims: [1, ids.length] };
  }
  return feeds;
}

/** The vocabulary size: rows of the first int8 / float table a Gather or embedding node reads; null if not found. */
export function vocabularySize(model) {
  for (const layer of model.layers) {
    if (layer.opType !== 'Gather' && !/EmbedLayerNormalization$/.test(layer.opType)) continue;
    const table = model.initializer(layer.inputs[layer.opType === 'Gather' ? 0 : 2]);
    if (table && table.dims.length === 2) return table.dims[0];
  }
  return null;
}

/** Every dynamic int8 product: { index, layer, weight: { data, dims, scales, zeroPoints }, bias: Float32Array | null }. */
export function dynamicLayers(model) {
  return model.layers.flatMap((layer, index) => {
    if (!DYNAMIC_OPS.has(layer.opType) || !layer.weight) return [];
    const { data } = model.initializer(layer.weight.name);
    const bias = layer.bias ? model.initializer(layer.bias.name).data : null;
    return [{ index, layer, weight: { ...layer.weight, data }, bias }];
  });
}

/** A value of the run: a captured intermediate, or a constant of the file. */
const valueOf = (model, intermediates, name) => intermediates[name] ?? model.initializer(name);

/**
 * The activation qparams a product used in this run, and where they came from: DynamicQuantizeMatMul chose them
 * from its float input's range (the same rule: qwasm/reference dynamicQParams); MatMulIntegerToFloat read them from
 * the DynamicQuantizeLinear before it. { scale, zeroPoint, min, max, source }.
 */
export function activationQParams(model, info, intermediates) {
  const { layer } = info;
  if (layer.opType === 'DynamicQuantizeMatMul') {
    return { ...dynamicQParams(intermediates[layer.inputs[0]].data), source: 'chosen from this input\'s range' };
  }
  const scale = Number(valueOf(model, intermediates, layer.inputs[2]).data[0]);
  const zp = layer.inputs[4] ? Number(valueOf(model, intermediates, layer.inputs[4]).data[0]) : 0;
  return { scale, zeroPoint: zp, min: null, max: null, source: `from ${layer.inputs[2]} (DynamicQuantizeLinear)` };
}

/**
 * One output element y[row][col] of a dynamic int8 product, from the integers: the activations' qparams for this
 * input, the row of quantized activations, the weight column, the exact int32 sum, the scale product and the float
 * result, with the kernel's value (from the run) and whether they are equal bit for bit.
 */
export function explainDynamic(model, info, intermediates, row, col) {
  const { layer, weight, bias } = info;
  const [k, n] = weight.dims;
  const q = activationQParams(model, info, intermediates);
  const input = intermediates[layer.inputs[0]];
  const rows = input.data.length / k;
  if (!(row >= 0 && row < rows && col >= 0 && col < n)) throw new RangeError(`element [${row}, ${col}] is outside the ${rows} x ${n} output`);
  const a = layer.opType === 'DynamicQuantizeMatMul'
    ? Array.from(input.data.subarray(row * k, (row + 1) * k), (x) => quantizeOnnx(x, q.scale, q.zeroPoint, 0, 255))
    : Array.from(input.data.subarray(row * k, (row + 1) * k), Number);
  const floats = layer.opType === 'DynamicQuantizeMatMul' ? Array.from(input.data.subarray(row * k, (row + 1) * k)) : null;
  const wZero = weight.zeroPoints[weight.zeroPoints.length > 1 ? col : 0];
  const bScale = weight.scales[weight.scales.length > 1 ? col : 0];
  const terms = [];
  let acc = 0;
  for (let t = 0; t < k; t++) {
    const da = a[t] - q.zeroPoint;
    const dw = Number(weight.data[t * n + col]) - wZero;
    acc += da * dw; // |terms| <= 255 * 255 and K < 2^15: exact in a double, as in int32
    terms.push({ x: floats?.[t], q: a[t], w: Number(weight.data[t * n + col]), product: da * dw });
  }
  const b = bias ? bias[col] : undefined;
  const result = dynamicMatMulOutput(acc, q.scale, bScale, b);
  const kernel = intermediates[layer.outputs[0]].data[row * n + col];
  return {
    rows, k, n, qparams: q, terms, acc, wZero, bScale, scaleProduct: Math.fround(Math.fround(q.scale) * Math.fround(bScale)),
    bias: b, result, kernel, equal: Object.is(result, kernel),
  };
}
