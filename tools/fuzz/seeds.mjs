// The fuzzer's single-node zoo: one small, valid model per registered operator (and per QDQ group the loader fuses),
// so mutations reach every operator's checks, not only those of the operators the real models happen to contain.
// Written with the loader's own encoder (js/model/onnx.js encodeOnnx) into build/fuzz/seeds/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeOnnx } from '../../js/model/onnx.js';

/** The typed array of each element type (bool as bytes). */
export const ARRAYS = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array };
const numel = (dims) => dims.reduce((a, b) => a * b, 1);

/** A constant: values from `fill` (index -> number), or a list. */
export function tensor(dtype, dims, fill = (i) => (i % 7) - 3) {
  const Arr = ARRAYS[dtype];
  const values = Array.isArray(fill) ? fill : Array.from({ length: numel(dims) }, (_, i) => fill(i));
  return { dtype, dims, data: Arr === BigInt64Array ? BigInt64Array.from(values, (v) => BigInt(v)) : Arr.from(values) };
}
export const scalar = (dtype, v) => tensor(dtype, [], [v]);
export const qp = (prefix, s, z, dtype = 'uint8') => ({ [`${prefix}_scale`]: scalar('float32', s), [`${prefix}_zp`]: scalar(dtype, z) });
const FLOAT_ATTRS = new Set(['alpha', 'beta', 'epsilon', 'momentum', 'min', 'max']);

/**
 * A single-node (or small) model: inputs { name: [dtype, dims] }, inits { name: tensor }, nodes [[opType, inputs,
 * outputs, attributes, domain]], outputs { name: [dtype, dims] }. A graph for encodeOnnx (js/model/onnx.js).
 */
export function model({ inputs, inits = {}, nodes, outputs, opset = 13 }) {
  return {
    irVersion: 8,
    opsets: new Map([['', opset], ['com.microsoft', 1]]),
    metadata: new Map(),
    inputs: Object.entries(inputs).map(([name, [dtype, dims]]) => ({ name, dtype, dims })),
    outputs: Object.entries(outputs).map(([name, [dtype, dims]]) => ({ name, dtype, dims })),
    initializers: new Map(Object.entries(inits)),
    nodes: nodes.map(([opType, ins, outs, attributes = {}, domain = ''], i) => ({
      name: `${opType}_${i}`, opType, domain, inputs: ins, outputs: outs, attributes,
      attributeTypes: Object.fromEntries(Object.keys(attributes).filter((k) => FLOAT_ATTRS.has(k)).map((k) => [k, 1])),
    })),
  };
}

const X4 = { x: ['float32', [1, 2, 6, 6]] };
const Q4 = { x: ['uint8', [1, 2, 6, 6]] };
const unaryFloat = (op, attributes) => model({ inputs: X4, nodes: [[op, ['x'], ['y'], attributes]], outputs: { y: ['float32', [1, 2, 6, 6]] } });
const qlinearUnary = (op, attributes = {}) => model({
  inputs: Q4, inits: { ...qp('x', 0.05, 128), ...qp('y', 0.1, 100) },
  nodes: [[op, ['x', 'x_scale', 'x_zp', 'y_scale', 'y_zp'], ['y'], attributes, 'com.microsoft']], outputs: { y: ['uint8', []] },
});
/** DQ -> op -> Q: a QDQ group the loader fuses. */
const qdqUnary = (op, attributes = {}) => model({
  inputs: Q4, inits: { ...qp('x', 0.05, 128), ...qp('y', 0.05, 128) },
  nodes: [['DequantizeLinear', ['x', 'x_scale', 'x_zp'], ['xf']], [op, ['xf'], ['yf'], attributes], ['QuantizeLinear', ['yf', 'y_scale', 'y_zp'], ['y']]],
  outputs: { y: ['uint8', []] },
});
const binaryFloat = (op) => model({
  inputs: { a: ['float32', [2, 3, 4]] }, inits: { b: tensor('float32', [3, 1], (i) => i + 1) },
  nodes: [[op, ['a', 'b'], ['y']]], outputs: { y: ['float32', [2, 3, 4]] },
});

const F234 = { x: ['float32', [2, 3, 4]] };
const floatOp = (op, attributes, { opset, domain = '', inits = {}, extra = [] } = {}) => model({
  opset, inputs: F234, inits, nodes: [[op, ['x', ...extra], ['y'], attributes, domain]], outputs: { y: ['float32', []] },
});
/** A comparison of a float input with a constant, its bool result used by `then` (or given out). */
const compare = (op, then) => model({
  inputs: { a: ['float32', [2, 3, 4]] }, inits: { b: tensor('float32', [3, 1], [-1, 0, 1]) },
  nodes: [[op, ['a', 'b'], ['c']], ...(then ? [then] : [])], outputs: then ? { y: [then[0] === 'Where' ? 'float32' : 'bool', []] } : { c: ['bool', []] },
});
const reduce = (op, opset, axesAsInput) => model({
  opset, inputs: F234, inits: axesAsInput ? { axes: tensor('int64', [1], [1]) } : {},
  nodes: [[op, axesAsInput ? ['x', 'axes'] : ['x'], ['y'], axesAsInput ? { keepdims: 0 } : { axes: [1], keepdims: 1 }]], outputs: { y: ['float32', []] },
});
const G4 = { g: tensor('float32', [4], [1, 0.5, 2, -1]), b4: tensor('float32', [4], [0, 0.1, -0.2, 0.3]) };
/** Token ids come in as int64 (the fuzzer's feeds stay below 4) and are cast to the int32 the embedding ops take. */
const embedding = (op, tables, names, attributes) => model({
  inputs: { ids: ['int64', [1, 4]] }, inits: tables,
  nodes: [['Cast', ['ids'], ['ids32'], { to: 6 }], [op, ['ids32', ...names], ['y'], attributes, 'com.microsoft']], outputs: { y: ['float32', []] },
});

const ZOO = {
  QuantizeLinear: () => model({ inputs: X4, inits: qp('y', 0.1, 128), nodes: [['QuantizeLinear', ['x', 'y_scale', 'y_zp'], ['y']]], outputs: { y: ['uint8', []] } }),
  QuantizeLinearPerAxis: () => model({
    inputs: X4, inits: { s: tensor('float32', [2], [0.1, 0.2]), z: tensor('int8', [2], [0, 1]) },
    nodes: [['QuantizeLinear', ['x', 's', 'z'], ['y'], { axis: 1 }]], outputs: { y: ['int8', []] },
  }),
  DequantizeLinear: () => model({ inputs: Q4, inits: qp('x', 0.1, 128), nodes: [['DequantizeLinear', ['x', 'x_scale', 'x_zp'], ['y']]], outputs: { y: ['float32', []] } }),
  QLinearConv: () => model({
    inputs: Q4, inits: { ...qp('x', 0.05, 128), w: tensor('int8', [3, 2, 3, 3]), ...qp('w', 0.02, 0, 'int8'), ...qp('y', 0.1, 120), b: tensor('int32', [3], [10, -20, 30]) },
    nodes: [['QLinearConv', ['x', 'x_scale', 'x_zp', 'w', 'w_scale', 'w_zp', 'y_scale', 'y_zp', 'b'], ['y'], { pads: [1, 1, 1, 1], strides: [2, 2], kernel_shape: [3, 3] }]],
    outputs: { y: ['uint8', []] },
  }),
  QLinearConvDepthwise: () => model({
    inputs: Q4, inits: { ...qp('x', 0.05, 128), w: tensor('int8', [2, 1, 3, 3]), w_scale: tensor('float32', [2], [0.02, 0.03]), w_zp: tensor('int8', [2], [0, 0]), ...qp('y', 0.1, 120) },
    nodes: [['QLinearConv', ['x', 'x_scale', 'x_zp', 'w', 'w_scale', 'w_zp', 'y_scale', 'y_zp'], ['y'], { group: 2, dilations: [2, 2] }]],
    outputs: { y: ['uint8', []] },
  }),
  QLinearMatMul: () => model({
    inputs: { a: ['uint8', [2, 3]] }, inits: { ...qp('a', 0.05, 128), b: tensor('int8', [3, 4]), ...qp('b', 0.02, 0, 'int8'), ...qp('y', 0.1, 120) },
    nodes: [['QLinearMatMul', ['a', 'a_scale', 'a_zp', 'b', 'b_scale', 'b_zp', 'y_scale', 'y_zp'], ['y']]], outputs: { y: ['uint8', []] },
  }),
  QLinearMatMulBatched: () => model({
    inputs: { a: ['uint8', [2, 2, 3]], b: ['int8', [2, 3, 4]] }, inits: { ...qp('a', 0.05, 128), ...qp('b', 0.02, 0, 'int8'), ...qp('y', 0.1, 120) },
    nodes: [['QLinearMatMul', ['a', 'a_scale', 'a_zp', 'b', 'b_scale', 'b_zp', 'y_scale', 'y_zp'], ['y']]], outputs: { y: ['uint8', []] },
  }),
  DynamicQuantizeLinear: () => model({
    inputs: { x: ['float32', [2, 3]] }, nodes: [['DynamicQuantizeLinear', ['x'], ['y', 'ys', 'yz']]],
    outputs: { y: ['uint8', []], ys: ['float32', []], yz: ['uint8', []] },
  }),
  MatMulInteger: () => model({
    inputs: { a: ['uint8', [2, 3]] }, inits: { b: tensor('int8', [3, 4]), az: scalar('uint8', 3), bz: tensor('int8', [4], [0, 1, 2, 3]) },
    nodes: [['MatMulInteger', ['a', 'b', 'az', 'bz'], ['y']]], outputs: { y: ['int32', []] },
  }),
  ConvInteger: () => model({
    inputs: Q4, inits: { w: tensor('int8', [3, 2, 3, 3]), xz: scalar('uint8', 128) },
    nodes: [['ConvInteger', ['x', 'w', 'xz'], ['y'], { pads: [1, 1, 1, 1] }]], outputs: { y: ['int32', []] },
  }),
  Conv: () => model({
    inputs: X4, inits: { w: tensor('float32', [4, 2, 3, 3], (i) => ((i % 5) - 2) / 4), b: tensor('float32', [4], [0.1, 0.2, -0.3, 0]) },
    nodes: [['Conv', ['x', 'w', 'b'], ['y'], { pads: [1, 1, 1, 1], strides: [2, 2] }]], outputs: { y: ['float32', []] },
  }),
  ConvRelu: () => model({
    inputs: X4, inits: { w: tensor('float32', [2, 1, 3, 3], (i) => ((i % 5) - 2) / 4) },
    nodes: [['Conv', ['x', 'w'], ['c'], { group: 2, auto_pad: 'SAME_UPPER' }], ['Relu', ['c'], ['y']]], outputs: { y: ['float32', []] },
  }),
  MaxPool: () => unaryFloat('MaxPool', { kernel_shape: [2, 2], strides: [2, 2] }),
  AveragePool: () => unaryFloat('AveragePool', { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] }),
  GlobalAveragePool: () => unaryFloat('GlobalAveragePool'),
  BatchNormalization: () => model({
    inputs: X4, inits: { s: tensor('float32', [2], [1, 2]), b: tensor('float32', [2], [0, 1]), m: tensor('float32', [2], [0.5, 0]), v: tensor('float32', [2], [1, 4]) },
    nodes: [['BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'], { epsilon: 1e-5 }]], outputs: { y: ['float32', []] },
  }),
  Relu: () => unaryFloat('Relu'),
  Sigmoid: () => unaryFloat('Sigmoid'),
  HardSigmoid: () => unaryFloat('HardSigmoid', { alpha: 0.25, beta: 0.5 }),
  HardSwish: () => unaryFloat('HardSwish'),
  LeakyRelu: () => unaryFloat('LeakyRelu', { alpha: 0.1 }),
  Sqrt: () => unaryFloat('Sqrt'),
  Softmax: () => unaryFloat('Softmax', { axis: 1 }),
  Clip: () => model({ inputs: X4, inits: { lo: scalar('float32', -1), hi: scalar('float32', 1) }, nodes: [['Clip', ['x', 'lo', 'hi'], ['y']]], outputs: { y: ['float32', []] } }),
  ClipInteger: () => model({ inputs: Q4, inits: { lo: scalar('uint8', 100), hi: scalar('uint8', 200) }, nodes: [['Clip', ['x', 'lo', 'hi'], ['y']]], outputs: { y: ['uint8', []] } }),
  Add: () => binaryFloat('Add'),
  Sub: () => binaryFloat('Sub'),
  Mul: () => binaryFloat('Mul'),
  Div: () => binaryFloat('Div'),
  MatMul: () => model({ inputs: { a: ['float32', [2, 3]] }, inits: { b: tensor('float32', [3, 4]) }, nodes: [['MatMul', ['a', 'b'], ['y']]], outputs: { y: ['float32', []] } }),
  Gemm: () => model({
    inputs: { a: ['float32', [2, 3]] }, inits: { b: tensor('float32', [4, 3]), c: tensor('float32', [4], [1, 2, 3, 4]) },
    nodes: [['Gemm', ['a', 'b', 'c'], ['y'], { transB: 1, alpha: 0.5, beta: 2 }]], outputs: { y: ['float32', []] },
  }),
  Reshape: () => model({ inputs: { x: ['float32', [2, 3, 4]] }, inits: { s: tensor('int64', [2], [4, -1]) }, nodes: [['Reshape', ['x', 's'], ['y']]], outputs: { y: ['float32', []] } }),
  Flatten: () => model({ inputs: { x: ['float32', [2, 3, 4]] }, nodes: [['Flatten', ['x'], ['y'], { axis: 2 }]], outputs: { y: ['float32', []] } }),
  Squeeze: () => model({ inputs: { x: ['float32', [2, 1, 4]] }, inits: { a: tensor('int64', [1], [1]) }, nodes: [['Squeeze', ['x', 'a'], ['y']]], outputs: { y: ['float32', []] } }),
  Unsqueeze: () => model({ inputs: { x: ['float32', [2, 4]] }, inits: { a: tensor('int64', [1], [-1]) }, nodes: [['Unsqueeze', ['x', 'a'], ['y']]], outputs: { y: ['float32', []] } }),
  SqueezeOpset11: () => model({ opset: 11, inputs: { x: ['float32', [2, 1, 4]] }, nodes: [['Squeeze', ['x'], ['y'], { axes: [1] }]], outputs: { y: ['float32', []] } }),
  Transpose: () => model({ inputs: { x: ['uint8', [2, 3, 4]] }, nodes: [['Transpose', ['x'], ['y'], { perm: [2, 0, 1] }]], outputs: { y: ['uint8', []] } }),
  Concat: () => model({ inputs: { x: ['float32', [2, 3]] }, inits: { c: tensor('float32', [2, 2]) }, nodes: [['Concat', ['x', 'c'], ['y'], { axis: 1 }]], outputs: { y: ['float32', []] } }),
  Split: () => model({
    inputs: { x: ['float32', [2, 6]] }, inits: { s: tensor('int64', [2], [2, 4]) },
    nodes: [['Split', ['x', 's'], ['y', 'z'], { axis: 1 }]], outputs: { y: ['float32', []], z: ['float32', []] },
  }),
  Gather: () => model({ inputs: { x: ['float32', [5, 3]] }, inits: { i: tensor('int64', [2, 2], [0, 4, -1, 2]) }, nodes: [['Gather', ['x', 'i'], ['y']]], outputs: { y: ['float32', []] } }),
  Cast: () => model({ inputs: { x: ['float32', [2, 3]] }, nodes: [['Cast', ['x'], ['y'], { to: 6 }]], outputs: { y: ['int32', []] } }),
  Shape: () => model({ inputs: { x: ['float32', [2, 3]] }, nodes: [['Shape', ['x'], ['y']]], outputs: { y: ['int64', []] } }),
  Constant: () => model({
    inputs: { x: ['float32', [2, 3]] }, nodes: [['Constant', [], ['c'], { value: tensor('float32', [3], [1, 2, 3]) }], ['Add', ['x', 'c'], ['y']]],
    outputs: { y: ['float32', []] },
  }),
  ConstantOfShape: () => model({
    inputs: { x: ['float32', [2, 3]] }, inits: { s: tensor('int64', [2], [2, 3]) },
    nodes: [['ConstantOfShape', ['s'], ['c'], { value: tensor('float32', [1], [0.5]) }], ['Mul', ['x', 'c'], ['y']]], outputs: { y: ['float32', []] },
  }),
  Identity: () => model({ inputs: Q4, nodes: [['Identity', ['x'], ['y']]], outputs: { y: ['uint8', []] } }),
  QGemm: () => model({
    inputs: { a: ['uint8', [2, 3]] },
    inits: { ...qp('a', 0.05, 128), b: tensor('int8', [4, 3]), ...qp('b', 0.02, 0, 'int8'), c: tensor('int32', [4], [1, -2, 3, -4]), ...qp('y', 0.1, 120) },
    nodes: [['QGemm', ['a', 'a_scale', 'a_zp', 'b', 'b_scale', 'b_zp', 'c', 'y_scale', 'y_zp'], ['y'], { transB: 1 }, 'com.microsoft']], outputs: { y: ['uint8', []] },
  }),
  QLinearAdd: () => model({
    inputs: Q4, inits: { ...qp('a', 0.05, 128), b: tensor('uint8', [6], (i) => 100 + i), ...qp('b', 0.04, 120), ...qp('y', 0.1, 128) },
    nodes: [['QLinearAdd', ['x', 'a_scale', 'a_zp', 'b', 'b_scale', 'b_zp', 'y_scale', 'y_zp'], ['y'], {}, 'com.microsoft']], outputs: { y: ['uint8', []] },
  }),
  QLinearMul: () => model({
    inputs: Q4, inits: { ...qp('a', 0.05, 128), b: tensor('uint8', [1, 2, 6, 6], (i) => i % 250), ...qp('b', 0.04, 120), ...qp('y', 0.1, 128) },
    nodes: [['QLinearMul', ['x', 'a_scale', 'a_zp', 'b', 'b_scale', 'b_zp', 'y_scale', 'y_zp'], ['y'], {}, 'com.microsoft']], outputs: { y: ['uint8', []] },
  }),
  QLinearConcat: () => model({
    inputs: Q4, inits: { ...qp('y', 0.1, 128), ...qp('a', 0.05, 128), b: tensor('uint8', [1, 3, 6, 6], (i) => i % 250), ...qp('b', 0.04, 120) },
    nodes: [['QLinearConcat', ['y_scale', 'y_zp', 'x', 'a_scale', 'a_zp', 'b', 'b_scale', 'b_zp'], ['y'], { axis: 1 }, 'com.microsoft']], outputs: { y: ['uint8', []] },
  }),
  QLinearAveragePool: () => qlinearUnary('QLinearAveragePool', { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] }),
  QLinearGlobalAveragePool: () => qlinearUnary('QLinearGlobalAveragePool'),
  QLinearSigmoid: () => qlinearUnary('QLinearSigmoid'),
  QLinearLeakyRelu: () => qlinearUnary('QLinearLeakyRelu', { alpha: 0.1 }),
  QLinearSoftmax: () => qlinearUnary('QLinearSoftmax', { axis: -1, opset: 13 }),
  QdqAveragePool: () => qdqUnary('AveragePool', { kernel_shape: [2, 2], strides: [2, 2] }),
  QdqGlobalAveragePool: () => qdqUnary('GlobalAveragePool'),
  QdqSoftmax: () => qdqUnary('Softmax', { axis: -1 }),
  QdqSigmoid: () => qdqUnary('Sigmoid'),
  QdqLeakyRelu: () => qdqUnary('LeakyRelu', { alpha: 0.2 }),
  QdqMaxPool: () => qdqUnary('MaxPool', { kernel_shape: [2, 2] }),
  QdqConvRelu: () => model({
    inputs: Q4,
    inits: { ...qp('x', 0.05, 128), w: tensor('int8', [3, 2, 3, 3]), ...qp('w', 0.02, 0, 'int8'), b: tensor('int32', [3], [10, -20, 30]), bs: scalar('float32', 0.001), ...qp('y', 0.1, 0) },
    nodes: [
      ['DequantizeLinear', ['x', 'x_scale', 'x_zp'], ['xf']], ['DequantizeLinear', ['w', 'w_scale', 'w_zp'], ['wf']], ['DequantizeLinear', ['b', 'bs'], ['bf']],
      ['Conv', ['xf', 'wf', 'bf'], ['c'], { pads: [1, 1, 1, 1] }], ['Relu', ['c'], ['r']], ['QuantizeLinear', ['r', 'y_scale', 'y_zp'], ['y']],
    ],
    outputs: { y: ['uint8', []] },
  }),
  QdqGemmAdd: () => model({
    inputs: { x: ['uint8', [2, 3]] },
    inits: { ...qp('x', 0.05, 128), w: tensor('int8', [4, 3]), ...qp('w', 0.02, 0, 'int8'), ...qp('y', 0.1, 128) },
    nodes: [
      ['DequantizeLinear', ['x', 'x_scale', 'x_zp'], ['xf']], ['DequantizeLinear', ['w', 'w_scale', 'w_zp'], ['wf']],
      ['Gemm', ['xf', 'wf'], ['g'], { transB: 1 }], ['QuantizeLinear', ['g', 'y_scale', 'y_zp'], ['gq']], ['DequantizeLinear', ['gq', 'y_scale', 'y_zp'], ['gf']],
      ['Add', ['gf', 'gf'], ['s']], ['QuantizeLinear', ['s', 'y_scale', 'y_zp'], ['y']],
    ],
    outputs: { y: ['uint8', []] },
  }),
  // the transformer encoders' operators (opsets 13 to 20 and ONNX Runtime's fusions)
  Erf: () => floatOp('Erf'),
  Tanh: () => floatOp('Tanh'),
  Exp: () => floatOp('Exp'),
  Pow: () => binaryFloat('Pow'),
  Gelu: () => floatOp('Gelu', { approximate: 'none' }, { opset: 20 }),
  GeluTanh: () => floatOp('Gelu', { approximate: 'tanh' }, { opset: 20 }),
  Equal: () => compare('Equal'),
  Less: () => compare('Less', ['Where', ['c', 'a', 'b'], ['y']]),
  Greater: () => compare('Greater', ['Not', ['c'], ['y']]),
  LessOrEqual: () => compare('LessOrEqual', ['And', ['c', 'c'], ['y']]),
  GreaterOrEqual: () => compare('GreaterOrEqual', ['Or', ['c', 'c'], ['y']]),
  Xor: () => model({ inputs: { p: ['bool', [2, 3]] }, inits: { q: tensor('bool', [3], [1, 0, 1]) }, nodes: [['Xor', ['p', 'q'], ['y']]], outputs: { y: ['bool', []] } }),
  ReduceMean: () => reduce('ReduceMean', 13, false),
  ReduceSum: () => reduce('ReduceSum', 13, true),
  ReduceMax: () => reduce('ReduceMax', 18, true),
  ReduceMin: () => reduce('ReduceMin', 13, false),
  ReduceProd: () => reduce('ReduceProd', 18, true),
  ReduceL2: () => reduce('ReduceL2', 13, false),
  ReduceSumSquare: () => reduce('ReduceSumSquare', 18, true),
  CumSum: () => floatOp('CumSum', { reverse: 1 }, { inits: { axis: scalar('int64', 1) }, extra: ['axis'] }),
  Slice: () => floatOp('Slice', {}, {
    inits: { st: tensor('int64', [2], [0, 1]), en: tensor('int64', [2], [2, -1]), ax: tensor('int64', [2], [0, 2]), sp: tensor('int64', [2], [1, 2]) },
    extra: ['st', 'en', 'ax', 'sp'],
  }),
  Expand: () => model({ inputs: { x: ['float32', [3, 1]] }, inits: { s: tensor('int64', [3], [2, 3, 4]) }, nodes: [['Expand', ['x', 's'], ['y']]], outputs: { y: ['float32', []] } }),
  Pad: () => floatOp('Pad', { mode: 'constant' }, { inits: { p: tensor('int64', [6], [0, 1, 0, 0, 1, 2]), v: scalar('float32', 0.5) }, extra: ['p', 'v'] }),
  PadReflect: () => floatOp('Pad', { mode: 'reflect' }, { inits: { p: tensor('int64', [6], [0, 1, 1, 0, 1, 2]) }, extra: ['p'] }),
  Size: () => model({ inputs: F234, nodes: [['Size', ['x'], ['y']]], outputs: { y: ['int64', []] } }),
  /** The output's length is the input's value: shape work that runs per input value, not once per shape. */
  Range: () => model({
    inputs: { n: ['int64', []] }, inits: { start: scalar('int64', 0), delta: scalar('int64', 1) },
    nodes: [['Range', ['start', 'n', 'delta'], ['y']]], outputs: { y: ['int64', []] },
  }),
  LayerNormalization: () => floatOp('LayerNormalization', { axis: -1, epsilon: 1e-5 }, { opset: 17, inits: G4, extra: ['g', 'b4'] }),
  SkipLayerNormalization: () => floatOp('SkipLayerNormalization', { epsilon: 1e-12 }, {
    domain: 'com.microsoft', inits: { ...G4, skip: tensor('float32', [2, 3, 4], (i) => (i % 5) / 4), bias: tensor('float32', [4], [1, 2, 3, 4]) },
    extra: ['skip', 'g', 'b4', 'bias'],
  }),
  ContribGelu: () => floatOp('Gelu', {}, { domain: 'com.microsoft' }),
  BiasGelu: () => floatOp('BiasGelu', {}, { domain: 'com.microsoft', inits: G4, extra: ['b4'] }),
  FastGelu: () => floatOp('FastGelu', {}, { domain: 'com.microsoft', inits: G4, extra: ['b4'] }),
  FusedMatMul: () => floatOp('FusedMatMul', { transB: 1, alpha: 0.125 }, { domain: 'com.microsoft', inits: { w: tensor('float32', [2, 5, 4], (i) => (i % 9) / 8) }, extra: ['w'] }),
  FusedGemm: () => model({
    inputs: { a: ['float32', [2, 3]] }, inits: { b: tensor('float32', [4, 3]), c: tensor('float32', [4], [1, 2, 3, 4]) },
    nodes: [['FusedGemm', ['a', 'b', 'c'], ['y'], { transB: 1, alpha: 0.5, activation: 'Tanh' }, 'com.microsoft']], outputs: { y: ['float32', []] },
  }),
  MatMulIntegerToFloat: () => model({
    inputs: { a: ['uint8', [2, 3]] },
    inits: { b: tensor('int8', [3, 4]), as: scalar('float32', 0.05), bs: tensor('float32', [4], [0.01, 0.02, 0.03, 0.04]), az: scalar('uint8', 120), bz: tensor('int8', [4], [0, 1, -1, 2]), bias: tensor('float32', [4], [1, -1, 0.5, 0]) },
    nodes: [['MatMulIntegerToFloat', ['a', 'b', 'as', 'bs', 'az', 'bz', 'bias'], ['y'], {}, 'com.microsoft']], outputs: { y: ['float32', []] },
  }),
  DynamicQuantizeMatMul: () => model({
    inputs: { a: ['float32', [2, 3]] }, inits: { b: tensor('int8', [3, 4]), bs: scalar('float32', 0.02), bz: scalar('int8', 0), bias: tensor('float32', [4], [1, -1, 0.5, 0]) },
    nodes: [['DynamicQuantizeMatMul', ['a', 'b', 'bs', 'bz', 'bias'], ['y'], {}, 'com.microsoft']], outputs: { y: ['float32', []] },
  }),
  EmbedLayerNormalization: () => embedding('EmbedLayerNormalization',
    { word: tensor('float32', [8, 4], (i) => (i % 11) / 8), pos: tensor('float32', [16, 4], (i) => (i % 7) / 16), ...G4 },
    ['', 'word', 'pos', '', 'g', 'b4'], { epsilon: 1e-12 }),
  QEmbedLayerNormalization: () => embedding('QEmbedLayerNormalization',
    {
      word: tensor('uint8', [8, 4], (i) => (i * 37) % 256), pos: tensor('uint8', [16, 4], (i) => (i * 11) % 256),
      gq: tensor('uint8', [4], [200, 100, 150, 255]), bq: tensor('uint8', [4], [128, 120, 130, 127]),
      ws: scalar('float32', 0.01), ps: scalar('float32', 0.02), gs: scalar('float32', 0.005), bs: scalar('float32', 0.001),
      wz: scalar('uint8', 128), pz: scalar('uint8', 120), gz: scalar('uint8', 0), bz: scalar('uint8', 128),
    },
    ['', 'word', 'pos', '', 'gq', 'bq', '', 'ws', 'ps', '', 'gs', 'bs', 'wz', 'pz', '', 'gz', 'bz'], { epsilon: 1e-12 }),
  QdqConcat: () => model({
    inputs: Q4, inits: { ...qp('x', 0.05, 128) },
    nodes: [['DequantizeLinear', ['x', 'x_scale', 'x_zp'], ['xf']], ['Concat', ['xf', 'xf'], ['c'], { axis: 1 }], ['QuantizeLinear', ['c', 'x_scale', 'x_zp'], ['y']]],
    outputs: { y: ['uint8', []] },
  }),
};

/** The zoo model `name` as a graph (encodeOnnx writes it). */
export const zooModel = (name) => ZOO[name]();

/** Writes every zoo model into `dir`; returns their paths. */
export async function writeSeedZoo(dir) {
  mkdirSync(dir, { recursive: true });
  const paths = [];
  for (const [name, make] of Object.entries(ZOO)) {
    const path = join(dir, `${name}.onnx`);
    writeFileSync(path, await encodeOnnx(make()));
    paths.push(path);
  }
  return paths;
}

export const ZOO_NAMES = Object.keys(ZOO);
