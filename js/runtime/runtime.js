// The one backend qwasm's public API runs on, chosen by init().
import { loadBackend } from './wasm.js';

let active = null;
let pending = null;

/**
 * Loads the wasm backend once: the SIMD128 build where the engine supports it, the scalar build
 * otherwise. Options: { simd, wasmPaths, wasmBinary }. They apply to the first call; later calls
 * return the same backend (and throw if they ask for the other build with `simd`).
 */
export async function init(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`init: options must be an object, got ${String(options)}`);
  }
  if (options.simd != null && typeof options.simd !== 'boolean') {
    throw new TypeError(`init: simd must be a boolean, got ${String(options.simd)}`);
  }
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
  return backendInfo();
}

/** The active backend; throws when init() has not completed. */
export function backend() {
  if (active == null) {
    throw new TypeError('qwasm: not initialized; call `await init()` first');
  }
  return active;
}

/** Which build runs: { isa: 'wasmsimd' | 'scalar', simd, source }. */
export function backendInfo() {
  const b = backend();
  return { isa: b.isa, simd: b.simd, source: b.source };
}

/** Live wasm allocations made by qwasm (tensors, packed weights): for leak checks. */
export function memoryStats() {
  return backend().memoryStats();
}
