// MobileNetV2 float (build/models/mobilenet_v2_float.onnx, written by tools/bench/mobilenet_v2.py) through
// the model loader: Model.run and Model.run with intermediates (as calibration runs it), medians of at
// least 4 s of runs, the per-op-type split of 10 profiled runs, and onnxruntime-web (wasm, 1 thread).
//   node tools/bench/mobilenet-float.mjs [--scalar] [--no-ort]
import * as qwasm from '../../js/index.js';
import { createOrtRunner, timeIt } from './ort.mjs';
import { mulberry32 } from './cases.mjs';
import { readFileSync } from 'node:fs';

const simd = !process.argv.includes('--scalar');
await qwasm.init({ simd });
const dims = [1, 3, 224, 224];
const rng = mulberry32(7);
const x = new Float32Array(3 * 224 * 224).map(() => rng() / 2 ** 31 - 1);
const bytes = new Uint8Array(readFileSync(new URL('../../build/models/mobilenet_v2_float.onnx', import.meta.url)));
const model = await qwasm.loadModel(bytes);
const opts = { minMs: 4000, minRuns: 20, warmup: 3 };
try {
  const plain = await timeIt(() => model.run({ x: { data: x, dims } }), opts);
  const inter = await timeIt(() => model.run({ x: { data: x, dims } }, { intermediates: true }), opts);
  const byOp = {};
  for (let r = 0; r < 10; r++) {
    for (const p of (await model.run({ x: { data: x, dims } }, { profile: true })).profile) byOp[p.opType] = (byOp[p.opType] ?? 0) + p.ms / 10;
  }
  const split = Object.entries(byOp).filter(([, ms]) => ms >= 0.05).map(([op, ms]) => `${op} ${ms.toFixed(1)}`).join(', ');
  console.log(`qwasm ${simd ? 'SIMD128' : 'scalar'}: Model.run ${plain.medianMs.toFixed(1)} ms, with intermediates ${inter.medianMs.toFixed(1)} ms (profile, ms: ${split})`);
  if (!process.argv.includes('--no-ort')) {
    const ort = await createOrtRunner(bytes);
    try {
      const feeds = ort.prepare({ x: { type: 'float32', data: x, dims } });
      console.log(`onnxruntime-web (wasm, 1 thread): ${(await timeIt(() => ort.runRaw(feeds), opts)).medianMs.toFixed(1)} ms`);
    } finally {
      await ort.release();
    }
  }
} finally {
  model.dispose();
}
