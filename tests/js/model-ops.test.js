// The operators transformer graphs carry besides the float kernels of ort-ops.test.js (shape and index
// arithmetic, reductions, comparisons, selection, casts, padding, batched MatMul and Gemm forms, Gelu-20,
// LayerNormalization on other axes), each as a single-node model run in onnxruntime-web (wasm, one thread) and
// through qwasm's loader: the output types, shapes and bytes must be the same.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import * as ort from 'onnxruntime-web';
import { singleNodeModel } from '../../tools/bench/onnx-model.mjs';
import { mulberry32 } from '../../tools/bench/cases.mjs';
import { failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);
ort.env.wasm.numThreads = 1;
ort.env.wasm.proxy = false;
ort.env.logLevel = 'error';

const ELEM = { float32: 'FLOAT', int64: 'INT64', int32: 'INT32', bool: 'BOOL', uint8: 'UINT8', int8: 'INT8' };
const ARRAYS = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array, bool: Uint8Array, uint8: Uint8Array, int8: Int8Array };
const rng = mulberry32(2024);
const rand = (n, scale = 4) => Float32Array.from({ length: n }, () => (rng() / 2 ** 32 - 0.5) * 2 * scale);
const numel = (dims) => dims.reduce((a, b) => a * b, 1);

/** A tensor description: { name, dtype, dims, data, constant? } (constant: an initializer). */
const T = (name, dtype, dims, data, constant = false) => ({ name, dtype, dims, data: ARRAYS[dtype] === BigInt64Array ? BigInt64Array.from(data, BigInt) : ARRAYS[dtype].from(data), constant });

/**
 * One node: runs it in onnxruntime-web and in qwasm; the outputs must have the same dtype, dims and bytes.
 * outputs: [name, dtype] pairs.
 */
async function check(label, { op, opset = 13, domain = '', inputs, outputs = [['y', 'float32']], attributes = {}, nodeInputs }) {
  const bytes = singleNodeModel({
    opType: op, opset, domain, attributes, nodeInputs: nodeInputs ?? inputs.map((i) => i.name),
    inputs: inputs.filter((i) => !i.constant).map((i) => ({ name: i.name, elemType: ELEM[i.dtype], dims: i.dims })),
    initializers: inputs.filter((i) => i.constant).map((i) => ({ name: i.name, elemType: ELEM[i.dtype], dims: i.dims, data: i.data })),
    outputs: outputs.map(([name, dtype]) => ({ name, elemType: ELEM[dtype] })),
  });
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  let web;
  try {
    web = await session.run(Object.fromEntries(inputs.filter((i) => !i.constant).map((i) => [i.name, new ort.Tensor(i.dtype, i.data, i.dims)])));
  } finally {
    await session.release();
  }
  const model = await qwasm.loadModel(bytes);
  try {
    const ours = await model.run(Object.fromEntries(inputs.filter((i) => !i.constant).map((i) => [i.name, { data: i.data, dims: i.dims }])));
    for (const [name, dtype] of outputs) {
      const w = web[name];
      assert.equal(ours[name].dtype, dtype, `${label}: ${name} dtype`);
      assert.deepEqual(ours[name].dims, Array.from(w.dims), `${label}: ${name} dims`);
      const a = ours[name].data;
      const b = w.data instanceof ARRAYS[dtype] ? w.data : ARRAYS[dtype].from(w.data);
      assert.deepEqual(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), new Uint8Array(b.buffer, b.byteOffset, b.byteLength),
        `${label}: ${name} bytes differ from onnxruntime-web\n  qwasm ${Array.from(a).slice(0, 12)}\n  web   ${Array.from(b).slice(0, 12)}`);
    }
  } finally {
    model.dispose();
  }
}

test('Slice: steps, negative indices, clamping, omitted axes; float and int64', async () => {
  const x = T('x', 'float32', [3, 4, 5], rand(60));
  const big = 9223372036854775807n;
  for (const [starts, ends, axes, steps] of [
    [[0, 1], [2, 3], [0, 1], [1, 1]], [[-1], [-4], [2], [-1]], [[1], [big], [1], [2]], [[-100], [100], [-1], [3]],
    [[2, 0], [0, 4], [0, 2], [-1, 2]], [[0], [0], [0], [1]],
  ]) {
    await check(`Slice ${starts}:${ends} axes ${axes} steps ${steps}`, {
      op: 'Slice',
      inputs: [x, T('s', 'int64', [starts.length], starts, true), T('e', 'int64', [ends.length], ends, true), T('a', 'int64', [axes.length], axes, true), T('t', 'int64', [steps.length], steps, true)],
    });
  }
  await check('Slice without axes and steps', { op: 'Slice', inputs: [x, T('s', 'int64', [2], [1, 1], true), T('e', 'int64', [2], [3, 3], true)] });
  await check('Slice int64', { op: 'Slice', inputs: [T('x', 'int64', [6], [5, 4, 3, 2, 1, 0]), T('s', 'int64', [1], [1], true), T('e', 'int64', [1], [5], true)], outputs: [['y', 'int64']] });
  const x64 = T('x', 'int64', [3, 6], Array.from({ length: 18 }, (_, i) => i * 1000 - 7));
  await check('Slice int64 [3,6] rows 0:3:2, columns 1:6:2', {
    op: 'Slice', outputs: [['y', 'int64']],
    inputs: [x64, T('s', 'int64', [2], [0, 1], true), T('e', 'int64', [2], [3, 6], true), T('a', 'int64', [2], [0, 1], true), T('t', 'int64', [2], [2, 2], true)],
  });
  await check('Slice int64 [3,6] rows 2:0:-1', {
    op: 'Slice', outputs: [['y', 'int64']],
    inputs: [x64, T('s', 'int64', [1], [2], true), T('e', 'int64', [1], [0], true), T('a', 'int64', [1], [0], true), T('t', 'int64', [1], [-1], true)],
  });
});

test('Expand, ConstantOfShape, Range, Shape (start / end), Size', async () => {
  await check('Expand [3,1] to [2,3,4]', { op: 'Expand', inputs: [T('x', 'float32', [3, 1], rand(3)), T('s', 'int64', [3], [2, 1, 4], true)] });
  await check('Expand int64 [1,3] to [2,1]', { op: 'Expand', inputs: [T('x', 'int64', [1, 3], [7, 8, 9]), T('s', 'int64', [2], [2, 1], true)], outputs: [['y', 'int64']] });
  // int64 stays on the host: the JS walk's block copies (inner dimension contiguous), fills (broadcast) and scalars
  await check('Expand int64 [3,1] to [2,3,4]', { op: 'Expand', inputs: [T('x', 'int64', [3, 1], [-5, 6, 2 ** 40]), T('s', 'int64', [3], [2, 1, 4], true)], outputs: [['y', 'int64']] });
  await check('Expand int64 [1,1,1,5] to [1,1,3,5]', { op: 'Expand', inputs: [T('x', 'int64', [1, 1, 1, 5], [1, 0, 1, 1, 0]), T('s', 'int64', [4], [1, 1, 3, 5], true)], outputs: [['y', 'int64']] });
  await check('Expand int64 [] to []', { op: 'Expand', inputs: [T('x', 'int64', [], [42]), T('s', 'int64', [0], [], true)], outputs: [['y', 'int64']] });
  await check('ConstantOfShape default', { op: 'ConstantOfShape', opset: 9, inputs: [T('s', 'int64', [2], [2, 3])] });
  await check('ConstantOfShape int64', {
    op: 'ConstantOfShape', opset: 9, inputs: [T('s', 'int64', [1], [4])], outputs: [['y', 'int64']],
    attributes: { value: { type: 'TENSOR', value: { elemType: 'INT64', dims: [1], data: [-7] } } },
  });
  await check('ConstantOfShape float', {
    op: 'ConstantOfShape', opset: 9, inputs: [T('s', 'int64', [3], [1, 2, 2])],
    attributes: { value: { type: 'TENSOR', value: { elemType: 'FLOAT', dims: [1], data: [1.5] } } },
  });
  await check('Range float', { op: 'Range', opset: 11, inputs: [T('a', 'float32', [], [0.5]), T('b', 'float32', [], [3.7]), T('c', 'float32', [], [0.3])] });
  await check('Range int64 down', { op: 'Range', opset: 11, inputs: [T('a', 'int64', [], [10]), T('b', 'int64', [], [0]), T('c', 'int64', [], [-3])], outputs: [['y', 'int64']] });
  await check('Shape start/end', { op: 'Shape', opset: 15, attributes: { start: 1, end: -1 }, inputs: [T('x', 'float32', [2, 3, 4, 5], rand(120))], outputs: [['y', 'int64']] });
  await check('Size', { op: 'Size', inputs: [T('x', 'float32', [2, 3], rand(6))], outputs: [['y', 'int64']] });
});

test('Reduce* over one axis, all axes and the opset 18 axes input; CumSum', async () => {
  const x = T('x', 'float32', [3, 5, 37], rand(555));
  for (const op of ['ReduceMean', 'ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceL2', 'ReduceSumSquare', 'ReduceProd']) {
    const opset = op === 'ReduceSum' ? 11 : 13;
    await check(`${op} axes [-1]`, { op, opset, inputs: [x], attributes: { axes: [-1] } });
    await check(`${op} axes [0, 2] keepdims 0`, { op, opset, inputs: [x], attributes: { axes: [0, 2], keepdims: 0 } });
    await check(`${op} all`, { op, opset, inputs: [x] });
    await check(`${op} opset 18 axes input`, { op, opset: 18, inputs: [x, T('a', 'int64', [1], [1], true)] });
  }
  await check('ReduceSum int64', { op: 'ReduceSum', opset: 13, inputs: [T('x', 'int64', [2, 3], [1, 2, 3, 4, 5, 6]), T('a', 'int64', [1], [1], true)], outputs: [['y', 'int64']] });
  const c = T('x', 'float32', [2, 7, 3], rand(42));
  for (const attributes of [{}, { exclusive: 1 }, { reverse: 1 }, { exclusive: 1, reverse: 1 }]) {
    await check(`CumSum ${JSON.stringify(attributes)}`, { op: 'CumSum', opset: 14, attributes, inputs: [c, T('a', 'int64', [], [1], true)] });
  }
  await check('CumSum int32', { op: 'CumSum', opset: 14, inputs: [T('x', 'int32', [5], [1, -2, 3, 4, 5]), T('a', 'int64', [], [0], true)], outputs: [['y', 'int32']] });
});

test('Pow, comparisons, logic, Where, integer arithmetic', async () => {
  const x = T('x', 'float32', [4, 6], rand(24, 3));
  for (const e of [2, 3, 0.5, -1.5]) await check(`Pow x^${e}`, { op: 'Pow', opset: 15, inputs: [x, T('e', 'float32', [], [e], true)] });
  await check('Pow tensor exponent', { op: 'Pow', opset: 15, inputs: [T('x', 'float32', [4, 6], rand(24, 3).map(Math.abs)), T('e', 'float32', [6], rand(6, 2))] });
  const a = T('a', 'int64', [2, 3], [1, 5, -3, 7, 0, 2]);
  const b = T('b', 'int64', [3], [1, 4, 2]);
  for (const op of ['Equal', 'Less', 'Greater', 'LessOrEqual', 'GreaterOrEqual']) {
    await check(`${op} int64`, { op, opset: 16, inputs: [a, b], outputs: [['y', 'bool']] });
    await check(`${op} float`, { op, opset: 16, inputs: [x, T('z', 'float32', [6], rand(6, 3))], outputs: [['y', 'bool']] });
  }
  const p = T('p', 'bool', [2, 3], [1, 0, 1, 0, 0, 1]);
  const q = T('q', 'bool', [3], [1, 1, 0]);
  await check('Not', { op: 'Not', inputs: [p], outputs: [['y', 'bool']] });
  for (const op of ['And', 'Or', 'Xor']) await check(op, { op, inputs: [p, q], outputs: [['y', 'bool']] });
  await check('Where float broadcast', { op: 'Where', opset: 16, inputs: [T('c', 'bool', [2, 1, 3], [1, 0, 1, 0, 0, 1]), T('x', 'float32', [4, 3], rand(12)), T('y2', 'float32', [1], [-3.4028234663852886e38])] });
  await check('Where int64', { op: 'Where', opset: 16, inputs: [q, a, b], outputs: [['y', 'int64']] });
  for (const op of ['Add', 'Sub', 'Mul', 'Div']) {
    await check(`${op} int64`, { op, opset: 14, inputs: [a, T('b', 'int64', [3], [3, -2, 5])], outputs: [['y', 'int64']] });
    await check(`${op} int32`, { op, opset: 14, inputs: [T('a', 'int32', [4], [2147483647, -7, 9, 100]), T('b', 'int32', [4], [1, 2, -4, 7])], outputs: [['y', 'int32']] });
  }
});

test('Cast between float32, int64, int32, uint8, int8 and bool', async () => {
  const f = T('x', 'float32', [8], [0, -0.5, 1.5, -2.7, 3e9, -1e20, 255.9, 0.25]);
  const l = T('x', 'int64', [6], [0, 1, -1, 2147483648, -9007199254740993, 16777217]);
  const casts = [[f, 'int64', 7], [f, 'bool', 9], [l, 'float32', 1], [l, 'int32', 6], [l, 'bool', 9], [T('x', 'int32', [3], [-1, 2, 300]), 'int64', 7],
    [T('x', 'int32', [3], [-1, 2, 300]), 'uint8', 2], [T('x', 'bool', [3], [1, 0, 1]), 'float32', 1], [T('x', 'bool', [3], [1, 0, 1]), 'int64', 7],
    [T('x', 'uint8', [3], [0, 200, 255]), 'float32', 1], [T('x', 'int8', [3], [-128, 5, 127]), 'int64', 7]];
  for (const [x, type, to] of casts) await check(`Cast ${x.dtype} -> ${type}`, { op: 'Cast', opset: 13, inputs: [x], attributes: { to }, outputs: [['y', type]] });
});

test('Pad constant / edge / reflect; Transpose, Concat, Split, Gather, Squeeze, Unsqueeze on float data', async () => {
  const x = T('x', 'float32', [1, 2, 3, 4], rand(24));
  const pads = T('p', 'int64', [8], [0, 0, 1, 2, 0, 0, 2, 1], true);
  await check('Pad constant', { op: 'Pad', opset: 13, inputs: [x, pads, T('v', 'float32', [], [2.5], true)] });
  for (const mode of ['edge', 'reflect']) await check(`Pad ${mode}`, { op: 'Pad', opset: 13, inputs: [x, pads], attributes: { mode } });
  await check('Pad opset 2 (attributes)', { op: 'Pad', opset: 2, inputs: [x], attributes: { pads: [0, 0, 1, 1, 0, 0, 1, 1], value: { type: 'FLOAT', value: -1 } } });
  await check('Transpose', { op: 'Transpose', inputs: [x], attributes: { perm: [2, 0, 3, 1] } });
  await check('Concat', { op: 'Concat', inputs: [x, T('z', 'float32', [1, 1, 3, 4], rand(12))], attributes: { axis: 1 } });
  await check('Split', { op: 'Split', opset: 13, inputs: [x, T('s', 'int64', [2], [1, 3], true)], attributes: { axis: 3 }, outputs: [['y', 'float32'], ['z', 'float32']] });
  await check('Gather axis 2, 2-D and negative indices', { op: 'Gather', inputs: [x, T('i', 'int64', [2, 2], [2, -1, 0, 1], true)], attributes: { axis: 2 } });
  await check('Squeeze', { op: 'Squeeze', inputs: [x, T('a', 'int64', [1], [0], true)] });
  await check('Unsqueeze', { op: 'Unsqueeze', inputs: [x, T('a', 'int64', [2], [0, -1], true)] });
});

test('MatMul 1-D and broadcast batches, Gemm transposes and C forms, Gelu-20, LayerNormalization and Softmax on other axes', async () => {
  await check('MatMul [2,1,3,4] x [3,4,5]', { op: 'MatMul', inputs: [T('a', 'float32', [2, 1, 3, 4], rand(24)), T('b', 'float32', [3, 4, 5], rand(60))] });
  await check('MatMul 1-D A', { op: 'MatMul', inputs: [T('a', 'float32', [4], rand(4)), T('b', 'float32', [2, 4, 5], rand(40))] });
  await check('MatMul 1-D B', { op: 'MatMul', inputs: [T('a', 'float32', [3, 2, 300], rand(1800)), T('b', 'float32', [300], rand(300))] });
  const a = T('a', 'float32', [300, 5], rand(1500));
  const b = T('b', 'float32', [7, 300], rand(2100), true);
  for (const [c, beta] of [[T('c', 'float32', [7], rand(7), true), 1], [T('c', 'float32', [5, 1], rand(5), true), 0.5], [T('c', 'float32', [], [3], true), 2]]) {
    await check(`Gemm transA transB C [${c.dims}] beta ${beta}`, { op: 'Gemm', inputs: [a, b, c], attributes: { transA: 1, transB: 1, alpha: 0.75, beta: { type: 'FLOAT', value: beta } } });
  }
  const g = T('x', 'float32', [2, 3000], rand(6000, 6));
  await check('Gelu-20 none', { op: 'Gelu', opset: 20, inputs: [g] });
  await check('Gelu-20 tanh', { op: 'Gelu', opset: 20, inputs: [g], attributes: { approximate: 'tanh' } });
  const x = T('x', 'float32', [2, 3, 40], rand(240));
  await check('LayerNormalization axis 1', { op: 'LayerNormalization', opset: 17, inputs: [x, T('s', 'float32', [3, 40], rand(120), true), T('b', 'float32', [3, 40], rand(120), true)], attributes: { axis: 1, epsilon: { type: 'FLOAT', value: 1e-5 } } });
  for (const axis of [0, 1]) await check(`Softmax-13 axis ${axis}`, { op: 'Softmax', opset: 13, inputs: [x], attributes: { axis } });
});

test('Transposes folded into float MatMuls (strided views, copies where the strides need them) equal onnxruntime-web', async () => {
  const { graphModel } = await import('../../tools/bench/onnx-model.mjs');
  // [batch, seq, heads, d] -> attention-style products; seq 1 exercises MLAS's one-row GEMV path
  for (const [seq, permA, permB, permY, alpha] of [
    [5, [0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3], null], [1, [0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3], null],
    [1, [0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3], 0.25], [4, [0, 2, 3, 1], [0, 2, 1, 3], [0, 1, 3, 2], null],
    [3, [0, 1, 3, 2], [0, 2, 1, 3], [0, 3, 1, 2], 0.5],
  ]) {
    const dimsA = [2, seq, 3, 4];
    const permuted = (dims, perm) => perm.map((p) => dims[p]);
    const a = permuted(dimsA, permA);
    const want = [a[0], a[1], a.at(-1), 6]; // the logical B [.., K, N]; stored so that its Transpose gives it
    const inv = (perm) => perm.map((_, i) => perm.indexOf(i));
    const bStored = permuted(want, inv(permB));
    const mm = alpha === null ? { opType: 'MatMul', domain: '' } : { opType: 'FusedMatMul', domain: 'com.microsoft', attributes: { alpha: { type: 'FLOAT', value: alpha } } };
    const y = [a[0], a[1], a[2], 6];
    const bytes = graphModel({
      opsets: { '': 13, 'com.microsoft': 1 },
      inputs: [{ name: 'a', elemType: 'FLOAT', dims: dimsA }, { name: 'b', elemType: 'FLOAT', dims: bStored }],
      outputs: [{ name: 'y', elemType: 'FLOAT', dims: permuted(y, permY) }],
      nodes: [
        { opType: 'Transpose', inputs: ['a'], outputs: ['at'], attributes: { perm: permA } },
        { opType: 'Transpose', inputs: ['b'], outputs: ['bt'], attributes: { perm: permB } },
        { ...mm, inputs: ['at', 'bt'], outputs: ['p'] },
        { opType: 'Transpose', inputs: ['p'], outputs: ['y'], attributes: { perm: permY } },
      ],
    });
    const model = await qwasm.loadModel(bytes);
    const folded = model.layers.length;
    model.dispose();
    assert.equal(folded, 1, 'the three Transposes are folded into the product');
    const xa = rand(numel(dimsA));
    const xb = rand(numel(bStored));
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    const web = (await session.run({ a: new ort.Tensor('float32', xa, dimsA), b: new ort.Tensor('float32', xb, bStored) })).y;
    await session.release();
    const m = await qwasm.loadModel(bytes);
    try {
      const ours = (await m.run({ a: { data: xa, dims: dimsA }, b: { data: xb, dims: bStored } })).y;
      assert.deepEqual(ours.dims, Array.from(web.dims));
      assert.deepEqual(new Uint32Array(ours.data.buffer), new Uint32Array(web.data.buffer), `seq ${seq} perms ${permA} ${permB} ${permY} alpha ${alpha}`);
    } finally {
      m.dispose();
    }
  }
});

test('DequantizeLinear of uint8, int8 and int32 graph inputs (per tensor, into wasm memory); a bad x_scale names the node', async () => {
  const ints = (lo, hi, n) => Array.from({ length: n }, () => lo + (rng() >>> 0) % (hi - lo + 1));
  for (const [dtype, lo, hi, zp] of [['uint8', 0, 255, 131], ['int8', -128, 127, -7], ['int32', -(2 ** 20), 2 ** 20, 12345]]) {
    await check(`DequantizeLinear ${dtype}`, {
      op: 'DequantizeLinear',
      inputs: [T('x', dtype, [3, 37], ints(lo, hi, 111)), T('s', 'float32', [], [0.0123], true), T('z', dtype, [], [zp], true)],
    });
  }
  const bytes = singleNodeModel({
    opType: 'DequantizeLinear', opset: 13, name: 'dq',
    inputs: [{ name: 'x', elemType: 'UINT8', dims: [4] }],
    initializers: [{ name: 's', elemType: 'FLOAT', dims: [], data: new Float32Array([0]) }, { name: 'z', elemType: 'UINT8', dims: [], data: new Uint8Array([3]) }],
    outputs: [{ name: 'y', elemType: 'FLOAT' }],
  });
  const model = await qwasm.loadModel(bytes);
  try {
    await assert.rejects(model.run({ x: { data: new Uint8Array(4), dims: [4] } }),
      /^RangeError: DequantizeLinear node "dq_node": x_scale must be a finite number > 0 \(at least 2\.9e-39 in float32\), got 0$/);
  } finally {
    model.dispose();
  }
});
