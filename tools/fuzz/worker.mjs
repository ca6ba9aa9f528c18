// A fuzz worker: a child process of tools/fuzz/runner.mjs that runs cases one at a time. A case names a seed file
// and a case seed; the worker mutates the file (tools/fuzz/mutate.mjs), loads it, runs it twice on generated feeds
// (the second run replays the memory plan), disposes it, and reports what happened. The parent enforces the time and
// memory limits (it kills a worker that exceeds them) and starts a fresh worker after a trap or a blow-up.
import { readFileSync } from 'node:fs';
import * as qwasm from '../../js/index.js';
import { classifyError } from './classify.mjs';
import { decodeModel, mutateModel, rng } from './mutate.mjs';
import { ARRAYS } from './seeds.mjs';

const simd = process.env.QWASM_SIMD !== '0';
await qwasm.init({ simd });

/** Wasm memory past this after a case is a blow-up (the worker is then replaced). */
const WASM_LIMIT = Number(process.env.QWASM_FUZZ_WASM_LIMIT ?? 1024 * 1024 * 1024);
/** Feeds larger than this many elements are not generated (the file's own declared shape is then absurd). */
const MAX_FEED = 1 << 22;

const seeds = new Map(); // path -> { bytes, decoded }
async function seedModel(path) {
  if (!seeds.has(path)) {
    const bytes = new Uint8Array(readFileSync(path));
    seeds.set(path, { bytes, decoded: await decodeModel(bytes) });
  }
  return seeds.get(path);
}

/** Feeds for a model's inputs: symbolic dimensions 1 to 4, values in each type's range; sometimes deliberately wrong. */
function makeFeeds(model, r) {
  const feeds = {};
  for (const spec of model.inputs) {
    const dims = spec.dims.map((d) => (typeof d === 'number' ? d : 1 + r.int(4)));
    const n = dims.reduce((a, b) => a * b, 1);
    if (!(n <= MAX_FEED)) return null;
    const Arr = ARRAYS[spec.dtype] ?? Float32Array;
    const data = new Arr(n);
    for (let i = 0; i < n; i++) {
      const v = r.next();
      if (Arr === Float32Array) data[i] = (v - 0.5) * 4;
      else if (Arr === BigInt64Array) data[i] = BigInt(Math.floor(v * 4));
      else data[i] = Math.floor(v * 256) - (Arr === Int8Array ? 128 : 0);
    }
    feeds[spec.name] = { data, dims };
  }
  if (r.chance(0.1)) spoilFeeds(feeds, model, r);
  return feeds;
}

/** Hostile feeds: wrong shapes, dims of the wrong type, wrong arrays, missing or extra inputs. */
function spoilFeeds(feeds, model, r) {
  const names = Object.keys(feeds);
  const name = names.length ? r.pick(names) : 'input';
  const f = feeds[name] ?? { data: new Float32Array(1), dims: [1] };
  switch (r.int(8)) {
    case 0: feeds[name] = { data: f.data, dims: f.dims.join(',') }; break;
    case 1: feeds[name] = { data: f.data, dims: [...f.dims, 1].map((d, i) => (i === 0 ? d + 1 : d)) }; break;
    case 2: feeds[name] = { data: Array.from(f.data, Number), dims: f.dims }; break;
    case 3: delete feeds[name]; break;
    case 4: feeds.no_such_input = f; break;
    case 5: feeds[name] = { data: new Float64Array(f.data.length), dims: f.dims }; break;
    case 6: feeds[name] = { data: f.data, dims: f.dims.map((d) => BigInt(d)) }; break;
    default: feeds[name] = { data: f.data, dims: f.dims.map(() => -1) };
  }
}

async function runCase({ file, seed }) {
  const { bytes: original, decoded } = await seedModel(file);
  const { bytes, description } = await mutateModel(decoded, original, seed);
  const r = rng(seed ^ 0x5bd1e995);
  const before = qwasm.memoryStats().liveBytes;
  let outcome = 'ok';
  let message = '';
  let stack = '';
  let model = null;
  try {
    model = await qwasm.loadModel(bytes);
    const feeds = makeFeeds(model, r);
    if (feeds) {
      await model.run(feeds, { intermediates: r.chance(0.2) });
      await model.run(feeds);
    }
  } catch (error) {
    outcome = classifyError(error);
    message = `${error?.name}: ${error?.message}`;
    stack = error?.stack ?? '';
  } finally {
    try {
      model?.dispose();
    } catch (error) {
      if (outcome === 'ok' || outcome === 'named') {
        outcome = 'raw';
        message = `dispose(): ${error?.name}: ${error?.message}`;
      }
    }
  }
  const stats = qwasm.memoryStats();
  if (outcome !== 'trap' && stats.liveBytes !== before) {
    message = `${stats.liveBytes - before} bytes live after dispose() (${outcome}${message ? `: ${message}` : ''})`;
    outcome = 'leak';
  }
  if (stats.wasmMemoryBytes > WASM_LIMIT && outcome !== 'trap') {
    message = `wasm memory grew to ${stats.wasmMemoryBytes} bytes (${outcome}${message ? `: ${message}` : ''})`;
    outcome = 'blow-up';
  }
  return { outcome, message: message.slice(0, 500), stack: outcome === 'raw' || outcome === 'trap' ? stack.slice(0, 2000) : '', description };
}

process.on('message', async (c) => {
  let result;
  try {
    result = await runCase(c);
  } catch (error) {
    result = { outcome: 'fuzzer-error', message: String(error?.stack ?? error).slice(0, 2000), description: '' };
  }
  process.send({ id: c.id, ...result });
});
process.send({ ready: true });
