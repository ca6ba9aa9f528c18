// Loads a qwasm .wasm binary and wraps its exports. Kept small on purpose: one probe, one
// fetch-or-read, one instantiate. No Emscripten JS glue: the binaries are standalone.
import { UnsupportedError } from '../errors.js';
import { QW_MAX_BYTES, statusError } from './abi.js';
import { packageFileUrl, readBytes } from './host.js';

// A module whose only function uses i32x4.dot_i16x8_s, the instruction the int8 kernels need.
// Engines that validate it run the SIMD build (the same probe onnxruntime-web relies on).
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 43, 1, 41, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 253, 186, 1, 11,
]);

/** True when this engine runs wasm SIMD128 including i32x4.dot_i16x8_s. */
export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

/** The instantiated module: typed views over its memory, allocation with accounting, status checks. */
export class Backend {
  #exports;
  #live = new Map(); // ptr -> bytes, for memoryStats() and leak tests
  #liveBytes = 0; // their sum, kept up to date so memoryStats() is cheap
  #placement = null; // a model's memory plan while it runs (js/model/memory-plan.js)

  constructor(instance, source) {
    this.#exports = instance.exports;
    this.source = source;
    this.#exports._initialize();
    this.isa = this.#cString(this.#exports.qw_isa());
    this.simd = this.isa === 'wasmsimd';
  }

  get exports() {
    return this.#exports;
  }

  // Views are made fresh on every use: memory growth detaches old ones.
  u8(ptr, length) {
    return new Uint8Array(this.#exports.memory.buffer, ptr, length);
  }
  i8(ptr, length) {
    return new Int8Array(this.#exports.memory.buffer, ptr, length);
  }
  i32(ptr, length) {
    return new Int32Array(this.#exports.memory.buffer, ptr, length);
  }
  f32(ptr, length) {
    return new Float32Array(this.#exports.memory.buffer, ptr, length);
  }
  view(Type, ptr, length) {
    return new Type(this.#exports.memory.buffer, ptr, length);
  }

  /**
   * Routes allocations through a placement ({ alloc(bytes) -> ptr | 0, allocated(ptr, bytes),
   * free(ptr) -> handled }) until called with null: how a model's planned arena serves its layers.
   */
  setPlacement(placement) {
    this.#placement = placement;
  }

  /**
   * Runs fn() with plain allocations, outside any model's memory plan: objects that outlive a run
   * (packed weights, their cached requantization blobs and workspaces) and optional work such as
   * copying intermediates out, which must not change a run's allocation pattern.
   */
  outsidePlan(fn) {
    const placement = this.#placement;
    this.#placement = null;
    try {
      return fn();
    } finally {
      this.#placement = placement;
    }
  }

  /**
   * Allocates bytes (>= 1) of wasm memory, 16-byte aligned, for the public function `where` (named in the
   * RangeError when the size is not an integer in [0, QW_MAX_BYTES] or memory is exhausted).
   */
  alloc(bytes, where = 'qwasm') {
    if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > QW_MAX_BYTES) {
      throw new RangeError(`${where}: a buffer of ${bytes} bytes is larger than the 2^31 - 1 bytes (QW_MAX_BYTES) one buffer may have`);
    }
    const size = Math.max(1, bytes);
    const placed = this.#placement?.alloc(size);
    if (placed) return placed;
    const ptr = this.#exports.qw_alloc(size) >>> 0; // wasm returns pointers as signed i32
    if (ptr === 0) {
      throw new RangeError(`${where}: out of wasm memory allocating ${size} bytes`);
    }
    this.#live.set(ptr, size);
    this.#liveBytes += size;
    this.#placement?.allocated(ptr, size);
    return ptr;
  }

  free(ptr) {
    if (this.#placement?.free(ptr)) return;
    const size = this.#live.get(ptr);
    if (size !== undefined) {
      this.#live.delete(ptr);
      this.#liveBytes -= size;
      this.#exports.qw_free(ptr);
    }
  }

  /** Runs fn(ptrs) with temporary buffers of the given byte sizes, freed afterwards whatever happens. */
  withBuffers(sizes, fn, where = 'qwasm') {
    const ptrs = [];
    try {
      for (const size of sizes) ptrs.push(this.alloc(size, where));
      return fn(...ptrs);
    } finally {
      for (const ptr of ptrs) this.free(ptr);
    }
  }

  /**
   * Calls the exported C function `name` for the public function `where`; a non-zero qw_status becomes the
   * named error of runtime/abi.js statusError (RangeError, UnsupportedError, ...).
   */
  call(where, name, ...args) {
    const status = this.#exports[name](...args);
    if (status !== 0) throw statusError(status, where, name);
  }

  /** A size_t result of an exported function (wasm returns it as a signed i32). */
  size(name, ...args) {
    return this.#exports[name](...args) >>> 0;
  }

  /**
   * The byte count a *_size function returns for a buffer that is never empty: 0 means the arguments describe
   * one larger than QW_MAX_BYTES (or an invalid geometry), a RangeError naming `where` and `what`.
   */
  bytes(where, what, name, ...args) {
    const n = this.size(name, ...args);
    if (n === 0) throw new RangeError(`${where}: ${what} would be larger than the 2^31 - 1 bytes (QW_MAX_BYTES) one buffer may have`);
    return n;
  }

  memoryStats() {
    return { liveBytes: this.#liveBytes, liveAllocations: this.#live.size, wasmMemoryBytes: this.#exports.memory.buffer.byteLength };
  }

  #cString(ptr) {
    const bytes = new Uint8Array(this.#exports.memory.buffer, ptr);
    return new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
  }
}

function defaultUrl(simd) {
  // Literal new URL(..., import.meta.url) calls: the form Vite and webpack 5 rewrite into assets.
  return simd
    ? packageFileUrl(new URL('../../dist/qwasm-simd.wasm', import.meta.url), 'dist/qwasm-simd.wasm')
    : packageFileUrl(new URL('../../dist/qwasm-scalar.wasm', import.meta.url), 'dist/qwasm-scalar.wasm');
}

function resolveUrl(wasmPaths, simd) {
  const file = simd ? 'qwasm-simd.wasm' : 'qwasm-scalar.wasm';
  if (wasmPaths == null) return defaultUrl(simd);
  if (typeof wasmPaths === 'string' || wasmPaths instanceof URL) {
    // A prefix, as onnxruntime-web's wasmPaths: a directory URL or path ending in '/'.
    const prefix = String(wasmPaths);
    return prefix.endsWith('/') ? prefix + file : `${prefix}/${file}`;
  }
  if (typeof wasmPaths === 'object') {
    const entry = simd ? wasmPaths.simd : wasmPaths.scalar;
    if (entry == null) {
      throw new TypeError(`init: wasmPaths.${simd ? 'simd' : 'scalar'} is missing`);
    }
    return String(entry);
  }
  throw new TypeError(`init: wasmPaths must be a string prefix or { simd, scalar }, got ${typeof wasmPaths}`);
}

const IMPORTS = {
  env: {
    // Called by the module after memory.grow; views are recreated on every use, so nothing to do.
    emscripten_notify_memory_growth() {},
  },
};

/**
 * Instantiates a backend. options: { simd?: boolean, wasmPaths?: string | URL | {simd, scalar},
 * wasmBinary?: ArrayBuffer | Uint8Array | WebAssembly.Module }.
 */
export async function loadBackend(options = {}) {
  const { simd, wasmPaths, wasmBinary } = options;
  if (simd != null && typeof simd !== 'boolean') {
    throw new TypeError(`init: simd must be a boolean, got ${String(simd)}`);
  }
  const supported = simdSupported();
  if (simd === true && !supported) {
    throw new UnsupportedError('init: simd: true was requested, but this engine does not support wasm SIMD128 (i32x4.dot_i16x8_s)');
  }
  const useSimd = simd ?? supported;
  let module;
  let source;
  if (wasmBinary != null) {
    source = 'wasmBinary';
    if (wasmBinary instanceof WebAssembly.Module) {
      module = wasmBinary;
    } else if (wasmBinary instanceof ArrayBuffer || ArrayBuffer.isView(wasmBinary)) {
      module = await compile(wasmBinary, source);
    } else {
      throw new TypeError('init: wasmBinary must be an ArrayBuffer, a typed array or a WebAssembly.Module');
    }
  } else {
    source = String(resolveUrl(wasmPaths, useSimd));
    module = await compile(await readBytes(source, 'qwasm', 'the wasm binary at '), source);
  }
  let instance;
  try {
    instance = await WebAssembly.instantiate(module, IMPORTS);
  } catch (error) {
    throw new Error(`qwasm: could not instantiate the wasm binary from ${source}: ${error.message}`, { cause: error });
  }
  if (typeof instance.exports.qw_isa !== 'function') {
    throw new Error(`qwasm: the wasm binary from ${source} is not a qwasm build (no qw_isa export)`);
  }
  return new Backend(instance, source);
}

async function compile(bytes, source) {
  try {
    return await WebAssembly.compile(bytes);
  } catch (error) {
    throw new Error(`qwasm: the wasm binary from ${source} does not compile: ${error.message}`, { cause: error });
  }
}
