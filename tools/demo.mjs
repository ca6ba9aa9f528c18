// npm run demo: makes web_demo/ a complete static site, then serves it on localhost.
//
//   node tools/demo.mjs [--port 8080] [--no-serve]
//
// The page and its workers import qwasm from web_demo/qwasm/ (a copy of js/ and dist/*.wasm, the same relative
// layout as the npm package), protobufjs's browser build from web_demo/vendor/ (as an ES module: import maps do
// not reach module workers, so the copy of js/model/onnx.js imports vendor/protobuf-light.js by a relative
// path instead of the bare 'protobufjs/light.js' a bundler resolves), the demo model from
// web_demo/models/ (models/digits.onnx, digits.json, the float export digits-float.onnx and the training /
// held-out splits digits-data.json that the quantize view calibrates and measures on) and, for the
// model view's float reference only, onnxruntime-web's wasm backend from web_demo/vendor/ort/ (its ESM build,
// the wasm factory it imports and the .wasm binary, with manifest.json giving their sizes; loaded only when the
// user asks for the float reference, web_demo/model-float.js). All are copied here, not
// committed, so the folder always carries the current build. After this step web_demo/ can be uploaded
// to any static host as it is: relative URLs only, no server logic, no CDN.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const demo = `${root}web_demo/`;
// Every build the page's init() (one thread) may pick: SIMD128 or scalar, or the relaxed-SIMD build where the
// engine's relaxed dot product is exact (AVX-VNNI, ARM) and it makes a shared memory (Chromium, isolated or not).
const WASM_BUILDS = ['qwasm-simd.wasm', 'qwasm-scalar.wasm', 'qwasm-relaxed-threads.wasm'];
export const ORT_FILES = ['ort.wasm.min.mjs', 'ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm'];

export function prepareDemo() {
  for (const f of WASM_BUILDS) {
    if (!existsSync(`${root}dist/${f}`)) throw new Error(`dist/${f} is missing: run npm run build first`);
  }
  rmSync(`${demo}qwasm`, { recursive: true, force: true });
  mkdirSync(`${demo}qwasm/dist`, { recursive: true });
  cpSync(`${root}js`, `${demo}qwasm/js`, { recursive: true });
  for (const f of WASM_BUILDS) cpSync(`${root}dist/${f}`, `${demo}qwasm/dist/${f}`);
  const onnx = `${demo}qwasm/js/model/onnx.js`;
  const source = readFileSync(onnx, 'utf8');
  const bare = "from 'protobufjs/light.js'";
  if (!source.includes(bare)) throw new Error(`js/model/onnx.js no longer imports ${bare}: update tools/demo.mjs`);
  writeFileSync(onnx, source.replace(bare, "from '../../../vendor/protobuf-light.js'"));
  // The model view's default model: models/digits.onnx (tools/train_digits.py) and its test images, the float
  // model and the digits splits for the quantize view, copied
  // so that models/ stays the one source of truth.
  rmSync(`${demo}models`, { recursive: true, force: true });
  mkdirSync(`${demo}models`, { recursive: true });
  for (const f of ['digits.onnx', 'digits.json', 'digits-float.onnx', 'digits-data.json']) {
    if (!existsSync(`${root}models/${f}`)) throw new Error(`models/${f} is missing: run tools/train_digits.py first`);
    cpSync(`${root}models/${f}`, `${demo}models/${f}`);
  }
  // The faces view's model, its float reference and default photo (tools/pretrained/faces.py, committed)
  cpSync(`${root}models/faces`, `${demo}models/faces`, { recursive: true });
  mkdirSync(`${demo}vendor`, { recursive: true });
  cpSync(`${root}node_modules/protobufjs/dist/light/protobuf.min.js`, `${demo}vendor/protobuf.min.js`);
  // protobufjs's browser build sets globalThis.protobuf when it runs; as a module it runs once, in page or worker
  writeFileSync(`${demo}vendor/protobuf-light.js`, "import './protobuf.min.js';\nexport default globalThis.protobuf;\n");
  // onnxruntime-web, wasm backend: ort.wasm.min.mjs imports ort-wasm-simd-threaded.mjs, which fetches the .wasm
  // (one build for all; with numThreads 1 it starts no worker). env.wasm.wasmPaths points at this folder.
  const ort = `${root}node_modules/onnxruntime-web/dist/`;
  mkdirSync(`${demo}vendor/ort`, { recursive: true });
  for (const f of ORT_FILES) {
    if (!existsSync(ort + f)) throw new Error(`node_modules/onnxruntime-web/dist/${f} is missing: run npm ci`);
    copyIfChanged(ort + f, `${demo}vendor/ort/${f}`);
  }
  // The pretrained MiniLM of the sentence-similarity view (tools/pretrained/make.sh writes build/models/pretrained/),
  // when it has been made; without it the view says how to make it.
  const pretrained = `${root}build/models/pretrained/`;
  if (existsSync(`${pretrained}done`)) {
    mkdirSync(`${demo}pretrained`, { recursive: true });
    for (const f of PRETRAINED_FILES) copyIfChanged(pretrained + f, `${demo}pretrained/${f}`);
  } else {
    rmSync(`${demo}pretrained`, { recursive: true, force: true });
  }
  // what the float reference costs to download, shown on the button that loads it
  const files = ORT_FILES.map((name) => ({ name, bytes: statSync(ort + name).size }));
  const { version } = JSON.parse(readFileSync(`${root}node_modules/onnxruntime-web/package.json`, 'utf8'));
  writeFileSync(`${demo}vendor/ort/manifest.json`, `${JSON.stringify({ version, files, bytes: files.reduce((n, f) => n + f.bytes, 0) }, null, 1)}\n`);
  return demo;
}

export const PRETRAINED_FILES = ['minilm-q8.onnx', 'minilm-float.onnx', 'vocab.txt', 'minilm.json'];

/** Copied only when changed: a big file is not rewritten under a page (or a parallel test) reading it. */
function copyIfChanged(from, to) {
  const [a, b] = [statSync(from), existsSync(to) ? statSync(to) : null];
  if (!b || b.size !== a.size || b.mtimeMs < a.mtimeMs) cpSync(from, to);
}

/** npm run demo makes the pretrained MiniLM once (minutes; needs Python); the page works without it. */
function makePretrained() {
  try {
    execFileSync('bash', [`${root}tools/pretrained/make.sh`], { stdio: 'inherit' });
  } catch {
    console.warn('qwasm demo: the pretrained MiniLM could not be made (see above); the sentence-similarity view says how to make it.');
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  makePretrained();
  prepareDemo();
  if (!args.includes('--no-serve')) {
    const i = args.indexOf('--port');
    const { url } = await serve(demo, i >= 0 ? Number(args[i + 1]) : 8080);
    console.log(`qwasm demo: ${url}  (static folder: web_demo/)`);
  }
}
