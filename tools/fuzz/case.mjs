// One fuzz case: mutate a seed file (tools/fuzz/mutate.mjs), load it, run it twice on generated feeds (the second run
// replays the memory plan), dispose it, and classify what happened. The fuzz workers (tools/fuzz/worker.mjs) run
// cases this way, and `node tools/fuzz/fuzz.mjs --repro <file> <case seed>` replays one in its own process.
import { readFileSync } from 'node:fs';
import { classifyError } from './classify.mjs';
import { decodeModel, mutateModel, rng } from './mutate.mjs';
import { ARRAYS } from './seeds.mjs';

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

/** Values at the edges of each feed type: in a tenth of the cases a quarter of the elements are one of these. */
const EXTREMES = new Map([
  [Float32Array, [NaN, Infinity, -Infinity, -0, 3.4e38, -3.4e38, 1e-45, 1e30]],
  [Int32Array, [2147483647, -2147483648, -1]],
  [BigInt64Array, [2n ** 63n - 1n, -(2n ** 63n), -1n, 2n ** 31n]],
  [Uint8Array, [0, 255]],
  [Int8Array, [-128, 127]],
]);

/** Feeds for a model's inputs: symbolic dimensions 1 to 4, values in each type's range (sometimes its edges);
 * sometimes deliberately wrong. */
function makeFeeds(model, r) {
  const feeds = {};
  const extreme = r.chance(0.1);
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
      if (extreme && r.chance(0.25)) data[i] = r.pick(EXTREMES.get(Arr));
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

/** A hash (FNV-1a) of a run's outputs: names, dtypes, dims and bytes, every NaN counted as one value. */
function outputDigest(outputs) {
  let h = 0x811c9dc5;
  const mix = (byte) => { h = Math.imul(h ^ byte, 0x01000193) >>> 0; };
  const canonicalNaN = new Uint8Array(Float32Array.of(NaN).buffer);
  for (const name of Object.keys(outputs).filter((k) => k !== 'intermediates' && k !== 'profile').sort()) {
    const { dtype, dims, data } = outputs[name];
    for (const c of `${name}:${dtype}:${dims}:`) mix(c.charCodeAt(0));
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    for (let i = 0; i < bytes.length; i++) {
      if (data instanceof Float32Array && (i & 3) === 0 && Number.isNaN(data[i >> 2])) {
        canonicalNaN.forEach(mix);
        i += 3;
      } else mix(bytes[i]);
    }
  }
  return h.toString(16).padStart(8, '0');
}

/** { outcome, message, stack, description, digest (of the outputs, '' without) } of case `seed` on seed file `file`, with the initialized `qwasm`. */
export async function runCase(qwasm, { file, seed }) {
  const { bytes: original, decoded } = await seedModel(file);
  const { bytes, description } = await mutateModel(decoded, original, seed);
  const r = rng(seed ^ 0x5bd1e995);
  const before = qwasm.memoryStats().liveBytes;
  let outcome = 'ok';
  let message = '';
  let stack = '';
  let digest = '';
  let model = null;
  try {
    model = await qwasm.loadModel(bytes);
    const feeds = makeFeeds(model, r);
    if (feeds) {
      const first = outputDigest(await model.run(feeds, { intermediates: r.chance(0.2) }));
      digest = outputDigest(await model.run(feeds));
      if (digest !== first) {
        outcome = 'mismatch';
        message = `the second run (replaying the memory plan) gave other outputs than the first (${first} then ${digest})`;
      }
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
  return { outcome, message: message.slice(0, 500), stack: outcome === 'raw' || outcome === 'trap' ? stack.slice(0, 2000) : '', description, digest };
}

