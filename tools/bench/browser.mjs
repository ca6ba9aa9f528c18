// npm run bench:browser: qwasm (1 and 2 threads), onnxruntime-web (1 and 2 threads) and XNNPACK through LiteRT.js
// (1 and 2 threads) in ONE headless Chromium page (Debian's chromium through playwright-core), each runtime in its
// own worker (tools/bench/browser/runner.js), on the same inputs: the single-op cases of tools/bench/cases.mjs and
// MobileNetV2 (the QDQ file of tools/bench/mobilenet_v2.py; its int8 TFLite twin written by tools/bench/tflite.mjs)
// and the MiniLM-sized q8 encoder of tools/transformer/bert.py (qwasm and onnxruntime-web).
// Batches of each runtime are interleaved (rotated every round) and the medians of the batch medians reported with
// GOPS, ratios and how far each output is from onnxruntime-web's (1 thread).
// qwasm runs twice per thread count: SIMD128 (relaxedSimd: false) and with relaxedSimd: true, which runs the relaxed
// kernels where the engine's probe allows them and SIMD128 elsewhere (the runtime line says which); --force-relaxed
// runs the relaxed kernels regardless, for their timing only (on engines the probe refuses, their outputs differ).
// --wasm-paths A,B,... runs qwasm once per folder of .wasm builds instead (SIMD128 only, or with --relaxed the relaxed
// build of each folder where the probe allows it; each labelled with its folder's name), interleaved like the
// runtimes: an A/B of two builds in one page. --js-flags passes V8 flags to Chromium: with
// --perf-prof its V8 writes jitdump files (machine code) into the working directory, which tools/bench/jitdump.py reads.
// --profile N: after timing, each qwasm runtime runs the models N more times with Model.run's per-node profile and
// the script prints the time per operator type and the slowest nodes (medians per node).
//   node tools/bench/browser.mjs [--filter S] [--rounds N] [--batch-ms N] [--no-model] [--runtimes qwasm,ort,litert]
//                                [--threads 1,2] [--force-relaxed] [--wasm-paths DIR,DIR] [--js-flags FLAGS] [--json FILE]
//                                [--profile N] [--relaxed]
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import * as qwasm from '../../js/index.js';
import { serve } from '../serve.mjs';
import { ALL_CASES, QPARAMS, caseData } from './cases.mjs';
import { qlinearConvModel, qlinearMatMulModel } from './ort.mjs';
import { benchCaseTflite, modelTflite } from './tflite.mjs';
import { miniLmModels, profileByOp } from './transformer-bench.mjs';

const argv = process.argv.slice(2);
const arg = (name, def) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : def);
const filter = arg('--filter', '');
const rounds = Number(arg('--rounds', 9));
const batchMs = Number(arg('--batch-ms', 150));
const runtimes = arg('--runtimes', 'qwasm,ort,litert').split(',');
const threadCounts = arg('--threads', '1,2').split(',').map(Number);
const jsonFile = arg('--json', null);
const wasmDirs = arg('--wasm-paths', null)?.split(',');
const jsFlags = arg('--js-flags', null);
const profileReps = Number(arg('--profile', 0));
const withModel = !argv.includes('--no-model') && 'MobileNetV2'.includes(filter);
const withTransformer = !argv.includes('--no-model') && 'MiniLM q8'.includes(filter);

const root = fileURLToPath(new URL('../../', import.meta.url));
const out = `${root}build/bench-browser/`;
const models = `${root}build/models/`;
mkdirSync(out, { recursive: true });

// LiteRT.js imports its helper package by bare name; a worker has no import map, so a copy points at the file.
// Its JS API maps float32 / int32 / uint8 arrays to tensors but not int8 ones (the wasm side copies bytes of any
// type): the copy adds the int8 entry, so that XNNPACK runs the int8 models on int8 tensors with nothing added.
const litertCore = readFileSync(`${root}node_modules/@litertjs/core/dist/index.js`, 'utf8');
const DATATYPES = 'var DATATYPES = Object.freeze([';
if (!litertCore.includes(DATATYPES)) throw new Error('@litertjs/core changed: its DATATYPES table was not found');
writeFileSync(`${out}litert-core.js`, litertCore
  .replaceAll('"@litertjs/wasm-utils"', '"../../node_modules/@litertjs/wasm-utils/dist/index.js"')
  .replace(DATATYPES, `${DATATYPES}\n  { dtype: "int8", typedArrayConstructor: Int8Array, elementType: ElementType.INT8 },`));

const cases = ALL_CASES.filter((c) => c.name.includes(filter));
for (const c of cases) {
  const d = caseData(c);
  const file = c.name.replace(/[^a-z0-9]+/gi, '_');
  writeFileSync(`${out}${file}.onnx`, c.kind === 'gemm' ? qlinearMatMulModel(c, d.b) : qlinearConvModel(c, d.w, d.bias));
  writeFileSync(`${out}${file}.tflite`, benchCaseTflite(c, d, QPARAMS));
}

let model = null;
if (withModel) {
  const qdq = `${models}mobilenet_v2_int8_qdq.onnx`;
  if (!existsSync(qdq)) {
    execFileSync('/usr/bin/python3', [`${root}tools/bench/mobilenet_v2.py`, models], { stdio: 'inherit' });
  }
  await qwasm.init();
  const m = await qwasm.loadModel(new Uint8Array(readFileSync(qdq)));
  writeFileSync(`${out}mobilenet_v2.tflite`, modelTflite(m));
  const last = m.layers.find((l) => l.opType === 'DequantizeLinear');
  model = {
    name: 'MobileNetV2', onnx: 'build/models/mobilenet_v2_int8_qdq.onnx', tflite: 'build/bench-browser/mobilenet_v2.tflite',
    dims: m.inputs[0].dims, outputScale: last.input.scale,
  };
  m.dispose();
}

const labels = { qwasm: 'qwasm', ort: 'ORT-web', litert: 'XNNPACK' };
const forceRelaxed = argv.includes('--force-relaxed');
const relaxedBuilds = argv.includes('--relaxed');
// Each build's .wasm files copied under the served root (the page can load nothing outside it).
const builds = (wasmDirs ?? []).map((dir, i) => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.wasm'));
  if (!files.includes('qwasm-simd.wasm')) throw new Error(`--wasm-paths: ${resolve(dir)} has no qwasm-simd.wasm`);
  const served = `build/bench-browser/wasm-${i}/`;
  mkdirSync(`${root}${served}`, { recursive: true });
  for (const f of files) copyFileSync(`${dir}/${f}`, `${root}${served}${f}`);
  return { name: basename(resolve(dir)), served };
});
const repeated = new Set(builds.map((b) => b.name).filter((name, i, names) => names.indexOf(name) !== i));
builds.forEach((b, i) => { if (repeated.has(b.name)) b.name = `${i + 1}:${b.name}`; });
const runners = [];
for (const runtime of runtimes) {
  for (const threads of threadCounts) {
    if (runtime === 'qwasm' && builds.length > 0) {
      for (const b of builds) {
        runners.push({ label: `qwasm ${threads}T ${b.name}`, runtime, threads, wasm: b.served, ...(relaxedBuilds ? { relaxed: true } : {}) });
      }
      continue;
    }
    runners.push({ label: `${labels[runtime]} ${threads}T`, runtime, threads });
    if (runtime === 'qwasm') {
      runners.push({ label: `qwasm ${threads}T relaxed`, runtime, threads, relaxed: forceRelaxed ? 'force' : true });
    }
  }
}
// The transformers.js-style q8 encoder (qwasm and onnxruntime-web only: XNNPACK has no such file) on its recorded
// int64 inputs; the same file and inputs as npm run bench's transformer rows.
let transformer = null;
const minilm = withTransformer ? miniLmModels() : null;
if (minilm) {
  const file = minilm.record.files.opset14_q8.file;
  transformer = { name: 'MiniLM q8', onnx: `${minilm.dir.slice(root.length)}${file}`, inputs: minilm.record.inputs[0] };
}
const config = { rounds, batchMs, gapMs: 20, runners, cases: cases.map((c) => c.name), model, transformer, profileReps };
writeFileSync(`${out}config.json`, JSON.stringify(config));

const load = loadavg()[0];
console.log(`Chromium headless, ${cpus().length} cores (${cpus()[0].model}), load ${load.toFixed(2)}; rounds ${rounds}, batches of ~${batchMs} ms`);
// qwasm's ONNX reader imports protobufjs by bare name, which a worker (no import map) cannot resolve: the page is
// served a copy that imports the module handing over the browser build's global (runner.js loads that build).
const onnxReader = readFileSync(`${root}js/model/onnx.js`, 'utf8');
const PROTOBUF_IMPORT = "from 'protobufjs/light.js';";
if (!onnxReader.includes(PROTOBUF_IMPORT)) throw new Error('js/model/onnx.js changed: its protobufjs import was not found');
const replaced = { '/js/model/onnx.js': onnxReader.replace(PROTOBUF_IMPORT, "from '../runtime/protobuf-global.js';") };
const { server, url } = await serve(root, 0, '127.0.0.1', { replaced });
const browser = await chromium.launch({
  executablePath: process.env.QWASM_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', ...(jsFlags ? [`--js-flags=${jsFlags}`] : [])],
});
let result;
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  page.on('console', (m) => m.type() === 'warning' || m.type() === 'error' ? console.error(`page ${m.type()}: ${m.text()}`) : null);
  await page.goto(`${url}tools/bench/browser/index.html?config=${encodeURIComponent(`${url}build/bench-browser/config.json`)}`);
  await page.waitForFunction(() => window.benchResult !== undefined, null, { timeout: 60 * 60 * 1000, polling: 1000 });
  result = await page.evaluate(() => window.benchResult);
} finally {
  await browser.close();
  server.close();
}
if (result.error) {
  console.error(result.error);
  process.exit(1);
}
console.log(result.userAgent.match(/Chrome\/[\d.]+/)?.[0], `cross-origin isolated: ${result.isolated}, hardwareConcurrency ${result.cores}`);
for (const [label, info] of Object.entries(result.infos)) console.log(`  ${label}: ${JSON.stringify(info)}`);
console.log(`load average after: ${loadavg()[0].toFixed(2)}; agreement: identical outputs vs ${result.reference} (max difference in output steps)`);
const pad = (s, n) => String(s).padStart(n);
for (const row of result.rows) {
  console.log(`\n${row.name}${row.macs ? ` (${(row.macs / 1e6).toFixed(1)} M MACs)` : ''}`);
  console.log(`${'runtime'.padEnd(24)}${pad('ms', 9)}${pad('GOPS', 8)}${pad('vs XNNPACK', 12)}${pad('vs ORT', 9)}  agreement`);
  for (const [label, r] of Object.entries(row.results)) {
    const threads = label.split(' ')[1];
    const x = row.results[`XNNPACK ${threads}`];
    const o = row.results[`ORT-web ${threads}`];
    const a = r.agreement;
    const agree = `${(a.identical * 100).toFixed(2)}% (max ${a.maxSteps})${a.top1 !== undefined ? `, top-1 ${a.top1 === a.refTop1 ? 'same' : 'differs'}` : ''}`;
    console.log(`${label.padEnd(24)}${pad(r.ms.toFixed(3), 9)}${pad(r.gops ? r.gops.toFixed(1) : '', 8)}` +
      `${pad(x ? `${(x.ms / r.ms).toFixed(2)}x` : '', 12)}${pad(o ? `${(o.ms / r.ms).toFixed(2)}x` : '', 9)}  ${agree}`);
  }
}
for (const row of result.rows) {
  for (const [label, nodes] of Object.entries(row.profiles ?? {})) {
    const total = nodes.reduce((sum, n) => sum + n.ms, 0);
    console.log(`\n${row.name}, ${label}: profile (medians of ${profileReps} runs per node; sum ${total.toFixed(3)} ms)`);
    for (const { opType, ms, count } of profileByOp(nodes)) {
      console.log(`  ${opType.padEnd(28)}${pad(ms.toFixed(3), 9)} ms ${pad((100 * ms / total).toFixed(1), 6)}% ${pad(count, 4)} nodes`);
    }
    console.log('  slowest nodes:');
    for (const n of [...nodes].sort((a, b) => b.ms - a.ms).slice(0, 12)) {
      console.log(`  ${`${n.name} (${n.opType})`.slice(0, 60).padEnd(62)}${pad(n.ms.toFixed(3), 9)} ms`);
    }
  }
}
if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ load, ...result }, null, 1));
