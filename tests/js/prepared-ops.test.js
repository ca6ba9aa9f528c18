// The prepared operators a model's layers run after their first run (ops/linear.js preparedConv2d,
// ops/elementwise.js preparedAdd): the same bytes as the public operator for every input they accept, and a refusal
// (the model then takes the public operator) for every input they were not prepared for.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { qwasm, setup } from './helpers.js';

before(setup);

test('a prepared convolution (a model layer) equals conv2d on every input it accepts, and refuses the others', async () => {
  const { preparedConv2d } = await import('../../js/ops/linear.js');
  let seed = 5;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 255;
  const [cin, cout, H, W] = [6, 10, 7, 9];
  const nhwc = (zp, scale = 0.1) =>
    qwasm.fromIntRepr(Uint8Array.from({ length: cin * H * W }, rnd), [1, H, W, cin], scale, zp, 'quint8').permute([0, 3, 1, 2]);
  const w = qwasm.fromIntRepr(Int8Array.from({ length: cout * cin * 9 }, () => rnd() - 128), [cout, cin, 3, 3], 0.03, 0, 'qint8');
  const packed = qwasm.packConv2d(w, Int32Array.from({ length: cout }, () => rnd() * 40 - 5000), { padding: 1, semantics: 'onnx' });
  const options = Object.freeze({ scale: 0.4, zeroPoint: 9, outputRange: Object.freeze([9, 200]) });
  const x0 = nhwc(100);
  const prepared = preparedConv2d(x0, packed, options);
  for (let i = 0; i < 3; i++) {
    const x = nhwc(100);
    assert.ok(prepared.accepts(x));
    const got = prepared.run(x), expected = qwasm.conv2d(x, packed, options);
    assert.deepEqual(got.shape, expected.shape);
    assert.deepEqual(got.strides, expected.strides);
    assert.equal(got.qScale(), 0.4);
    assert.equal(got.qZeroPoint(), 9);
    assert.deepEqual(got.intRepr(), expected.intRepr());
    for (const t of [x, got, expected]) t.dispose();
  }
  const nchw = qwasm.fromIntRepr(new Uint8Array(cin * H * W), [1, cin, H, W], 0.1, 100, 'quint8');
  const others = [nhwc(101), nhwc(100, 0.2), nchw, qwasm.fromIntRepr(new Uint8Array(cin * 4 * W), [1, 4, W, cin], 0.1, 100, 'quint8').permute([0, 3, 1, 2])];
  for (const t of others) assert.equal(prepared.accepts(t), false);
  assert.equal(preparedConv2d(nchw, packed, options), null); // not channels-last: conv2d's transposing path only
  prepared.dispose();
  assert.equal(prepared.accepts(x0), false);
  for (const t of [...others, x0, w]) t.dispose();
  packed.dispose();
});

test('a prepared add (a model layer) equals add on every pair it accepts, in each form, and refuses the others', async () => {
  const { preparedAdd } = await import('../../js/ops/elementwise.js');
  let seed = 3;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 255;
  const [C, H, W] = [5, 6, 7];
  const make = (layout, zp, scale = 0.1, dtype = 'quint8') => {
    const ints = Uint8Array.from({ length: C * H * W }, rnd);
    return layout === 'nhwc'
      ? qwasm.fromIntRepr(ints, [1, H, W, C], scale, zp, dtype).permute([0, 3, 1, 2])
      : qwasm.fromIntRepr(ints, [1, C, H, W], scale, zp, dtype);
  };
  for (const semantics of ['onnx', 'pytorch-qnnpack', 'pytorch-fbgemm']) {
    for (const layout of ['nhwc', 'nchw']) {
      const options = Object.freeze({ scale: 0.15, zeroPoint: 11, semantics });
      const [a0, b0] = [make(layout, 100), make(layout, 90, 0.05)];
      const prepared = preparedAdd(a0, b0, options);
      for (let i = 0; i < 3; i++) {
        const [a, b] = [make(layout, 100), make(layout, 90, 0.05)];
        assert.ok(prepared.accepts(a, b));
        const got = prepared.run(a, b), expected = qwasm.add(a, b, options);
        assert.deepEqual(got.shape, expected.shape);
        assert.deepEqual(got.strides, expected.strides);
        assert.equal(got.qScale(), 0.15);
        assert.equal(got.qZeroPoint(), 11);
        assert.deepEqual(got.intRepr(), expected.intRepr(), `${semantics} ${layout} run ${i}`);
        for (const t of [a, b, got, expected]) t.dispose();
      }
      const other = layout === 'nhwc' ? 'nchw' : 'nhwc';
      const refused = [[make(layout, 101), make(layout, 90, 0.05)], [make(layout, 100), make(layout, 90, 0.06)], [make(other, 100), make(other, 90, 0.05)]];
      for (const [a, b] of refused) assert.equal(prepared.accepts(a, b), false, `${semantics} ${layout}`);
      for (const t of [a0, b0, ...refused.flat()]) t.dispose();
    }
  }
  // operands of different shapes (a broadcast) or different layouts: no prepared add
  const [x, y] = [make('nhwc', 100), make('nchw', 100)];
  const row = qwasm.fromIntRepr(new Uint8Array(W), [1, 1, 1, W], 0.1, 0, 'quint8');
  assert.equal(preparedAdd(x, y, { scale: 0.1, zeroPoint: 0, semantics: 'onnx' }), null);
  assert.equal(preparedAdd(y, row, { scale: 0.1, zeroPoint: 0, semantics: 'onnx' }), null);
  for (const t of [x, y, row]) t.dispose();
});
