// Float CNNs through the model loader (what calibration / post-training quantization runs first):
// the float32 Conv kernel (src/operators/conv2d-f32.c) against float64 and against its own documented
// float32 summation order, float pooling and batch normalization against onnxruntime-web, and whole
// float models (models/digits-float.onnx, build/models/mobilenet_v2_float.onnx) against onnxruntime-web.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { createOrtRunner } from '../../tools/bench/ort.mjs';
import { graphModel, singleNodeModel } from '../../tools/bench/onnx-model.mjs';
import { mulberry32 } from '../../tools/bench/cases.mjs';
import { conv2dFloat, packConv2dFloat } from '../../js/ops/conv-float.js';
import { assertBitEqual, failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

const root = new URL('../../', import.meta.url);
const numel = (d) => d.reduce((a, b) => a * b, 1);
const U = 2 ** -24; // float32 unit roundoff

function randomFloats(n, seed, scale = 1) {
  const rng = mulberry32(seed);
  return Float32Array.from({ length: n }, () => Math.fround(((rng() / 2 ** 32) * 2 - 1) * scale));
}

/**
 * Reference convolution: float64 sums, |terms| sums (for the error bound), and the float32 sum in the
 * kernel's documented order (bias, then channel, kernel row, kernel column; a rounding per operation).
 */
function referenceConv(x, [n, c, h, w], wt, [m, cg, kh, kw], bias, { stride, dilation, pads, group }) {
  const [sh, sw] = stride;
  const [dh, dw] = dilation;
  const [pt, pl, pb, pr] = pads;
  const oh = Math.floor((h + pt + pb - ((kh - 1) * dh + 1)) / sh) + 1;
  const ow = Math.floor((w + pl + pr - ((kw - 1) * dw + 1)) / sw) + 1;
  const size = n * m * oh * ow;
  const f64 = new Float64Array(size);
  const mag = new Float64Array(size);
  const f32 = new Float32Array(size);
  const mg = m / group;
  let o = 0;
  for (let b = 0; b < n; b++) {
    for (let oc = 0; oc < m; oc++) {
      const g = Math.floor(oc / mg);
      for (let oy = 0; oy < oh; oy++) {
        for (let ox = 0; ox < ow; ox++, o++) {
          const b0 = bias ? bias[oc] : 0;
          let s64 = b0;
          let a = Math.abs(b0);
          let s32 = Math.fround(b0);
          for (let ci = 0; ci < cg; ci++) {
            for (let ky = 0; ky < kh; ky++) {
              for (let kx = 0; kx < kw; kx++) {
                const iy = oy * sh - pt + ky * dh;
                const ix = ox * sw - pl + kx * dw;
                const xv = iy < 0 || iy >= h || ix < 0 || ix >= w ? 0 : x[((b * c + g * cg + ci) * h + iy) * w + ix];
                const wv = wt[((oc * cg + ci) * kh + ky) * kw + kx];
                s64 += xv * wv;
                a += Math.abs(xv * wv);
                s32 = Math.fround(s32 + Math.fround(xv * wv));
              }
            }
          }
          f64[o] = s64;
          mag[o] = a;
          f32[o] = s32;
        }
      }
    }
  }
  return { dims: [n, m, oh, ow], f64, mag, f32 };
}

// [N, C, H, W], M, kernel [kh, kw], stride, dilation, pads [t, l, b, r], group, bias
const CONV_CASES = [
  [[1, 3, 7, 9], 5, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, true],
  [[2, 4, 11, 6], 6, [3, 2], [2, 1], [1, 1], [0, 1, 2, 0], 2, true],
  [[1, 6, 9, 9], 6, [3, 3], [1, 1], [2, 2], [2, 2, 2, 2], 6, true], // depthwise, dilated
  [[1, 8, 13, 13], 8, [3, 3], [2, 2], [1, 1], [1, 1, 1, 1], 8, false], // depthwise, stride 2
  [[1, 4, 5, 5], 8, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 4, true], // depthwise, multiplier 2
  [[1, 17, 5, 7], 13, [1, 1], [1, 1], [1, 1], [0, 0, 0, 0], 1, true], // pointwise, odd sizes
  [[3, 9, 4, 3], 7, [1, 1], [2, 2], [1, 1], [0, 0, 0, 0], 1, true], // 1x1 stride 2
  [[1, 5, 1, 1], 3, [1, 1], [1, 1], [1, 1], [0, 0, 0, 0], 1, false], // 1x1 image
  [[1, 2, 10, 10], 3, [5, 5], [3, 2], [1, 2], [2, 0, 1, 3], 1, true], // asymmetric pads, mixed stride / dilation
  [[1, 12, 6, 6], 9, [3, 3], [1, 1], [1, 1], [0, 0, 0, 0], 3, true], // groups 3, valid
  [[1, 1, 8, 8], 8, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, true], // the digits model's first layer
  [[1, 64, 7, 7], 33, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, true], // deep K, output channels past a tile
  [[2, 3, 3, 3], 2, [3, 3], [1, 1], [1, 1], [0, 0, 0, 0], 1, true], // kernel = image: one pixel
  [[1, 3, 1, 9], 4, [1, 3], [1, 2], [1, 3], [0, 3, 0, 3], 1, true], // one row, horizontal dilation
  [[1, 2, 20, 33], 3, [7, 1], [1, 1], [1, 1], [3, 0, 3, 0], 1, false], // tall kernel, many pixels
];

test('float Conv: every parameter combination within a rounding bound of float64, bit-equal to its documented float32 order', () => {
  let seed = 1;
  for (const [xDims, m, [kh, kw], stride, dilation, pads, group, withBias] of CONV_CASES) {
    const wDims = [m, xDims[1] / group, kh, kw];
    const x = randomFloats(numel(xDims), seed++, 3);
    const wt = randomFloats(numel(wDims), seed++, 0.5);
    const bias = withBias ? randomFloats(m, seed++, 2) : null;
    const what = JSON.stringify({ xDims, wDims, stride, dilation, pads, group, withBias });
    const ref = referenceConv(x, xDims, wt, wDims, bias, { stride, dilation, pads, group });
    const packed = packConv2dFloat(wt, wDims, bias, { stride, dilation, padding: pads, groups: group });
    try {
      const y = conv2dFloat(x, xDims, packed);
      assert.deepEqual(y.dims, ref.dims, what);
      assertBitEqual(assert, y.data, ref.f32, `${what} (float32 order)`);
      const terms = numel(wDims.slice(1)) + 1;
      for (let i = 0; i < y.data.length; i++) {
        const bound = 1.01 * terms * U * ref.mag[i] + U * Math.abs(ref.f64[i]) + 1e-30;
        assert.ok(Math.abs(y.data[i] - ref.f64[i]) <= bound, `${what}: element ${i} is ${y.data[i]}, float64 ${ref.f64[i]} (bound ${bound})`);
      }
      // repeated calls reuse the packed weights and workspace
      assertBitEqual(assert, conv2dFloat(x, xDims, packed).data, y.data, `${what} (second call)`);
    } finally {
      packed.dispose();
    }
  }
});

// ---- single-node float models against onnxruntime-web -------------------------------------------

/** Runs a one-node float model in qwasm and onnxruntime-web; returns both outputs. */
async function bothSingle({ opType, opset = 13, xDims, initializers = [], attributes = {}, outDims, seed }) {
  const x = randomFloats(numel(xDims), seed, 2);
  const model = singleNodeModel({
    opType, opset, attributes,
    inputs: [{ name: 'x', elemType: 'FLOAT', dims: xDims }],
    initializers: initializers.map((t) => ({ ...t, elemType: 'FLOAT' })),
    nodeInputs: ['x', ...initializers.map((t) => t.name)],
    outputs: [{ name: 'y', elemType: 'FLOAT', dims: outDims }],
  });
  const runner = await createOrtRunner(model);
  let ref;
  let refDims;
  try {
    ref = (await runner.run({ x: { type: 'float32', data: x, dims: xDims } })).y;
    refDims = Array.from(runner.lastDims.y, Number);
  } finally {
    await runner.release();
  }
  const m = await qwasm.loadModel(model);
  try {
    const y = (await m.run({ x: { data: x, dims: xDims } })).y;
    return { ours: y.data, dims: y.dims, ref, refDims };
  } finally {
    m.dispose();
  }
}

function assertClose(ours, ref, rel, what) {
  assert.equal(ours.length, ref.length, `${what}: ${ours.length} values, onnxruntime-web has ${ref.length}`);
  let scale = 0;
  for (const v of ref) scale = Math.max(scale, Math.abs(v));
  let worst = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(ours[i] - ref[i]);
    if (!(d <= rel * scale + 1e-30)) assert.fail(`${what}: element ${i} is ${ours[i]}, onnxruntime-web ${ref[i]} (|diff| ${d} > ${rel} x ${scale})`);
    worst = Math.max(worst, d);
  }
  return scale === 0 ? 0 : worst / scale;
}

test('float Conv with auto_pad SAME_UPPER / SAME_LOWER / VALID and explicit pads equals onnxruntime-web', async () => {
  let seed = 500;
  for (const autoPad of ['SAME_UPPER', 'SAME_LOWER', 'VALID', 'NOTSET']) {
    for (const [xDims, m, k, stride, dilation, group] of [
      [[1, 4, 7, 8], 6, [3, 3], [2, 2], [1, 1], 1],
      [[1, 4, 6, 9], 4, [2, 4], [1, 3], [1, 1], 4],
      [[2, 6, 9, 5], 9, [3, 2], [1, 1], [2, 1], 3],
      [[1, 3, 10, 7], 5, [4, 3], [3, 2], [1, 1], 1],
    ]) {
      if (dilation.some((d) => d > 1) && autoPad.startsWith('SAME')) continue; // onnxruntime rejects dilated SAME
      const wDims = [m, xDims[1] / group, ...k];
      const attributes = { kernel_shape: k, strides: stride, dilations: dilation, group };
      if (autoPad === 'NOTSET') attributes.pads = [1, 0, 2, 1];
      else attributes.auto_pad = autoPad;
      const { ours, dims, ref, refDims } = await bothSingle({
        opType: 'Conv', xDims, attributes, seed: seed++,
        initializers: [{ name: 'w', dims: wDims, data: randomFloats(numel(wDims), seed++) }, { name: 'b', dims: [m], data: randomFloats(m, seed++) }],
      });
      const what = `Conv ${autoPad} ${JSON.stringify({ xDims, wDims, stride, dilation, group })}`;
      assert.deepEqual(dims, refDims, what);
      assertClose(ours, ref, 1e-6, what);
    }
  }
});

test('float MaxPool and AveragePool (pads, strides, dilations, ceil_mode, count_include_pad, auto_pad) equal onnxruntime-web', async () => {
  let seed = 900;
  const cases = [
    { kernel_shape: [2, 2], strides: [2, 2] },
    { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] },
    { kernel_shape: [3, 2], strides: [2, 3], pads: [1, 0, 0, 1], ceil_mode: 1 },
    { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], ceil_mode: 1 },
    { kernel_shape: [3, 3], strides: [1, 1], auto_pad: 'SAME_UPPER' },
    { kernel_shape: [2, 3], strides: [2, 2], auto_pad: 'SAME_LOWER' },
    { kernel_shape: [3, 3], strides: [3, 3], auto_pad: 'VALID' },
  ];
  for (const xDims of [[1, 3, 7, 9], [2, 2, 8, 8]]) {
    for (const c of cases) {
      for (const [opType, extra] of [['MaxPool', {}], ['MaxPool', { dilations: [2, 1] }], ['AveragePool', {}], ['AveragePool', { count_include_pad: 1 }]]) {
        if (extra.dilations && (c.auto_pad || c.ceil_mode)) continue;
        const attributes = { ...c, ...extra };
        const { ours, dims, ref, refDims } = await bothSingle({ opType, xDims, attributes, seed: seed++ });
        const what = `${opType} ${JSON.stringify(attributes)} on [${xDims}]`;
        assert.deepEqual(dims, refDims, what);
        if (opType === 'MaxPool') assertBitEqual(assert, ours, ref, what);
        else assertClose(ours, ref, 1e-6, what);
      }
    }
  }
});

test('float BatchNormalization (inference) equals onnxruntime-web', async () => {
  let seed = 1300;
  for (const xDims of [[2, 5, 3, 4], [1, 7, 6, 1]]) {
    const c = xDims[1];
    const variance = randomFloats(c, seed++).map((v) => Math.abs(v) + 0.1);
    const { ours, dims, ref, refDims } = await bothSingle({
      opType: 'BatchNormalization', xDims, attributes: { epsilon: 1e-3 }, seed: seed++,
      initializers: [
        { name: 'scale', dims: [c], data: randomFloats(c, seed++) },
        { name: 'B', dims: [c], data: randomFloats(c, seed++) },
        { name: 'mean', dims: [c], data: randomFloats(c, seed++) },
        { name: 'var', dims: [c], data: variance },
      ],
    });
    assert.deepEqual(dims, refDims);
    assertClose(ours, ref, 1e-6, `BatchNormalization on [${xDims}]`);
  }
});

// ---- whole float models against onnxruntime-web -------------------------------------------------

const digits = JSON.parse(readFileSync(new URL('models/digits.json', root), 'utf8'));
const argmax = (a) => Array.from(a).reduce((best, v, i, arr) => (v > arr[best] ? i : best), 0);

test('digits-float.onnx: every output and intermediate equals onnxruntime-web within tolerance; the 20 stored images classify as stored', async () => {
  const bytes = new Uint8Array(readFileSync(new URL('models/digits-float.onnx', root)));
  const runner = await createOrtRunner(bytes);
  const model = await qwasm.loadModel(bytes);
  let worst = 0;
  try {
    assert.ok(model.layers.some((l) => l.opType === 'Conv') && model.layers.some((l) => l.opType === 'MaxPool'));
    for (let i = 0; i < digits.test_images.length; i++) {
      const s = digits.test_images[i];
      const image = Float32Array.from(s.image);
      const ref = await runner.run({ input: { type: 'float32', data: image, dims: [1, 1, 8, 8] } });
      const got = await model.run({ input: image }, { intermediates: true });
      const what = `test image ${i} (#${s.index})`;
      for (const o of model.outputs) {
        assert.deepEqual(got[o.name].dims, Array.from(runner.lastDims[o.name], Number), `${what}: ${o.name} dims`);
        worst = Math.max(worst, assertClose(got[o.name].data, ref[o.name], 1e-5, `${what}: ${o.name}`));
      }
      for (const name of digits.float_activations) assert.ok(got.intermediates[name] ?? got[name], `${what}: ${name} observed`);
      const logits = got.output.data;
      assert.equal(argmax(logits), argmax(s.float_logits), `${what}: prediction`);
      assert.equal(argmax(logits), s.label, `${what}: label`);
      assert.equal(argmax(logits), s.prediction, `${what}: stored prediction`);
      for (let k = 0; k < 10; k++) assert.ok(Math.abs(logits[k] - s.float_logits[k]) < 1e-4, `${what}: logit ${k} ${logits[k]} vs PyTorch ${s.float_logits[k]}`);
    }
  } finally {
    model.dispose();
    await runner.release();
  }
  assert.ok(worst < 1e-5);
});

const mobilenet = new URL('build/models/mobilenet_v2_float.onnx', root);
test('mobilenet_v2_float.onnx equals onnxruntime-web within tolerance', { skip: existsSync(mobilenet) ? false : 'build/models/mobilenet_v2_float.onnx is absent (python3 tools/bench/mobilenet_v2.py writes it)' }, async () => {
  const bytes = new Uint8Array(readFileSync(mobilenet));
  const runner = await createOrtRunner(bytes);
  const model = await qwasm.loadModel(bytes);
  try {
    const [input] = model.inputs;
    const [output] = model.outputs;
    for (const seed of [7, 8]) {
      const x = randomFloats(numel(input.dims), seed, 2);
      const ref = await runner.run({ [input.name]: { type: 'float32', data: x, dims: input.dims } });
      const t0 = performance.now();
      const got = await model.run({ [input.name]: x });
      const ms = performance.now() - t0;
      const rel = assertClose(got[output.name].data, ref[output.name], 1e-4, `MobileNetV2 seed ${seed}`);
      assert.equal(argmax(got[output.name].data), argmax(ref[output.name]), `MobileNetV2 seed ${seed}: top-1`);
      console.log(`# MobileNetV2 float (${qwasm.backendInfo().isa}): ${ms.toFixed(0)} ms, max |diff| / max |ORT| = ${rel.toExponential(2)}`);
    }
  } finally {
    model.dispose();
    await runner.release();
  }
});

test('a float Conv + Relu fuse at load (the Relu applied in wasm) with the bits of the unfused pair', async () => {
  // c1 -> Relu only: fused; c2 is also read by the Add: not fused. The same graph with c1 a graph output
  // keeps the pair apart and is the reference.
  const wDims = [6, 3, 3, 3];
  const w2Dims = [6, 6, 1, 1];
  const graph = (outputs) => graphModel({
    nodes: [
      { opType: 'Conv', inputs: ['x', 'w1', 'b1'], outputs: ['c1'], attributes: { pads: [1, 1, 1, 1] } },
      { opType: 'Relu', inputs: ['c1'], outputs: ['r1'] },
      { opType: 'Conv', inputs: ['r1', 'w2'], outputs: ['c2'] },
      { opType: 'Relu', inputs: ['c2'], outputs: ['r2'] },
      { opType: 'Add', inputs: ['c2', 'r2'], outputs: ['y'] },
    ],
    inputs: [{ name: 'x', elemType: 'FLOAT', dims: [1, 3, 9, 7] }],
    initializers: [
      { name: 'w1', elemType: 'FLOAT', dims: wDims, data: randomFloats(numel(wDims), 31) },
      { name: 'b1', elemType: 'FLOAT', dims: [6], data: Float32Array.from([-0, 0, 0.5, -0.5, 1, -1]) },
      { name: 'w2', elemType: 'FLOAT', dims: w2Dims, data: randomFloats(numel(w2Dims), 32) },
    ],
    outputs: outputs.map((name) => ({ name, elemType: 'FLOAT' })),
  });
  const fused = await qwasm.loadModel(graph(['r1', 'y']));
  const apart = await qwasm.loadModel(graph(['c1', 'r1', 'y']));
  try {
    assert.deepEqual(fused.layers.map((l) => `${l.opType}${l.attributes.qwasm_relu ? '+Relu' : ''}`), ['Conv+Relu', 'Conv', 'Relu', 'Add']);
    assert.deepEqual(apart.layers.map((l) => l.opType), ['Conv', 'Relu', 'Conv', 'Relu', 'Add']);
    const x = randomFloats(3 * 9 * 7, 33, 2);
    x[0] = -0;
    x[5] = 0;
    const f = await fused.run({ x }, { intermediates: true });
    const r = await apart.run({ x });
    assert.ok(r.c1.data.some((v) => v < 0), 'c1 has negative values for the Relu to clear');
    assertBitEqual(assert, f.r1.data, r.c1.data.map((v) => (v > 0 ? v : 0)), 'r1 = relu(c1)');
    assertBitEqual(assert, f.y.data, r.y.data, 'y');
    assert.equal(f.intermediates.c1, undefined, 'the fused pre-activation tensor is not observable');
  } finally {
    fused.dispose();
    apart.dispose();
  }
});

// ---- bad inputs ---------------------------------------------------------------------------------

function convModel({ xDims, wDims, attributes = {} }) {
  return graphModel({
    nodes: [{ opType: 'Conv', inputs: ['x', 'w'], outputs: ['y'], name: 'conv', attributes }],
    inputs: [{ name: 'x', elemType: 'FLOAT', dims: xDims }],
    initializers: [{ name: 'w', elemType: 'FLOAT', dims: wDims, data: new Float32Array(numel(wDims)).fill(0.5) }],
    outputs: [{ name: 'y', elemType: 'FLOAT' }],
  });
}

async function runError(bytes, xDims) {
  const m = await qwasm.loadModel(bytes);
  try {
    await m.run({ x: { data: new Float32Array(numel(xDims)), dims: xDims } });
  } finally {
    m.dispose();
  }
}

test('float Conv rejects bad models with a named error', async () => {
  await assert.rejects(runError(convModel({ xDims: [1, 2, 5, 5], wDims: [3, 2, 3] }), [1, 2, 5, 5]),
    { name: 'UnsupportedError', message: /Conv node "conv": only 2-D convolutions are supported \(weight rank 3\)/ });
  await assert.rejects(runError(convModel({ xDims: [1, 2, 5, 5], wDims: [3, 18] }), [1, 2, 5, 5]),
    { name: 'ModelFormatError', message: /Conv node "conv": weight must have rank 4/ });
  await assert.rejects(runError(convModel({ xDims: [1, 6, 5, 5], wDims: [4, 3, 3, 3], attributes: { group: 4 } }), [1, 6, 5, 5]),
    { name: 'ModelFormatError', message: /Conv node "conv": input channels 6 and output channels 4 must be divisible by group 4/ });
  await assert.rejects(runError(convModel({ xDims: [1, 4, 5, 5], wDims: [4, 3, 3, 3] }), [1, 4, 5, 5]),
    { name: 'ModelFormatError', message: /weight shape \[4,3,3,3\] needs 3 input channels \(group 1\), the input has 4/ });
  await assert.rejects(runError(convModel({ xDims: [1, 2, 5, 5], wDims: [3, 2, 3, 3], attributes: { auto_pad: 'SAME_MIDDLE' } }), [1, 2, 5, 5]),
    { name: 'ModelFormatError', message: /Conv node "conv": attribute auto_pad has an invalid value "SAME_MIDDLE" \(one of NOTSET, SAME_UPPER, SAME_LOWER, VALID\)/ });
  await assert.rejects(runError(convModel({ xDims: [1, 2, 2, 2], wDims: [3, 2, 3, 3] }), [1, 2, 2, 2]),
    { name: 'ModelFormatError', message: /does not fit the padded input 2x2/ });
  assert.throws(() => packConv2dFloat(new Float32Array(6), [3, 2, 1], null), { name: 'RangeError', message: /packConv2dFloat: weight must be \[outChannels/ });
  assert.throws(() => packConv2dFloat(new Float32Array(18), [3, 2, 1, 3], null, { groups: 2 }), { name: 'RangeError', message: /groups must be a positive integer dividing outChannels 3/ });
});
