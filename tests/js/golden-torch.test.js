// qwasm against PyTorch 1.13 itself: tests/fixtures/torch/*.json were written by
// tools/golden/torch_quant.py running Debian's python3-torch. Every comparison is bit for bit.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { DTYPE_RANGE, assertBitEqual, fixture, qwasm, setup } from './helpers.js';

before(setup);

const qparams = fixture('torch/qparams.json');
const quantize = fixture('torch/quantize.json');

function qparamOptions(c) {
  const o = { dtype: c.dtype, qscheme: c.qscheme, reduceRange: c.reduce_range };
  if (c.quant_min !== null) o.quantMin = c.quant_min;
  if (c.quant_max !== null) o.quantMax = c.quant_max;
  if (c.eps !== null) o.eps = c.eps;
  return o;
}

describe('chooseQParams equals torch.ao.quantization observers', () => {
  test(`${qparams.per_tensor.length} per-tensor (min, max, options) cases`, () => {
    let checked = 0;
    for (const c of qparams.per_tensor) {
      const label = JSON.stringify({ ...qparamOptions(c), min: c.min, max: c.max });
      const range = qwasm.quantRange(qparamOptions(c));
      assert.deepEqual([range.quantMin, range.quantMax], [c.qmin_eff, c.qmax_eff], `range of ${label}`);
      const got = qwasm.chooseQParams({ ...qparamOptions(c), min: c.min, max: c.max });
      assert.ok(Object.is(got.scale, c.scale), `scale of ${label}: got ${got.scale}, torch ${c.scale}`);
      assert.equal(got.zeroPoint, c.zero_point, `zero point of ${label}`);
      checked++;
    }
    assert.ok(checked > 1000);
  });

  test(`${qparams.per_channel.length} per-channel cases`, () => {
    for (const c of qparams.per_channel) {
      const label = JSON.stringify(qparamOptions(c));
      const got = qwasm.chooseQParams({ ...qparamOptions(c), min: c.min, max: c.max });
      assertBitEqual(assert, got.scales, c.scales, `scales of ${label}`);
      assertBitEqual(assert, got.zeroPoints, c.zero_points, `zero points of ${label}`);
    }
  });

  // Two rules restrict observer CLASSES, not the qparams math, and are not chooseQParams' to make:
  // "MinMaxObserver's qscheme only support ..." and MinMaxObserver's "Cannot reduce range for
  // symmetric quantization for quint8" (HistogramObserver accepts that combination).
  const rejected = qparams.errors.filter((c) => !/Observer's qscheme only support|Cannot reduce range for symmetric/.test(c.error));
  test(`the ${rejected.length} option sets torch rejects are rejected`, () => {
    for (const c of rejected) {
      const options = { ...qparamOptions(c), min: c.min ?? 0, max: c.max ?? 1 };
      if (c.qscheme.startsWith('per_channel')) {
        options.min = Array.isArray(c.min) ? c.min : [options.min];
        options.max = Array.isArray(c.max) ? c.max : [options.max];
      }
      assert.throws(() => qwasm.chooseQParams(options), /chooseQParams: /, `torch: ${c.error}; options ${JSON.stringify(options)}`);
    }
  });
});

/**
 * The value qwasm must give for element x: PyTorch's, except where PyTorch 1.13 overflows int64
 * (NaN, +-Inf, |x * (1/scale)| >= 2^63 all become the minimum there); qwasm documents
 * NaN -> zero point and saturation instead.
 */
function expectedTorchQ(x, torchQ, scale, zeroPoint, dtype) {
  const [lo, hi] = DTYPE_RANGE[dtype];
  if (Number.isNaN(x)) return zeroPoint;
  const scaled = Math.fround(x * Math.fround(1 / Math.fround(scale)));
  if (!Number.isFinite(scaled) || Math.abs(scaled) >= 2 ** 63) return scaled > 0 ? hi : lo;
  return torchQ;
}

/** qwasm's scale rule (docs/quantization.md): finite, > 0, with a finite float32 reciprocal. */
function validScale(scale) {
  const f = Math.fround(scale);
  return Number.isFinite(f) && f > 0 && Number.isFinite(Math.fround(1 / f));
}

describe('quantize / dequantize equal torch.quantize_per_tensor / quantize_per_channel', () => {
  test(`${quantize.per_tensor.length} per-tensor cases (rounding 'torch')`, () => {
    let deviations = 0;
    let rejected = 0;
    for (const c of quantize.per_tensor) {
      if (!validScale(c.scale)) {
        // torch never checks the scale; qwasm rejects what the kernels cannot use, naming it.
        const make = () => qwasm.quantizePerTensor(c.input, [c.input.length], c.scale, c.zero_point, c.dtype);
        assert.throws(make, /quantizePerTensor: scale must be a finite number > 0/, c.name);
        rejected++;
        continue;
      }
      const expected = c.input.map((x, i) => expectedTorchQ(x, c.q[i], c.scale, c.zero_point, c.dtype));
      deviations += expected.filter((e, i) => e !== c.q[i]).length;
      const t = qwasm.quantizePerTensor(c.input, [c.input.length], c.scale, c.zero_point, c.dtype);
      assertBitEqual(assert, t.intRepr(), expected, `${c.name} ${c.dtype} q`);
      // dequantize: exact wherever qwasm's integer is torch's.
      const dq = t.dequantize();
      const same = expected.map((e, i) => e === c.q[i]);
      assertBitEqual(assert, dq.filter((_, i) => same[i]), c.dequant.filter((_, i) => same[i]), `${c.name} ${c.dtype} dequant`);
      t.dispose();
    }
    assert.ok(deviations > 0, 'the fixtures include the non-finite inputs qwasm documents');
    assert.ok(rejected > 0 && rejected < quantize.per_tensor.length / 4, `${rejected} cases rejected`);
  });

  test(`${quantize.per_channel.length} per-channel cases`, () => {
    for (const c of quantize.per_channel) {
      const t = qwasm.quantizePerChannel(c.input, c.shape, c.scales, c.zero_points, c.axis, c.dtype);
      const [outer, channels] = [c.shape.slice(0, c.axis).reduce((a, b) => a * b, 1), c.shape[c.axis]];
      const inner = c.input.length / outer / channels;
      const expected = c.input.map((x, i) => {
        const ch = Math.floor(i / inner) % channels;
        return expectedTorchQ(x, c.q[i], c.scales[ch], c.zero_points[ch], c.dtype);
      });
      assertBitEqual(assert, t.intRepr(), expected, `${c.name} ${c.dtype} q`);
      const same = expected.map((e, i) => e === c.q[i]);
      const dq = t.dequantize();
      assertBitEqual(assert, dq.filter((_, i) => same[i]), c.dequant.filter((_, i) => same[i]), `${c.name} ${c.dtype} dequant`);
      t.dispose();
    }
  });

  test(`${quantize.dequantize.length} dequantize cases (full integer ranges, qint32 overflow)`, () => {
    let rejected = 0;
    for (const c of quantize.dequantize) {
      const make = () =>
        c.qscheme === 'per_tensor_affine'
          ? qwasm.fromIntRepr(c.q, [c.q.length], c.scale, c.zero_point, c.dtype)
          : qwasm.fromIntReprPerChannel(c.q, c.shape, c.scales, c.zero_points, c.axis, c.dtype);
      if (c.scale !== undefined && !validScale(c.scale)) {
        // torch accepts any scale; qwasm rejects a scale that is not > 0, naming it.
        assert.throws(make, /fromIntRepr: scale must be a finite number > 0/);
        rejected++;
        continue;
      }
      const t = make();
      assertBitEqual(assert, t.dequantize(), c.dequant, `${c.name} ${c.dtype}`);
      t.dispose();
    }
    assert.ok(rejected > 0 && rejected < quantize.dequantize.length);
  });

  test(`${quantize.requantize.length} requantize cases: requantize() and copyFrom() equal quantize_per_tensor(q.dequantize())`, () => {
    for (const c of quantize.requantize) {
      const src = qwasm.fromIntRepr(c.q_in, [c.q_in.length], c.src_scale, c.src_zero_point, c.src_dtype);
      const a = src.requantize(c.dst_scale, c.dst_zero_point, c.dst_dtype);
      assertBitEqual(assert, a.intRepr(), c.q_out, `${c.name} requantize`);
      const b = qwasm.empty([c.q_in.length], { dtype: c.dst_dtype, scale: c.dst_scale, zeroPoint: c.dst_zero_point });
      b.copyFrom(src);
      assertBitEqual(assert, b.intRepr(), c.q_out, `${c.name} copyFrom`);
      for (const t of [src, a, b]) t.dispose();
    }
  });

  test('copy_ of float data into a quantized tensor quantizes with the destination qparams', () => {
    const cases = quantize.copy_.filter((c) => c.name.startsWith('float_to_quantized'));
    assert.ok(cases.length >= 2);
    for (const c of cases) {
      const d = c.dst_after;
      const t = qwasm.quantizePerTensor(c.src.data, c.src.shape, d.scale, d.zero_point, d.dtype);
      assertBitEqual(assert, t.intRepr(), d.q, c.name);
      assertBitEqual(assert, t.dequantize(), d.dequant, `${c.name} dequant`);
      t.dispose();
    }
  });

  test('clone keeps integers and qparams, as torch clone()', () => {
    const c = quantize.copy_.find((k) => k.name === 'clone_keeps_qparams');
    const s = c.src;
    const t = qwasm.fromIntRepr(s.q, s.shape, s.scale, s.zero_point, s.dtype);
    const u = t.clone();
    assertBitEqual(assert, u.intRepr(), c.result.q, 'clone ints');
    assert.equal(u.qScale(), c.result.scale);
    assert.equal(u.qZeroPoint(), c.result.zero_point);
    assertBitEqual(assert, u.dequantize(), c.result.dequant, 'clone dequant');
    t.dispose();
    u.dispose();
  });
});
