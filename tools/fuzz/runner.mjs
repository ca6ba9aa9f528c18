// The fuzzer's driver: a pool of worker processes (tools/fuzz/worker.mjs) runs the cases of a seeded run, each case
// a (seed file, case seed) pair, under a time limit and a memory limit the parent enforces: a worker that does not
// answer in time is killed (a hang), one whose resident memory passes the limit is killed (a blow-up), one that dies
// is a trap (or a blow-up when V8 ran out of heap). A fresh worker replaces every killed one, and every one that
// reported a trap, a blow-up or a raw error, so no case runs in a damaged process.
import { fork } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { caseSeed, rng } from './mutate.mjs';
import { writeSeedZoo } from './seeds.mjs';

export const OUTCOMES = Object.freeze(['ok', 'named', 'raw', 'hang', 'trap', 'blow-up', 'leak', 'mismatch', 'fuzzer-error']);
/** The outcomes a run must not have. mismatch: a model's two runs gave different outputs, or (compare) the SIMD128
 * build and its twin (scalar, or two threads) gave different outputs or errors. */
export const FAILURES = Object.freeze(['raw', 'hang', 'trap', 'blow-up', 'leak', 'mismatch', 'fuzzer-error']);

const root = fileURLToPath(new URL('../../', import.meta.url));
const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));

function onnxFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return onnxFiles(path);
    return name.endsWith('.onnx') ? [path] : [];
  });
}

/**
 * The seed files and their weights: the bundled digits models, every ONNX fixture, the single-node zoo (one small
 * model per registered operator, written into build/fuzz/seeds), and, with `large`, the torchvision files npm test
 * exports into build/models (a few percent of the cases: each takes far longer).
 */
export async function corpus({ large = true } = {}) {
  const zoo = await writeSeedZoo(join(root, 'build/fuzz/seeds'));
  const small = [join(root, 'models/digits.onnx'), join(root, 'models/digits-float.onnx'), ...onnxFiles(join(root, 'tests/fixtures'))];
  const files = [...small.map((path) => ({ path, weight: 2 })), ...zoo.map((path) => ({ path, weight: 1 }))];
  if (large) {
    const big = [...onnxFiles(join(root, 'build/models/torchvision')), ...onnxFiles(join(root, 'build/models')).filter((p) => !p.includes('torchvision'))];
    for (const path of big) files.push({ path, weight: 0.15 });
  }
  return files;
}

function pickFile(files, seed) {
  const total = files.reduce((s, f) => s + f.weight, 0);
  let x = rng(seed).next() * total;
  for (const f of files) {
    x -= f.weight;
    if (x < 0) return f.path;
  }
  return files[files.length - 1].path;
}

function rssBytes(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
  } catch {
    return 0;
  }
}

class Worker {
  #child = null;
  #stderr = '';
  #ready = null;
  #pending = null;

  constructor(options) {
    this.options = options;
  }

  #spawn() {
    this.#stderr = '';
    const child = fork(this.options.workerPath ?? WORKER, [], {
      execArgv: [`--max-old-space-size=${this.options.heapMb}`],
      env: { ...process.env, QWASM_SIMD: this.options.simd ? '1' : '0', QWASM_THREADS: String(this.options.threads ?? 1) },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    child.stderr.on('data', (d) => {
      this.#stderr = (this.#stderr + d).slice(-4000);
    });
    this.#ready = new Promise((resolve, reject) => {
      child.once('message', (m) => (m?.ready ? resolve() : reject(new Error('fuzz worker: unexpected first message'))));
      child.once('exit', (code) => reject(new Error(`fuzz worker exited (${code}) before it was ready: ${this.#stderr}`)));
    });
    child.on('message', (m) => {
      if (m?.id !== undefined && this.#pending?.id === m.id) this.#pending.finish(m);
    });
    child.on('exit', (code, signal) => {
      if (this.#child === child) this.#child = null;
      // Only this child's case: a killed child's exit can come after the next case started on its successor (Node 24).
      if (this.#pending && this.#pending.child === child && !this.#pending.killed) {
        const oom = /heap out of memory|Allocation failed/i.test(this.#stderr);
        this.#pending.finish({ outcome: oom ? 'blow-up' : 'trap', message: `worker died (${signal ?? code}): ${this.#stderr.slice(-1500)}` });
      }
    });
    this.#child = child;
  }

  #kill() {
    if (this.#child) {
      this.#child.kill('SIGKILL');
      this.#child = null;
    }
  }

  /** Runs one case; resolves with { outcome, message, description, ms }. */
  async run(c) {
    if (!this.#child) this.#spawn();
    await this.#ready;
    const child = this.#child;
    const t0 = performance.now();
    const result = await new Promise((resolve) => {
      const pending = { id: c.id, killed: false, child };
      const done = (r) => {
        clearTimeout(timer);
        clearInterval(poll);
        this.#pending = null;
        resolve(r);
      };
      pending.finish = done;
      this.#pending = pending;
      const timer = setTimeout(() => {
        pending.killed = true;
        this.#kill();
        done({ outcome: 'hang', message: `no answer in ${this.options.timeoutMs} ms` });
      }, this.options.timeoutMs);
      const poll = setInterval(() => {
        const rss = rssBytes(child.pid);
        if (rss > this.options.memoryMb * 1024 * 1024) {
          pending.killed = true;
          this.#kill();
          done({ outcome: 'blow-up', message: `resident memory ${Math.round(rss / 2 ** 20)} MiB passed ${this.options.memoryMb} MiB` });
        }
      }, 50);
      child.send(c);
    });
    if (['trap', 'blow-up', 'raw', 'fuzzer-error'].includes(result.outcome)) this.#kill();
    return { ...result, ms: performance.now() - t0 };
  }

  close() {
    this.#kill();
  }
}

/** Runs the given cases ({ file, seed }) in one worker, in order; resolves to their results. */
export async function replay(cases, { timeoutMs = 20000, memoryMb = 3072, heapMb = 2048, simd = true } = {}) {
  const w = new Worker({ timeoutMs, memoryMb, heapMb, simd });
  try {
    const results = [];
    for (const [id, c] of cases.entries()) results.push({ ...c, ...(await w.run({ id, file: c.file, seed: c.seed })) });
    return results;
  } finally {
    w.close();
  }
}

/**
 * Runs `cases` cases of the run seeded `seed` over `files` (corpus()) on `workers` processes. Returns
 * { counts: { outcome: n }, failures: [{ index, file, seed, outcome, message, description }], ms }.
 * With `compare` ('scalar' or 'threads'), every case runs on the SIMD128 build with one thread and on the scalar
 * build or on two threads (a pair of processes per worker), and any difference in outcome, outputs or error message
 * is a mismatch. onResult(result, done) is called after each case.
 * workerPath replaces tools/fuzz/worker.mjs (the tests check the limits with workers that hang, grow or die).
 */
export async function fuzz({ seed = 1, cases = 1000, files, workers = 2, timeoutMs = 20000, memoryMb = 3072, heapMb = 2048, simd = true,
  compare = false, first = 0, onResult, workerPath } = {}) {
  const t0 = performance.now();
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0]));
  const failures = [];
  const options = { timeoutMs, memoryMb, heapMb, workerPath };
  const builds = compare ? [{ simd: true }, TWINS[compare]] : [{ simd }];
  if (builds.includes(undefined)) throw new Error(`fuzz: compare must be one of ${Object.keys(TWINS).join(', ')}`);
  const pool = Array.from({ length: workers }, () => builds.map((build) => new Worker({ ...options, ...build })));
  let next = first;
  let done = 0;
  const end = first + cases;
  const loop = async ([w, twin]) => {
    while (next < end) {
      const index = next++;
      const s = caseSeed(seed, index);
      const file = pickFile(files, s);
      let r = await w.run({ id: index, file, seed: s });
      if (twin) r = compared(r, await twin.run({ id: index, file, seed: s }), compare);
      counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
      const result = { index, file, seed: s, ...r };
      if (FAILURES.includes(r.outcome)) failures.push(result);
      done++;
      onResult?.(result, done);
    }
  };
  try {
    await Promise.all(pool.map(loop));
  } finally {
    for (const w of pool.flat()) w.close();
  }
  return { counts, failures, ms: performance.now() - t0 };
}

/** What `compare` checks the SIMD128 build (one thread) against, and how messages name it. */
const TWINS = { scalar: { simd: false, name: 'scalar build' }, threads: { simd: true, threads: 2, name: '2 threads' } };

/** A case's result on the SIMD128 build checked against its twin's: a failure of either, a mismatch, or the first. */
function compared(first, twin, compare) {
  const name = TWINS[compare].name;
  if (FAILURES.includes(first.outcome)) return first;
  if (FAILURES.includes(twin.outcome)) return { ...twin, message: `${name}: ${twin.message}` };
  const same = first.outcome === twin.outcome && first.digest === twin.digest && (first.outcome === 'ok' || first.message === twin.message);
  if (same) return first;
  const show = (r) => (r.outcome === 'ok' ? `outputs ${r.digest}` : r.message);
  return { ...first, outcome: 'mismatch', message: `SIMD128 build: ${show(first)}; ${name}: ${show(twin)}` };
}
