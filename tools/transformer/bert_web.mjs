// Records onnxruntime-web's outputs of the encoder files written by tools/transformer/bert.py (which runs this
// at its end): adds "web" (same layout as "outputs": float32 bytes in base64) to each file's entry of <dir>/<name>.json.
//
//   node tools/transformer/bert_web.mjs tests/fixtures/transformer/tiny-bert.json
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runEncoder } from './encoder-web.mjs';

const path = process.argv[2];
const record = JSON.parse(readFileSync(path, 'utf8'));
for (const [key, file] of Object.entries(record.files)) {
  const outputs = await runEncoder(readFileSync(join(dirname(path), file.file)), record.inputs);
  file.web = outputs.map((o) => Object.fromEntries(Object.entries(o).map(([n, t]) => [n, { dims: t.dims, bits: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString('base64') }])));
  console.log(`${key}: onnxruntime-web outputs recorded`);
}
writeFileSync(path, `${JSON.stringify(record)}\n`);
