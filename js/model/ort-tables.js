// com.microsoft QLinearSigmoid and QLinearLeakyRelu as ONNX Runtime computes them: a 256-entry table
// (contrib_ops/cpu/quantization/qlinear_lookup_table.cc) built by dequantizing every byte
// (x_scale * (x - x_zp) in float32), applying the float function, and quantizing with QuantizeLinear's
// rule (x / y_scale, ties to even, + y_zp, saturate). Sigmoid is MLAS's rational approximation of the
// logistic function (mlas/lib/logistic.cpp, Eigen's coefficients), evaluated here one float32
// operation at a time (mul then add: the wasm build has no FMA), so the table equals ORT's byte for byte.
const f = Math.fround;

const LOGISTIC = {
  lower: f(-18), upper: f(18),
  alpha: [4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05, 8.51377133304701e-03, 2.48287947061529e-01].map(f),
  beta: [6.10247389755681e-13, 5.76102136993427e-09, 6.29106785017040e-06, 1.70198817374094e-03, 1.16817656904453e-01, 9.93151921023180e-01].map(f),
};

/** MLAS's logistic(v) in float32. */
export function mlasLogistic(value) {
  const v = Math.min(Math.max(value, LOGISTIC.lower), LOGISTIC.upper);
  const v2 = f(v * v);
  const [a9, a7, a5, a3, a1] = LOGISTIC.alpha;
  let p = f(f(v2 * a9) + a7);
  for (const a of [a5, a3, a1]) p = f(f(p * v2) + a);
  p = f(p * v);
  const [b10, b8, ...rest] = LOGISTIC.beta;
  let q = f(f(v2 * b10) + b8);
  for (const b of rest) q = f(f(q * v2) + b);
  return Math.min(Math.max(f(f(p / q) + 0.5), 0), 1);
}

/** nearbyint under the default rounding mode: ties to even. */
export function roundHalfEven(x) {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** QuantizeLinear's rule for one value: float32 x / scale, ties to even, + zero point, saturated to [qmin, qmax]. */
export function quantizeLinearValue(x, scale, zeroPoint, qmin, qmax) {
  return Math.min(qmax, Math.max(qmin, roundHalfEven(f(x / f(scale))) + zeroPoint));
}

/** The table: entry b is the output byte for input byte b (for int8, b holds the two's complement of q). */
function buildTable(fn, signed, xScale, xZeroPoint, yScale, yZeroPoint) {
  const [qmin, qmax] = signed ? [-128, 127] : [0, 255];
  const xs = f(xScale);
  const table = new Uint8Array(256);
  for (let b = 0; b < 256; b++) {
    const x = signed && b > 127 ? b - 256 : b;
    const y = fn(f(xs * (x - xZeroPoint)));
    const q = quantizeLinearValue(y, yScale, yZeroPoint, qmin, qmax);
    table[b] = q & 255;
  }
  return table;
}

export function sigmoidTable(signed, xScale, xZeroPoint, yScale, yZeroPoint) {
  return buildTable(mlasLogistic, signed, xScale, xZeroPoint, yScale, yZeroPoint);
}

export function leakyReluTable(alpha, signed, xScale, xZeroPoint, yScale, yZeroPoint) {
  const a = f(alpha);
  return buildTable((v) => (v >= 0 ? v : f(a * v)), signed, xScale, xZeroPoint, yScale, yZeroPoint);
}
