// What Model.layers reports about each node beyond its wiring: the qparams of its 8-bit input and
// output, and its weight and bias. QOperator graphs carry qparams as inputs of each consumer
// (x_scale, x_zero_point, ...); this table says which input slots hold them. Operators that pass 8-bit
// data through unchanged (MaxPool, Reshape, ...) hand their input's qparams to their output.
import { operatorKey } from './operators/registry.js';

/** Input slots: in / out = [scale, zero point]; weight = [tensor, scale, zero point, axis of per-channel scales]. */
const SLOTS = {
  QuantizeLinear: { out: [1, 2] },
  DequantizeLinear: { in: [1, 2] },
  QLinearConv: { in: [1, 2], weight: [3, 4, 5, 0], out: [6, 7], bias: 8 },
  QLinearMatMul: { in: [1, 2], weight: [3, 4, 5, -1], out: [6, 7] }, // B is [K, N]: per column
  'com.microsoft:QGemm': { in: [1, 2], weight: [3, 4, 5, 0], out: [7, 8], bias: 6 }, // transB = 1: B is [N, K]
  'com.microsoft:QLinearAdd': { in: [1, 2], out: [6, 7] },
  'com.microsoft:QLinearMul': { in: [1, 2], out: [6, 7] },
  'com.microsoft:QLinearConcat': { out: [0, 1] },
  'com.microsoft:QLinearAveragePool': { in: [1, 2], out: [3, 4] },
  'com.microsoft:QLinearGlobalAveragePool': { in: [1, 2], out: [3, 4] },
  'com.microsoft:QLinearSigmoid': { in: [1, 2], out: [3, 4] },
  'com.microsoft:QLinearLeakyRelu': { in: [1, 2], out: [3, 4] },
  // dynamic int8 products: B [K, N] with per-column scales; the activations' qparams are chosen at run time
  'com.microsoft:DynamicQuantizeMatMul': { weight: [1, 2, 3, -1], bias: 4 },
  'com.microsoft:MatMulIntegerToFloat': { weight: [1, 3, 5, -1], bias: 6 },
};
const PASS_THROUGH = new Set(['MaxPool', 'Clip', 'Relu', 'Flatten', 'Reshape', 'Transpose', 'Squeeze', 'Unsqueeze', 'Identity', 'Split']);

/**
 * Per node: { input, output, weight, bias } (each null when it does not apply or is not constant).
 * input / output: { scale, zeroPoint, dtype }; weight: { name, dtype, dims, scales, zeroPoints, axis };
 * bias: { name, dtype, dims }. initializers: name -> { dtype, dims, data }.
 */
export function describeNodes(nodes, initializers) {
  const qparamsOf = new Map(); // value name -> { scale, zeroPoint, dtype }
  const constant = (name) => (name ? initializers.get(name) : undefined);
  const qparamsAt = (node, [s, z]) => {
    const scale = constant(node.inputs[s]);
    if (!scale || scale.data.length !== 1) return null;
    const zp = constant(node.inputs[z]);
    return { scale: Number(scale.data[0]), zeroPoint: zp ? Number(zp.data[0]) : 0, dtype: zp ? zp.dtype : 'uint8' };
  };
  return nodes.map((node) => {
    const slots = SLOTS[operatorKey(node)];
    const input = slots?.in ? qparamsAt(node, slots.in) : slots ? null : qparamsOf.get(node.inputs[0]) ?? null;
    let output = null;
    if (slots?.out) output = qparamsAt(node, slots.out);
    else if (PASS_THROUGH.has(node.opType)) output = input;
    if (output) for (const name of node.outputs) qparamsOf.set(name, output);
    let weight = null;
    if (slots?.weight) {
      const [wi, si, zi, axis] = slots.weight;
      const w = constant(node.inputs[wi]);
      const s = constant(node.inputs[si]);
      if (w && s) {
        const z = constant(node.inputs[zi]);
        weight = {
          name: node.inputs[wi],
          dtype: w.dtype,
          dims: w.dims.slice(),
          scales: Array.from(s.data, Number),
          zeroPoints: z ? Array.from(z.data, Number) : [0],
          axis: axis < 0 ? w.dims.length + axis : axis,
        };
      }
    }
    const b = slots?.bias !== undefined ? constant(node.inputs[slots.bias]) : undefined;
    const bias = b ? { name: node.inputs[slots.bias], dtype: b.dtype, dims: b.dims.slice() } : null;
    return { input, output, weight, bias };
  });
}
