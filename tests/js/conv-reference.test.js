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
          const H = 9, W = 11, cout = 4 * groups, cg = cin / groups, og = cout / groups;
          const xi = Uint8Array.from({ length: cin * H * W }, rnd);
          const wi = Int8Array.from({ length: cout * cg * k * k }, () => rnd() - 128);
          const x = qwasm.fromIntRepr(xi, [1, cin, H, W], 0.1, 100, 'quint8');
          const w = qwasm.fromIntRepr(wi, [cout, cg, k, k], 0.1, 3, 'qint8');
          const packed = qwasm.packConv2d(w, null, { stride, padding: pad, groups, mode: 'none' });
          const y = qwasm.convInteger(x, packed);
          const [, , OH, OW] = y.shape;
          const got = y.intRepr();
          const expected = new Int32Array(cout * OH * OW);
          for (let o = 0; o < cout; o++) {
            const g = Math.floor(o / og);
            for (let oy = 0; oy < OH; oy++) {
              for (let ox = 0; ox < OW; ox++) {
                let s = 0;
                for (let c = 0; c < cg; c++) {
                  for (let ky = 0; ky < k; ky++) {
                    for (let kx = 0; kx < k; kx++) {
                      const iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                      const xv = iy < 0 || iy >= H || ix < 0 || ix >= W ? 100 : xi[((g * cg + c) * H + iy) * W + ix];
                      s += (xv - 100) * (wi[((o * cg + c) * k + ky) * k + kx] - 3);
                    }
                  }
                }
                expected[(o * OH + oy) * OW + ox] = s;
              }
            }
          }
          assert.deepEqual(got, expected, `cin ${cin} k ${k} stride ${stride} pad ${pad} groups ${groups}`);
          for (const t of [x, w, packed, y]) t.dispose();
          convs++;
        }
      }
    }
  }
  assert.ok(convs > 300, `${convs} convolutions`);
});
