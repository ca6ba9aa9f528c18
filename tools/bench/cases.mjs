// Benchmark cases and their deterministic inputs, shared by every benchmark
// backend (onnxruntime-web in ort.mjs, qwasm elsewhere) so that all of them
// run on byte-identical data.
//
// Layouts are the ONNX ones: GEMM A uint8 [M,K] row-major, B int8 [K,N]
// row-major; conv X uint8 NCHW [1,Cin,H,W], W int8 OIHW [Cout,Cin/group,kh,kw],
// bias int32 [Cout]. Quantization: A/X scale 0.02 zp 128, B/W per-tensor scale
// 0.01 zp 0, Y uint8 scale 0.05 zp 128.

/** mulberry32: tiny seeded PRNG returning uint32 values. */
export function mulberry32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** FNV-1a of a string, used to derive a per-case seed from its name. */
export function seedOf(str) {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) h = Math.imul(h ^ str.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export function randU8(rng, n) {
  const a = new Uint8Array(n);
  for (let i = 0; i < n; i++) a[i] = rng() & 0xff;
  return a;
}
export function randI8(rng, n) {
  const a = new Int8Array(n);
  for (let i = 0; i < n; i++) a[i] = (rng() & 0xff) - 128;
  return a;
}
/** int32 uniform in [lo, hi]. */
export function randI32(rng, n, lo = -1024, hi = 1024) {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = lo + (rng() % (hi - lo + 1));
  return a;
}

export const QPARAMS = Object.freeze({
  xScale: 0.02, xZp: 128, // activations (uint8)
  wScale: 0.01, wZp: 0, // weights (int8, per-tensor)
  yScale: 0.05, yZp: 128, // output (uint8)
});

export const GEMM_CASES = [
  [1, 1024, 1024],
  [64, 1024, 1024],
  [256, 1024, 1024],
  [196, 576, 64],
  [3136, 576, 64],
].map(([M, K, N]) => ({ kind: 'gemm', name: `gemm ${M}x${K}x${N}`, M, K, N, macs: M * K * N }));

function convCase(name, { cin, cout, k, group = 1, pad = 0, stride = 1, h = 56, w = 56, n = 1 }) {
  const hout = Math.floor((h + 2 * pad - k) / stride) + 1;
  const wout = Math.floor((w + 2 * pad - k) / stride) + 1;
  return {
    kind: 'conv', name, N: n, Cin: cin, Cout: cout, H: h, W: w, kh: k, kw: k, group, pad, stride,
    Hout: hout, Wout: wout, macs: n * cout * hout * wout * (cin / group) * k * k,
  };
}

export const CONV_CASES = [
  convCase('conv3x3 64->64 56x56', { cin: 64, cout: 64, k: 3, pad: 1 }),
  convCase('dw3x3 64 56x56', { cin: 64, cout: 64, k: 3, pad: 1, group: 64 }),
  convCase('conv1x1 64->256 56x56', { cin: 64, cout: 256, k: 1 }),
];

export const ALL_CASES = [...GEMM_CASES, ...CONV_CASES];

/**
 * Deterministic data for a case: GEMM -> { a, b }; conv -> { x, w, bias }.
 * Seeded from the case name, so every backend sees the same bytes.
 */
export function caseData(c) {
  const rng = mulberry32(seedOf(c.name));
  if (c.kind === 'gemm') {
    return { a: randU8(rng, c.M * c.K), b: randI8(rng, c.K * c.N) };
  }
  const x = randU8(rng, c.N * c.Cin * c.H * c.W);
  const w = randI8(rng, c.Cout * (c.Cin / c.group) * c.kh * c.kw);
  const bias = randI32(rng, c.Cout);
  return { x, w, bias };
}

/** FNV-1a 32-bit checksum of a byte view, as 8 hex digits. */
export function checksum(arr) {
  const u8 = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
  let h = 0x811c9dc5;
  for (let i = 0; i < u8.length; i++) h = Math.imul(h ^ u8[i], 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** Round half to even, as nearbyintf in the default rounding mode. */
function rne(v) {
  const r = Math.round(v);
  return Math.abs(v - Math.trunc(v)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** Requantize an int32 accumulator the way ONNX Runtime does (float32 scale). */
export function requant(acc, q = QPARAMS) {
  const f = Math.fround;
  const scale = f(f(f(q.xScale) * f(q.wScale)) / f(q.yScale));
  const y = rne(f(f(acc) * scale)) + q.yZp;
  return y < 0 ? 0 : y > 255 ? 255 : y;
}

/** Reference value of one output element (flat index) of a case. */
export function referenceAt(c, d, idx, q = QPARAMS) {
  let acc = 0;
  if (c.kind === 'gemm') {
    const m = Math.floor(idx / c.N), n = idx % c.N;
    for (let k = 0; k < c.K; k++) acc += (d.a[m * c.K + k] - q.xZp) * (d.b[k * c.N + n] - q.wZp);
    return requant(acc, q);
  }
  const hw = c.Hout * c.Wout;
  const co = Math.floor(idx / hw) % c.Cout, oy = Math.floor((idx % hw) / c.Wout), ox = idx % c.Wout;
  const cpg = c.Cin / c.group, g = Math.floor(co / (c.Cout / c.group));
  for (let ci = 0; ci < cpg; ci++) {
    for (let ky = 0; ky < c.kh; ky++) {
      for (let kx = 0; kx < c.kw; kx++) {
        const iy = oy * c.stride - c.pad + ky, ix = ox * c.stride - c.pad + kx;
        if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.W) continue; // padding = x zero point
        const xv = d.x[((g * cpg + ci) * c.H + iy) * c.W + ix] - q.xZp;
        acc += xv * (d.w[((co * cpg + ci) * c.kh + ky) * c.kw + kx] - q.wZp);
      }
    }
  }
  return requant(acc + d.bias[co], q);
}

/**
 * Compare `samples` pseudo-random output elements against the reference.
 * Returns { samples, exact, maxDiff }.
 */
export function spotCheck(c, d, y, samples = 256, q = QPARAMS) {
  const rng = mulberry32(seedOf(`${c.name}/check`));
  let exact = 0, maxDiff = 0;
  for (let s = 0; s < samples; s++) {
    const idx = rng() % y.length;
    const diff = Math.abs(referenceAt(c, d, idx, q) - y[idx]);
    if (diff === 0) exact++;
    maxDiff = Math.max(maxDiff, diff);
  }
  return { samples, exact, maxDiff };
}

/** Output statistics for a plausibility check. */
export function outputStats(y) {
  let zeros = 0, sat = 0, sum = 0;
  for (let i = 0; i < y.length; i++) {
    if (y[i] === 0) zeros++;
    else if (y[i] === 255) sat++;
    sum += y[i];
  }
  const clipped = (zeros + sat) / y.length;
  return { zeros, sat, mean: sum / y.length, clipped, plausible: zeros < y.length && sat < y.length && clipped < 0.999 };
}
