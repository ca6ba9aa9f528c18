// Semantics profiles (js/semantics.js): one table says which form of each family every reference computes; every
// operator, the model loader and quantizeStatic take { semantics } from it, with `mode` / `rounding` overrides.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { FORMS, PROFILES, semanticsOf } from '../../js/semantics.js';
import { assertBitEqual, failOnLeaks, qwasm, using } from './helpers.js';

failOnLeaks(before, afterEach);

const FAMILIES = Object.keys(FORMS);

test('every profile names a known form for every family, and the package exports the table', () => {
  assert.deepEqual(Object.keys(PROFILES), ['pytorch-qnnpack', 'pytorch2-qnnpack', 'pytorch-fbgemm', 'pytorch-x86', 'onnx', 'tflite']);
  for (const [name, profile] of Object.entries(PROFILES)) {
    assert.equal(typeof profile.reference, 'string');
    for (const family of FAMILIES) assert.ok(Object.hasOwn(FORMS[family], profile[family]), `${name}.${family} = ${profile[family]}`);
  }
  assert.equal(qwasm.SEMANTICS, PROFILES);
  assert.equal(qwasm.SEMANTICS_FORMS, FORMS);
  assert.ok(Object.isFrozen(PROFILES['pytorch-qnnpack']));
});

test('a form override wins over the profile; unknown names and missing kernels are named errors', () => {
  assert.equal(semanticsOf({ semantics: 'pytorch-fbgemm' }, 'f').form('requantization'), 'fbgemm');
  assert.equal(semanticsOf({ semantics: 'onnx' }, 'f').form('requantization', 'fixedpoint'), 'fixedpoint');
  assert.equal(semanticsOf({}, 'f', 'pytorch-qnnpack').form('add', 'fbgemm'), 'fbgemm');
  assert.equal(semanticsOf({}, 'f', 'onnx').form('mul', 'qnnpack'), 'pytorch'); // an earlier name of the form
  assert.equal(semanticsOf({}, 'f', 'onnx').form('leakyRelu', 'float'), 'generic');
  assert.throws(() => semanticsOf({ semantics: 'pytorch' }, 'add'), /add: unknown semantics 'pytorch'; expected one of 'pytorch-qnnpack', 'pytorch2-qnnpack', 'pytorch-fbgemm', 'pytorch-x86', 'onnx', 'tflite'/);
  assert.throws(() => semanticsOf({ semantics: 'tflite' }, 'add').form('add'),
    { name: 'UnsupportedError', message: /add: the 'tflite' semantics' add form \(TFLite's fixed-point add .*\) is not implemented/ });
  assert.throws(() => semanticsOf({}, 'mul', 'onnx').form('mul', 'tflite'), { name: 'UnsupportedError', message: /mul: the mul form 'tflite'/ });
});

test('quantize takes its rounding rule from the semantics (seed 000\'s tie: 128 by PyTorch, 127 by ONNX)', () => {
  const x = [0.273939937];
  const s = 0.00214854861;
  const q = (options) => using(qwasm.quantizePerTensor(x, [1], s, 0, 'qint32', options))((t) => t.intRepr()[0]);
  assert.equal(q({}), 128);
  assert.equal(q({ semantics: 'pytorch-fbgemm' }), 128);
  assert.equal(q({ semantics: 'onnx' }), 127);
  assert.equal(q({ semantics: 'onnx', rounding: 'torch' }), 128);
  assert.throws(() => q({ semantics: 'tflite' }), { name: 'UnsupportedError', message: /quantizePerTensor: the 'tflite' semantics' rounding form/ });
});

function addBoth(options, mulOptions = options) {
  return using(
    qwasm.quantizePerTensor([0.1, 2.5, -1, 3.14, 0.7, 1.9], [2, 3], 0.02, 100, 'quint8'),
    qwasm.quantizePerTensor([0.3, -0.5, 1.75], [3], 0.031, 90, 'quint8'),
  )((a, b) => ({
    add: using(qwasm.add(a, b, { scale: 0.05, zeroPoint: 60, ...options }))((y) => y.intRepr()),
    mul: using(qwasm.mul(a, b, { scale: 0.05, zeroPoint: 60, ...mulOptions }))((y) => y.intRepr()),
  }));
}

test('add and mul: semantics pick the same kernels as the equivalent modes', () => {
  const fbgemm = addBoth({ semantics: 'pytorch-fbgemm' });
  assertBitEqual(assert, fbgemm.add, addBoth({ mode: 'fbgemm' }, {}).add, "semantics 'pytorch-fbgemm' = mode 'fbgemm'");
  assertBitEqual(assert, addBoth({ semantics: 'pytorch-x86' }).add, fbgemm.add, 'the x86 engine adds as the fbgemm engine');
  const onnx = addBoth({ semantics: 'onnx' });
  assertBitEqual(assert, onnx.add, addBoth({ mode: 'onnx' }).add, 'onnx add');
  assertBitEqual(assert, onnx.mul, addBoth({ mode: 'onnx' }).mul, 'onnx mul');
  assertBitEqual(assert, fbgemm.mul, addBoth({}).mul, "PyTorch's mul is one formula on every engine");
  assertBitEqual(assert, addBoth({ semantics: 'pytorch-fbgemm', mode: 'onnx' }).add, onnx.add, 'a mode overrides the profile');
});

test('linear / conv2d: the packing records the semantics\' requantization form; a call may override it', () => {
  using(
    qwasm.quantizePerTensor([0.5, -0.25, 0.125, 1, -1, 0.75], [2, 3], 0.01, 0, 'qint8'),
    qwasm.quantizePerTensor([0.2, 0.4, -0.6], [1, 3], 0.01, 128, 'quint8'),
  )((w, x) => {
    const packs = ['pytorch-qnnpack', 'pytorch-fbgemm', 'onnx', 'tflite'].map((semantics) =>
      qwasm.packLinear(w, semantics === 'onnx' ? Int32Array.of(7, -9) : [0.07, -0.09], { semantics }));
    try {
      assert.deepEqual(packs.map((p) => p.mode), ['qnnpack', 'fbgemm', 'onnx', 'fixedpoint']);
      const out = { scale: 0.003, zeroPoint: 120 };
      const viaMode = qwasm.packLinear(w, [0.07, -0.09], { mode: 'fixedpoint' });
      try {
        assertBitEqual(assert, using(qwasm.linear(x, packs[3], out))((y) => y.intRepr()), using(qwasm.linear(x, viaMode, out))((y) => y.intRepr()), 'tflite = fixedpoint');
      } finally {
        viaMode.dispose();
      }
      assertBitEqual(assert, using(qwasm.linear(x, packs[0], { ...out, semantics: 'pytorch-fbgemm' }))((y) => y.intRepr()),
        using(qwasm.linear(x, packs[1], out))((y) => y.intRepr()), 'call-time semantics');
    } finally {
      for (const p of packs) p.dispose();
    }
  });
});

test("semantics 'pytorch-x86' picks oneDNN for convolutions with symmetric weights, FBGEMM for the rest", () => {
  using(
    qwasm.quantizePerTensor([0.5, -0.25, 0.125, 1], [1, 1, 2, 2], 0.01, 0, 'qint8'),
    qwasm.quantizePerTensor([0.5, -0.25, 0.125, 1], [1, 1, 2, 2], 0.01, 3, 'qint8'),
    qwasm.quantizePerTensor([0.5, -0.25, 0.125, 1], [4, 1], 0.01, 0, 'qint8'),
  )((symmetric, affine, w2) => {
    const packs = [
      qwasm.packConv2d(symmetric, null, { semantics: 'pytorch-x86' }),
      qwasm.packConv2d(affine, null, { semantics: 'pytorch-x86' }),
      qwasm.packLinear(w2, null, { semantics: 'pytorch-x86' }),
      qwasm.packConv2d(symmetric, null, { semantics: 'pytorch-fbgemm' }),
    ];
    try {
      assert.deepEqual(packs.map((p) => p.mode), ['onednn', 'fbgemm', 'fbgemm', 'fbgemm']);
    } finally {
      for (const p of packs) p.dispose();
    }
  });
});

test('linear / conv2d on weights packed for the exact int32 sums need no options', () => {
  using(
    qwasm.fromIntRepr([1, 2, 3, -4, 5, -6], [2, 3], 1, 0, 'qint8'),
    qwasm.fromIntRepr([10, 20, 30], [1, 3], 1, 0, 'quint8'),
    qwasm.fromIntRepr([1, -1, 2, 3], [1, 1, 2, 2], 1, 0, 'qint8'),
    qwasm.fromIntRepr([1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 1, 3, 3], 1, 0, 'quint8'),
  )((w, x, cw, cx) => {
    const packed = qwasm.packLinear(w, null, { mode: 'none' });
    const packedConv = qwasm.packConv2d(cw, null, { mode: 'none' });
    try {
      using(qwasm.linear(x, packed))((y) => assert.deepEqual(Array.from(y.intRepr()), [140, -120]));
      using(qwasm.conv2d(cx, packedConv))((y) => assert.deepEqual(Array.from(y.intRepr()), [1 - 2 + 8 + 15, 2 - 3 + 10 + 18, 4 - 5 + 14 + 24, 5 - 6 + 16 + 27]));
      assert.throws(() => qwasm.linear(x, packed, { semantics: 'onnx' }), /linear: scale must be a finite number > 0/);
    } finally {
      packed.dispose();
      packedConv.dispose();
    }
  });
});

test('a model runs in the semantics its file names or the caller asks for; a form without a kernel fails at load', async () => {
  const bytes = new Uint8Array(readFileSync(new URL('../../models/digits.onnx', import.meta.url)));
  const model = await qwasm.loadModel(bytes);
  assert.equal(model.semantics, 'pytorch-qnnpack');
  model.dispose();
  await assert.rejects(qwasm.loadModel(bytes, { semantics: 'tflite' }),
    { name: 'UnsupportedError', message: /^QuantizeLinear node ".*": loadModel: the 'tflite' semantics' rounding form .* is not implemented$/ });
  await assert.rejects(qwasm.loadModel(bytes, { semantics: 'fbgemm' }), { name: 'UnsupportedError', message: /unknown semantics 'fbgemm'/ });
});

test('QTensor hands its raw fields to nobody outside the package', () => {
  using(qwasm.quantizePerTensor([1], [1], 1, 0, 'quint8'))((t) => {
    assert.equal(qwasm.QTensor[Symbol.for('qwasm.raw')], undefined);
    assert.deepEqual(Object.getOwnPropertySymbols(qwasm.QTensor), []);
  });
});
