// onnxruntime-web (wasm EP, 1 thread, SIMD build) side of the benchmark.
//
//   node tools/bench/ort.mjs [--filter SUBSTR] [--min-ms 1500] [--min-runs 20] [--warmup 3]
//                            [--opt-level all|extended|basic|disabled] [--json]
//
// Library use:
//   import { createOrtRunner, timeIt, qlinearMatMulModel, qlinearConvModel } from './ort.mjs';
//   const runner = await createOrtRunner(modelBytes);
//   const { y } = await runner.run({ a: { type: 'uint8', data, dims: [M, K] } });
//   const t = await timeIt(() => runner.run(feeds), { minMs: 1500, minRuns: 20, warmup: 3 });

import * as ort from 'onnxruntime-web';
import { pathToFileURL } from 'node:url';
import { singleNodeModel } from './onnx-model.mjs';
import { ALL_CASES, QPARAMS, caseData, checksum, outputStats, spotCheck } from './cases.mjs';

export { ort };

let configured = false;
function configureOrt() {
  if (configured) return;
  configured = true;
  ort.env.wasm.numThreads = 1; // single-threaded: compare one core against one core
  ort.env.wasm.simd = true; // only checks SIMD support; 1.2x+ ship a single SIMD build
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
}

/**
 * Create an onnxruntime-web session on the wasm EP from serialized model bytes.
 * run(feeds) accepts ort.Tensor values or { type, data, dims } objects and
 * resolves to { outputName: typed array } (output dims in runner.lastDims).
 */
export async function createOrtRunner(modelBytes, sessionOptions = {}) {
  configureOrt();
  const session = await ort.InferenceSession.create(modelBytes, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    ...sessionOptions,
  });
  const toTensor = (v) => (v instanceof ort.Tensor ? v : new ort.Tensor(v.type, v.data, v.dims));
  const runner = {
    session,
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    lastDims: {},
    /** Build ort.Tensor feeds once, so timing loops measure only session.run. */
    prepare(feeds) {
      return Object.fromEntries(Object.entries(feeds).map(([k, v]) => [k, toTensor(v)]));
    },
    async runRaw(tensors) {
      return session.run(tensors);
    },
    async run(feeds) {
      const out = await session.run(runner.prepare(feeds));
      const res = {};
      for (const [k, t] of Object.entries(out)) {
        res[k] = t.data;
        runner.lastDims[k] = t.dims;
      }
      return res;
    },
    release: () => session.release(),
  };
  return runner;
}

/**
 * Time an (async or sync) function: `warmup` untimed calls, then timed calls
 * until at least `minMs` total AND at least `minRuns` runs (capped by maxMs /
 * maxRuns). Returns { medianMs, minMs, meanMs, runs, totalMs }.
 */
export async function timeIt(fn, { minMs = 1500, minRuns = 20, warmup = 3, maxMs = 30000, maxRuns = 100000 } = {}) {
  for (let i = 0; i < warmup; i++) await fn();
  const times = [];
  const start = performance.now();
  let total = 0;
  while (times.length < maxRuns) {
    const t0 = performance.now();
    await fn();
    const t1 = performance.now();
    times.push(t1 - t0);
    total = t1 - start;
    if ((total >= minMs && times.length >= minRuns) || total >= maxMs) break;
  }
  const sorted = [...times].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return {
    medianMs: median,
    minMs: sorted[0],
    meanMs: times.reduce((a, b) => a + b, 0) / times.length,
    runs: times.length,
    totalMs: total,
  };
}

const scalar = (name, elemType, v) => ({ name, elemType, dims: [], data: [v] });

/** QLinearMatMul: A uint8 [M,K] input, B int8 [K,N] initializer, Y uint8 [M,N]. */
export function qlinearMatMulModel({ M, K, N }, b, q = QPARAMS, opset = 13) {
  return singleNodeModel({
    opType: 'QLinearMatMul',
    opset,
    inputs: [{ name: 'a', elemType: 'UINT8', dims: [M, K] }],
    initializers: [
      scalar('a_scale', 'FLOAT', q.xScale),
      scalar('a_zero_point', 'UINT8', q.xZp),
      { name: 'b', elemType: 'INT8', dims: [K, N], data: b },
      scalar('b_scale', 'FLOAT', q.wScale),
      scalar('b_zero_point', 'INT8', q.wZp),
      scalar('y_scale', 'FLOAT', q.yScale),
      scalar('y_zero_point', 'UINT8', q.yZp),
    ],
    outputs: [{ name: 'y', elemType: 'UINT8', dims: [M, N] }],
  });
}

/** QLinearConv (NCHW): X uint8 input, W int8 OIHW + int32 bias initializers. */
export function qlinearConvModel(c, w, bias, q = QPARAMS, opset = 13) {
  return singleNodeModel({
    opType: 'QLinearConv',
    opset,
    inputs: [{ name: 'x', elemType: 'UINT8', dims: [c.N, c.Cin, c.H, c.W] }],
    initializers: [
      scalar('x_scale', 'FLOAT', q.xScale),
      scalar('x_zero_point', 'UINT8', q.xZp),
      { name: 'w', elemType: 'INT8', dims: [c.Cout, c.Cin / c.group, c.kh, c.kw], data: w },
      scalar('w_scale', 'FLOAT', q.wScale),
      scalar('w_zero_point', 'INT8', q.wZp),
      scalar('y_scale', 'FLOAT', q.yScale),
      scalar('y_zero_point', 'UINT8', q.yZp),
      { name: 'bias', elemType: 'INT32', dims: [c.Cout], data: bias },
    ],
    outputs: [{ name: 'y', elemType: 'UINT8', dims: [c.N, c.Cout, c.Hout, c.Wout] }],
    attributes: {
      kernel_shape: [c.kh, c.kw],
      pads: [c.pad, c.pad, c.pad, c.pad],
      strides: [c.stride, c.stride],
      dilations: [1, 1],
      group: c.group,
    },
  });
}

/** Build the ORT model + input feed for one case from cases.mjs. */
export function ortCaseSetup(c) {
  const d = caseData(c);
  if (c.kind === 'gemm') {
    return { d, model: qlinearMatMulModel(c, d.b), feeds: { a: { type: 'uint8', data: d.a, dims: [c.M, c.K] } } };
  }
  return {
    d,
    model: qlinearConvModel(c, d.w, d.bias),
    feeds: { x: { type: 'uint8', data: d.x, dims: [c.N, c.Cin, c.H, c.W] } },
  };
}

/** Run and time every case (optionally filtered); returns result rows. */
export async function benchOrt({
  filter = '', minMs = 1500, minRuns = 20, warmup = 3, optLevel = 'all', log = console.log,
} = {}) {
  const rows = [];
  for (const c of ALL_CASES.filter((x) => x.name.includes(filter))) {
    const { d, model, feeds } = ortCaseSetup(c);
    const runner = await createOrtRunner(model, { graphOptimizationLevel: optLevel });
    const tensors = runner.prepare(feeds);
    const out = await runner.runRaw(tensors);
    const y = out.y.data;
    const stats = outputStats(y);
    const check = spotCheck(c, d, y);
    const t = await timeIt(() => runner.runRaw(tensors), { minMs, minRuns, warmup });
    await runner.release();
    const row = {
      name: c.name, macs: c.macs, ...t,
      gops: (2 * c.macs) / (t.medianMs * 1e6),
      peakGops: (2 * c.macs) / (t.minMs * 1e6),
      checksum: checksum(y), clipped: stats.clipped, plausible: stats.plausible,
      refExact: check.exact, refSamples: check.samples, refMaxDiff: check.maxDiff,
    };
    rows.push(row);
    log?.(formatRow(row));
  }
  return rows;
}

export const TABLE_HEADER =
  'case                        MMACs   median ms     min ms  runs   GOPS(med)  GOPS(min)  checksum  clip%  ref';
export function formatRow(r) {
  const p = (s, n) => String(s).padStart(n);
  return (
    r.name.padEnd(24) + p((r.macs / 1e6).toFixed(1), 9) + p(r.medianMs.toFixed(3), 12) + p(r.minMs.toFixed(3), 11) +
    p(r.runs, 6) + p(r.gops.toFixed(2), 12) + p(r.peakGops.toFixed(2), 11) + '  ' + r.checksum +
    p((100 * r.clipped).toFixed(0), 6) + `  ${r.refExact}/${r.refSamples}${r.refMaxDiff ? ` max|d|=${r.refMaxDiff}` : ''}` +
    (r.plausible ? '' : '  IMPLAUSIBLE')
  );
}

async function main(argv) {
  const arg = (name, def) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : def;
  };
  const json = argv.includes('--json');
  const opts = {
    filter: arg('--filter', ''),
    minMs: Number(arg('--min-ms', 1500)),
    minRuns: Number(arg('--min-runs', 20)),
    warmup: Number(arg('--warmup', 3)),
    optLevel: arg('--opt-level', 'all'), // disabled | basic | extended | layout | all
  };
  if (!json) {
    console.log(`onnxruntime-web ${ort.env.versions.web} (wasm EP, numThreads=1, SIMD, graphOptimizationLevel=${opts.optLevel}), node ${process.version}`);
    console.log(TABLE_HEADER);
  }
  const rows = await benchOrt({ ...opts, log: json ? null : console.log });
  if (json) console.log(JSON.stringify(rows, null, 1));
  if (rows.some((r) => !r.plausible)) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv.slice(2));
}
