// Observers and fake quantization against PyTorch 1.13 itself: tests/fixtures/torch/observers.json
// and fakequant.json were written by tools/golden/torch_observers.py (Debian's python3-torch).
// Every comparison is bit for bit.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { assertBitEqual, fixture, qwasm, setup } from './helpers.js';

before(setup);

const obs = fixture('torch/observers.json');
const fq = fixture('torch/fakequant.json');

const floats = (b64) => {
  const bytes = Buffer.from(b64, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
};
const CAMEL = { quant_min: 'quantMin', quant_max: 'quantMax', reduce_range: 'reduceRange', ch_axis: 'chAxis',
  averaging_constant: 'averagingConstant', upsample_rate: 'upsampleRate' };
const jsOptions = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [CAMEL[k] ?? k, v]));
const sequences = obs.sequences.map((s) => s.inputs.map((i) => ({ shape: i.shape, data: floats(i.data_b64), kind: i.kind })));
const norm = (text) => text.replace(/\s+/g, ' ').trim();
const same = (a, b) => Object.is(a, b);

// The recipe of tools/golden/torch_observers.py synthetic(): float32 Irwin-Hall data from a hash.
function hash(i) {
  let x = i >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b) >>> 0;
  x ^= x >>> 16;
  return x >>> 0;
}
function synthetic([seed, n, scale, offset]) {
  const f = Math.fround;
  const out = new Float32Array(n);
  const s = f(scale);
  const o = f(offset);
  for (let i = 0; i < n; i++) {
    const u = [0, 1, 2, 3].map((k) => f((hash((4 * i + k + seed * 2 ** 20) % 2 ** 32) >>> 8) / 2 ** 24));
    out[i] = f(f(f(f(f(u[0] + u[1]) + f(u[2] + u[3])) - 2) * s) + o);
  }
  return out;
}

function checkCase(c, given) {
  const inputs = c.recipe ? c.recipe.map((r) => ({ shape: [r[1]], data: synthetic(r), kind: `synthetic ${r}` })) : sequences[c.sequence];
  const label = `${c.observer} ${JSON.stringify(c.options)} sequence ${c.sequence} (${inputs.map((i) => i.kind).join(', ')})`;
  const o = given ?? new qwasm[c.observer](jsOptions(c.options));
  inputs.forEach((input, k) => {
    o.observe(input.data, input.shape);
    const want = c.states[k];
    const st = o.state();
    if (Array.isArray(want.min)) {
      assertBitEqual(assert, st.minVal, want.min, `${label}: min after call ${k}`);
      assertBitEqual(assert, st.maxVal, want.max, `${label}: max after call ${k}`);
    } else {
      assert.ok(same(st.minVal, want.min) && same(st.maxVal, want.max),
        `${label}: [min, max] after call ${k} is [${st.minVal}, ${st.maxVal}], torch [${want.min}, ${want.max}]`);
    }
  });
  if (c.histogram_b64) {
    assertBitEqual(assert, o.state().histogram, floats(c.histogram_b64), `${label}: histogram`);
    if (c.search) {
      const r = o.search();
      assert.ok(same(r.min, c.search[0]) && same(r.max, c.search[1]),
        `${label}: search [${r.min}, ${r.max}], torch [${c.search}]`);
    }
  }
  const q = o.calculateQparams();
  if (c.observer.includes('PerChannel')) {
    assertBitEqual(assert, q.scales, c.scales, `${label}: scales`);
    assertBitEqual(assert, q.zeroPoints, c.zero_points, `${label}: zero points`);
  } else {
    assert.ok(same(q.scale, c.scales[0]) && q.zeroPoint === c.zero_points[0],
      `${label}: (${q.scale}, ${q.zeroPoint}), torch (${c.scales[0]}, ${c.zero_points[0]})`);
  }
}

describe('observers equal torch.ao.quantization observers (PyTorch 1.13)', () => {
  const byClass = new Map();
  for (const c of obs.cases) byClass.set(c.observer, [...(byClass.get(c.observer) ?? []), c]);
  for (const [cls, cases] of byClass) {
    test(`${cls}: ${cases.length} observed sequences (min/max after every call, ${cls === 'HistogramObserver' ? 'histogram, search, ' : ''}scale, zero point)`, () => {
      for (const c of cases) checkCase(c);
    });
  }

  test(`HistogramObserver: ${obs.synthetic.length} large synthetic sequences (up to 350k values)`, () => {
    for (const c of obs.synthetic) checkCase(c);
  });

  test('HistogramObserver(bins = 1000) over batches of growing range: histc divides before it multiplies', () => {
    // tests/fixtures/torch/checks113.json (tools/golden/torch113_checks.py): values on a bin edge, such as
    // 8.03 of [0, 10] in 1000 bins, land where torch.histc's (int64)((x - lo) / (hi - lo) * bins) puts them.
    const cases = fixture('torch/checks113.json').histogram;
    for (const [i, c] of cases.entries()) {
      const o = new qwasm.HistogramObserver({ bins: c.bins });
      c.batches_b64.forEach((b, k) => {
        o.observe(floats(b));
        assert.equal(o.state().minVal, Math.fround(c.states[k].min), `case ${i} batch ${k}: min`);
        assert.equal(o.state().maxVal, Math.fround(c.states[k].max), `case ${i} batch ${k}: max`);
      });
      assertBitEqual(assert, o.state().histogram, floats(c.histogram_b64), `case ${i}: histogram`);
      assert.deepEqual(o.calculateQparams(), { scale: Math.fround(c.scale), zeroPoint: c.zero_point }, `case ${i}: qparams`);
    }
    assert.equal(cases.length, 4);
  });

  test('reset() returns an observer to its initial state', () => {
    for (const c of obs.cases.slice(0, 40).concat(obs.cases.filter((x) => x.observer === 'HistogramObserver').slice(0, 3))) {
      const o = new qwasm[c.observer](jsOptions(c.options));
      for (const input of sequences[(c.sequence + 1) % sequences.length]) o.observe(input.data, input.shape);
      o.reset();
      checkCase(c, o);
    }
    const h = new qwasm.HistogramObserver();
    assert.deepEqual(h.calculateQparams(), { scale: 1, zeroPoint: 0 });
    const p = new qwasm.PerChannelMinMaxObserver();
    assert.deepEqual(p.calculateQparams(), { scales: Float32Array.of(1), zeroPoints: Int32Array.of(0) });
    assert.deepEqual(new qwasm.MinMaxObserver().observe(new Float32Array(0)).state(), { minVal: Infinity, maxVal: -Infinity });
  });

  test(`the ${obs.errors.length} option sets and inputs torch rejects raise the same errors`, () => {
    const TYPES = { NotImplementedError: qwasm.NotImplementedError, AssertionError: Error, IndexError: RangeError,
      ValueError: RangeError, OverflowError: RangeError };
    for (const e of obs.errors) {
      const run = () => {
        const o = new qwasm[e.observer](jsOptions(e.options));
        if (e.observe) {
          const values = e.observe.values ?? Array.from({ length: e.observe.shape.reduce((a, b) => a * b, 1) }, (_, i) => i * 0.5 - 1);
          o.observe(Float32Array.from(values), e.observe.shape);
          o.calculateQparams();
        }
      };
      const torchText = norm(e.error).replace(/torch\.per_channel_affine_float_qparams\.$/, '');
      assert.throws(run, (err) => {
        assert.ok(err instanceof TYPES[e.type], `${e.observer} ${JSON.stringify(e.options)}: ${err.name} is not a ${e.type}`);
        assert.ok(norm(err.message).includes(norm(e.error).slice(0, 60)),
          `${e.observer} ${JSON.stringify(e.options)}: message "${err.message}" does not carry torch's "${torchText}"`);
        return true;
      });
    }
    assert.throws(() => new qwasm.MinMaxObserver({ qscheme: 'per_tensor_affinee' }), TypeError);
    assert.throws(() => new qwasm.MinMaxObserver().observe(new Float32Array(3), [2, 2]), RangeError);
    assert.throws(() => new qwasm.PlaceholderObserver().calculateQparams(), /calculate_qparams should not be called/);
    assert.throws(() => qwasm.defaultQConfig('arm'), TypeError);
  });

  test('defaultQConfig(x86 | fbgemm | qnnpack) builds the observers torch does', () => {
    for (const [name, roles] of Object.entries(obs.qconfigs)) {
      const qc = qwasm.defaultQConfig(name);
      for (const [role, want] of Object.entries(roles)) {
        const o = qc[role]();
        assert.equal(o.constructor.name, want.observer, `${name}.${role}`);
        const got = { dtype: o.dtype, qscheme: o.qscheme, reduceRange: o.reduceRange, quantMin: o.quantMin, quantMax: o.quantMax, eps: o.eps };
        const exp = { dtype: want.dtype, qscheme: want.qscheme, reduceRange: want.reduce_range, quantMin: want.quant_min, quantMax: want.quant_max, eps: want.eps };
        if ('ch_axis' in want) [got.chAxis, exp.chAxis] = [o.chAxis, want.ch_axis];
        if ('bins' in want) [got.bins, exp.bins, got.upsampleRate, exp.upsampleRate] = [o.bins, want.bins, o.upsampleRate, want.upsample_rate];
        assert.deepEqual(got, exp, `${name}.${role}`);
      }
    }
  });

  test('FixedQParamsObserver returns its qparams', () => {
    const o = new qwasm.FixedQParamsObserver({ scale: 1 / 256, zeroPoint: 0 });
    o.observe(Float32Array.of(5, -5));
    assert.deepEqual(o.calculateQparams(), { scale: 1 / 256, zeroPoint: 0 });
  });
});

describe('fake quantization equals torch.fake_quantize_per_{tensor,channel}_affine', () => {
  test(`${fq.cases.length} cases`, () => {
    for (const c of fq.cases) {
      const x = floats(c.x_b64);
      const want = floats(c.y_b64);
      const got = c.kind === 'per_tensor'
        ? qwasm.fakeQuantize(x, c.scale, c.zero_point, c.quant_min, c.quant_max)
        : qwasm.fakeQuantizePerChannel(x, c.shape, c.scales, c.zero_points, c.axis, c.quant_min, c.quant_max);
      assertBitEqual(assert, got, want, `${c.kind} ${JSON.stringify({ ...c, x_b64: undefined, y_b64: undefined })}`);
    }
  });

  test(`the ${fq.errors.length} argument sets torch rejects raise the same errors`, () => {
    for (const e of fq.errors) {
      const x = new Float32Array(6);
      const run = e.kind === 'per_tensor'
        ? () => qwasm.fakeQuantize(x, ...e.args)
        : () => qwasm.fakeQuantizePerChannel(x, e.shape, e.scales, e.zero_points, e.axis, e.quant_min, e.quant_max);
      assert.throws(run, (err) => norm(err.message).includes(norm(e.error)), `torch: ${e.error}`);
    }
  });

  test('non-finite inputs follow qwasm\'s quantize rule (NaN -> 0, +-Inf saturate)', () => {
    const y = qwasm.fakeQuantize(Float32Array.of(NaN, Infinity, -Infinity, 1e30), 0.1, 3, 0, 255);
    assert.deepEqual(Array.from(y), [0, Math.fround(Math.fround(252) * Math.fround(0.1)), Math.fround(-3 * Math.fround(0.1)), Math.fround(252 * Math.fround(0.1))]);
  });
});
