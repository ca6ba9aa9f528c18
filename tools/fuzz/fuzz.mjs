#!/usr/bin/env node
// The structure-aware model fuzzer, for long local runs (npm test runs a short one: tests/js/fuzz.test.js).
//
//   node tools/fuzz/fuzz.mjs --cases 50000 --seed 7 [--workers 2] [--scalar | --compare | --compare-threads]
//                            [--no-large] [--timeout 20000] [--all]
//   node tools/fuzz/fuzz.mjs --repro <file> <case seed> [--scalar] [--threads 2] [--write mutated.onnx]  # one case
//
// Every case mutates one seed file (tools/fuzz/mutate.mjs), loads it, runs it twice and disposes it in a worker
// process with a time and memory limit (tools/fuzz/runner.mjs), and is classified: ok, named error, raw error,
// hang, trap, blow-up, leak or mismatch (the two runs' outputs differ; with --compare, also the SIMD128 and scalar
// builds' outputs or errors; with --compare-threads, one thread's and two threads'). Every call into wasm is checked
// against the export's parameter types (tools/fuzz/signatures.mjs). The counts are printed; the failing cases go to
// build/fuzz/failures-<seed>.json with the file and case seed that reproduce them.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FAILURES, OUTCOMES, corpus, fuzz } from './runner.mjs';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};

if (flag('--repro')) {
  const i = args.indexOf('--repro');
  const [file, seed] = [args[i + 1], Number(args[i + 2])];
  const qwasm = await import('../../js/index.js');
  const info = await qwasm.init({ simd: !flag('--scalar'), numThreads: Number(option('--threads', 1)) });
  (await import('./signatures.mjs')).checkCalls(info);
  if (flag('--write')) {
    const { decodeModel, mutateModel } = await import('./mutate.mjs');
    const bytes = new Uint8Array(readFileSync(file));
    writeFileSync(option('--write'), (await mutateModel(await decodeModel(bytes), bytes, seed)).bytes);
  }
  const { runCase } = await import('./case.mjs');
  const { outcome, message, stack, description, digest } = await runCase(qwasm, { file, seed });
  console.log(`mutation: ${description}\noutcome: ${outcome}${digest ? ` (outputs ${digest})` : ''}${message ? `\n${message}` : ''}${stack ? `\n${stack}` : ''}`);
  process.exit(0);
}

const seed = Number(option('--seed', 1));
const cases = Number(option('--cases', 1000));
const workers = Number(option('--workers', 2));
const files = await corpus({ large: !flag('--no-large') });
const started = Date.now();
const { counts, failures, ms } = await fuzz({
  seed, cases, files, workers, simd: !flag('--scalar'), compare: flag('--compare') ? 'scalar' : flag('--compare-threads') ? 'threads' : false, timeoutMs: Number(option('--timeout', 20000)),
  first: Number(option('--first', 0)),
  onResult: (r, done) => {
    if (flag('--all') && !FAILURES.includes(r.outcome)) console.log(`case ${r.index} ${r.outcome}: ${r.file.split('/').slice(-2).join('/')}: ${r.description} -> ${(r.message ?? '').split('\n')[0]}`);
    if (FAILURES.includes(r.outcome)) console.log(`case ${r.index} ${r.outcome}: ${r.file.split('/').slice(-2).join('/')} seed ${r.seed}: ${r.description} -> ${r.message.split('\n')[0]}`);
    if (done % 1000 === 0) console.log(`${done} cases, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  },
});
const dir = fileURLToPath(new URL('../../build/fuzz/', import.meta.url));
mkdirSync(dir, { recursive: true });
const out = `${dir}failures-${seed}.json`;
writeFileSync(out, JSON.stringify(failures, null, 1));
console.log(`seed ${seed}, ${cases} cases over ${files.length} files in ${(ms / 1000).toFixed(0)} s (${flag('--compare') ? 'SIMD128 and scalar builds compared' : flag('--compare-threads') ? 'one and two threads compared' : flag('--scalar') ? 'scalar build' : 'SIMD128 build'})`);
console.log(OUTCOMES.map((o) => `${o} ${counts[o]}`).join(', '));
console.log(`failing cases: ${failures.length} (${out})`);
process.exit(failures.length ? 1 : 0);
