// Runs the graphs tools/transformer/bert_intermediates.py wrote (onnxruntime's optimized graph of each encoder file,
// every node output a graph output) in onnxruntime-web, optimizations disabled, on the record's inputs, and writes
// <record>-intermediates.json beside the record: per file, per input case, value name -> { op, dtype, dims, sha256 }
// (op: the operator producing it in onnxruntime's graph; sha256: of its bytes). The graph outputs must equal the
// record's onnxruntime-web outputs of the original file (checked). With --full the bytes themselves go to
// <dir>/<key>-values.json (build/, for debugging).
//
//   node tools/transformer/bert_intermediates_web.mjs tests/fixtures/transformer/tiny-bert.json build/transformer-intermediates/tiny-bert [--full]
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';

const [recordPath, dir, ...flags] = process.argv.slice(2);
const full = flags.includes('--full');
const record = JSON.parse(readFileSync(recordPath, 'utf8'));
ort.env.wasm.numThreads = 1;
ort.env.wasm.proxy = false;
ort.env.logLevel = 'error';

const bytesOf = (data) => (data instanceof BigInt64Array || ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null);
const result = { generator: 'tools/transformer/bert_intermediates.py', onnxruntimeWeb: ort.env.versions.web, files: {} };
for (const key of Object.keys(record.files)) {
  const session = await ort.InferenceSession.create(readFileSync(join(dir, `${key}-all-outputs.onnx`)), {
    executionProviders: ['wasm'], graphOptimizationLevel: 'disabled',
  });
  const producers = JSON.parse(readFileSync(join(dir, `${key}-producers.json`), 'utf8'));
  const cases = [];
  const values = [];
  for (const [c, feed] of record.inputs.entries()) {
    const tensors = Object.fromEntries(Object.entries(feed).map(([name, t]) => [name, new ort.Tensor('int64', BigInt64Array.from(t.data, BigInt), t.dims)]));
    const out = await session.run(tensors);
    const hashes = {};
    const data = {};
    for (const [name, t] of Object.entries(out)) {
      const bytes = bytesOf(t.data);
      if (!bytes) continue;
      hashes[name] = { op: producers[name], dtype: t.type, dims: Array.from(t.dims), sha256: createHash('sha256').update(bytes).digest('hex').slice(0, 32) };
      const recorded = record.files[key].web[c][name];
      if (recorded && Buffer.from(bytes).toString('base64') !== recorded.bits) throw new Error(`${key}: the optimized graph's ${name} differs from onnxruntime-web's default output`);
      if (full) data[name] = { dtype: t.type, dims: Array.from(t.dims), bytes: Buffer.from(bytes).toString('base64') };
    }
    cases.push(hashes);
    values.push(data);
  }
  await session.release();
  result.files[key] = cases;
  if (full) writeFileSync(join(dir, `${key}-values.json`), JSON.stringify(values));
  console.log(`${key}: ${Object.keys(cases[0]).length} values per case recorded`);
}
writeFileSync(recordPath.replace(/\.json$/, '-intermediates.json'), `${JSON.stringify(result)}\n`);
