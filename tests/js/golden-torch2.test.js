// qwasm against live PyTorch 2.13 (the PyPI CPU build, FBGEMM and oneDNN inside) on its fbgemm and x86
// engines: tests/fixtures/torch2/*.json were written by tools/golden/torch2_ops.py. Public API only; every
// output is compared bit for bit.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { assertBitEqual, fixture, qwasm, setup } from './helpers.js';

before(setup);

const q = (t) => qwasm.fromIntRepr(t.q, t.shape, t.scale, t.zero_point, t.dtype);

function weightOf(w) {
  return w.qscheme === 'per_channel_affine'
    ? qwasm.fromIntReprPerChannel(w.q, w.shape, w.scales, w.zero_points, w.axis, w.dtype)
    : qwasm.fromIntRepr(w.q, w.shape, w.scale, w.zero_point, w.dtype);
}

/** Runs fn over the cases of a fixture that pass `accept`, comparing with `expected(c)`; returns the count. */
function runCases(file, accept, fn, expected = (c) => c.output.q) {
  let count = 0;
  for (const c of fixture(`torch2/${file}.json`).cases.filter((k) => accept(k))) {
    const created = [];
    const track = (t) => (created.push(t), t);
    try {
      const y = track(fn(c, track));
      assertBitEqual(assert, y.intRepr(), expected(c), `${c.name} (${c.op})`);
      assert.deepEqual(y.shape, c.output.shape, `${c.name} shape`);
      assert.equal(y.dtype, c.output.dtype);
    } finally {
      for (const t of created) t.dispose();
    }
    count++;
  }
  return count;
}

const all = () => true;

describe('linear and conv2d equal torch 2.13 (fbgemm and x86 engines)', () => {
  test("quantized Linear / LinearReLU, mode 'fbgemm' (both engines run FBGEMM)", () => {
    const n = runCases('linear', all, (c, track) => {
      const packed = track(qwasm.packLinear(track(weightOf(c.weight)), c.bias, { mode: 'fbgemm' }));
      return qwasm.linear(track(q(c.inputs[0])), packed, { scale: c.params.output_scale, zeroPoint: c.params.output_zero_point, relu: c.params.relu });
    });
    assert.ok(n >= 80, `${n} cases`);
  });

  const convOf = (c, track, mode) => {
    const p = c.params;
    const packed = track(qwasm.packConv2d(track(weightOf(c.weight)), c.bias, { stride: p.stride, padding: p.padding, dilation: p.dilation, groups: p.groups, mode }));
    return qwasm.conv2d(track(q(c.inputs[0])), packed, { scale: p.output_scale, zeroPoint: p.output_zero_point, relu: p.relu });
  };

  test("quantized Conv2d / ConvReLU2d, mode 'fbgemm': im2col GEMM and the depthwise fast path", () => {
    const n = runCases('conv2d', all, (c, track) => convOf(c, track, 'fbgemm'));
    assert.ok(n >= 60, `${n} cases`);
  });
});
