// qwasm/reference (js/reference.js) states every per-element rule in plain JS; here each rule is swept against the
// wasm kernel that computes it, QNNPACK-requantization-tester style: exact powers of two, INT32_MIN / INT32_MAX,
// exact ties, huge and tiny values, NaN / ±Inf / -0. The golden data of tests/fixtures proves the kernels right
// against PyTorch and ONNX; this proves the page-level rules equal the kernels, so the demo can show them.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import * as ref from '../../js/reference.js';
import { DTYPE_RANGE, failOnLeaks, qwasm, using } from './helpers.js';
import { mulberry32 } from '../../tools/bench/cases.mjs';

failOnLeaks(before, afterEach);

const f32 = Math.fround;

/** Values around every tie and edge of (scale, zero point) for a dtype. */
function sweepInputs(scale, rand) {
  const xs = [0, -0, NaN, Infinity, -Infinity, 1e30, -1e30, 3e9, -3e9, 2 ** 24 + 1, 1e-30, -1e-30, f32(1.401298464324817e-45)];
  for (let k = -300; k <= 300; k++) {
    const tie = (k + 0.5) * scale;
    xs.push(tie, f32(tie), tie * (1 + 2 ** -23), tie * (1 - 2 ** -23), k * scale);
  }
  for (let i = 0; i < 2000; i++) xs.push((rand() - 0.5) * 600 * scale, (rand() - 0.5) * 2 ** (rand() * 64 - 32));
  return Float32Array.from(xs);
}

const SCALES = [1, 0.5, 2 ** -7, 2 ** 10, 0.00214854861, 0.1, 1 / 3, 0.0196078438, 3.0517578125e-5, 1e-30, 7.5e28];

test('quantizeTorch and quantizeOnnx equal qw_quantize: every dtype, tie-prone and power-of-two scales', () => {
  const rand = mulberry32(11);
  let checked = 0;
  for (const dtype of ['quint8', 'qint8', 'qint32']) {
    const [qmin, qmax] = DTYPE_RANGE[dtype];
    for (const scale of SCALES) {
      const xs = sweepInputs(scale, rand);
      for (const zp of dtype === 'quint8' ? [0, 128, 255, 3] : dtype === 'qint8' ? [0, -128, 127, -5] : [0, 7, -(2 ** 31), 2 ** 31 - 1]) {
        for (const rounding of ['torch', 'onnx', 'fbgemm']) {
          // FBGEMM's vector rule quantizes 8-bit tensors, its scalar rule qint32 ones
          const rule = { torch: ref.quantizeTorch, onnx: ref.quantizeOnnx, fbgemm: dtype === 'qint32' ? ref.quantizeFbgemmScalar : ref.quantizeFbgemm }[rounding];
          using(qwasm.quantizePerTensor(xs, [xs.length], scale, zp, dtype, { rounding }))((q) => {
            const ints = q.intRepr();
            for (let i = 0; i < xs.length; i++) {
              const want = rule(xs[i], scale, zp, qmin, qmax);
              if (ints[i] !== want) assert.fail(`${rounding} ${dtype} scale ${scale} zp ${zp}: x = ${xs[i]} gives ${ints[i]} in wasm, ${want} in reference.js`);
            }
            checked += xs.length;
          });
        }
      }
    }
  }
  assert.ok(checked > 1e6, `${checked} values`);
});

test('dequantize and dequantizePerChannel equal the wasm kernels, qint32 wrap-around included', () => {
  const ints = Int32Array.from([0, 1, -1, 127, -128, 255, 2 ** 31 - 1, -(2 ** 31), 2 ** 24 + 1, -(2 ** 24) - 3, 123456789]);
  for (const scale of SCALES) {
    for (const zp of [0, 5, -(2 ** 31), 2 ** 31 - 1]) {
      using(qwasm.fromIntRepr(ints, [ints.length], scale, zp, 'qint32'))((q) => {
        const got = q.dequantize();
        ints.forEach((v, i) => assert.ok(Object.is(got[i], ref.dequantize(v, scale, zp)), `scale ${scale} zp ${zp} q ${v}: ${got[i]} vs ${ref.dequantize(v, scale, zp)}`));
      });
    }
  }
  const scales = [0.1, 1 / 3, 2 ** -20, 0.30000000000000004]; // float64 channel scales, as torch keeps them
  const bytes = Int8Array.from({ length: 4 * 256 }, (_, i) => (i % 256) - 128);
  using(qwasm.fromIntReprPerChannel(bytes, [4, 256], scales, [0, -3, 17, 127], 0, 'qint8'))((q) => {
    const got = q.dequantize();
    bytes.forEach((v, i) => {
      const c = Math.floor(i / 256);
      assert.ok(Object.is(got[i], ref.dequantizePerChannel(v, scales[c], [0, -3, 17, 127][c])), `channel ${c} q ${v}`);
    });
  });
});

/**
 * Requantizes the int32 values `xs` through the GEMM's output stage: a 1-input linear layer whose input equals its
 * zero point (so every accumulator is 0) and whose int32 bias of channel j is xs[j]; per-channel weight scales make
 * one multiplier per channel. Returns the output integers.
 */
function requantizeInWasm(form, xs, { inScale, weightScales, outScale, outZeroPoint, dtype, floatBias, perTensor }) {
  const n = xs.length;
  const w = perTensor
    ? qwasm.fromIntRepr(new Int8Array(n).fill(1), [n, 1], weightScales[0], 0, 'qint8')
    : qwasm.fromIntReprPerChannel(new Int8Array(n).fill(1), [n, 1], weightScales, new Array(n).fill(0), 0, 'qint8');
  const bias = floatBias ? Float32Array.from(xs) : Int32Array.from(xs);
  return using(w, qwasm.fromIntRepr([7], [1, 1], inScale, 7, 'quint8'))((weight, x) => {
    const packed = qwasm.packLinear(weight, bias, { mode: form });
    try {
      return using(qwasm.linear(x, packed, { scale: outScale, zeroPoint: outZeroPoint, dtype }))((y) => y.intRepr());
    } finally {
      packed.dispose();
    }
  });
}

const EDGES = [0, 1, -1, 2, -2, 3, 127, 128, -129, 255, 2 ** 15, 2 ** 24 + 1, -(2 ** 24) - 1, 2 ** 30, -(2 ** 30), 2 ** 31 - 1, -(2 ** 31), 2 ** 31 - 2, -(2 ** 31) + 1, 123456789, -987654321];

test('requantize equals the GEMM output stage for every form: ties, powers of two, INT32_MIN / INT32_MAX', () => {
  const rand = mulberry32(5);
  const xs = [...EDGES, ...Array.from({ length: 200 }, (_, i) => 2 * i + 1 - 200), ...Array.from({ length: 200 }, () => Math.floor((rand() - 0.5) * 2 ** 32))];
  // multipliers: exact halves (ties on odd x), powers of two both ways, and arbitrary ones
  const cases = [
    { inScale: 1, weightScales: [1], outScale: 2 },
    { inScale: 0.25, weightScales: [0.5], outScale: 0.125 },
    { inScale: 2 ** -10, weightScales: [2 ** -8], outScale: 2 ** 3 },
    { inScale: 0.0213, weightScales: [0.0041], outScale: 0.173 },
    { inScale: 0.5, weightScales: [1e-6], outScale: 1e-3 },
    { inScale: 3.1, weightScales: [7.7], outScale: 1e-4 },
  ];
  let checked = 0;
  const biasKinds = { onnx: [false], onednn: [true] }; // the int32 bias of ONNX, the float bias of oneDNN
  for (const form of ['qnnpack', 'fbgemm', 'onednn', 'onnx', 'fixedpoint']) {
    for (const floatBias of biasKinds[form] ?? [false, true]) {
      for (const [c, perTensor] of cases.flatMap((k) => [[k, false], [k, true]])) {
        for (const [dtype, zps] of [['quint8', [0, 128, 255]], ['qint8', [-128, 0, 127]]]) {
          for (const zp of zps) {
            const [qmin, qmax] = DTYPE_RANGE[dtype];
            const weightScales = xs.map((_, j) => c.weightScales[j % c.weightScales.length]);
            const got = requantizeInWasm(form, xs, { ...c, weightScales, outZeroPoint: zp, dtype, floatBias, perTensor });
            xs.forEach((x, j) => {
              // an int32 bias goes in as it is; a float bias through the form's own bias rule
              const params = ref.requantizationParams(form, { inScale: c.inScale, weightScale: weightScales[j], outScale: c.outScale, bias: floatBias ? f32(x) : 0, perChannel: !perTensor });
              if (!floatBias) params.biasInt = x;
              const want = ref.requantize(form, 0, params, zp, qmin, qmax);
              if (got[j] !== want) assert.fail(`${form} ${floatBias ? 'float' : 'int32'} bias ${x}, ${JSON.stringify(c)} ${perTensor ? 'per tensor' : 'per channel'}, ${dtype} zp ${zp}: wasm ${got[j]}, reference.js ${want}`);
            });
            checked += xs.length;
          }
        }
      }
    }
  }
  assert.ok(checked > 30000, `${checked} values`);
});

test('fmaf rounds a * b + c once, where the float64 sum alone would round twice', () => {
  // 1 + 2^-24 is a float32 midpoint; the product's tail decides the direction
  assert.equal(ref.fmaf(1 + 2 ** -23, 2 ** -24 + 2 ** -47, 1), 1 + 2 ** -23);
  assert.equal(ref.fmaf(1 - 2 ** -24, 2 ** -24, 1), 1); // just below the midpoint: down
  assert.equal(ref.fmaf(3, 1 / 3, 0), f32(3 * f32(1 / 3)));
  assert.ok(Number.isNaN(ref.fmaf(NaN, 1, 0)));
  assert.equal(ref.fmaf(Infinity, 1, -1), Infinity);
});

test('the fixed-point pieces: quantizeMultiplier, SRDHM and RDBPOT at their edges', () => {
  assert.deepEqual(ref.quantizeMultiplier(0.5), { m0: 2 ** 30, shift: 0 });
  assert.deepEqual(ref.quantizeMultiplier(1), { m0: 2 ** 30, shift: 1 });
  assert.deepEqual(ref.quantizeMultiplier(0.75), { m0: 1610612736, shift: 0 });
  assert.deepEqual(ref.quantizeMultiplier(1 - 2 ** -40), { m0: 2 ** 30, shift: 1 }); // rounds up to 2^31: halved, shift + 1
  assert.deepEqual(ref.quantizeMultiplier(0), { m0: 0, shift: 0 });
  assert.deepEqual(ref.quantizeMultiplier(2 ** -40), { m0: 0, shift: 0 });
  assert.deepEqual(ref.quantizeMultiplier(2 ** 40), { m0: 2 ** 31 - 1, shift: 30 });
  assert.equal(ref.srdhm(-(2 ** 31), -(2 ** 31)), 2 ** 31 - 1); // the one saturating case
  assert.equal(ref.srdhm(2 ** 30, 2 ** 30), 2 ** 29);
  assert.equal(ref.srdhm(1, 2 ** 30), 1); // 0.5 rounds toward +infinity
  assert.equal(ref.srdhm(-1, 2 ** 30), 0); // -0.5 too
  assert.equal(ref.rdbpot(5, 1), 3); // 2.5 -> 3: half away from zero
  assert.equal(ref.rdbpot(-5, 1), -3);
  assert.equal(ref.rdbpot(-(2 ** 31), 31), -1);
  assert.equal(ref.rdbpot(2 ** 31 - 1, 31), 1);
  assert.equal(ref.roundHalfEven(2.5), 2);
  assert.equal(ref.roundHalfEven(-2.5), -2);
  assert.equal(ref.roundHalfEven(-1.5), -2);
  assert.equal(ref.roundHalfAway(-2.5), -3);
  assert.equal(ref.wrapInt32(2 ** 31), -(2 ** 31));
});

test('SQNR accumulates over samples and says what it could not measure', () => {
  const s = new ref.Sqnr();
  assert.equal(s.db, null);
  s.add([1, 2], [1, 2]);
  assert.equal(s.db, Infinity);
  s.add([3, 4], [3, 5]);
  assert.equal(s.db, 10 * Math.log10((1 + 4 + 9 + 16) / 1));
  assert.throws(() => s.add([1], [1, 2]), /1 reference values but 2 approximations/);
  assert.equal(ref.sqnrDb([1, -1], [0.5, -0.5]), 10 * Math.log10(2 / 0.5));
});

test('dynamicQParams and dynamicMatMulOutput equal the dynamic int8 kernels (qw_dynamic_quantize, qw_dynamic_matmul)', async () => {
  const { backend } = await import('../../js/runtime/runtime.js');
  const b = backend();
  const next = mulberry32(23);
  const rand = () => next() / 2 ** 32;
  let checked = 0;
  // ranges that are all positive, all negative, all zero, single values, ties of the zero point, huge and tiny
  const shapes = [
    () => Float32Array.from({ length: 97 }, () => (rand() - 0.5) * 10),
    () => Float32Array.from({ length: 40 }, () => rand() * 3 + 0.5),
    () => Float32Array.from({ length: 40 }, () => -rand() * 3 - 0.5),
    () => new Float32Array(33),
    () => Float32Array.of(-0, 0, -0),
    () => Float32Array.of(-1, 254),
    () => Float32Array.of(-127.5, 127.5),
    () => Float32Array.from({ length: 64 }, () => (rand() - 0.5) * 2 ** (rand() * 80 - 40)),
    () => Float32Array.of(1e-40, -3e-41),
  ];
  for (let trial = 0; trial < 60; trial++) {
    const x = shapes[trial % shapes.length]();
    const n = x.length;
    const p = ref.dynamicQParams(x);
    b.withBuffers([4 * n, n, 8], (px, py, pq) => {
      b.f32(px, n).set(x);
      assert.equal(b.exports.qw_dynamic_quantize(n, px, py, pq, pq + 4), 0);
      const kernelScale = b.f32(pq, 1)[0];
      // qw_dynamic_quantize follows the ONNX function body, which has no usable scale for an all-zero or subnormal
      // range (scale 0 or 1/scale infinite: zeros); onnxruntime, the model loader and the rule compute one
      if (kernelScale === 0 || !Number.isFinite(f32(1 / kernelScale))) return;
      assert.equal(kernelScale, p.scale, `trial ${trial}: scale`);
      assert.equal(b.i32(pq + 4, 1)[0], p.zeroPoint, `trial ${trial}: zero point`);
      const q = b.u8(py, n);
      for (let i = 0; i < n; i++) assert.equal(q[i], ref.quantizeOnnx(x[i], p.scale, p.zeroPoint, 0, 255), `trial ${trial} element ${i}`);
    });
    checked++;
  }
  assert.throws(() => ref.dynamicQParams([1, NaN]), RangeError);
  // The products: random weights and activations, every output element recomputed from exact int32 sums
  for (const [m, n, k, withBias, range] of [[3, 5, 7, true, 6], [4, 16, 33, false, 6], [1, 9, 300, true, 6], [5, 8, 1, true, 6], [2, 8, 5, false, 0]]) {
    const x = Float32Array.from({ length: m * k }, () => (rand() - 0.3) * range);
    const w = Int8Array.from({ length: k * n }, () => Math.floor(rand() * 256) - 128);
    const bScale = f32(0.0037 + rand() * 0.01);
    const bias = withBias ? Float32Array.from({ length: n }, () => (rand() - 0.5) * 2) : null;
    const p = ref.dynamicQParams(x);
    const q = Array.from(x, (v) => ref.quantizeOnnx(v, p.scale, p.zeroPoint, 0, 255));
    const y = b.withBuffers([4 * m * k, k * n, 4, b.size('qw_gemm_pack_size', n, k), 4, 4 * n, 4 * m * n, b.size('qw_dynamic_matmul_workspace_size', m, n, k)],
      (px, pw, pz, packed, ps, pbias, py, ws) => {
        b.f32(px, m * k).set(x);
        b.i8(pw, k * n).set(w);
        b.i32(pz, 1)[0] = 0;
        b.f32(ps, 1)[0] = bScale;
        if (bias) b.f32(pbias, n).set(bias);
        b.call('test', 'qw_gemm_pack', n, k, pw, 1, 1, n, pz, 1, packed);
        b.call('test', 'qw_dynamic_matmul', m, n, k, px, packed, ps, 1, bias ? pbias : 0, py, ws);
        return b.f32(py, m * n).slice();
      });
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let t = 0; t < k; t++) acc += (q[i * k + t] - p.zeroPoint) * w[t * n + j];
        const expected = ref.dynamicMatMulOutput(acc, p.scale, bScale, bias ? bias[j] : undefined);
        assert.ok(Object.is(y[i * n + j], expected), `${m}x${n}x${k} [${i}, ${j}]: kernel ${y[i * n + j]}, rule ${expected}`);
        checked++;
      }
    }
  }
  assert.ok(checked > 200, `${checked} checks`);
});
