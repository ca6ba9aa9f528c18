// ONNX Runtime's float formulas (its MLAS library) that qwasm reproduces in JS, one float32 operation at a
// time (mul then add: the wasm build has no FMA), so results equal onnxruntime-web's bit for bit.
const f = Math.fround;

// MLAS's rational approximation of the logistic function (mlas/lib/logistic.cpp, Eigen's coefficients).
const LOGISTIC = {
  lower: f(-18), upper: f(18),
  alpha: [4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05, 8.51377133304701e-03, 2.48287947061529e-01].map(f),
  beta: [6.10247389755681e-13, 5.76102136993427e-09, 6.29106785017040e-06, 1.70198817374094e-03, 1.16817656904453e-01, 9.93151921023180e-01].map(f),
};

/** MLAS's logistic(v) in float32: ONNX Runtime's float Sigmoid, and the function of its QLinearSigmoid table. */
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
