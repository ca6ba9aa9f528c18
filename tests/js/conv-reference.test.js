// conv2d's im2col path against a direct loop over the definition: exact int32 sums (ConvInteger,
// mode 'none') for every small channel count, kernel size, stride, padding and grouping, so every
// length of the short runs that im2col copies (1 to 48 bytes) is exercised, borders included.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { qwasm, setup } from './helpers.js';

before(setup);

test('conv2d (im2col) equals the direct sum for 1-12 input channels, kernels 1-4, strides, padding, groups', () => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 255;
  let convs = 0;
  for (let cin = 1; cin <= 12; cin++) {
    for (const k of [1, 2, 3, 4]) {
      for (const [stride, pad] of [[1, 0], [1, 1], [2, 1], [2, 2], [1, 2]]) {
        for (const groups of cin % 2 === 0 ? [1, 2] : [1]) {
          const H = 9, W = 11, cout = 4 * groups, cg = cin / groups;
          const xi = Uint8Array.from({ length: cin * H * W }, rnd);
          const wi = Int8Array.from({ length: cout * cg * k * k }, () => rnd() - 128);
          const x = qwasm.fromIntRepr(xi, [1, cin, H, W], 0.1, 100, 'quint8');
          const w = qwasm.fromIntRepr(wi, [cout, cg, k, k], 0.1, 3, 'qint8');
          const packed = qwasm.packConv2d(w, null, { stride, padding: pad, groups, mode: 'none' });
          const y = qwasm.convInteger(x, packed);
          const got = y.intRepr();
          const expected = directSums(xi, wi, [cin, H, W], [cout, k], stride, pad, 100, 3, groups);
          assert.deepEqual(got, expected, `cin ${cin} k ${k} stride ${stride} pad ${pad} groups ${groups}`);
          for (const t of [x, w, packed, y]) t.dispose();
          convs++;
        }
      }
    }
  }
  assert.ok(convs > 300, `${convs} convolutions`);
});

/**
 * sum_c,ky,kx (x - xZp)(w - wZp) of a [1, cin, H, W] x [cout, cin / groups, k, k] convolution, NCHW order: the
 * definition, padding read as xZp.
 */
function directSums(xi, wi, [cin, H, W], [cout, k], stride, pad, xZp, wZp, groups = 1) {
  const OH = Math.floor((H + 2 * pad - k) / stride) + 1, OW = Math.floor((W + 2 * pad - k) / stride) + 1;
  const cg = cin / groups, og = cout / groups;
  const out = new Int32Array(cout * OH * OW);
  for (let o = 0; o < cout; o++) {
    const g = Math.floor(o / og);
    for (let oy = 0; oy < OH; oy++) {
      for (let ox = 0; ox < OW; ox++) {
        let s = 0;
        for (let c = 0; c < cg; c++) {
          for (let ky = 0; ky < k; ky++) {
            for (let kx = 0; kx < k; kx++) {
              const iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
              const xv = iy < 0 || iy >= H || ix < 0 || ix >= W ? xZp : xi[((g * cg + c) * H + iy) * W + ix];
              s += (xv - xZp) * (wi[((o * cg + c) * k + ky) * k + kx] - wZp);
            }
          }
        }
        out[(o * OH + oy) * OW + ox] = s;
      }
    }
  }
  return out;
}

test('one packed convolution called with changing input sizes and options: every call its own result', () => {
  // The packed weights keep the last call's geometry (output shape, the C shape struct) and the spec of the last
  // frozen options object: each change of size or options must be seen.
  let seed = 11;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 255;
  const cin = 5, cout = 9, k = 3;
  const wi = Int8Array.from({ length: cout * cin * k * k }, () => rnd() - 128);
  const w = qwasm.fromIntRepr(wi, [cout, cin, k, k], 0.02, 0, 'qint8');
  const sums = qwasm.packConv2d(w, null, { stride: 2, padding: 1, mode: 'none' });
  const requantizing = qwasm.packConv2d(w, null, { stride: 2, padding: 1, semantics: 'onnx' });
  const frozenA = Object.freeze({ scale: 0.5, zeroPoint: 7 });
  const frozenB = Object.freeze({ scale: 0.25, zeroPoint: 120, clampMin: 0, clampMax: 20 });
  const loose = { scale: 0.5, zeroPoint: 7 };
  for (const [H, W, options] of [[8, 8, frozenA], [13, 6, frozenB], [8, 8, frozenA], [5, 17, loose], [13, 6, frozenA], [5, 17, loose]]) {
    const xi = Uint8Array.from({ length: cin * H * W }, rnd);
    const x = qwasm.fromIntRepr(xi, [1, cin, H, W], 0.1, 100, 'quint8');
    const y = qwasm.convInteger(x, sums);
    assert.deepEqual(y.intRepr(), directSums(xi, wi, [cin, H, W], [cout, k], 2, 1, 100, 0), `sums, input ${H}x${W}`);
    // the same call on weights packed afresh (no kept state), options copied: the reference for the kept state
    const fresh = qwasm.packConv2d(w, null, { stride: 2, padding: 1, semantics: 'onnx' });
    const expected = qwasm.conv2d(x, fresh, { ...options });
    const got = qwasm.conv2d(x, requantizing, options);
    assert.deepEqual(got.shape, expected.shape);
    assert.deepEqual(got.intRepr(), expected.intRepr(), `requantized, input ${H}x${W}, options ${JSON.stringify(options)}`);
    assert.equal(got.qScale(), options.scale);
    loose.scale *= 2; // a mutable options object is read afresh on every call
    for (const t of [x, y, fresh, expected, got]) t.dispose();
  }
  sums.dispose();
  assert.throws(() => qwasm.convInteger(qwasm.fromIntRepr(new Uint8Array(cin * 64), [1, cin, 8, 8], 1, 0, 'quint8'), sums), /disposed/);
  requantizing.dispose();
  w.dispose();
});
