// qwasm's operators against PyTorch 1.13's qnnpack engine itself: tests/fixtures/torch/ops/*.json
// were written by tools/golden/torch_ops.py. Every output is compared bit for bit.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { assertBitEqual, fixture, fixtureTensor, fixtureWeight, qwasm, setup } from './helpers.js';

before(setup);

const q = fixtureTensor;
const weightOf = fixtureWeight;

/** Runs fn over the cases of a family whose op passes `accept`; returns how many ran. */
function runCases(family, accept, fn) {
  let count = 0;
  for (const c of fixture(`torch/ops/${family}.json`).cases.filter((k) => accept(k.op, k))) {
    const created = [];
    const track = (t) => (created.push(t), t);
    try {
      const y = track(fn(c, track));
      assertBitEqual(assert, y.intRepr(), c.output.q, `${c.name} (${c.op})`);
      assert.deepEqual(y.shape, c.output.shape, `${c.name} shape`);
      assert.equal(y.dtype, c.output.dtype);
      if (y.qscheme === 'per_tensor_affine') {
        assert.equal(Math.fround(y.qScale()), Math.fround(c.output.scale), `${c.name} output scale`);
        assert.equal(y.qZeroPoint(), c.output.zero_point, `${c.name} output zero point`);
      }
    } finally {
      for (const t of created) t.dispose();
    }
    count++;
  }
  return count;
}

describe('linear and conv2d equal torch (qnnpack engine)', () => {
  test('quantized Linear / LinearReLU', () => {
    const n = runCases('linear', () => true, (c, track) => {
      const x = track(q(c.inputs[0]));
      const w = track(weightOf(c.weight));
      const packed = track(qwasm.packLinear(w, c.bias, { mode: 'qnnpack' }));
      return qwasm.linear(x, packed, { scale: c.params.output_scale, zeroPoint: c.params.output_zero_point, relu: c.params.relu, dtype: c.output.dtype });
    });
    assert.ok(n >= 70, `${n} cases`);
  });

  test('quantized Conv2d / ConvReLU2d: groups, depthwise, stride, dilation, padding', () => {
    const n = runCases('conv2d', () => true, (c, track) => {
      const p = c.params;
      const x = track(q(c.inputs[0]));
      const w = track(weightOf(c.weight));
      const packed = track(qwasm.packConv2d(w, c.bias, { stride: p.stride, padding: p.padding, dilation: p.dilation, groups: p.groups, mode: 'qnnpack' }));
      return qwasm.conv2d(x, packed, { scale: p.output_scale, zeroPoint: p.output_zero_point, relu: p.relu, dtype: c.output.dtype });
    });
    assert.ok(n >= 70, `${n} cases`);
  });
});

describe('elementwise ops equal torch (qnnpack engine)', () => {
  test('add / add_relu (same shapes: QNNPACK / XNNPACK fixed point; broadcasting: the float kernel)', () => {
    const n = runCases('elementwise', (op) => /quantized\.add(_relu)?$/.test(op), (c, track) =>
      qwasm.add(track(q(c.inputs[0])), track(q(c.inputs[1])), { scale: c.params.scale, zeroPoint: c.params.zero_point, relu: c.params.relu }),
    );
    assert.ok(n >= 40, `${n} cases`);
  });

  test("add / add_relu with mode 'float': the x86 / onednn engines' kernel (onednn fixtures)", () => {
    const n = runCases('add_float', () => true, (c, track) =>
      qwasm.add(track(q(c.inputs[0])), track(q(c.inputs[1])), { scale: c.params.scale, zeroPoint: c.params.zero_point, relu: c.params.relu, mode: 'float' }),
    );
    assert.ok(n >= 100, `${n} cases`);
  });

  test('mul / mul_relu (broadcasting included)', () => {
    const n = runCases('elementwise', (op) => /quantized\.mul(_relu)?$/.test(op), (c, track) =>
      qwasm.mul(track(q(c.inputs[0])), track(q(c.inputs[1])), { scale: c.params.scale, zeroPoint: c.params.zero_point, relu: c.params.relu }),
    );
    assert.ok(n >= 20, `${n} cases`);
  });

  test('add and mul on channels-last operands run in storage order: the same bytes, a channels-last output', () => {
    // Convolutions return NCHW-shaped tensors stored NHWC; elementwise ops on two of them skip the
    // copies to row-major. Every mode against the row-major computation of the same values.
    let seed = 12345;
    const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 255;
    for (const [shape, dtype] of [[[1, 24, 7, 5], 'quint8'], [[2, 3, 4, 6], 'qint8'], [[1, 17, 1, 1], 'quint8']]) {
      const [n, c, h, w] = shape;
      const numel = n * c * h * w;
      const ints = (off) => (dtype === 'quint8' ? Uint8Array : Int8Array).from({ length: numel }, () => next() - off);
      const off = dtype === 'quint8' ? 0 : 128;
      const rowA = qwasm.fromIntRepr(ints(off), shape, 0.03, dtype === 'quint8' ? 120 : -5, dtype);
      const rowB = qwasm.fromIntRepr(ints(off), shape, 0.05, dtype === 'quint8' ? 131 : 7, dtype);
      const lastA = rowA.permute([0, 2, 3, 1]).contiguous();
      const lastB = rowB.permute([0, 2, 3, 1]).contiguous();
      const clA = lastA.permute([0, 3, 1, 2]);
      const clB = lastB.permute([0, 3, 1, 2]);
      const cases = [
        ['add', { mode: 'qnnpack' }], ['add', { mode: 'qnnpack', relu: true }], ['add', { mode: 'float' }], ['add', { mode: 'onnx' }],
        ['mul', { mode: 'qnnpack' }], ['mul', { mode: 'onnx' }],
      ];
      for (const [op, opts] of cases) {
        const options = { scale: 0.07, zeroPoint: dtype === 'quint8' ? 125 : 3, ...opts };
        const expected = qwasm[op](rowA, rowB, options);
        const actual = qwasm[op](clA, clB, options);
        const label = `${op} ${JSON.stringify(opts)} ${dtype} [${shape}]`;
        assert.deepEqual(actual.shape, shape, label);
        if (c > 1 && h * w > 1) assert.deepEqual([...actual.strides], [h * w * c, 1, w * c, c], label);
        assertBitEqual(assert, actual.intRepr(), expected.intRepr(), label);
        expected.dispose();
        actual.dispose();
      }
      for (const t of [rowA, rowB, lastA, lastB, clA, clB]) t.dispose();
    }
  });

  test('cat of inputs with different qparams', () => {
    const n = runCases('elementwise', (op) => op.endsWith('quantized.cat'), (c, track) =>
      qwasm.cat(c.inputs.map((t) => track(q(t))), c.params.dim, { scale: c.params.scale ?? undefined, zeroPoint: c.params.zero_point ?? undefined }),
    );
    assert.ok(n >= 5, `${n} cases`);
  });

  test('relu, relu6, hardtanh, clamp: bounds quantized with the input qparams (seed 003 included)', () => {
    const ops = ['torch.nn.functional.relu', 'torch.relu', 'torch.nn.functional.relu6', 'torch.ao.nn.quantized.ReLU6',
      'torch.ao.nn.quantized.functional.hardtanh', 'torch.clamp'];
    const n = runCases('activations', (op) => ops.includes(op), (c, track) => {
      const x = track(q(c.inputs[0]));
      if (/relu6|ReLU6/.test(c.op)) return qwasm.relu6(x);
      if (/relu$/.test(c.op)) return qwasm.relu(x);
      if (/hardtanh$/.test(c.op)) return qwasm.hardtanh(x, c.params.min_val, c.params.max_val);
      return qwasm.clamp(x, c.params.min_val, c.params.max_val);
    });
    assert.ok(n >= 30, `${n} cases`);
  });

  test('hardswish and sigmoid on quint8 (QNNPACK tables, every input integer)', () => {
    const ops = ['torch.ao.nn.quantized.Hardswish', 'torch.sigmoid', 'torch.ao.nn.quantized.Sigmoid'];
    const n = runCases('activations', (op, c) => ops.includes(op) && c.inputs[0].dtype === 'quint8', (c, track) => {
      const x = track(q(c.inputs[0]));
      return /Hardswish/.test(c.op) ? qwasm.hardswish(x, { scale: c.params.scale, zeroPoint: c.params.zero_point }) : qwasm.sigmoid(x);
    });
    assert.ok(n >= 8, `${n} cases`);
  });
});

describe('leaky_relu equals torch (generic kernel, AVX2 blocks)', () => {
  test('LeakyReLU / leaky_relu, quint8 and qint8, every input integer', () => {
    const ops = ['torch.ao.nn.quantized.LeakyReLU', 'torch.ao.nn.quantized.functional.leaky_relu', 'torch.nn.functional.leaky_relu'];
    const n = runCases('activations', (op) => ops.includes(op), (c, track) =>
      qwasm.leakyRelu(track(q(c.inputs[0])), c.params.negative_slope, { scale: c.params.scale, zeroPoint: c.params.zero_point }),
    );
    assert.ok(n >= 30, `${n} cases`);
  });
});

describe('pooling equals torch (qnnpack engine)', () => {
  const pick = (v) => (Array.isArray(v) ? v : [v, v]);
  test('max_pool2d (kernel, stride, padding, dilation, ceil_mode; qint8)', () => {
    const n = runCases('pooling', (op) => op.endsWith('max_pool2d'), (c, track) => {
      const p = c.params;
      return qwasm.maxPool2d(track(q(c.inputs[0])), { kernelSize: pick(p.kernel_size), stride: pick(p.stride), padding: pick(p.padding), dilation: pick(p.dilation), ceilMode: p.ceil_mode });
    });
    assert.ok(n >= 15, `${n} cases`);
  });

  test('avg_pool2d (QNNPACK and generic kernels, ties)', () => {
    const n = runCases('pooling', (op) => op.endsWith('.avg_pool2d'), (c, track) => {
      const p = c.params;
      return qwasm.avgPool2d(track(q(c.inputs[0])), {
        kernelSize: pick(p.kernel_size), stride: pick(p.stride), padding: pick(p.padding), ceilMode: p.ceil_mode,
        countIncludePad: p.count_include_pad, divisorOverride: p.divisor_override,
      });
    });
    assert.ok(n >= 20, `${n} cases`);
  });

  test('adaptive_avg_pool2d (dividing and non-dividing sizes)', () => {
    const n = runCases('pooling', (op) => op.endsWith('adaptive_avg_pool2d'), (c, track) => qwasm.adaptiveAvgPool2d(track(q(c.inputs[0])), c.params.output_size));
    assert.ok(n >= 14, `${n} cases`);
  });

  test("mean over [2, 3] of qint8 (any engine) and of quint8 in mode 'generic' (onednn): rint((float)sum(q) / n)", () => {
    // tests/fixtures/torch/checks113.json (tools/golden/torch113_checks.py): sums on exact .5 steps, odd zero points.
    const cases = fixture('torch/checks113.json').mean;
    for (const c of cases) {
      const x = qwasm.fromIntRepr(c.q, c.shape, c.scale, c.zero_point, c.dtype);
      const y = qwasm.mean(x, [2, 3], true, { mode: c.engine === 'qnnpack' ? 'qnnpack' : 'generic' });
      const label = `${c.engine} ${c.dtype} [${c.shape}] zp ${c.zero_point}`;
      assertBitEqual(assert, y.intRepr(), c.output.q, label);
      assert.equal(y.qZeroPoint(), c.output.zero_point, label);
      x.dispose();
      y.dispose();
    }
    assert.equal(cases.length, 15);
  });

  test('mean over dims [2, 3] (global average pooling)', () => {
    const n = runCases('pooling', (op, c) => op === 'torch.mean' && c.params.dim.join() === '2,3', (c, track) => qwasm.mean(track(q(c.inputs[0])), c.params.dim, c.params.keepdim));
    assert.ok(n >= 8, `${n} cases`);
  });
});
