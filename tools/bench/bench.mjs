// npm run bench: qwasm against onnxruntime-web (wasm backend, 1 thread) in ONE Node process, on the
// same inputs (tools/bench/cases.mjs) and the same single-op ONNX models, plus the measured peak of
// an i32x4.dot_i16x8_s chain. Each case also checks that qwasm's output equals ORT's byte for byte
// (both run ONNX QLinearMatMul / QLinearConv semantics). Then two end-to-end models: MobileNetV2 int8
// (model-bench.mjs) and a MiniLM-sized BERT encoder, q8 and float (transformer-bench.mjs).
// --channels-last gives qwasm's convolutions their input stored channels-last (NHWC bytes viewed as NCHW), as its
// own layers and the browser bench hand it on, instead of NCHW (then converted inside the op).
//   node tools/bench/bench.mjs [--filter S] [--min-ms N] [--json] [--channels-last]
import * as qwasm from '../../js/index.js';
import { ALL_CASES, QPARAMS as Q, caseData, checksum } from './cases.mjs';
import { createOrtRunner, ort, ortCaseSetup, timeIt } from './ort.mjs';
import { measureDotPeak } from './peak.mjs';
import { benchMobileNetV2 } from './model-bench.mjs';
import { benchTransformer } from './transformer-bench.mjs';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from './cases.mjs';

const argv = process.argv.slice(2);
const arg = (name, def) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : def);
const filter = arg('--filter', '');
const minMs = Number(arg('--min-ms', 1500));
const json = argv.includes('--json');
const channelsLast = argv.includes('--channels-last');
const log = json ? () => {} : console.log;

/** qwasm's side of a case: returns { run() -> QTensor, dispose() }. */
function qwasmCase(c, d) {
  const out = { scale: Q.yScale, zeroPoint: Q.yZp, mode: 'onnx' };
  if (c.kind === 'gemm') {
    const a = qwasm.fromIntRepr(d.a, [c.M, c.K], Q.xScale, Q.xZp, 'quint8');
    const b = qwasm.fromIntRepr(d.b, [c.K, c.N], Q.wScale, Q.wZp, 'qint8');
    const packed = qwasm.packMatMul(b, { mode: 'onnx' });
    b.dispose();
    return { run: () => qwasm.matmul(a, packed, out), dispose: () => (a.dispose(), packed.dispose()) };
  }
  let x = qwasm.fromIntRepr(d.x, [c.N, c.Cin, c.H, c.W], Q.xScale, Q.xZp, 'quint8');
  if (channelsLast) {
    const nhwc = x.permute([0, 2, 3, 1]).contiguous(); // the same values stored [N, H, W, C]
    x.dispose();
    x = nhwc.permute([0, 3, 1, 2]);
    nhwc.dispose();
  }
  const w = qwasm.fromIntRepr(d.w, [c.Cout, c.Cin / c.group, c.kh, c.kw], Q.wScale, Q.wZp, 'qint8');
  const packed = qwasm.packConv2d(w, d.bias, { stride: c.stride, padding: c.pad, groups: c.group, mode: 'onnx' });
  w.dispose();
  return { run: () => qwasm.conv2d(x, packed, out), dispose: () => (x.dispose(), packed.dispose()) };
}

const info = await qwasm.init();
log(`qwasm ${info.isa} vs onnxruntime-web ${ort.env.versions.web} (wasm, numThreads 1); node ${process.version}, V8 ${process.versions.v8}`);
// The peak of the instruction the GEMM kernels run: i32x4.dot_i16x8_s + add, or where the relaxed-SIMD kernels run
// (Node 24 where its probe passes) i32x4.relaxed_dot_i8x16_i7x16_add_s.
const relaxedPeak = info.relaxed !== undefined;
const what = relaxedPeak ? 'i32x4.relaxed_dot_i8x16_i7x16_add_s' : 'i32x4.dot_i16x8_s';
log(`measuring the ${what} peak ...`);
const peak = await measureDotPeak({ relaxed: relaxedPeak });
log(`peak: ${peak.gmacs.toFixed(1)} G MAC/s (${peak.chains} independent ${relaxedPeak ? 'relaxed dot' : 'dot+add'} chains; one chain ${peak.oneChainGmacs?.toFixed(1)})`);
log('');
log('case                      ORT ms  qwasm ms   ORT GOPS qwasm GOPS  qwasm/ORT  %peak  output');
const rows = [];
for (const c of ALL_CASES.filter((x) => x.name.includes(filter))) {
  const { d, model, feeds } = ortCaseSetup(c);
  const runner = await createOrtRunner(model);
  const tensors = runner.prepare(feeds);
  const ortY = (await runner.runRaw(tensors)).y.data;
  const ortT = await timeIt(() => runner.runRaw(tensors), { minMs });
  await runner.release();

  const q = qwasmCase(c, caseData(c));
  const y = q.run();
  const qwasmY = y.intRepr(); // logical NCHW / [M, N] order, as ORT's
  y.dispose();
  const qT = await timeIt(() => q.run().dispose(), { minMs });
  q.dispose();

  const same = checksum(qwasmY) === checksum(ortY) && qwasmY.every((v, i) => v === ortY[i]);
  const row = {
    name: c.name,
    ortMs: ortT.medianMs,
    qwasmMs: qT.medianMs,
    ortGops: (2 * c.macs) / (ortT.medianMs * 1e6),
    qwasmGops: (2 * c.macs) / (qT.medianMs * 1e6),
    speedup: ortT.medianMs / qT.medianMs,
    peakFraction: c.macs / (qT.medianMs * 1e6) / peak.gmacs,
    identical: same,
  };
  rows.push(row);
  const p = (s, n) => String(s).padStart(n);
  log(
    c.name.padEnd(24) + p(row.ortMs.toFixed(3), 8) + p(row.qwasmMs.toFixed(3), 10) + p(row.ortGops.toFixed(1), 11) +
      p(row.qwasmGops.toFixed(1), 11) + p(`${row.speedup.toFixed(2)}x`, 11) + p(`${(100 * row.peakFraction).toFixed(0)}%`, 7) +
      `  ${same ? 'identical to ORT' : 'DIFFERS from ORT'}`,
  );
}
log('');
log('qwasm/ORT = ORT median time / qwasm median time (> 1: qwasm faster); %peak = qwasm G MAC/s / measured peak.');

// HistogramObserver: observe + calculateQparams on 1M normal floats, qwasm and PyTorch on the same data.
const histogram = await (async () => {
  if (filter && !'histogram'.includes(filter)) return null;
  const rng = mulberry32(12345);
  const data = new Float32Array(1_000_000);
  for (let i = 0; i < data.length; i += 2) {
    const u = (rng() + 1) / 4294967297, v = rng() / 4294967296; // Box-Muller
    const r = Math.sqrt(-2 * Math.log(u));
    data[i] = r * Math.cos(2 * Math.PI * v);
    if (i + 1 < data.length) data[i + 1] = r * Math.sin(2 * Math.PI * v);
  }
  let result;
  const t = await timeIt(() => {
    const obs = new qwasm.HistogramObserver();
    obs.observe(data, [data.length]);
    result = obs.calculateQparams();
  }, { minMs: 1000, minRuns: 5 });
  const row = { qwasmMs: t.medianMs, scale: result.scale, zeroPoint: result.zeroPoint };
  const dir = mkdtempSync(join(tmpdir(), 'qwasm-bench-'));
  try {
    writeFileSync(join(dir, 'x.f32'), new Uint8Array(data.buffer));
    const out = execFileSync('/usr/bin/python3', [new URL('torch_histogram.py', import.meta.url).pathname, join(dir, 'x.f32')], { encoding: 'utf8' });
    const torchRow = JSON.parse(out);
    Object.assign(row, { torchMs: torchRow.median_ms, torchThreads: torchRow.threads, sameQParams: torchRow.scale === Math.fround(row.scale) && torchRow.zero_point === row.zeroPoint });
  } catch (error) {
    row.torchError = `PyTorch not measured (${error.message.split('\n')[0]})`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  log('');
  log(`HistogramObserver observe + calculateQparams, 1M normal floats: qwasm ${row.qwasmMs.toFixed(1)} ms` +
    (row.torchMs !== undefined ? `, PyTorch 1.13 (${row.torchThreads} threads) ${row.torchMs.toFixed(1)} ms, ` +
      `ratio ${(row.torchMs / row.qwasmMs).toFixed(2)}x, same qparams: ${row.sameQParams}` : `; ${row.torchError}`));
  return row;
})();
// End to end: MobileNetV2 int8 (torch.onnx.export QDQ) in qwasm and ORT-web, plus ORT-web float.
let mobilenet = null;
if (!filter || 'mobilenet'.includes(filter)) {
  log('');
  mobilenet = await benchMobileNetV2({ minMs: Math.max(minMs, 3000), log });
}
// End to end: the MiniLM-sized BERT encoder, q8 (quantize_dynamic) and float, qwasm and ORT-web.
let transformer = null;
if (!filter || 'transformer'.includes(filter) || 'minilm'.includes(filter)) {
  log('');
  transformer = await benchTransformer({ minMs: Math.max(minMs, 3000), log });
}
if (json) console.log(JSON.stringify({ peak: { gmacs: peak.gmacs, chains: peak.chains }, rows, histogram, mobilenet, transformer }, null, 1));
if (rows.some((r) => !r.identical) || histogram?.sameQParams === false || mobilenet?.identical === false || transformer?.some((r) => !r.identical)) process.exitCode = 1;
