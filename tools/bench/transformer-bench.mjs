// End-to-end transformer benchmark (part of npm run bench): the MiniLM-sized BERT encoder of
// tools/transformer/bert.py --minilm (6 layers, hidden 384, 12 heads, FFN 1536, 128 tokens), its float export and
// its transformers.js-style q8 file (onnxruntime's quantize_dynamic), in qwasm and in onnxruntime-web (wasm, 1
// thread, default graph optimizations), on the same int64 inputs. Each qwasm output is checked byte for byte
// against onnxruntime-web's, and a per-operator profile of qwasm's run is printed. The files are generated on first
// use into build/models/transformer/ (needs the venv of tools/setup-python.sh). With --pretrained: the real
// all-MiniLM-L6-v2 (tools/pretrained/make.sh, build/models/pretrained/: files q8 and float) on one of its recorded
// sentences (--input N: 0-5 one sentence each, 6 the six as a padded batch).
//   node tools/bench/transformer-bench.mjs [--min-ms N] [--files opset14_q8,opset14] [--pretrained [--input N]] [--threads N]
import * as qwasm from '../../js/index.js';
import { createOrtRunner } from './ort.mjs';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SETS = {
  random: {
    dir: `${ROOT}build/models/transformer/`,
    files: ['opset14_q8', 'opset14'],
    title: 'MiniLM-sized BERT encoder (random weights)',
    ensure(log) {
      if (existsSync(`${this.dir}minilm.json`)) return;
      log('generating the MiniLM-sized encoders (tools/transformer/bert.py --minilm) ...');
      const python = execFileSync('bash', [`${ROOT}tools/setup-python.sh`], { encoding: 'utf8' }).trim();
      execFileSync(python, [`${ROOT}tools/transformer/bert.py`, '--minilm'], { stdio: 'inherit', cwd: ROOT });
    },
  },
  pretrained: {
    dir: `${ROOT}build/models/pretrained/`,
    files: ['q8', 'float'],
    title: 'all-MiniLM-L6-v2 (pretrained)',
    ensure() {
      execFileSync('bash', [`${ROOT}tools/pretrained/make.sh`], { stdio: 'inherit' });
    },
  },
};

/**
 * A set's encoders, generated on first use: { dir, title, record } with record the minilm.json that lists the files
 * and the recorded inputs; null (after logging why) when they cannot be generated.
 */
export function miniLmModels(set = 'random', log = console.log) {
  const { dir, title } = SETS[set];
  try {
    SETS[set].ensure(log);
  } catch (error) {
    log(`${title}: not available, the models could not be generated (${error.message.split('\n')[0]})`);
    return null;
  }
  return { dir, title, record: JSON.parse(readFileSync(`${dir}minilm.json`, 'utf8')) };
}

/** qwasm's per-operator time of one profiled run: [{ opType, ms, count }], slowest first. */
export function profileByOp(profile) {
  const byOp = new Map();
  for (const p of profile) {
    const e = byOp.get(p.opType) ?? { opType: p.opType, ms: 0, count: 0 };
    e.ms += p.ms;
    e.count++;
    byOp.set(p.opType, e);
  }
  return [...byOp.values()].sort((a, b) => b.ms - a.ms);
}

/**
 * Times several async functions in alternation (one run of each per round) after a warm-up of warmMs each, so
 * that load drifting on a shared machine, and V8 compiling a wasm module's optimized tier in the background after
 * its first runs (onnxruntime-web's module is large: timing qwasm right after onnxruntime-web's first run measured
 * it twice as slow), weigh on every side alike. Returns one { medianMs, runs } per function.
 */
async function timeInterleaved(fns, { minMs = 3000, minRounds = 10, warmMs = 2000 } = {}) {
  for (const fn of fns) {
    const start = performance.now();
    do await fn(); while (performance.now() - start < warmMs);
  }
  const times = fns.map(() => []);
  const start = performance.now();
  while (times[0].length < minRounds || performance.now() - start < minMs * fns.length) {
    for (let i = 0; i < fns.length; i++) {
      const t0 = performance.now();
      await fns[i]();
      times[i].push(performance.now() - t0);
    }
  }
  return times.map((t) => {
    const sorted = [...t].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return { medianMs: sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2, runs: t.length };
  });
}

/** The median of several profiled runs, per operator type. */
async function medianProfile(model, feeds, runs) {
  const all = [];
  for (let i = 0; i < runs; i++) all.push(profileByOp((await model.run(feeds, { profile: true })).profile));
  return all[0].map((e) => {
    const times = all.map((p) => p.find((x) => x.opType === e.opType)?.ms ?? 0).sort((a, b) => a - b);
    return { ...e, ms: times[times.length >> 1] };
  }).sort((a, b) => b.ms - a.ms);
}

/**
 * Runs the comparison for the record's first input (1 x 128 tokens); returns one row per file:
 * { key, qwasmMs, ortMs, identical, profile }.
 */
export async function benchTransformer({ minMs = 3000, log = console.log, set = 'random', files = SETS[set].files, input: inputIndex = 0 } = {}) {
  const models = miniLmModels(set, log);
  if (!models) return null;
  const { dir: DIR, title, record } = models;
  const input = record.inputs[inputIndex];
  const feeds = Object.fromEntries(Object.entries(input).map(([n, t]) => [n, { data: BigInt64Array.from(t.data, BigInt), dims: t.dims }]));
  const ortFeeds = Object.fromEntries(Object.entries(input).map(([n, t]) => [n, { type: 'int64', data: BigInt64Array.from(t.data, BigInt), dims: t.dims }]));
  const c = record.config;
  log(`${title} (${c.layers} layers, hidden ${c.hidden}, ${c.heads} heads, FFN ${c.ffn}), ${input.input_ids.dims.join(' x ')} tokens:`);
  const rows = [];
  for (const key of files) {
    const file = record.files[key];
    const bytes = new Uint8Array(readFileSync(`${DIR}${file.file}`));
    const model = await qwasm.loadModel(bytes);
    const ort = await createOrtRunner(bytes);
    try {
      const ours = await model.run(feeds);
      const theirs = await ort.run(ortFeeds);
      const identical = Object.keys(theirs).every((name) => {
        const a = ours[name].data;
        const b = theirs[name];
        return a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
      });
      const prepared = ort.prepare(ortFeeds);
      const [q, o] = await timeInterleaved([() => model.run(feeds), () => ort.runRaw(prepared)], { minMs });
      const profile = await medianProfile(model, feeds, 5);
      const row = { key, file: file.file, qwasmMs: q.medianMs, ortMs: o.medianMs, speedup: o.medianMs / q.medianMs, identical, nodes: model.layers.length, profile };
      rows.push(row);
      log(`  ${key.padEnd(11)} qwasm ${q.medianMs.toFixed(1).padStart(6)} ms | ORT-web ${o.medianMs.toFixed(1).padStart(6)} ms | qwasm/ORT ${row.speedup.toFixed(2)}x` +
        ` | ${row.nodes} nodes after fusion | outputs ${identical ? 'identical to' : 'DIFFER from'} ORT-web`);
    } finally {
      model.dispose();
      await ort.release();
    }
  }
  for (const row of rows) {
    const total = row.profile.reduce((s, e) => s + e.ms, 0);
    log(`  qwasm per-operator profile, ${row.key} (median of 5 profiled runs, ${total.toFixed(1)} ms in nodes):`);
    for (const e of row.profile.filter((x) => x.ms >= 0.05)) log(`    ${e.opType.padEnd(24)} ${e.ms.toFixed(2).padStart(7)} ms  ${String(e.count).padStart(3)} nodes`);
  }
  const q8 = rows.find((r) => r.key.endsWith('q8'));
  const fl = rows.find((r) => !r.key.endsWith('q8'));
  if (q8 && fl) {
    log(`  target: q8 >= 2x faster than ORT-web q8 (${q8.speedup.toFixed(2)}x: ${q8.speedup >= 2 ? 'met' : 'NOT met'}),` +
      ` and faster than ORT-web float (${(fl.ortMs / q8.qwasmMs).toFixed(2)}x: ${fl.ortMs > q8.qwasmMs ? 'met' : 'NOT met'})`);
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const arg = (name, def) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : def);
  // --threads N: qwasm on N threads (onnxruntime-web stays on 1: its threads need workers this script does not make)
  const info = await qwasm.init({ numThreads: Number(arg('--threads', 1)) });
  if (info.threads > 1) console.log(`qwasm on ${info.threads} threads; onnxruntime-web on 1`);
  const set = argv.includes('--pretrained') ? 'pretrained' : 'random';
  const rows = await benchTransformer({ minMs: Number(arg('--min-ms', 3000)), set, files: arg('--files', SETS[set].files.join(',')).split(','), input: Number(arg('--input', 0)) });
  if (rows?.some((r) => !r.identical)) process.exitCode = 1;
}
