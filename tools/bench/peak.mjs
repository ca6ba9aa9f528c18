// Single-core peak of i32x4.dot_i16x8_s in V8, from a hand-assembled wasm module; with --relaxed, of
// i32x4.relaxed_dot_i8x16_i7x16_add_s (16 multiply-adds, the accumulator its third operand); with --chromium, in
// Debian's headless Chromium (a page importing this file) instead of this Node.
//
//   node tools/bench/peak.mjs [--ms 100] [--alu] [--relaxed] [--chromium]   (--ms: length of each timed call)
//
// The kernel keeps R "row" vectors x_r and C "column" vectors y_c in locals and
// R*C accumulators; every loop step does, for each (r, c),
//     acc[r][c] = i32x4.add(acc[r][c], i32x4.dot_i16x8_s(x_r, y_c))
// i.e. R*C independent accumulator chains, like a GEMM register tile. All R*C
// dot products have distinct operands (no CSE). TurboFan hoists loop-invariant
// SIMD ops out of loops, so x_r must change every step: by default it is
// reloaded with v128.load (as a GEMM kernel loads A; the load ports are not the
// SIMD ALUs), or with { load: false } it is bumped with i16x8.add (costs one
// ALU op per row per step). The step is unrolled U times per loop iteration.
// One dot_i16x8_s = 8 multiply-adds; G MAC/s = 8 * dots / ns.

// ---- tiny wasm assembler helpers -------------------------------------------
const uleb = (n) => {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const sleb = (n) => {
  const out = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) return out.push(b), out;
    out.push(b | 0x80);
  }
};
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const vec = (items) => [...uleb(items.length), ...items.flat()];
const str = (s) => vec([...new TextEncoder().encode(s)].map((b) => [b]));

const I32 = 0x7f, V128 = 0x7b;
const OP = {
  localGet: (i) => [0x20, ...uleb(i)],
  localSet: (i) => [0x21, ...uleb(i)],
  localTee: (i) => [0x22, ...uleb(i)],
  i32Const: (v) => [0x41, ...sleb(v)],
  i32Add: [0x6a],
  i32Sub: [0x6b],
  loop: [0x03, 0x40],
  end: [0x0b],
  brIf: (d) => [0x0d, ...uleb(d)],
  simd: (op) => [0xfd, ...uleb(op)],
};
const i16x8Splat = OP.simd(0x10);
const i32x4ExtractLane = (l) => [...OP.simd(0x1b), l];
const i16x8Add = OP.simd(0x8e);
const i32x4Add = OP.simd(0xae);
const i32x4DotI16x8S = OP.simd(0xba);
const i32x4RelaxedDotI8x16I7x16AddS = OP.simd(0x113);

/**
 * Assemble a module exporting run(iters: i32) -> i32 with an R x C tile of
 * dot_i16x8_s chains (relaxed: relaxed_dot_i8x16_i7x16_add_s chains), unrolled `unroll` times per loop iteration.
 */
export function buildDotModule(R, C, unroll = 1, { vary = true, dot = true, load = true, relaxed = false } = {}) {
  const P = 0; // param: iteration count
  const X = (r) => 1 + r;
  const Y = (c) => 1 + R + c;
  const A = (r, c) => 1 + R + C + r * C + c;
  const nV128 = R + C + R * C;
  const body = [];
  // x_r = splat(iters + 2r + 1), y_c = splat(iters * 0 + 3c + 2) -- runtime values, not constants
  for (let r = 0; r < R; r++) body.push(...OP.localGet(P), ...OP.i32Const(2 * r + 1), ...OP.i32Add, ...i16x8Splat, ...OP.localSet(X(r)));
  for (let c = 0; c < C; c++) body.push(...OP.localGet(P), ...OP.i32Const(-(3 * c + 2)), ...OP.i32Sub, ...i16x8Splat, ...OP.localSet(Y(c)));
  body.push(...OP.loop);
  for (let u = 0; u < unroll; u++) {
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < C; c++) {
        if (relaxed) {
          body.push(...OP.localGet(X(r)), ...OP.localGet(Y(c)), ...OP.localGet(A(r, c)), ...i32x4RelaxedDotI8x16I7x16AddS,
            ...OP.localSet(A(r, c)));
          continue;
        }
        body.push(...OP.localGet(A(r, c)), ...OP.localGet(X(r)));
        if (dot) body.push(...OP.localGet(Y(c)), ...i32x4DotI16x8S);
        body.push(...i32x4Add, ...OP.localSet(A(r, c)));
      }
    }
    if (load) {
      // x_r reloaded from linear memory each step (like a GEMM kernel's A loads)
      for (let r = 0; r < R; r++) body.push(...OP.i32Const(0), ...OP.simd(0x00), 4, ...uleb(16 * ((u * R + r) % 64)), ...OP.localSet(X(r)));
    } else if (vary) for (let r = 0; r < R; r++) body.push(...OP.localGet(X(r)), ...OP.localGet(Y(0)), ...i16x8Add, ...OP.localSet(X(r)));
  }
  body.push(...OP.localGet(P), ...OP.i32Const(1), ...OP.i32Sub, ...OP.localTee(P), ...OP.brIf(0), ...OP.end);
  // result: sum of lane 0 of all accumulators (keeps every chain live)
  body.push(...OP.i32Const(0));
  for (let i = 0; i < R * C; i++) body.push(...OP.localGet(1 + R + C + i), ...i32x4ExtractLane(0), ...OP.i32Add);
  body.push(...OP.end);
  const func = [...uleb(1), ...uleb(nV128), V128, ...body]; // one local group: nV128 x v128
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([[0x60, ...vec([[I32]]), ...vec([[I32]])]])), // type 0: (i32) -> i32
    ...section(3, vec([uleb(0)])), // func 0 : type 0
    ...(load ? section(5, vec([[0x00, 1]])) : []), // memory: 1 page
    ...section(7, vec([[...str('run'), 0x00, ...uleb(0)]])), // export "run" func 0
    ...section(10, vec([[...uleb(func.length), ...func]])),
  ];
  return new Uint8Array(bytes);
}

// Tile shapes (R x C = chains) tried by default. V8's x64 backend allocates at
// most 15 xmm registers and spills freely, so tiles with more than ~14 live
// vectors (R + C + R*C, plus temporaries), or big unrolls, spill accumulators
// to the stack and run far slower; the sweep keeps the best unroll per tile.
const TILES = [[1, 1], [1, 2], [1, 4], [1, 6], [2, 2], [2, 3], [1, 8], [2, 4], [3, 4]];
const UNROLLS = [1, 2, 3];

/**
 * Measure one tile shape. Calls run() repeatedly (so V8's dynamic tiering has
 * replaced Liftoff code with TurboFan code), then keeps the best of `reps`
 * timed calls of about `ms` milliseconds each.
 */
export async function measureTile(R, C, { ms = 300, reps = 5, warmupMs = 250, unroll, vary = true, dot = true, load = true, relaxed = false } = {}) {
  const chains = R * C;
  const u = unroll ?? Math.max(1, Math.ceil(16 / chains));
  const { instance } = await WebAssembly.instantiate(buildDotModule(R, C, u, { vary, dot, load, relaxed }));
  const run = instance.exports.run;
  const dotsPerIter = chains * u;
  // warm-up / tier-up: growing calls for warmupMs; V8 swaps in TurboFan code between calls
  let iters = 1 << 10, best = Infinity;
  const w0 = performance.now();
  for (let n = 0; n < 12 || performance.now() - w0 < warmupMs; n++) {
    const t0 = performance.now();
    run(iters);
    const elapsed = performance.now() - t0;
    if (elapsed >= 1) best = Math.min(best, elapsed / iters); // a browser's clock steps by 5 to 100 us
    if (iters < 1 << 20 || (best === Infinity && iters < 1 << 30)) iters <<= 1;
  }
  const itersTimed = Math.max(1000, Math.round(ms / best));
  let bestMs = Infinity, sink = 0;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    sink ^= run(itersTimed);
    bestMs = Math.min(bestMs, performance.now() - t0);
  }
  const dots = itersTimed * dotsPerIter;
  return {
    R, C, chains, unroll: u, iters: itersTimed, ms: bestMs,
    gdots: dots / (bestMs * 1e6), gmacs: ((relaxed ? 16 : 8) * dots) / (bestMs * 1e6), sink,
  };
}

/**
 * Effective core clock estimate (GHz): a single dependent chain of i32x4.add
 * (1-cycle latency on current x86/ARM cores) retires one add per cycle.
 */
export async function measureClockGHz({ ms = 200, reps = 5 } = {}) {
  return (await measureTile(1, 1, { ms, reps, unroll: 32, dot: false, vary: false, load: false })).gdots;
}

/**
 * Sweep tile shapes x unroll factors; returns the best { gmacs, chains, R, C,
 * unroll, ... }, the clock estimate, dot_i16x8 per cycle, the 1-chain figure,
 * and the best result per tile in `results`.
 */
export async function measureDotPeak({
  tiles = TILES, unrolls = UNROLLS, passes = 2, ms = 100, reps = 3, load = true, relaxed = false, log = null,
} = {}) {
  // Several passes over the whole grid, best per config: other processes on a
  // shared 2-core VM otherwise make single measurements noisy.
  let clockGHz = 0;
  const bestOf = new Map();
  for (let pass = 0; pass < passes; pass++) {
    clockGHz = Math.max(clockGHz, await measureClockGHz());
    for (const [R, C] of tiles) {
      for (const unroll of unrolls) {
        const r = await measureTile(R, C, { ms, reps, unroll, load, relaxed, warmupMs: 100 });
        const key = `${R}x${C}`;
        if (!bestOf.has(key) || r.gmacs > bestOf.get(key).gmacs) bestOf.set(key, r);
      }
    }
  }
  const results = [...bestOf.values()];
  for (const r of results) {
    r.dotsPerCycle = r.gdots / clockGHz;
    log?.(r);
  }
  const best = results.reduce((x, y) => (y.gmacs > x.gmacs ? y : x));
  const oneChain = results.find((r) => r.chains === 1);
  return {
    gmacs: best.gmacs, gdots: best.gdots, chains: best.chains, R: best.R, C: best.C, unroll: best.unroll,
    dotsPerCycle: best.dotsPerCycle, clockGHz, oneChainGmacs: oneChain?.gmacs, source: load ? 'v128.load' : 'i16x8.add', results,
  };
}

const isMain = typeof process !== 'undefined' && process.argv[1] &&
  import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href;
if (isMain) {
  const i = process.argv.indexOf('--ms');
  const ms = i >= 0 ? Number(process.argv[i + 1]) : 100;
  const load = !process.argv.includes('--alu');
  const relaxed = process.argv.includes('--relaxed');
  const what = relaxed ? 'i32x4.relaxed_dot_i8x16_i7x16_add_s' : 'i32x4.dot_i16x8_s + i32x4.add';
  const print = (line) => console.log(line);
  const log = (r) => print(
    `${r.R}x${r.C}`.padEnd(6) + String(r.chains).padStart(6) + String(r.unroll).padStart(13) +
    r.gdots.toFixed(2).padStart(10) + r.gmacs.toFixed(1).padStart(10) + r.dotsPerCycle.toFixed(2).padStart(11),
  );
  let res;
  if (process.argv.includes('--chromium')) {
    const { chromium } = await import('playwright-core');
    const { serve } = await import('../serve.mjs');
    const root = new URL('../../', import.meta.url).pathname;
    const { server, url } = await serve(root);
    const browser = await chromium.launch({
      executablePath: process.env.QWASM_CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`${url}package.json`);
      print(`${what} peak, ${await page.evaluate(() => navigator.userAgent.match(/Chrome\/[\d.]+/)[0])} (headless)`);
      res = await page.evaluate(async (o) => (await import('/tools/bench/peak.mjs')).measureDotPeak(o), { ms, load, relaxed });
    } finally {
      await browser.close();
      server.close();
    }
  } else {
    print(`${what} peak, V8 ${process.versions.v8}, node ${process.version}`);
    res = await measureDotPeak({ ms, load, relaxed });
  }
  print(`x_r refreshed each step by ${load ? 'v128.load' : 'i16x8.add (--alu)'}`);
  print('tile  chains unroll(best)   G dot/s   G MAC/s  dot/cycle');
  for (const r of res.results) log(r);
  print(`clock estimate (dependent i32x4.add chain): ${res.clockGHz.toFixed(2)} GHz`);
  print(`best: ${res.gmacs.toFixed(1)} G MAC/s (${res.gdots.toFixed(2)} G dots/s, ${res.dotsPerCycle.toFixed(2)}/cycle) ` +
    `with ${res.chains} chains (${res.R}x${res.C} tile, unroll ${res.unroll}); 1 chain: ${res.oneChainGmacs?.toFixed(1)} G MAC/s`);
}
