// Adds onnxruntime-web's outputs to tests/fixtures/ort_ops/cases.json.
//
//   build/venv/bin/python tools/transformer/ort_ops.py   # the models, inputs, onnxruntime (Python) outputs
//   node tools/transformer/ort_ops_web.mjs               # + "web": onnxruntime-web (wasm, 1 thread) outputs
//
// onnxruntime-web is the reference qwasm reproduces (its wasm build runs MLAS's portable / SIMD128 kernels; the
// Python wheel's AVX2 / FMA3 kernels round differently). The C test's fixture is derived from this file at
// build time (tools/transformer/ort_ops_c_fixture.mjs).
import { readFileSync, writeFileSync } from 'node:fs';
import { CASES_PATH, loadCases, runWeb, compareBytes } from './ort-ops-cases.mjs';

const base64 = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');

const { header, cases } = loadCases();
const raw = JSON.parse(readFileSync(CASES_PATH, 'utf8'));
let differ = 0;
for (let i = 0; i < cases.length; i++) {
  const web = await runWeb(cases[i]);
  raw.cases[i].web = web.map((o) => ({ dtype: o.dtype, dims: o.dims, data: base64(o.data), name: o.name }));
  cases[i].web = web;
  // Python outputs identical to onnxruntime-web's are stored once (as "web")
  web.forEach((o, j) => {
    if (compareBytes(o.data, cases[i].outputs[j].data).differ === 0) raw.cases[i].outputs[j] = { name: o.name, same_as_web: true };
  });
  if (web.some((o, j) => compareBytes(o.data, cases[i].outputs[j].data).differ)) differ++;
}
const text = ['{"generator": "tools/transformer/ort_ops.py + tools/transformer/ort_ops_web.mjs", '
  + `"onnxruntime": ${JSON.stringify(header.onnxruntime)}, "onnx": ${JSON.stringify(header.onnx)}, "cases": [`,
raw.cases.map((c) => JSON.stringify(c)).join(',\n'), ']}', ''].join('\n');
writeFileSync(CASES_PATH, text);
console.log(`${cases.length} cases; onnxruntime-web differs from onnxruntime (Python) in ${differ}`);

