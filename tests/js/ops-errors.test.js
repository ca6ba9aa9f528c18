// The operators' argument checking: every bad input gives an Error naming the function, the
// argument and the value; packed weights are disposable and fail clearly after; nothing leaks.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import { failOnLeaks, qwasm, using } from './helpers.js';

failOnLeaks(before, afterEach);

const t = (n, shape, scale = 0.1, zp = 0, dtype = 'quint8') => qwasm.fromIntRepr(new Array(n).fill(dtype === 'quint8' ? 3 : -3), shape, scale, zp, dtype);

const out = { scale: 0.1, zeroPoint: 0 };

test('linear and packLinear', () => {
  using(t(6, [2, 3]), t(12, [4, 3], 0.05, 0, 'qint8'), t(5, [5], 0.05, 0, 'qint8'))((x, w, w1) => {
    assert.throws(() => qwasm.packLinear(w1), /packLinear: weight must be \[outFeatures, inFeatures\], got shape \[5\]/);
    assert.throws(() => qwasm.packLinear(w, [1, 2]), /packLinear: bias has 2 elements but 4 are needed/);
    assert.throws(() => qwasm.packLinear(w, null, { mode: 'tflite' }), /packLinear: unknown requantization form 'tflite'; expected one of 'qnnpack', 'fbgemm', 'onednn', 'x86', 'onnx', 'fixedpoint', 'none', or \{ semantics: 'pytorch-qnnpack' \| 'pytorch2-qnnpack' \| 'pytorch-fbgemm' \| 'pytorch-x86' \| 'onnx' \| 'tflite' \}/);
    assert.throws(() => qwasm.packLinear(w, [1, 2, 3, 4], { mode: 'onnx' }), /packLinear: mode 'onnx' takes an int32 bias/);
    assert.throws(() => qwasm.packLinear([1, 2]), /packLinear: weight must be a QTensor/);
    using(qwasm.packLinear(w, [1, 2, 3, 4]))((p) => {
      assert.throws(() => qwasm.linear(x, w, out), /linear: weights must come from packLinear\(\)/);
      assert.throws(() => qwasm.linear(x, p, { scale: 0, zeroPoint: 0 }), /linear: scale must be a finite number > 0/);
      assert.throws(() => qwasm.linear(x, p, { scale: 0.1, zeroPoint: 300 }), /linear: zeroPoint must be an integer in \[0, 255\] for quint8, got 300/);
      assert.throws(() => qwasm.linear(x, p, { scale: 0.1, zeroPoint: 0, dtype: 'qint32' }), /linear: the output dtype must be quint8 or qint8/);
      assert.throws(() => qwasm.linear(x, p, { scale: 0.1, zeroPoint: 0, relu: 'yes' }), /linear: relu must be a boolean, got "yes"/);
      assert.throws(() => qwasm.linear(x, p, null), /linear: options must be \{ scale, zeroPoint, \.\.\. \}, got null/);
      using(t(8, [2, 4]))((x4) => assert.throws(() => qwasm.linear(x4, p, out), /linear: input shape \[2,4\] must end in inFeatures = 3/));
      const y = qwasm.linear(x, p, out);
      assert.deepEqual(y.shape, [2, 4]);
      y.dispose();
      p.dispose();
      p.dispose();
      assert.equal(p.disposed, true);
      assert.throws(() => qwasm.linear(x, p, out), /PackedLinear: the packed weights were disposed/);
    });
  });
});

test('conv2d and packConv2d', () => {
  using(t(2 * 3 * 5 * 5, [2, 3, 5, 5]), t(4 * 3 * 9, [4, 3, 3, 3], 0.05, 0, 'qint8'))((x, w) => {
    assert.throws(() => qwasm.packConv2d(w, null, { groups: 3 }), /packConv2d: groups must be a positive integer dividing outChannels 4, got 3/);
    assert.throws(() => qwasm.packConv2d(w, null, { stride: 0 }), /packConv2d: stride must be an integer in \[1, 2\^31 - 1\] or \[h, w\] of them, got 0/);
    assert.throws(() => qwasm.packConv2d(w, null, { padding: [1, -1] }), /packConv2d: padding must be an integer in \[0, 2\^31 - 1\] or \[h, w\] of them, got \[1,-1\]/);
    using(qwasm.packConv2d(w, null, { padding: 1 }), qwasm.packConv2d(w, null, { dilation: 3 }))((p, dilated) => {
      using(t(2 * 4 * 5 * 5, [2, 4, 5, 5]))((x4) => assert.throws(() => qwasm.conv2d(x4, p, out), /conv2d: input must be \[N, 3, H, W\], got shape \[2,4,5,5\]/));
      assert.throws(() => qwasm.conv2d(x, dilated, out), /conv2d: the kernel 3x3 \(dilation 3,3\) does not fit the padded input 5x5/);
      const y = qwasm.conv2d(x, p, { ...out, relu: true });
      assert.deepEqual(y.shape, [2, 4, 5, 5]);
      assert.deepEqual(y.strides, [100, 1, 20, 4], 'stored channels-last');
      y.dispose();
    });
  });
});

test('matmul, add, mul, cat', () => {
  using(t(6, [2, 3]), t(12, [3, 4], 0.05, 0, 'qint8'), t(8, [2, 4]), t(6, [2, 3], 0.1, 0, 'qint8'), t(6, [3, 2]))((a, b, c, s8, d) => {
    assert.throws(() => qwasm.matmul(a, c, { ...out, mode: 'onnx' }), /matmul: a \[\.\.\., 2, 3\] and b \[\.\.\., 2, 4\] do not multiply/);
    assert.throws(() => qwasm.add(a, s8, out), /add: a is quint8 but b is qint8; they must match/);
    assert.throws(() => qwasm.add(a, c, out), /add: shapes \[2,3\] and \[2,4\] do not broadcast/);
    assert.throws(() => qwasm.add(a, a, { ...out, mode: 'exact' }), /add: unknown add form 'exact'; expected one of 'qnnpack', 'float', 'fbgemm', 'qnnpack2', 'onnx', 'tflite'/);
    assert.throws(() => qwasm.add(a, a, { ...out, relu: true, mode: 'onnx' }), /add: relu is not part of the 'onnx' add \(QLinearAdd\)/);
    assert.throws(() => qwasm.mul(a, a, { ...out, mode: 'float' }), /mul: unknown mul form 'float'; expected one of 'pytorch', 'onnx', 'tflite', 'qnnpack'/);
    assert.throws(() => qwasm.add(a, a, { scale: 1e-6, zeroPoint: 0 }), /add: scale ratios .* must lie in \[2\^-14, 2\^8\)/);
    assert.throws(() => qwasm.mul(a, d, out), /mul: shapes \[2,3\] and \[3,2\] do not broadcast/);
    assert.throws(() => qwasm.cat([a, c], 0, out), /cat: tensors\[1\] has shape \[2,4\], which does not match \[2,3\] outside dim 0/);
    assert.throws(() => qwasm.cat([], 0, out), /cat: tensors must be a non-empty array of QTensors/);
    assert.throws(() => qwasm.cat([a, a], 2, out), /cat: dim must be an integer in \[-2, 1\], got 2/);
    assert.throws(() => qwasm.hardtanh(a, 2, 1), /hardtanh: minValue 2 is greater than maxValue 1/);
    assert.throws(() => qwasm.hardswish(s8, out), /hardswish: only quint8 input is supported/);
    assert.throws(() => qwasm.leakyRelu(a, 'x'), /leakyRelu: negativeSlope must be a finite number, got "x"/);
    const y = qwasm.cat([a, a], 1);
    assert.deepEqual(y.shape, [2, 6]);
    assert.equal(y.qScale(), 0.1, 'without output qparams cat keeps the first input\'s');
    y.dispose();
  });
});

test('pooling', () => {
  using(t(1 * 2 * 6 * 6, [1, 2, 6, 6]), t(6, [2, 3]))((x, flat) => {
    assert.throws(() => qwasm.maxPool2d(flat, { kernelSize: 2 }), /maxPool2d: input must be \[N, C, H, W\], got shape \[2,3\]/);
    assert.throws(() => qwasm.maxPool2d(x, { kernelSize: 2, padding: 2 }), /maxPool2d: kernel 2, stride 2, padding 2, dilation 1 do not fit input size 6 along H \(padding must be at most half the kernel\)/);
    assert.throws(() => qwasm.avgPool2d(x, { kernelSize: 2, divisorOverride: 0 }), /avgPool2d: divisorOverride must be a positive integer, got 0/);
    assert.throws(() => qwasm.adaptiveAvgPool2d(x, 0), /adaptiveAvgPool2d: outputSize must be an integer in \[1, 2\^31 - 1\] or \[h, w\] of them, got 0/);
    assert.throws(() => qwasm.mean(x, [1, 2]), /mean: only dims \[2, 3\] \(global average pooling\) are supported, got \[1,2\]/);
    const y = qwasm.mean(x, [2, 3]);
    assert.deepEqual(y.shape, [1, 2]);
    y.dispose();
  });
});
