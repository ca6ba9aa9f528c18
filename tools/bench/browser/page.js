// The browser benchmark's page (npm run bench:browser drives it through tools/bench/browser.mjs): every runtime
// in its own worker (runner.js), all on the same inputs, timed in interleaved batches so that a change in the
// machine's load falls on all of them alike. Publishes window.benchResult.
import { ALL_CASES, QPARAMS, caseData, mulberry32 } from '../cases.mjs';

const params = new URLSearchParams(location.search);
const config = await (await fetch(params.get('config'))).json();
const root = new URL('../../../', import.meta.url).href;
const status = (text) => (document.querySelector('#status').textContent = text);

class Runner {
  #worker;
  #pending = new Map();
  #next = 0;
  constructor(spec) {
    this.spec = spec;
    this.#worker = new Worker(new URL('./runner.js', import.meta.url));
    this.#worker.onmessage = ({ data }) => {
      const { resolve, reject } = this.#pending.get(data.id);
      this.#pending.delete(data.id);
      if (data.error) reject(new Error(`${spec.label}: ${data.error}`));
      else resolve(data);
    };
    this.#worker.onerror = (e) => {
      for (const { reject } of this.#pending.values()) reject(new Error(`${spec.label}: worker error ${e.message}`));
    };
  }
  call(message) {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...message, id });
    });
  }
  terminate() {
    this.#worker.terminate();
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Every runtime's inputs for a case, from the same bytes. */
function inputsFor(c) {
  const d = caseData(c);
  if (c.kind === 'gemm') {
    d.aI8 = Int8Array.from(d.a, (v) => v - 128);
    return { d, dims: [c.M, c.K], tfliteDims: [c.M, c.K] };
  }
  const { N, Cin, H, W } = c;
  d.xNhwc = new Uint8Array(d.x.length);
  for (let ch = 0; ch < Cin; ch++) for (let p = 0; p < H * W; p++) d.xNhwc[p * Cin + ch] = d.x[ch * H * W + p];
  d.xNhwcI8 = Int8Array.from(d.xNhwc, (v) => v - 128);
  return { d, dims: [N, Cin, H, W], tfliteDims: [N, H, W, Cin] };
}

/** An op's output as NCHW / [M, N] uint8, whatever layout and signedness its runtime gave. */
function canonical(c, runtime, y) {
  if (runtime !== 'litert') return Uint8Array.from(y);
  const u8 = Uint8Array.from(y, (v) => v + 128);
  if (c.kind === 'gemm') return u8;
  const out = new Uint8Array(u8.length);
  const hw = c.Hout * c.Wout;
  for (let p = 0; p < hw; p++) for (let ch = 0; ch < c.Cout; ch++) out[ch * hw + p] = u8[p * c.Cout + ch];
  return out;
}

/** Agreement of an output with the reference's: share of identical elements and the largest difference. */
function agreement(ref, y, step = 1) {
  let same = 0;
  let maxDiff = 0;
  for (let i = 0; i < ref.length; i++) {
    const diff = Math.abs(ref[i] - y[i]) / step;
    if (diff === 0) same++;
    maxDiff = Math.max(maxDiff, diff);
  }
  return { identical: same / ref.length, maxSteps: Math.round(maxDiff * 1000) / 1000 };
}

const top1 = (y) => y.indexOf(Math.max(...y));

async function benchCase(runners, name, specOf, outputOf, macs, referenceLabel) {
  const key = name;
  const outputs = {};
  for (const r of runners) {
    status(`${name}: loading ${r.spec.label}`);
    const { output } = await r.call({ type: 'load', key, spec: specOf(r.spec) });
    outputs[r.spec.label] = outputOf(r.spec, output);
  }
  // Batches of about batchMs per runtime, rotated so that each runtime runs in every position.
  const perRun = {};
  for (const r of runners) {
    const { ms } = await r.call({ type: 'time', key, reps: 2 });
    perRun[r.spec.label] = Math.max(0.01, Math.min(...ms));
  }
  const batches = Object.fromEntries(runners.map((r) => [r.spec.label, []]));
  for (let round = 0; round < config.rounds; round++) {
    status(`${name}: round ${round + 1} of ${config.rounds}`);
    for (let i = 0; i < runners.length; i++) {
      const r = runners[(i + round) % runners.length];
      // samples of at least 0.25 ms (the clock's 5 us step then is 2% at most), up to 200 per batch
      const inner = Math.ceil(0.25 / perRun[r.spec.label]);
      const reps = Math.max(1, Math.min(200, Math.round(config.batchMs / (inner * perRun[r.spec.label]))));
      const { ms } = await r.call({ type: 'time', key, reps, inner });
      batches[r.spec.label].push(median(ms));
      await sleep(config.gapMs); // let the other runtimes' spinning workers go to sleep
    }
  }
  const profiles = {};
  if (config.profileReps > 0) {
    for (const r of runners) {
      status(`${name}: profiling ${r.spec.label}`);
      const { nodes } = await r.call({ type: 'profile', key, reps: config.profileReps });
      if (nodes) profiles[r.spec.label] = nodes;
    }
  }
  for (const r of runners) await r.call({ type: 'unload', key });
  const ref = outputs[referenceLabel];
  return {
    name,
    macs,
    profiles,
    results: Object.fromEntries(runners.map((r) => {
      const label = r.spec.label;
      const ms = median(batches[label]);
      return [label, { ms, batches: batches[label], gops: macs ? (2 * macs) / ms / 1e6 : null, agreement: outputs[label].compare(ref) }];
    })),
  };
}

async function main() {
  const runners = config.runners.map((spec) => new Runner(spec));
  const infos = {};
  for (const r of runners) {
    status(`starting ${r.spec.label}`);
    infos[r.spec.label] = (await r.call({ type: 'init', runtime: r.spec.runtime, threads: r.spec.threads, relaxed: r.spec.relaxed, wasm: r.spec.wasm, root })).info;
  }
  const rows = [];
  const reference = config.runners.find((s) => s.runtime === 'ort' && s.threads === 1)?.label ?? config.runners[0].label;
  for (const c of ALL_CASES.filter((x) => config.cases.includes(x.name))) {
    const { d, dims, tfliteDims } = inputsFor(c);
    const file = c.name.replace(/[^a-z0-9]+/gi, '_');
    const specOf = (s) => ({
      kind: 'op', case: c, d, q: QPARAMS, dims, tfliteDims,
      modelUrl: `${root}build/bench-browser/${file}.onnx`, tfliteUrl: `${root}build/bench-browser/${file}.tflite`,
    });
    const outputOf = (s, y) => {
      const u8 = canonical(c, s.runtime, y);
      return { compare: (ref) => agreement(ref.bytes, u8), bytes: u8 };
    };
    rows.push(await benchCase(runners, c.name, specOf, outputOf, c.macs, reference));
  }
  if (config.model) {
    const { dims, outputScale } = config.model;
    const [n, ch, h, w] = dims;
    const rng = mulberry32(12345);
    const nchw = Float32Array.from({ length: n * ch * h * w }, () => ((rng() & 0xffff) / 0xffff) * 4 - 2);
    const nhwc = new Float32Array(nchw.length);
    for (let k = 0; k < ch; k++) for (let p = 0; p < h * w; p++) nhwc[p * ch + k] = nchw[k * h * w + p];
    const input = { nchw, nhwc, dims, nhwcDims: [n, h, w, ch] };
    const specOf = () => ({
      kind: 'model', input, modelUrl: `${root}${config.model.onnx}`, tfliteUrl: `${root}${config.model.tflite}`,
    });
    const outputOf = (s, y) => {
      const f = Float32Array.from(y);
      return {
        values: f,
        compare: (ref) => ({ ...agreement(ref.values, f, outputScale), top1: top1(Array.from(f)), refTop1: top1(Array.from(ref.values)) }),
      };
    };
    rows.push(await benchCase(runners, config.model.name, specOf, outputOf, 0, reference));
  }
  if (config.transformer) {
    // qwasm and onnxruntime-web (XNNPACK has no such file); float outputs, compared value by value
    const { inputs, onnx } = config.transformer;
    const specOf = () => ({ kind: 'transformer', inputs, modelUrl: `${root}${onnx}` });
    const outputOf = (s, y) => {
      const f = Float32Array.from(y);
      return { values: f, compare: (ref) => agreement(ref.values, f) };
    };
    const some = runners.filter((r) => r.spec.runtime !== 'litert');
    rows.push(await benchCase(some, config.transformer.name, specOf, outputOf, 0, reference));
  }
  for (const r of runners) r.terminate();
  window.benchResult = { infos, rows, reference, userAgent: navigator.userAgent, cores: navigator.hardwareConcurrency, isolated: crossOriginIsolated };
  status('done');
}

main().catch((error) => {
  window.benchResult = { error: `${error.message}\n${error.stack}` };
  status(`failed: ${error.message}`);
});
