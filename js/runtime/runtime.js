// The one backend qwasm's public API runs on, chosen by init().
import { checkInitOptions, loadBackend } from './wasm.js';

let active = null;
let pending = null;

/**
 * Loads the wasm backend once: the SIMD128 build where the engine supports it, the scalar build
 * otherwise; with numThreads > 1 the threads build and its workers (or, where threads cannot run, one
 * thread and a warning). Options: { simd, numThreads, wasmPaths, wasmBinary }. They apply to the first
 * call; later calls return the same backend (and throw if they ask for the other build with `simd`).
 */
export async function init(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`init: options must be an object, got ${String(options)}`);
  }
  checkInitOptions(options);
  if (active == null) {
    pending ??= loadBackend(options).then(
      (backend) => (active = backend),
      (error) => {
        pending = null;
        throw error;
      },
    );
    await pending;
  }
  if (options.simd != null && options.simd !== active.simd) {
    throw new RangeError(`init: qwasm is already running the ${active.isa} build; simd: ${options.simd} cannot apply now`);
  }
  if (options.numThreads != null && options.numThreads !== 0 && options.numThreads !== active.threads &&
      active.threadsFallback === undefined) {
    throw new RangeError(`init: qwasm is already running on ${active.threads} thread(s); numThreads: ${options.numThreads} cannot apply now`);
  }
  return backendInfo();
}

/** The active backend; throws when init() has not completed. */
export function backend() {
  if (active == null) {
    throw new TypeError('qwasm: not initialized; call `await init()` first');
  }
  return active;
}

/**
 * Which build runs: { isa: 'wasmsimd' | 'wasmrelaxed' | 'scalar', simd, source, threads }; relaxed ('usdot' |
 * 'sdot') when the relaxed-SIMD kernels run; threadsFallback (why one thread runs although more were asked for)
 * and relaxedFallback (why relaxedSimd: true was not honoured) when that happened.
 */
export function backendInfo() {
  const b = backend();
  const info = { isa: b.isa, simd: b.simd, source: b.source, threads: b.threads };
  if (b.threadsFallback !== undefined) info.threadsFallback = b.threadsFallback;
  if (b.relaxed !== undefined) info.relaxed = b.relaxed;
  if (b.relaxedFallback !== undefined) info.relaxedFallback = b.relaxedFallback;
  return info;
}

/** Live wasm allocations made by qwasm (tensors, packed weights): for leak checks. */
export function memoryStats() {
  return backend().memoryStats();
}
