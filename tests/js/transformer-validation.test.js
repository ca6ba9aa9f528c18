// The transformer operators' entries in the loader's validation table (js/model/operators/registry.js): element
// types, ranks, constants and output counts declared per input, checked at load for constants and graph inputs and
// at every run for computed values; bad ones are named errors that name the node, the input and what it must be.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import { encodeOnnx } from '../../js/model/onnx.js';
import { model, scalar, tensor } from '../../tools/fuzz/seeds.mjs';
import { failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const live = () => qwasm.memoryStats().liveBytes;
const bytesOf = (spec) => encodeOnnx(model(spec));

async function rejectsAtLoad(spec, Class, re) {
  const before = live();
  await assert.rejects(qwasm.loadModel(await bytesOf(spec)), (e) => (e instanceof Class && re.test(e.message)) || assert.fail(`${e.name}: ${e.message} is not ${Class.name} ${re}`));
  assert.equal(live(), before);
}

async function rejectsAtRun(spec, feeds, Class, re) {
  const m = await qwasm.loadModel(await bytesOf(spec));
  try {
    await assert.rejects(m.run(feeds), (e) => (e instanceof Class && re.test(e.message)) || assert.fail(`${e.name}: ${e.message} is not ${Class.name} ${re}`));
  } finally {
    m.dispose();
  }
}

test('element types: graph inputs and constants at load, computed values at run time', async () => {
  await rejectsAtLoad({ inputs: { c: ['int32', [2]], x: ['float32', [2]] }, nodes: [['Where', ['c', 'x', 'x'], ['y']]], outputs: { y: ['float32', [2]] } },
    qwasm.ModelFormatError, /^Where node "Where_0": input 0 \(condition\) must be bool, got int32$/);
  await rejectsAtLoad({ inputs: { a: ['float32', [2]] }, inits: { b: tensor('int64', [2]) }, nodes: [['Add', ['a', 'b'], ['y']]], outputs: { y: ['float32', [2]] } },
    qwasm.ModelFormatError, /^Add node "Add_0": input 1 \(B\) must be float32, got int64$/);
  await rejectsAtLoad({ inputs: { x: ['int32', [2]] }, nodes: [['Erf', ['x'], ['y']]], outputs: { y: ['int32', [2]] } },
    qwasm.UnsupportedError, /^Erf node "Erf_0": input 0 \(input\) must be float32, got int32 \(not supported\)$/);
  await rejectsAtLoad({ inputs: { x: ['float32', [2, 4]] }, inits: { s: tensor('int32', [4]) }, nodes: [['LayerNormalization', ['x', 's'], ['y']]], outputs: { y: ['float32', [2, 4]] }, opset: 17 },
    qwasm.ModelFormatError, /^LayerNormalization node "LayerNormalization_0": input 1 \(Scale\) must be float32, got int32$/);
  // a computed value of the wrong type: Cast to int32 feeding Softmax
  await rejectsAtRun({ inputs: { x: ['float32', [2]] }, nodes: [['Cast', ['x'], ['c'], { to: 6 }], ['Softmax', ['c'], ['y']]], outputs: { y: ['float32', [2]] } },
    { x: new Float32Array(2) }, qwasm.ModelFormatError, /^Softmax node "Softmax_1": input 0 \(input\) must be float32, got int32$/);
});

test('ranks, scalars, constants and output counts', async () => {
  await rejectsAtLoad({ inputs: { x: ['float32', [2, 3]] }, inits: { s: tensor('int64', [1, 2], [3, 2]) }, nodes: [['Expand', ['x', 's'], ['y']]], outputs: { y: ['float32', [3, 2]] } },
    qwasm.ModelFormatError, /^Expand node "Expand_0": input 1 \(shape\) must have 1 dimensions, got shape \[1,2\]$/);
  await rejectsAtLoad({ inputs: { l: ['int64', []] }, inits: { s: tensor('int64', [2], [0, 0]), d: scalar('int64', 1) }, nodes: [['Range', ['s', 'l', 'd'], ['y']]], outputs: { y: ['int64', []] } },
    qwasm.ModelFormatError, /^Range node "Range_0": input 0 \(start\) must hold one value, got shape \[2\]$/);
  // DynamicQuantizeMatMul's weights are packed once, at load: they must be constants
  await rejectsAtLoad({
    inputs: { a: ['float32', [2, 4]], b: ['int8', [4, 3]] }, inits: { s: scalar('float32', 0.1) },
    nodes: [['DynamicQuantizeMatMul', ['a', 'b', 's'], ['y'], {}, 'com.microsoft']], outputs: { y: ['float32', [2, 3]] },
  }, qwasm.UnsupportedError, /^DynamicQuantizeMatMul node "DynamicQuantizeMatMul_0": input 1 \(B\) must be a constant \(an initializer\); "b" is computed$/);
  await rejectsAtLoad({
    inputs: { a: ['float32', [2, 4]] }, inits: { b: tensor('int8', [4, 3]), s: scalar('float32', 0.1), z: scalar('uint8', 0) },
    nodes: [['DynamicQuantizeMatMul', ['a', 'b', 's', 'z'], ['y'], {}, 'com.microsoft']], outputs: { y: ['float32', [2, 3]] },
  }, qwasm.ModelFormatError, /^DynamicQuantizeMatMul node "DynamicQuantizeMatMul_0": input 3 \(b_zero_point\) must be int8, got uint8$/);
  await rejectsAtLoad({ inputs: { x: ['float32', [2, 4]] }, inits: { g: tensor('float32', [4]) }, nodes: [['SkipLayerNormalization', ['x', 'x', 'g'], ['y', 'm', 'v', 's', 'extra'], {}, 'com.microsoft']], outputs: { y: ['float32', [2, 4]] } },
    qwasm.ModelFormatError, /^SkipLayerNormalization node "SkipLayerNormalization_0": has 5 outputs, SkipLayerNormalization gives 1 to 4$/);
  await rejectsAtLoad({ inputs: { x: ['bool', [2]] }, nodes: [['Not', ['x', 'x'], ['y']]], outputs: { y: ['bool', [2]] } },
    qwasm.ModelFormatError, /^Not node "Not_0": has 2 inputs, Not takes 1$/);
});

test('attributes of the wrong type or value', async () => {
  const softmax = (axis) => ({ inputs: { x: ['float32', [2, 3]] }, nodes: [['Softmax', ['x'], ['y'], { axis }]], outputs: { y: ['float32', [2, 3]] } });
  await rejectsAtLoad(softmax('last'), qwasm.ModelFormatError, /^Softmax node "Softmax_0": attribute axis/);
  await rejectsAtRun(softmax(2), { x: new Float32Array(6) }, qwasm.ModelFormatError, /^Softmax node "Softmax_0": axis 2 is out of range/);
  await rejectsAtLoad({ inputs: { x: ['float32', [2]] }, nodes: [['Cast', ['x'], ['y'], { to: 11 }]], outputs: { y: ['float32', [2]] } },
    qwasm.UnsupportedError, /^Cast node "Cast_0": cast to type 11 is not supported/);
});

test('a Transpose whose perm is not a permutation is not folded into the MatMul around it: the Transpose names it (fuzzer case: memory written past the product)', async () => {
  for (const [where, nodes] of [
    ['after', [['MatMul', ['a', 'b'], ['m']], ['Transpose', ['m'], ['y'], { perm: [0, 0, 1, 3] }]]],
    ['before', [['Transpose', ['a'], ['t'], { perm: [0, 2, 2, 1] }], ['MatMul', ['t', 'b'], ['y']]]],
  ]) {
    const spec = { inputs: { a: ['float32', [1, 4, 8, 8]], b: ['float32', [1, 4, 8, 8]] }, nodes, outputs: { y: ['float32', [1, 4, 8, 8]] } };
    const before = live();
    await rejectsAtRun(spec, { a: new Float32Array(256).fill(0.5), b: new Float32Array(256).fill(0.25) }, qwasm.ModelFormatError,
      /^Transpose node "Transpose_\d": perm \[0,\d,\d,\d\] is not a permutation of the 4 dimensions/);
    assert.equal(live(), before, `${where}: the run's memory is back after dispose()`);
  }
});

test('a MatMul whose output a Transpose and Shapes read writes it transposed; the Shapes give the untransposed dimensions', async () => {
  // Shape before and after the Transpose, sliced (opset 15's start / end): all three read the fused product's output
  const spec = {
    inputs: { a: ['float32', [1, 2, 3, 4]], b: ['float32', [1, 2, 4, 5]] },
    nodes: [['MatMul', ['a', 'b'], ['m']], ['Shape', ['m'], ['s1']], ['Transpose', ['m'], ['y'], { perm: [0, 2, 1, 3] }],
      ['Shape', ['m'], ['s2'], { start: 1, end: 3 }]],
    outputs: { y: ['float32', [1, 3, 2, 5]], s1: ['int64', [4]], s2: ['int64', [2]] }, opset: 15,
  };
  const m = await qwasm.loadModel(await bytesOf(spec));
  try {
    assert.deepEqual(m.layers.map((l) => l.opType), ['MatMul', 'Shape', 'Shape'], 'the Transpose is folded into the MatMul');
    assert.deepEqual(m.layers[0].attributes.qwasm_perm_y, [0, 2, 1, 3]);
    const a = Float32Array.from({ length: 24 }, (_, i) => i / 8);
    const b = Float32Array.from({ length: 40 }, (_, i) => 1 - i / 16);
    const out = await m.run({ a, b });
    assert.deepEqual([...out.s1.data], [1n, 2n, 3n, 5n]);
    assert.deepEqual([...out.s2.data], [2n, 3n]);
    assert.deepEqual(out.y.dims, [1, 3, 2, 5]);
    for (let h = 0; h < 2; h++) {
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 5; j++) {
          let sum = 0;
          for (let k = 0; k < 4; k++) sum = Math.fround(sum + Math.fround(a[(h * 3 + i) * 4 + k] * b[(h * 4 + k) * 5 + j]));
          assert.equal(out.y.data[(i * 2 + h) * 5 + j], sum, `y[0][${i}][${h}][${j}]`);
        }
      }
    }
  } finally {
    m.dispose();
  }
  // the attribute from a file, not a permutation of the input's dimensions, is named
  await rejectsAtRun({ inputs: { x: ['float32', [2, 3]] }, nodes: [['Shape', ['x'], ['s'], { qwasm_perm: [0, 0] }]], outputs: { s: ['int64', [2]] } },
    { x: new Float32Array(6) }, qwasm.ModelFormatError, /^Shape node "Shape_0": qwasm_perm \[0,0\] is not a permutation of 2 dimensions$/);
});
