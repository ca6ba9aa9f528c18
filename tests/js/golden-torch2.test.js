// qwasm against live PyTorch 2.13 (the PyPI CPU build, FBGEMM and oneDNN inside) on its fbgemm and x86
// engines: tests/fixtures/torch2/*.json were written by tools/golden/torch2_ops.py. Public API only; every
// output is compared bit for bit.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { assertBitEqual, fixture, fixtureTensor, fixtureWeight, qwasm, setup } from './helpers.js';

before(setup);

const q = fixtureTensor;
const weightOf = fixtureWeight;

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

describe("quantize with rounding 'fbgemm' equals torch 2.13 on 1.13's inputs (zero point added before rounding)", () => {
  const q113 = fixture('torch/quantize.json');
  const replay = fixture('torch2/replay.json');
  // The valid scales qwasm accepts (PyTorch checks none; docs/quantization.md "Which scales are accepted").
  const validScale = (s) => Number.isFinite(Math.fround(s)) && Math.fround(s) > 0 && Number.isFinite(Math.fround(1 / Math.fround(s)));

  test('quantize_per_tensor: every 1.13 case, with 2.13 results where they changed', () => {
    const changed = new Map(replay.quantize_per_tensor.map((c) => [`${c.name} ${c.dtype} ${c.zero_point}`, c]));
    let checked = 0, moved = 0;
    for (const c of q113.per_tensor) {
      if (!validScale(c.scale)) continue;
      const key = `${c.name} ${c.dtype} ${c.zero_point}`;
      const want = changed.get(key)?.q ?? c.q;
      if (changed.has(key)) moved += changed.get(key).changed.length;
      const t = qwasm.quantizePerTensor(c.input, [c.input.length], c.scale, c.zero_point, c.dtype, { rounding: 'fbgemm' });
      assertBitEqual(assert, t.intRepr(), want, key);
      t.dispose();
      checked++;
    }
    assert.ok(checked >= 110 && moved >= 280, `${checked} cases, ${moved} changed elements`);
  });

  test('quantize_per_channel (two float roundings) and requantize', () => {
    const changed = new Map(replay.quantize_per_channel.map((c) => [`${c.name} ${c.dtype}`, c]));
    for (const c of q113.per_channel) {
      const t = qwasm.quantizePerChannel(c.input, c.shape, c.scales, c.zero_points, c.axis, c.dtype, { rounding: 'fbgemm' });
      assertBitEqual(assert, t.intRepr(), changed.get(`${c.name} ${c.dtype}`)?.q ?? c.q, `${c.name} ${c.dtype}`);
      t.dispose();
    }
    assert.equal(changed.size + replay.unchanged.quantize_per_channel, q113.per_channel.length);
    const reChanged = new Map(replay.requantize.map((c) => [c.name, c])); // requantize names are unique
    for (const c of q113.requantize) {
      const src = qwasm.fromIntRepr(c.q_in, [c.q_in.length], c.src_scale, c.src_zero_point, c.src_dtype);
      const y = src.requantize(c.dst_scale, c.dst_zero_point, c.dst_dtype, { rounding: 'fbgemm' });
      assertBitEqual(assert, y.intRepr(), reChanged.get(c.name)?.q_out ?? c.q_out, c.name);
      src.dispose();
      y.dispose();
    }
  });
});

describe('elementwise ops equal torch 2.13 (fbgemm and x86 engines, the same generic kernels)', () => {
  const binary = (op, options) => (c, track) =>
    qwasm[op](track(q(c.inputs[0])), track(q(c.inputs[1])), { scale: c.params.scale, zeroPoint: c.params.zero_point, relu: c.params.relu, ...options });

  test("add / add_relu, mode 'fbgemm': vector blocks of 64, the scalar tail adds the zero point before rounding", () => {
    const n = runCases('elementwise', (c) => /quantized\.add(_relu)?$/.test(c.op), binary('add', { mode: 'fbgemm' }));
    assert.ok(n >= 40, `${n} cases`);
  });

  test('mul / mul_relu (unchanged from 1.13)', () => {
    const n = runCases('elementwise', (c) => /quantized\.mul(_relu)?$/.test(c.op), binary('mul', {}));
    assert.ok(n >= 8, `${n} cases`);
  });

  test("cat of inputs with different qparams, rounding 'fbgemm' (quantize_per_tensor of the dequantized cat)", () => {
    const n = runCases('elementwise', (c) => c.op.endsWith('quantized.cat'), (c, track) =>
      qwasm.cat(c.inputs.map((t) => track(q(t))), c.params.dim, { scale: c.params.scale, zeroPoint: c.params.zero_point, rounding: 'fbgemm' }));
    assert.ok(n >= 7, `${n} cases`);
  });
});

describe('activations equal torch 2.13 (generic kernels: vector blocks of 64, FBGEMM-rounded tails)', () => {
  const x0 = (c, track) => track(q(c.inputs[0]));
  const ops = {
    relu: (c, x) => qwasm.relu(x),
    relu6: (c, x) => qwasm.relu6(x, { rounding: 'fbgemm' }),
    hardtanh: (c, x) => qwasm.hardtanh(x, c.params.min_val, c.params.max_val, { rounding: 'fbgemm' }),
    clamp: (c, x) => qwasm.clamp(x, c.params.min_val, c.params.max_val, { rounding: 'fbgemm' }),
    hardswish: (c, x) => qwasm.hardswish(x, { scale: c.params.scale, zeroPoint: c.params.zero_point, mode: 'fbgemm' }),
    leaky_relu: (c, x) => qwasm.leakyRelu(x, c.params.negative_slope, { scale: c.params.scale, zeroPoint: c.params.zero_point, mode: 'fbgemm' }),
    sigmoid: (c, x) => qwasm.sigmoid(x, { mode: 'fbgemm' }),
  };
  for (const [name, fn] of Object.entries(ops)) {
    test(`${name}, quint8 and qint8`, () => {
      const n = runCases('activations', (c) => c.name.replace(/_(ties_)?\d.*$/, '') === name, (c, track) => {
        const y = fn(c, x0(c, track));
        assert.equal(Math.fround(y.qScale()), Math.fround(c.output.scale), `${c.name}: output scale`);
        assert.equal(y.qZeroPoint(), c.output.zero_point, `${c.name}: output zero point`);
        return y;
      });
      assert.ok(n >= 3, `${n} cases`);
    });
  }
});

describe("pooling equals torch 2.13 (mode 'fbgemm': the generic kernels, never QNNPACK)", () => {
  const pick = (v) => (Array.isArray(v) ? v : [v, v]);
  test('max_pool2d: window positions outside the input skipped (dilation meets padding)', () => {
    const n = runCases('pooling', (c) => c.op.endsWith('max_pool2d'), (c, track) => {
      const p = c.params;
      return qwasm.maxPool2d(track(q(c.inputs[0])), { kernelSize: pick(p.kernel_size), stride: pick(p.stride), padding: pick(p.padding), dilation: pick(p.dilation), ceilMode: p.ceil_mode, mode: 'fbgemm' });
    });
    assert.ok(n >= 14, `${n} cases`);
  });

  test('avg_pool2d: count_include_pad and divisor_override honoured; C == 1 takes the channels-last scalar loop', () => {
    const n = runCases('pooling', (c) => c.op.endsWith('.avg_pool2d'), (c, track) => {
      const p = c.params;
      return qwasm.avgPool2d(track(q(c.inputs[0])), {
        kernelSize: pick(p.kernel_size), stride: pick(p.stride), padding: pick(p.padding), ceilMode: p.ceil_mode,
        countIncludePad: p.count_include_pad, divisorOverride: p.divisor_override, mode: 'fbgemm',
      });
    });
    assert.ok(n >= 16, `${n} cases`);
  });

  test('adaptive_avg_pool2d and mean over [2, 3]', () => {
    const n = runCases('pooling', (c) => c.op.endsWith('adaptive_avg_pool2d'), (c, track) => qwasm.adaptiveAvgPool2d(track(q(c.inputs[0])), c.params.output_size, { mode: 'fbgemm' }));
    const m = runCases('pooling', (c) => c.op === 'torch.mean', (c, track) => qwasm.mean(track(q(c.inputs[0])), [2, 3], true, { mode: 'fbgemm' }));
    assert.ok(n >= 10 && m >= 8, `${n} adaptive, ${m} mean cases`);
  });
});

describe('dynamic linear (torch.ao.nn.quantized.dynamic.Linear): dynamicLinear equals torch on every engine', () => {
  // tests/fixtures/torch2/dynamic.json (torch 2.13 fbgemm and x86, tools/golden/torch2_ops.py),
  // torch2/dynamic_qnnpack.json (2.13 qnnpack) and torch/dynamic.json (Debian's 1.13 qnnpack), the last two from
  // tools/golden/torch_dynamic.py: float outputs compared bit for bit.
  const runDynamic = (file, semantics) => {
    const { cases } = fixture(file);
    for (const c of cases) {
      const w = weightOf(c.weight);
      const packed = qwasm.packLinear(w, c.bias, { semantics });
      try {
        const y = qwasm.dynamicLinear(Float32Array.from(c.input.values), c.input.shape, packed, { semantics, relu: c.params.relu, reduceRange: c.params.reduce_range });
        assert.deepEqual(y.shape, c.output.shape, c.name);
        assertBitEqual(assert, y.data, Float32Array.from(c.output.values), `${c.name} (${semantics})`);
      } finally {
        packed.dispose();
        w.dispose();
      }
    }
    return cases.length;
  };
  test("fbgemm and x86 engines ('pytorch-fbgemm', 'pytorch-x86': ChooseQuantizationParams over [0, 127] with reduce_range, the fma epilogue)", () => {
    assert.equal(runDynamic('torch2/dynamic.json', 'pytorch-fbgemm'), 32);
    assert.equal(runDynamic('torch2/dynamic.json', 'pytorch-x86'), 32);
  });
  test("qnnpack engine, torch 2.13 ('pytorch2-qnnpack') and Debian's 1.13 ('pytorch-qnnpack'): [0, 255], multiply then add", () => {
    assert.equal(runDynamic('torch2/dynamic_qnnpack.json', 'pytorch2-qnnpack'), 36);
    assert.equal(runDynamic('torch/dynamic.json', 'pytorch-qnnpack'), 36);
  });
  test('the forms differ on these cases: the epilogue and the quantize rule matter', () => {
    const { cases } = fixture('torch/dynamic.json');
    let differ = 0;
    for (const c of cases) {
      const w = weightOf(c.weight);
      const packed = qwasm.packLinear(w, c.bias);
      const y = qwasm.dynamicLinear(Float32Array.from(c.input.values), c.input.shape, packed, { semantics: 'pytorch-fbgemm', relu: c.params.relu, reduceRange: false });
      if (y.data.some((v, i) => v !== Math.fround(c.output.values[i]))) differ++;
      packed.dispose();
      w.dispose();
    }
    assert.ok(differ >= 5, `${differ} cases differ`);
  });
  test("form 'onnx': com.microsoft DynamicQuantizeMatMul as onnxruntime-web computes it (tests/fixtures/ort_ops)", async () => {
    const { loadCases } = await import('../../tools/transformer/ort-ops-cases.mjs');
    const cases = loadCases().cases.filter((c) => c.op === 'DynamicQuantizeMatMul');
    for (const c of cases) {
      const [a, b, bScale, bZero, bias] = c.inputs;
      const [k, n] = b.dims;
      const wt = new b.data.constructor(n * k); // B [K, N] -> the weight [N, K]
      for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) wt[j * k + i] = b.data[i * n + j];
      const dtype = b.dtype === 'uint8' ? 'quint8' : 'qint8';
      const w = bScale.data.length > 1
        ? qwasm.fromIntReprPerChannel(wt, [n, k], Array.from(bScale.data), Array.from(bZero.data), 0, dtype)
        : qwasm.fromIntRepr(wt, [n, k], bScale.data[0], Number(bZero?.data[0] ?? 0), dtype);
      const packed = qwasm.packLinear(w, bias && !bias.absent ? bias.data : null, { mode: 'none' }); // mode 'onnx' packs int32 biases only
      try {
        const y = qwasm.dynamicLinear(a.data, a.dims, packed, { semantics: 'onnx' });
        assertBitEqual(assert, y.data, c.web[0].data, c.name);
      } finally {
        packed.dispose();
        w.dispose();
      }
    }
    assert.equal(cases.length, 5);
  });

  test('bad input is a named error', () => {
    const w = qwasm.fromIntRepr([1, 2, 3, 4, 5, 6], [2, 3], 0.01, 0, 'qint8');
    const packed = qwasm.packLinear(w, [0.5, -0.5]);
    try {
      assert.throws(() => qwasm.dynamicLinear([1, 2], [1, 2], packed), { name: 'RangeError', message: /dynamicLinear: shape \[1,2\] must end in inFeatures = 3/ });
      assert.throws(() => qwasm.dynamicLinear([1, NaN, 2], [1, 3], packed), { name: 'RangeError', message: /dynamicLinear: x must be finite numbers, got NaN at 1/ });
      assert.throws(() => qwasm.dynamicLinear([1, 2, 3], [1, 3], w), { name: 'TypeError', message: /dynamicLinear: weights must come from packLinear/ });
      assert.throws(() => qwasm.dynamicLinear([1, 2, 3], [1, 3], packed, { mode: 'tflite' }), { name: 'UnsupportedError' });
    } finally {
      packed.dispose();
      w.dispose();
    }
  });
});

describe('seed 002: Linear(2, 2, bias=False), MinMax quint8 activations, MinMax qint8 AFFINE weights, fbgemm', () => {
  const seed = fixture('torch2/seed002.json').cases[0];
  const f32 = Math.fround;
  const rintEven = (v) => { const r = Math.round(v); return Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r; };
  const clamp255 = (v) => Math.min(255, Math.max(0, v));

  test('qwasm (quantize rounding fbgemm, linear mode fbgemm) gives torch 2.13 [59, 253]', () => {
    const x = qwasm.quantizePerTensor(seed.float_input, [1, 2], seed.input.scale, seed.input.zero_point, 'quint8', { rounding: 'fbgemm' });
    assertBitEqual(assert, x.intRepr(), seed.input.q, 'quantized input');
    const w = weightOf(seed.weight);
    const fc = qwasm.packLinear(w, null, { mode: 'fbgemm' });
    const y = qwasm.linear(x, fc, { scale: seed.output_scale, zeroPoint: seed.output_zero_point });
    assert.deepEqual(Array.from(y.intRepr()), [59, 253]);
    assertBitEqual(assert, y.intRepr(), seed.output.q, 'seed output');
    for (const part of [seed.batch, seed.random]) {
      const xb = q(part.input);
      const yb = qwasm.linear(xb, fc, { scale: seed.output_scale, zeroPoint: seed.output_zero_point });
      assertBitEqual(assert, yb.intRepr(), part.output.q, 'batch');
      xb.dispose();
      yb.dispose();
    }
    for (const t of [x, w, fc, y]) t.dispose();
  });

  test("the question's formula subtracts the weight zero point from the activations: [0, 255]", () => {
    const { q: xq, zero_point: xz, scale: xs } = seed.input;
    const { q: wq, zero_point: wz, scale: ws } = seed.weight;
    const m = (xs * ws) / seed.output_scale;
    // X = x - zp_x - w_zp; linear(X, w) with the raw weights, times m, rounded, + zp_out, clamped
    const user = [0, 1].map((j) => clamp255(Math.round(((xq[0] - xz - wz) * wq[2 * j] + (xq[1] - xz - wz) * wq[2 * j + 1]) * m) + seed.output_zero_point));
    assert.deepEqual(user, [0, 255]);
    // The fix: each zero point from its own tensor, sum((x - x_zp)(w - w_zp)), then FBGEMM's float32 multiplier.
    const mult = f32(f32(f32(xs) * f32(ws)) / f32(seed.output_scale));
    const acc = [0, 1].map((j) => (xq[0] - xz) * (wq[2 * j] - wz) + (xq[1] - xz) * (wq[2 * j + 1] - wz));
    assert.deepEqual(acc, [5555, 23794]);
    assert.deepEqual(acc.map((a) => clamp255(rintEven(f32(a * mult)) + seed.output_zero_point)), seed.output.q);
  });

  test("the question's quantizer round(clamp(zp + x / scale)) equals torch 2.13 here (both add the zero point first)", () => {
    const { scale, zero_point: zp } = seed.random.input;
    const user = seed.random.float_input.map((x) => Math.round(clamp255(f32(zp + f32(f32(x) / f32(scale))))));
    // torch.round is half-to-even; none of these lands on .5.
    assertBitEqual(assert, user, seed.random.input.q, 'random inputs');
    assert.equal(seed.grid_differ, 0); // and sum * (x_s w_s / y_s) in double rounds like FBGEMM for all 65536 input pairs
  });
});

describe("the x86 engine's oneDNN convolutions (symmetric weights, AVX512-VNNI host): mode 'onednn'", () => {
  test('every conv2d case the x86 engine sent to oneDNN', () => {
    const n = runCases('conv2d', (c) => c.x86?.path === 'onednn', (c, track) => {
      const p = c.params;
      const packed = track(qwasm.packConv2d(track(weightOf(c.weight)), c.bias, { stride: p.stride, padding: p.padding, dilation: p.dilation, groups: p.groups, mode: 'onednn' }));
      return qwasm.conv2d(track(q(c.inputs[0])), packed, { scale: p.output_scale, zeroPoint: p.output_zero_point, relu: p.relu });
    }, (c) => c.x86.q);
    assert.ok(n >= 40, `${n} cases`);
  });

  test('the two differ: the oneDNN cases are not all what FBGEMM computes', () => {
    const cases = fixture('torch2/conv2d.json').cases.filter((c) => c.x86?.path === 'onednn');
    const differing = cases.filter((c) => c.x86.q.some((v, i) => v !== c.output.q[i]));
    assert.ok(differing.length >= 3, `${differing.length} of ${cases.length} oneDNN cases differ from the fbgemm engine`);
  });
});

describe("1.13's observer, qparams, dequantize and fake-quantize cases give the same results on 2.13", () => {
  // tools/golden/torch2_ops.py ran every case of tests/fixtures/torch/{qparams,quantize,observers,fakequant}.json
  // again on torch 2.13; what stayed equal is counted, what changed is listed (replay.json). qwasm is tested
  // against the 1.13 files (observers.test.js, golden-torch.test.js), so these counts carry those tests to 2.13.
  const replay = fixture('torch2/replay.json');
  test('qparams (MinMaxObserver, PerChannelMinMaxObserver), dequantize, fake quantize: all unchanged', () => {
    const qp = fixture('torch/qparams.json');
    const fq = fixture('torch/fakequant.json');
    const dq = fixture('torch/quantize.json').dequantize;
    assert.equal(replay.unchanged.qparams_per_tensor, qp.per_tensor.length);
    assert.equal(replay.unchanged.qparams_per_channel, qp.per_channel.length);
    assert.equal(replay.unchanged.dequantize, dq.length);
    assert.equal(replay.unchanged.fakequant, fq.cases.length);
    assert.equal(replay.qparams_per_tensor.length + replay.qparams_per_channel.length + replay.dequantize.length + replay.fakequant.length, 0);
  });

  test('observers: only HistogramObserver changed (2.13 merges histograms differently and has no upsample_rate)', () => {
    const obs = fixture('torch/observers.json');
    const changed = new Set(replay.observers.map((o) => o.index));
    assert.ok(replay.observers.every((o) => o.observer === 'HistogramObserver'));
    const others = obs.cases.filter((c) => c.observer !== 'HistogramObserver').length;
    assert.equal(replay.unchanged.observers, obs.cases.length - changed.size);
    assert.ok(replay.unchanged.observers >= others, `${replay.unchanged.observers} unchanged, ${others} non-histogram cases`);
    assert.ok(replay.observers.filter((o) => o.error).every((o) => /upsample_rate/.test(o.error)));
  });
});

describe('the semantics profiles carry all of the above: one name per engine', () => {
  const convWith = (semantics) => (c, track) => {
    const p = c.params;
    const packed = track(qwasm.packConv2d(track(weightOf(c.weight)), c.bias, { stride: p.stride, padding: p.padding, dilation: p.dilation, groups: p.groups, semantics }));
    return qwasm.conv2d(track(q(c.inputs[0])), packed, { scale: p.output_scale, zeroPoint: p.output_zero_point, relu: p.relu });
  };
  test("semantics 'pytorch-fbgemm': every linear and conv2d case of the fbgemm engine", () => {
    const n = runCases('linear', all, (c, track) => {
      const packed = track(qwasm.packLinear(track(weightOf(c.weight)), c.bias, { semantics: 'pytorch-fbgemm' }));
      return qwasm.linear(track(q(c.inputs[0])), packed, { scale: c.params.output_scale, zeroPoint: c.params.output_zero_point, relu: c.params.relu });
    }) + runCases('conv2d', all, convWith('pytorch-fbgemm'));
    assert.ok(n >= 140, `${n} cases`);
  });
  test("semantics 'pytorch-x86': every conv2d case of the x86 engine, oneDNN where it took the convolution", () => {
    const n = runCases('conv2d', all, convWith('pytorch-x86'), (c) => (c.x86?.path === 'onednn' ? c.x86.q : c.output.q));
    assert.ok(n >= 60, `${n} cases`);
  });
  test("semantics 'pytorch-fbgemm' / 'pytorch-x86' on the elementwise, activation and pooling cases", () => {
    const bySemantics = {
      'quantized.add': (c, x, y, semantics) => qwasm.add(x, y, { scale: c.params.scale, zeroPoint: c.params.zero_point, semantics }),
    };
    let n = 0;
    for (const semantics of ['pytorch-fbgemm', 'pytorch-x86']) {
      n += runCases('elementwise', (c) => /quantized\.add$/.test(c.op), (c, track) => bySemantics['quantized.add'](c, track(q(c.inputs[0])), track(q(c.inputs[1])), semantics));
      n += runCases('activations', (c) => /hardswish|sigmoid|leaky_relu/.test(c.op), (c, track) => {
        const x = track(q(c.inputs[0]));
        if (/hardswish/.test(c.op)) return qwasm.hardswish(x, { scale: c.params.scale, zeroPoint: c.params.zero_point, semantics });
        if (/leaky_relu/.test(c.op)) return qwasm.leakyRelu(x, c.params.negative_slope, { scale: c.params.scale, zeroPoint: c.params.zero_point, semantics });
        return qwasm.sigmoid(x, { semantics });
      });
      n += runCases('pooling', (c) => c.op.endsWith('adaptive_avg_pool2d') || c.op === 'torch.mean', (c, track) =>
        c.op === 'torch.mean' ? qwasm.mean(track(q(c.inputs[0])), [2, 3], true, { semantics }) : qwasm.adaptiveAvgPool2d(track(q(c.inputs[0])), c.params.output_size, { semantics }));
    }
    assert.ok(n >= 40, `${n} cases`);
  });
});

describe("PyTorch 2.13's qnnpack engine on x86: semantics 'pytorch2-qnnpack' (tests/fixtures/torch2/qnnpack.json)", () => {
  // torch_ops.py's cases run again on torch 2.13 (engine 'qnnpack'): QNNPACK's fixed-point add, tables and pooling as
  // in 1.13, FBGEMM's quantize and the generic kernels' scalar tails around them.
  const semantics = 'pytorch2-qnnpack';
  const pick = (v) => (Array.isArray(v) ? v : [v, v]);
  const run = (accept, fn) => runCases('qnnpack', accept, fn);
  test('add / add_relu: QNNPACK fixed point for same shapes, the float kernel with FBGEMM tails when broadcasting', () => {
    const n = run((c) => /quantized\.add(_relu)?$/.test(c.op), (c, track) =>
      qwasm.add(track(q(c.inputs[0])), track(q(c.inputs[1])), { scale: c.params.scale, zeroPoint: c.params.zero_point, relu: c.params.relu, semantics }));
    assert.ok(n >= 30, `${n} cases`);
  });
  test('cat (quantize_per_tensor with FBGEMM rounding), leaky_relu (generic kernel, FBGEMM tail)', () => {
    const n = run((c) => c.op.endsWith('quantized.cat'), (c, track) =>
      qwasm.cat(c.inputs.map((t) => track(q(t))), c.params.dim, { scale: c.params.scale ?? undefined, zeroPoint: c.params.zero_point ?? undefined, semantics }));
    const m = run((c) => /leaky_relu|LeakyReLU/.test(c.op), (c, track) =>
      qwasm.leakyRelu(track(q(c.inputs[0])), c.params.negative_slope, { scale: c.params.scale ?? c.output.scale, zeroPoint: c.params.zero_point ?? c.output.zero_point, semantics }));
    assert.ok(n >= 5 && m >= 20, `${n} cat, ${m} leaky_relu cases`);
  });
  test('max / avg / adaptive pooling and mean: QNNPACK for quint8 without ceil_mode, the generic kernels elsewhere', () => {
    const n = run((c) => c.family === 'pooling' && (c.op !== 'torch.mean' || c.params.dim.join() === '2,3'), (c, track) => {
      const p = c.params;
      const x = track(q(c.inputs[0]));
      if (c.op.endsWith('max_pool2d')) return qwasm.maxPool2d(x, { kernelSize: pick(p.kernel_size), stride: pick(p.stride), padding: pick(p.padding), dilation: pick(p.dilation), ceilMode: p.ceil_mode, semantics });
      if (c.op.endsWith('.avg_pool2d')) {
        return qwasm.avgPool2d(x, { kernelSize: pick(p.kernel_size), stride: pick(p.stride), padding: pick(p.padding), ceilMode: p.ceil_mode, countIncludePad: p.count_include_pad, divisorOverride: p.divisor_override, semantics });
      }
      if (c.op.endsWith('adaptive_avg_pool2d')) return qwasm.adaptiveAvgPool2d(x, p.output_size, { semantics });
      return qwasm.mean(x, p.dim, p.keepdim, { semantics });
    });
    assert.ok(n >= 55, `${n} cases`);
  });
});

describe("channels-last pooling on the fbgemm engine: the vector loops' channels round differently (cpuCapability)", async () => {
  const { adaptiveAvgPool2dChannelsLast, avgPool2dChannelsLast } = await import('../../js/ops/pooling.js');
  const doc = fixture('torch2/qnnpack.json');
  const capability = doc.cpu_capability.toLowerCase();
  const pool = (c, x, cpuCapability) => {
    const p = c.params;
    const options = { mode: 'fbgemm', cpuCapability };
    if (c.op === 'adaptive') return adaptiveAvgPool2dChannelsLast(x, p.output_size, options);
    return avgPool2dChannelsLast(x, { ...options, kernelSize: p.kernel_size, stride: p.stride, padding: p.padding ?? [0, 0], countIncludePad: p.count_include_pad ?? true });
  };
  test(`every case with the fixture's dispatch level (${doc.cpu_capability})`, () => {
    for (const c of doc.channels_last) {
      const x = q(c.inputs[0]);
      const y = pool(c, x, capability);
      assertBitEqual(assert, y.intRepr(), c.output.q, c.name);
      assert.deepEqual(y.shape, c.output.shape, c.name);
      x.dispose();
      y.dispose();
    }
    assert.equal(doc.channels_last.length, 24);
  });
  test('another dispatch level rounds some of them differently', () => {
    const other = capability === 'avx512' ? 'avx2' : 'avx512';
    const differ = doc.channels_last.filter((c) => {
      const x = q(c.inputs[0]);
      const y = pool(c, x, other);
      const d = Array.from(y.intRepr()).some((v, i) => v !== c.output.q[i]);
      x.dispose();
      y.dispose();
      return d;
    });
    assert.ok(differ.length >= 2, `${differ.length} cases differ with ${other}`);
    const x = q(doc.channels_last[0].inputs[0]);
    assert.throws(() => pool(doc.channels_last[0], x, 'sse'), { name: 'TypeError', message: /avgPool2d: cpuCapability must be 'avx512', 'avx2' or 'default', got "sse"/ });
    x.dispose();
  });
});
