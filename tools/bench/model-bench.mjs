// End-to-end model benchmark (part of npm run bench): MobileNetV2 1x3x224x224, the int8 QDQ file that
// torch.onnx.export writes for a qnnpack-quantized model, in qwasm and in onnxruntime-web (wasm, 1 thread),
// plus onnxruntime-web on the float export of the same weights. The files are generated on first use by
// tools/bench/mobilenet_v2.py (Debian's python3-torch + python3-torchvision) into build/models/.
// --threads N runs qwasm on N threads (onnxruntime-web keeps one): Node's measure of how the model scales.
//   node tools/bench/model-bench.mjs [--min-ms N] [--threads N]
import * as qwasm from '../../js/index.js';
import { createOrtRunner, timeIt } from './ort.mjs';
import { mulberry32 } from './cases.mjs';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../../build/models/', import.meta.url));
const INT8 = `${DIR}mobilenet_v2_int8_qdq.onnx`;
const FLOAT = `${DIR}mobilenet_v2_float.onnx`;

function ensureModels() {
  if (existsSync(INT8) && existsSync(FLOAT)) return;
  execFileSync('/usr/bin/python3', [fileURLToPath(new URL('mobilenet_v2.py', import.meta.url)), DIR], { stdio: 'inherit' });
}

/** Runs the comparison; returns a row of medians (ms), ratios and the output check. */
export async function benchMobileNetV2({ minMs = 3000, log = console.log } = {}) {
  try {
    ensureModels();
  } catch (error) {
    log(`MobileNetV2: not measured, the models could not be generated (${error.message.split('\n')[0]})`);
    return null;
  }
  const dims = [1, 3, 224, 224];
  const rng = mulberry32(7);
  const x = new Float32Array(3 * 224 * 224).map(() => rng() / 2 ** 31 - 1);
  const feed = { x: { type: 'float32', data: x, dims } };

  const int8Bytes = new Uint8Array(readFileSync(INT8));
  const model = await qwasm.loadModel(int8Bytes);
  const ortInt8 = await createOrtRunner(int8Bytes);
  const ortFloat = await createOrtRunner(new Uint8Array(readFileSync(FLOAT)));
  try {
    const ours = (await model.run({ x: { data: x, dims } })).y.data;
    const theirs = (await ortInt8.run(feed)).y;
    const identical = ours.length === theirs.length && ours.every((v, i) => Object.is(v, theirs[i]));
    const distinct = new Set(ours).size;
    const opts = { minMs, minRuns: 10, warmup: 2 };
    const q = await timeIt(() => model.run({ x: { data: x, dims } }), opts);
    const i8Feeds = ortInt8.prepare(feed);
    const o8 = await timeIt(() => ortInt8.runRaw(i8Feeds), opts);
    const fFeeds = ortFloat.prepare(feed);
    const of = await timeIt(() => ortFloat.runRaw(fFeeds), opts);
    const row = {
      qwasmInt8Ms: q.medianMs, ortInt8Ms: o8.medianMs, ortFloatMs: of.medianMs,
      vsOrtInt8: o8.medianMs / q.medianMs, vsOrtFloat: of.medianMs / q.medianMs,
      identical, distinctOutputs: distinct, peakBytes: model.peakBytes,
      layers: model.layers.length,
    };
    log(`MobileNetV2 1x3x224x224, torch.onnx.export QDQ int8 (qnnpack), ${row.layers} layers after fusion` +
      ` (qwasm: ${qwasm.backendInfo().isa}, ${qwasm.backendInfo().threads} thread(s)):`);
    log(`  qwasm int8 ${row.qwasmInt8Ms.toFixed(3)} ms | ORT-web int8 ${row.ortInt8Ms.toFixed(1)} ms (${row.vsOrtInt8.toFixed(2)}x)` +
      ` | ORT-web float ${row.ortFloatMs.toFixed(1)} ms (${row.vsOrtFloat.toFixed(2)}x)`);
    log(`  output ${identical ? 'identical to' : 'DIFFERS from'} ORT-web int8 (${distinct} distinct values of 1000);` +
      ` activation peak ${(row.peakBytes / 2 ** 20).toFixed(1)} MiB`);
    return row;
  } finally {
    model.dispose();
    await ortInt8.release();
    await ortFloat.release();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  await qwasm.init({ numThreads: Number(argv.includes('--threads') ? argv[argv.indexOf('--threads') + 1] : 1) });
  const row = await benchMobileNetV2({ minMs: Number(argv.includes('--min-ms') ? argv[argv.indexOf('--min-ms') + 1] : 3000) });
  if (row && !row.identical) process.exitCode = 1;
}
