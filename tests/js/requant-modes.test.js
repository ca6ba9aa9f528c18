// The 'fbgemm' and 'fixedpoint' requantization modes of linear / packLinear against plain-loop
// references written here from the published formulas (none of qwasm's code is used for the expected
// values). Every output is compared bit for bit.
//
// FBGEMM (include/fbgemm/OutputProcessing-inl.h, ReQuantizeOutput with a float bias; PyTorch's
// qlinear.cpp computes the scales), all float32:
//   act_times_w_scale = (float)in_scale * (float)w_scale
//   multiplier        = act_times_w_scale / (float)out_scale
//   out = clamp(lrintf(((float)raw + bias') * multiplier) + out_zp, relu ? out_zp : qmin, qmax)
//   bias' = bias / act_times_w_scale per channel, bias * (float)(1.0 / (double)act_times_w_scale) per tensor
//   (FBGEMM's x86 kernels, QuantUtilsAvx2.cc requantizeOutputProcessingAvx2; checked against live
//   PyTorch 2.13 in golden-torch2.test.js)
// gemmlowp / TFLite fixed point (tensorflow/lite/kernels/internal/common.{h,cc}):
//   QuantizeMultiplier(in_scale * w_scale / out_scale in double) -> m0 (Q31, [2^30, 2^31)), shift
//   out = clamp(RoundingDivideByPOT(SaturatingRoundingDoublingHighMul((raw + bias_q) << left, m0), right) + out_zp)
//   with the bias quantized as PyTorch's qnnpack path does: bias_q = rint(b * (1.0f / (float)(w_s * x_s))),
//   the product of the scales in double, ties to even.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { assertBitEqual, qwasm, setup } from './helpers.js';

before(setup);

const f32 = Math.fround;
const RANGE = { quint8: [0, 255], qint8: [-128, 127] };
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

// ---- deterministic randomness -----------------------------------------------------------------

function rng(seed) {
  let s = seed >>> 0;
  const next = () => {
    // mulberry32
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)); // inclusive
  const pick = (a) => a[Math.floor(next() * a.length)];
  return { next, int, pick };
}

// ---- reference arithmetic ---------------------------------------------------------------------

/** Round half to even (lrintf / nearbyint in the default rounding mode) of a finite number. */
function rintEven(x) {
  const f = Math.floor(x);
  const d = x - f; // exact for the float32 / small values used here
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

const clamp = (v, lo, hi) => (v < lo ? lo : v > hi ? hi : v);

/** Exact sums_k (a - a_zp) * (w - w_zp[j]) for x [M][K], w [N][K]. */
function exactSums(c) {
  const { M, N, K, x, xZp, w, wZps } = c;
  const acc = new Array(M * N);
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      const zp = wZps.length === 1 ? wZps[0] : wZps[j];
      for (let k = 0; k < K; k++) s += (x[i * K + k] - xZp) * (w[j * K + k] - zp);
      acc[i * N + j] = s;
    }
  }
  return acc;
}

function outputBounds(c) {
  const [lo, hi] = RANGE[c.outDtype];
  return [c.relu ? Math.max(lo, c.outZp) : lo, hi];
}

// The references take a `variant` naming a plausible wrong implementation (used only to build cases
// that tell the right formula from the wrong one); 'exact' is the published formula.

/** FBGEMM's rounded value lrintf(((float)raw + bias / act_times_w_scale) * multiplier), before the zero point. */
function fbgemmValue(raw, inScale, wScale, outScale, bias, variant = 'exact', stats = null, perTensor = false) {
  let act = f32(f32(inScale) * f32(wScale));
  if (variant === 'scales-in-double') act = f32(inScale * wScale);
  let multiplier = f32(act / f32(outScale));
  if (variant === 'reciprocal-multiplier') multiplier = f32(act * f32(1 / f32(outScale))); // qnnpack's order
  if (variant === 'multiplier-in-double') multiplier = f32((inScale * wScale) / outScale);
  let rawF = f32(raw);
  if (bias !== 0) {
    // Per tensor FBGEMM multiplies by the reciprocal (in double, then float); per channel it divides.
    const reciprocal = perTensor !== (variant === 'reciprocal-bias');
    const term = reciprocal ? f32(bias * f32(1 / act)) : f32(bias / act);
    rawF = f32(rawF + term);
  }
  const ab = variant === 'product-in-double' ? rawF * multiplier : f32(rawF * multiplier);
  const r = rintEven(ab);
  if (stats !== null && ab - Math.floor(ab) === 0.5) stats.other = r === Math.floor(ab) ? r + 1 : r - 1;
  return r;
}

/** FBGEMM's ReQuantizeOutput with a float bias (float32 throughout), zero point, clamp. */
function fbgemmReference(c, stats = { ties: 0 }, variant = 'exact') {
  const acc = exactSums(c);
  const [lo, hi] = outputBounds(c);
  const out = [];
  const tie = { other: null };
  for (let i = 0; i < c.M; i++) {
    for (let j = 0; j < c.N; j++) {
      const wScale = c.wScales.length === 1 ? c.wScales[0] : c.wScales[j];
      tie.other = null;
      const r = fbgemmValue(acc[i * c.N + j], c.inScale, wScale, c.outScale, c.bias === null ? 0 : c.bias[j], variant, tie, !c.perChannel);
      const q = clamp(r + c.outZp, lo, hi);
      // An exact .5 tie whose direction shows in the output (the other neighbour clamps differently).
      if (tie.other !== null && q !== clamp(tie.other + c.outZp, lo, hi)) {
        stats.ties++;
      }
      out.push(q);
    }
  }
  return out;
}

/** TFLite's QuantizeMultiplier: m = m0 * 2^(shift - 31), m0 in [2^30, 2^31). */
function quantizeMultiplier(m, variant = 'exact') {
  if (m === 0) return [0n, 0];
  // frexp: m = q * 2^e, q in [0.5, 1) (divisions by powers of two are exact here).
  let e = Math.ceil(Math.log2(m));
  while (m / 2 ** e >= 1) e++;
  while (m / 2 ** e < 0.5) e--;
  const q = m / 2 ** e;
  let qFixed = variant === 'truncated-m0' ? Math.floor(q * 2 ** 31) : Math.round(q * 2 ** 31); // std::round, q > 0
  if (qFixed === 2 ** 31) {
    qFixed /= 2;
    e++;
  }
  if (e < -31) {
    e = 0;
    qFixed = 0;
  }
  if (e > 30) {
    e = 30;
    qFixed = 2 ** 31 - 1;
  }
  return [BigInt(qFixed), e];
}

/** gemmlowp SaturatingRoundingDoublingHighMul, int32 x int32 -> int32 (BigInt). */
function srdhm(a, b, stats) {
  if (a === b && a === -(2n ** 31n)) return 2n ** 31n - 1n;
  const ab = a * b;
  const nudge = ab >= 0n ? 1n << 30n : 1n - (1n << 30n);
  if (((ab % (1n << 31n)) + (1n << 31n)) % (1n << 31n) === 1n << 30n) stats.srdhmTies++;
  return BigInt.asIntN(32, (ab + nudge) / (1n << 31n)); // C++ division truncates toward zero, as BigInt's
}

/** gemmlowp RoundingDivideByPOT (BigInt, arithmetic shift). */
function rdbpot(x, exponent, stats) {
  const e = BigInt(exponent);
  const mask = (1n << e) - 1n;
  const remainder = x & mask;
  const threshold = (mask >> 1n) + (x < 0n ? 1n : 0n);
  if (exponent > 0 && remainder * 2n === 1n << e) stats.rdbpotTies++;
  return (x >> e) + (remainder > threshold ? 1n : 0n);
}

/** The fixed-point multiplier of a channel: QuantizeMultiplier of in_scale * w_scale / out_scale in double. */
function fixedpointMultiplier(inScale, wScale, outScale, variant = 'exact') {
  if (variant === 'float-scales') return quantizeMultiplier((f32(inScale) * f32(wScale)) / f32(outScale));
  return quantizeMultiplier((inScale * wScale) / outScale, variant);
}

/** A float bias as PyTorch's qnnpack path quantizes it: rint(b * (1.0f / (float)(w_s * x_s))). */
function quantizeBias(b, inScale, wScale, variant = 'exact') {
  const scale = variant === 'bias-scale-in-float' ? f32(f32(wScale) * f32(inScale)) : f32(wScale * inScale);
  const v = variant === 'bias-division' ? f32(b / scale) : f32(b * f32(1 / scale));
  return clamp(rintEven(v), INT32_MIN, INT32_MAX);
}

/** TFLite MultiplyByQuantizedMultiplier of raw + bias_q (int32, wrapping), before the zero point. */
function fixedpointValue(x, m0, shift, stats) {
  const left = shift > 0 ? shift : 0;
  const right = shift > 0 ? 0 : -shift;
  const shifted = BigInt.asIntN(32, BigInt(x)) << BigInt(left);
  // The cases keep (raw + bias) << left inside int32, where TFLite's int32 product is defined.
  assert.equal(BigInt.asIntN(32, shifted), shifted, 'test case overflows int32 before the fixed-point multiply');
  return Number(rdbpot(srdhm(shifted, m0, stats), right, stats));
}

/** The fixed-point mode: per channel multiplier and bias, zero point and clamp. */
function fixedpointReference(c, stats = { srdhmTies: 0, rdbpotTies: 0 }, variant = 'exact') {
  const acc = exactSums(c);
  const [lo, hi] = outputBounds(c);
  const out = new Array(c.M * c.N);
  for (let j = 0; j < c.N; j++) {
    const wScale = c.wScales.length === 1 ? c.wScales[0] : c.wScales[j];
    const [m0, shift] = fixedpointMultiplier(c.inScale, wScale, c.outScale, variant);
    let biasQ = 0;
    if (c.bias instanceof Int32Array) {
      biasQ = c.bias[j];
    } else if (c.bias !== null) {
      biasQ = quantizeBias(c.bias[j], c.inScale, wScale, variant);
    }
    for (let i = 0; i < c.M; i++) {
      const x = (acc[i * c.N + j] + biasQ) | 0; // int32 wrap-around, as the C accumulator
      out[i * c.N + j] = clamp(fixedpointValue(x, m0, shift, stats) + c.outZp, lo, hi);
    }
  }
  return out;
}

// ---- cases ------------------------------------------------------------------------------------

// Scale sets whose products are short binary fractions: multipliers 0.5, 0.25, 0.75, 1.5, 2 give
// exact .5 ties in the float product (fbgemm) and in both fixed-point roundings.
const TIE_SETS = [
  { inScale: 0.5, wScales: [0.25], outScale: 0.25 }, // multiplier 0.5
  { inScale: 0.5, wScales: [0.25], outScale: 0.5 }, // 0.25
  { inScale: 0.375, wScales: [0.5], outScale: 0.25 }, // 0.75
  { inScale: 0.75, wScales: [0.5], outScale: 0.25 }, // 1.5 (fixed point: shift 1, a left shift)
  { inScale: 0.25, wScales: [0.5, 0.25, 0.125, 0.75, 0.375], outScale: 0.125 }, // per channel: 1, 0.5, 0.25, 1.5, 0.75
];

function edgeZeroPoint(r, dtype) {
  const [lo, hi] = RANGE[dtype];
  return r.pick([lo, hi, dtype === 'quint8' ? 128 : 0, r.int(lo, hi), r.int(lo, hi)]);
}

/** Values around a zero point, at most `spread` away, inside the dtype. */
function near(r, dtype, zp, spread) {
  const [lo, hi] = RANGE[dtype];
  return clamp(zp + r.int(-spread, spread), lo, hi);
}

function makeCase(r, mode, index) {
  const M = r.int(1, 7);
  const K = r.int(1, 70);
  const N = r.int(1, 40);
  const xDtype = r.pick(['quint8', 'qint8']);
  const wDtype = r.pick(['qint8', 'quint8']);
  const outDtype = r.pick(['quint8', 'qint8']);
  const perChannel = index % 2 === 1;
  const ties = index % 3 !== 2;
  const spread = r.pick([1, 3, 8, 30, 127, 255]);
  const xZp = edgeZeroPoint(r, xDtype);
  const wZps = Array.from({ length: perChannel ? N : 1 }, () => edgeZeroPoint(r, wDtype));

  let inScale;
  let wScales;
  let outScale;
  if (ties) {
    const set = TIE_SETS[index % TIE_SETS.length];
    inScale = set.inScale;
    wScales = Array.from({ length: perChannel ? N : 1 }, (_, j) => set.wScales[j % set.wScales.length]);
    // Larger output scales (powers of two keep the ties) when the sums are large.
    outScale = set.outScale * 2 ** Math.max(0, Math.round(Math.log2((spread * spread * Math.sqrt(K)) / 64)));
  } else {
    // Ordinary scales, as doubles that are not float32 values (each mode rounds them its own way).
    inScale = 0.002 + r.next() * 0.05;
    wScales = Array.from({ length: perChannel ? N : 1 }, () => 0.001 + r.next() * 0.02);
    const typical = Math.max(1, spread * spread * Math.sqrt(K));
    outScale = ((inScale * wScales[0] * typical) / 40) * (0.25 + r.next() * 2);
  }

  const x = Array.from({ length: M * K }, () => near(r, xDtype, xZp, spread));
  const w = [];
  for (let j = 0; j < N; j++) for (let k = 0; k < K; k++) w.push(near(r, wDtype, wZps[perChannel ? j : 0], spread));

  const biasKind = r.pick(mode === 'fixedpoint' ? ['none', 'float', 'float', 'int32'] : ['none', 'float', 'float']);
  let bias = null;
  if (biasKind === 'float') {
    bias = new Float32Array(N);
    for (let j = 0; j < N; j++) {
      const wScale = wScales[perChannel ? j : 0];
      // Tie sets: multiples of half the accumulator scale, so bias / (in_s * w_s) and the qnnpack
      // bias rounding land on .5 too; otherwise arbitrary floats.
      bias[j] = ties ? f32(f32(inScale) * f32(wScale)) * (r.int(-400, 400) / 2) : f32((r.next() * 2 - 1) * 3);
    }
  } else if (biasKind === 'int32') {
    bias = Int32Array.from({ length: N }, () => r.int(-(2 ** 20), 2 ** 20));
  }
  return {
    M, K, N, x, xDtype, xZp, w, wDtype, wZps, perChannel, inScale, wScales, outScale,
    outZp: edgeZeroPoint(r, outDtype), outDtype, relu: r.next() < 0.3, bias,
    label: `${mode} #${index}`,
  };
}

function describeCase(c) {
  return `${c.label}: M=${c.M} K=${c.K} N=${c.N} x ${c.xDtype} zp ${c.xZp}, w ${c.wDtype} ${c.perChannel ? 'per-channel' : 'per-tensor'}, ` +
    `scales ${c.inScale} ${c.wScales.slice(0, 3).join('/')} ${c.outScale}, out ${c.outDtype} zp ${c.outZp}${c.relu ? ' relu' : ''}, ` +
    `bias ${c.bias === null ? 'none' : c.bias.constructor.name}`;
}

/** Runs a case through qwasm; `via` picks where the mode is given (packLinear or the linear call). */
function runQwasm(c, mode, via) {
  const created = [];
  const track = (t) => (created.push(t), t);
  try {
    const x = track(qwasm.fromIntRepr(c.x, [c.M, c.K], c.inScale, c.xZp, c.xDtype));
    const w = track(c.perChannel
      ? qwasm.fromIntReprPerChannel(c.w, [c.N, c.K], c.wScales, c.wZps, 0, c.wDtype)
      : qwasm.fromIntRepr(c.w, [c.N, c.K], c.wScales[0], c.wZps[0], c.wDtype));
    const packed = track(via === 'pack' ? qwasm.packLinear(w, c.bias, { mode }) : qwasm.packLinear(w, c.bias));
    const options = { scale: c.outScale, zeroPoint: c.outZp, dtype: c.outDtype, relu: c.relu };
    if (via === 'call') options.mode = mode;
    const y = track(qwasm.linear(x, packed, options));
    assert.deepEqual(y.shape, [c.M, c.N]);
    assert.equal(y.dtype, c.outDtype);
    assert.equal(y.qZeroPoint(), c.outZp);
    return Array.from(y.intRepr());
  } finally {
    for (const t of created.reverse()) t.dispose();
  }
}

function sweep(mode, reference, seed, count) {
  const r = rng(seed);
  const stats = { ties: 0, srdhmTies: 0, rdbpotTies: 0, outputs: 0, saturated: 0 };
  for (let index = 0; index < count; index++) {
    const c = makeCase(r, mode, index);
    const expected = reference(c, stats);
    const got = runQwasm(c, mode, index % 4 === 3 ? 'call' : 'pack');
    assertBitEqual(assert, got, expected, describeCase(c));
    const [lo, hi] = RANGE[c.outDtype];
    stats.outputs += expected.length;
    stats.saturated += expected.filter((v) => v === lo || v === hi).length;
  }
  return stats;
}

// ---- discriminating cases ----------------------------------------------------------------------
// Random data rarely separates the exact float32 / integer formula from a near miss (another
// operation order, a double where the reference rounds to float, ...). These cases are searched for:
// per-channel columns whose weight scale (and bias) make the exact formula and a named wrong variant
// give different outputs for some raw sum, which the grid below then contains.
//
// The grid reaches any raw sum in [-16192, 16192]: K = 2, row i of x is [i, 255] (quint8, zero point
// 128, so a - zp = [i - 128, 127]) and column j of W is [1, q_j] (qint8, zero point 0):
// raw[i][j] = (i - 128) + 127 q_j, i = 0..255.
const IN_SCALE = 0.0371; // not float32 values: the modes round them differently
const OUT_SCALE = 0.0039; // 1 / 0.0039f is far from a float32: qnnpack's act * (1 / out) differs from act / out

function gridCase(columns, label) {
  const M = 256;
  const N = columns.length;
  const x = [];
  for (let i = 0; i < M; i++) x.push(i, 255);
  const w = [];
  for (const col of columns) {
    const q = clamp(Math.round(col.raw / 127), -128, 127);
    assert.ok(Math.abs(col.raw - 127 * q) <= 127, `raw ${col.raw} outside the grid`);
    w.push(1, q);
  }
  const bias = columns.some((col) => col.intBias) ? Int32Array.from(columns, (col) => col.bias)
    : columns.some((col) => col.bias !== 0) ? Float32Array.from(columns, (col) => col.bias) : null;
  return {
    M, K: 2, N, x, xDtype: 'quint8', xZp: 128, w, wDtype: 'qint8', wZps: columns.map(() => 0), perChannel: true,
    inScale: IN_SCALE, wScales: columns.map((col) => col.wScale), outScale: OUT_SCALE, outZp: 0, outDtype: 'qint8',
    relu: false, bias, label,
  };
}

/** Searches a (wScale, bias, raw) whose outputs differ between `exact(raw)` and `wrong(raw)`. */
function findColumn(r, name, propose, exact, wrong, worth = () => true) {
  for (let trial = 0; trial < 4000; trial++) {
    const col = propose();
    for (let raw = col.from; raw <= col.to; raw++) {
      if (!worth(col, raw)) continue;
      const e = exact(col, raw);
      if (Math.abs(e) <= 100 && e !== wrong(col, raw)) return { wScale: col.wScale, bias: col.bias, raw };
    }
  }
  throw new Error(`no case found that tells '${name}' from the reference formula`);
}

function rawWindow(center, multiplier) {
  const half = Math.min(16000, Math.ceil(110 / multiplier));
  return [Math.max(-16000, center - half), Math.min(16000, center + half)];
}

const FBGEMM_WRONG = ['reciprocal-multiplier', 'multiplier-in-double', 'scales-in-double', 'reciprocal-bias', 'product-in-double'];
const FIXEDPOINT_WRONG = ['float-scales', 'bias-division', 'bias-scale-in-float'];

function fbgemmColumn(r, variant) {
  const propose = () => {
    const wScale = 0.002 + r.next() * 0.02;
    const act = f32(f32(IN_SCALE) * f32(wScale));
    const bias = variant.endsWith('-bias') ? f32(act * (r.next() * 2 - 1) * 12000) : 0;
    const [from, to] = rawWindow(-Math.round(bias / act), (IN_SCALE * wScale) / OUT_SCALE);
    return { wScale, bias, from, to };
  };
  const value = (v) => (col, raw) => fbgemmValue(raw, IN_SCALE, col.wScale, OUT_SCALE, col.bias, v);
  return findColumn(r, variant, propose, value('exact'), value(variant));
}

function fixedpointColumn(r, variant) {
  const withBias = variant.startsWith('bias-');
  const propose = () => {
    const wScale = 0.002 + r.next() * 0.02;
    const bias = withBias ? f32(f32(IN_SCALE * wScale) * (r.next() * 2 - 1) * 12000) : 0;
    const col = { wScale, bias, from: 1, to: 0 };
    col.m0 = fixedpointMultiplier(IN_SCALE, wScale, OUT_SCALE)[0];
    col.m0Wrong = fixedpointMultiplier(IN_SCALE, wScale, OUT_SCALE, variant)[0];
    col.biasQ = bias === 0 ? 0 : quantizeBias(bias, IN_SCALE, wScale);
    // Only columns whose two formulas disagree before the multiply are worth a scan.
    if (col.biasQ !== (bias === 0 ? 0 : quantizeBias(bias, IN_SCALE, wScale, variant)) || col.m0 !== col.m0Wrong) {
      [col.from, col.to] = rawWindow(-col.biasQ, (IN_SCALE * wScale) / OUT_SCALE);
    }
    return col;
  };
  const value = (v) => (col, raw) => {
    const [m0, shift] = fixedpointMultiplier(IN_SCALE, col.wScale, OUT_SCALE, v);
    const x = raw + (col.bias === 0 ? 0 : quantizeBias(col.bias, IN_SCALE, col.wScale, v));
    return fixedpointValue(x, m0, shift, { srdhmTies: 0, rdbpotTies: 0 });
  };
  // Different m0 (same x): SaturatingRoundingDoublingHighMul's x * m0 / 2^31 must lie within
  // x * |m0 - m0'| / 2^31 of a half for the results to differ (doubles are exact: |x * m0| < 2^53).
  const worth = (col, raw) => {
    if (col.m0 === col.m0Wrong) return true;
    const x = raw + col.biasQ;
    const n = (x * Number(col.m0)) / 2 ** 31;
    return Math.abs(n - Math.floor(n) - 0.5) <= (Math.abs(x) * Math.abs(Number(col.m0 - col.m0Wrong)) + 1) / 2 ** 31;
  };
  return findColumn(r, variant, propose, value('exact'), value(variant), worth);
}

/**
 * A column that tells QuantizeMultiplier's std::round from a truncation of m0: m0 - 1 instead of m0
 * moves x * m0 by x, which shows only when x * m0 lies within x of a rounding boundary (odds of about
 * 1e-7 per x for outputs near 100), so x = raw + int32 bias is searched for directly, on doubles
 * (x * m0 < 2^53), then checked with the BigInt reference.
 */
function truncatedM0Column(r) {
  for (let trial = 0; trial < 2000; trial++) {
    const wScale = 1e-5 + r.next() * 1e-4; // multipliers ~1e-4: x up to ~1e6
    const [m0, shift] = fixedpointMultiplier(IN_SCALE, wScale, OUT_SCALE);
    const [m0t, shiftT] = fixedpointMultiplier(IN_SCALE, wScale, OUT_SCALE, 'truncated-m0');
    if (m0 === m0t || shift !== shiftT || shift > 0) continue;
    const m = Number(m0);
    const top = Math.min(2 ** 21, Math.floor((100 * 2 ** (31 - shift)) / m));
    for (let x = top; x > top / 2; x--) {
      // SaturatingRoundingDoublingHighMul rounds x * m0 / 2^31; with m0 - 1 its result can change
      // only when that quotient is within x / 2^31 of a half.
      const n = (x * m) / 2 ** 31;
      if (Math.abs(n - Math.floor(n) - 0.5) > (x + 1) / 2 ** 31) continue;
      const stats = { srdhmTies: 0, rdbpotTies: 0 };
      const sign = r.next() < 0.5 ? -1 : 1;
      const e = fixedpointValue(sign * x, m0, shift, stats);
      if (e !== fixedpointValue(sign * x, m0t, shift, stats)) {
        const raw = r.int(-120, 120);
        return { wScale, bias: sign * x - raw, raw, intBias: true };
      }
    }
  }
  throw new Error("no case found that tells 'truncated-m0' from the reference formula");
}

describe('discriminating cases: the exact operation order of each formula, searched for', () => {
  test('fixedpoint: truncated-m0 would fail (int32 bias)', () => {
    const r = rng(0xd15c3);
    const columns = [truncatedM0Column(r), truncatedM0Column(r), truncatedM0Column(r)];
    const c = gridCase(columns, 'fixedpoint m0 rounding grid');
    const expected = fixedpointReference(c);
    assert.notDeepEqual(fixedpointReference(c, undefined, 'truncated-m0'), expected, "the grid does not tell 'truncated-m0' from the formula");
    assertBitEqual(assert, runQwasm(c, 'fixedpoint', 'pack'), expected, c.label);
  });

  for (const [mode, wrongs, column, reference] of [
    ['fbgemm', FBGEMM_WRONG, fbgemmColumn, fbgemmReference],
    ['fixedpoint', FIXEDPOINT_WRONG, fixedpointColumn, fixedpointReference],
  ]) {
    test(`${mode}: ${wrongs.join(', ')} would each fail`, () => {
      const r = rng(mode === 'fbgemm' ? 0xd15c1 : 0xd15c2);
      const columns = [];
      const owners = [];
      for (const variant of wrongs) {
        for (let copy = 0; copy < 2; copy++) {
          columns.push(column(r, variant));
          owners.push(variant);
        }
      }
      const c = gridCase(columns, `${mode} discriminating grid`);
      const expected = reference(c);
      for (const variant of wrongs) {
        const wrong = reference(c, undefined, variant);
        assert.notDeepEqual(wrong, expected, `the grid does not tell '${variant}' from the formula`);
      }
      assertBitEqual(assert, runQwasm(c, mode, 'pack'), expected, `${c.label} (columns for ${owners.join(', ')})`);
    });
  }
});

describe("requantization mode 'fbgemm' equals FBGEMM's float formula", () => {
  test('random shapes, per-tensor and per-channel weights, float bias, relu, edge zero points, .5 ties', () => {
    const stats = sweep('fbgemm', fbgemmReference, 0xfb6e3, 400);
    assert.ok(stats.ties >= 200, `only ${stats.ties} output-visible .5 ties`);
    assert.ok(stats.saturated < stats.outputs * 0.6, `${stats.saturated} of ${stats.outputs} outputs saturated`);
  });

  test('lrintf ties go to even, not away from zero: hand-made values', () => {
    // x = 1 row, K = 1: raw = (a - a_zp) * (w - w_zp); multiplier 0.5 -> raw / 2.
    const c = {
      M: 1, K: 1, N: 6, xDtype: 'quint8', xZp: 0, x: [1], wDtype: 'qint8', wZps: [0], perChannel: false,
      w: [1, 3, 5, -1, -3, -5], inScale: 0.5, wScales: [0.25], outScale: 0.25, outZp: 10, outDtype: 'quint8',
      relu: false, bias: null, label: 'fbgemm hand-made',
    };
    const expected = fbgemmReference(c, { ties: 0 });
    assert.deepEqual(expected, [10, 12, 12, 10, 8, 8]); // 0.5->0, 1.5->2, 2.5->2, -0.5->0, -1.5->-2, -2.5->-2
    assertBitEqual(assert, runQwasm(c, 'fbgemm', 'pack'), expected, c.label);
  });
});

describe("requantization mode 'fixedpoint' equals gemmlowp / TFLite fixed point", () => {
  test('random shapes, per-tensor and per-channel weights, float and int32 bias, relu, edge zero points, ties', () => {
    const stats = sweep('fixedpoint', fixedpointReference, 0xf1c5ed, 400);
    assert.ok(stats.srdhmTies >= 200, `only ${stats.srdhmTies} SaturatingRoundingDoublingHighMul ties`);
    assert.ok(stats.rdbpotTies >= 200, `only ${stats.rdbpotTies} RoundingDivideByPOT ties`);
    assert.ok(stats.saturated < stats.outputs * 0.6, `${stats.saturated} of ${stats.outputs} outputs saturated`);
  });

  test('ties: SRDHM rounds up, RoundingDivideByPOT away from zero: hand-made values', () => {
    // multiplier 0.25 = 2^30 * 2^(-1 - 31): m0 = 2^30, shift = -1.
    assert.deepEqual(quantizeMultiplier(0.25), [1n << 30n, -1]);
    const c = {
      M: 1, K: 1, N: 8, xDtype: 'qint8', xZp: 0, x: [1], wDtype: 'qint8', wZps: [0], perChannel: false,
      w: [1, 2, 3, 6, -1, -2, -3, -6], inScale: 0.5, wScales: [0.5], outScale: 1, outZp: 0, outDtype: 'qint8',
      relu: false, bias: null, label: 'fixedpoint hand-made',
    };
    const expected = fixedpointReference(c, { srdhmTies: 0, rdbpotTies: 0 });
    // raw/4: SRDHM(raw, 2^30) = round(raw/2) ties up, then /2 half away from zero.
    // 1: srdhm 1 (0.5 up), /2 -> 0.5 -> 1.   2: 1 -> 1.   3: 2 -> 1.   6: 3 -> 1.5 -> 2.
    // -1: srdhm 0 (-0.5 up) -> 0.   -2: -1 -> -0.5 -> -1.   -3: -1 (-1.5 up) -> -1.   -6: -3 -> -1.5 -> -2.
    assert.deepEqual(expected, [1, 1, 1, 2, 0, -1, -1, -2]);
    assertBitEqual(assert, runQwasm(c, 'fixedpoint', 'pack'), expected, c.label);
  });

  test('multipliers beyond the Q31 range: tiny (shift < -31 gives zero), large exponents, and 1.0', () => {
    const r = rng(0x5eed);
    for (const [inScale, wScale, outScale] of [
      [1e-6, 1e-6, 100], // ~1e-14: QuantizeMultiplier returns (0, 0), every output is the zero point
      [1e-3, 1e-3, 1e3], // 1e-9: shift -29
      [0.5, 0.5, 0.25], // exactly 1.0: m0 = 2^30, shift 1
      [3, 2, 0.01], // 600: shift 10, small sums only
    ]) {
      const m = (inScale * wScale) / outScale;
      const spread = m > 1 ? 1 : 127;
      const c = {
        M: 3, K: 5, N: 9, xDtype: 'quint8', xZp: 128, wDtype: 'qint8', wZps: [0], perChannel: false,
        inScale, wScales: [wScale], outScale, outZp: 7, outDtype: 'qint8', relu: false, bias: null,
        label: `fixedpoint multiplier ${m}`,
      };
      c.x = Array.from({ length: c.M * c.K }, () => near(r, 'quint8', 128, spread));
      c.w = Array.from({ length: c.N * c.K }, () => near(r, 'qint8', 0, spread));
      const expected = fixedpointReference(c, { srdhmTies: 0, rdbpotTies: 0 });
      if (m < 2 ** -32) assert.ok(expected.every((v) => v === 7));
      assertBitEqual(assert, runQwasm(c, 'fixedpoint', 'pack'), expected, c.label);
    }
  });
});

test("matmul with semantics 'pytorch-x86' requantizes in FBGEMM's form, b packed or not", () => {
  // An unpacked b passed the form 'x86' on unresolved, and the C side received code 0, qnnpack's form (found by the
  // fuzzer's checked calls, seed 115). The grid's columns tell FBGEMM's act / out from qnnpack's act * (1 / out).
  const r = rng(20261125);
  const c = gridCase([0, 1, 2].map(() => fbgemmColumn(r, 'reciprocal-multiplier')), 'matmul pytorch-x86');
  const expected = fbgemmReference(c);
  assert.notDeepEqual(fbgemmReference(c, undefined, 'reciprocal-multiplier'), expected, "the grid does not tell qnnpack's order from FBGEMM's");
  const created = [];
  const track = (t) => (created.push(t), t);
  try {
    const x = track(qwasm.fromIntRepr(c.x, [c.M, c.K], c.inScale, c.xZp, c.xDtype));
    const columns = Array.from({ length: c.K * c.N }, (_, i) => c.w[(i % c.N) * c.K + Math.floor(i / c.N)]); // [K, N]
    const b = track(qwasm.fromIntReprPerChannel(columns, [c.K, c.N], c.wScales, c.wZps, 1, c.wDtype));
    const out = { scale: c.outScale, zeroPoint: c.outZp, dtype: c.outDtype };
    const unpacked = track(qwasm.matmul(x, b, { ...out, semantics: 'pytorch-x86' }));
    const packed = track(qwasm.matmul(x, track(qwasm.packMatMul(b, { semantics: 'pytorch-x86' })), out));
    assertBitEqual(assert, Array.from(unpacked.intRepr()), expected, 'b unpacked');
    assertBitEqual(assert, Array.from(packed.intRepr()), expected, 'b packed');
  } finally {
    for (const t of created.reverse()) t.dispose();
  }
});
