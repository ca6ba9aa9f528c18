// Loads a qwasm .wasm binary and wraps its exports. Kept small on purpose: one probe, one
// fetch-or-read, one instantiate (and, for numThreads > 1, the workers of threads.js). No Emscripten JS
// glue: the binaries are standalone.
import { UnsupportedError } from '../errors.js';
import { QW_MAX_BYTES, QW_RELAXED_SEMANTICS, statusError } from './abi.js';
import { packageFileUrl, readBytes } from './host.js';
import { relaxedDotSemantics } from './relaxed.js';
import { MAX_THREADS, defaultThreadCount, sharedMemoryUnavailable, startWorkers, threadsUnavailable } from './threads.js';

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
  #memory;
  #live = new Map(); // ptr -> bytes, for memoryStats() and leak tests
  #liveBytes = 0; // their sum, kept up to date so memoryStats() is cheap
  #placement = null; // a model's memory plan while it runs (js/model/memory-plan.js)
  #signatures = null; // tests and the fuzzer: export name -> parameter types, every call's arguments checked

  /** memory: the imported shared memory of the threads build; the other builds export theirs. */
  constructor(instance, source, memory = instance.exports.memory) {
    this.#exports = instance.exports;
    this.#memory = memory;
    this.source = source;
    this.#exports._initialize();
    this.isa = this.#cString(this.#exports.qw_isa());
    this.simd = this.isa !== 'scalar';
    this.threads = 1; // set by loadBackend once the workers run
    this.threadsFallback = undefined; // why fewer threads than asked for run, if so
    this.relaxed = undefined; // 'usdot' | 'sdot' when the relaxed-SIMD kernels run
    this.relaxedFallback = undefined; // why they do not, when relaxedSimd: true asked for them
  }

  /** Switches the build's GEMM to its relaxed-SIMD kernels (before anything is packed); false if it has none. */
  useRelaxed(semantics) {
    const code = semantics === 'usdot' ? QW_RELAXED_SEMANTICS.QW_RELAXED_USDOT : QW_RELAXED_SEMANTICS.QW_RELAXED_SDOT;
    if (this.#exports.qw_use_relaxed_simd(code) !== 0) return false;
    this.isa = this.#cString(this.#exports.qw_isa());
    this.relaxed = semantics;
    return true;
  }

  get exports() {
    return this.#exports;
  }

  // Views are made fresh on every use: memory growth detaches old ones.
  u8(ptr, length) {
    return new Uint8Array(this.#memory.buffer, ptr, length);
  }
  i8(ptr, length) {
    return new Int8Array(this.#memory.buffer, ptr, length);
  }
  i32(ptr, length) {
    return new Int32Array(this.#memory.buffer, ptr, length);
  }
  f32(ptr, length) {
    return new Float32Array(this.#memory.buffer, ptr, length);
  }
  view(Type, ptr, length) {
    return new Type(this.#memory.buffer, ptr, length);
  }

  /**
   * Routes allocations through a placement ({ alloc(bytes) -> ptr | 0, allocated(ptr, bytes),
   * free(ptr) -> handled, holds(ptr) -> whether ptr is one of its slots }) until called with null: how a model's
   * planned arena serves its layers.
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
      const mib = (this.#liveBytes / 2 ** 20).toFixed(1);
      throw new RangeError(
        `${where}: out of wasm memory allocating ${size} bytes (${this.#live.size} allocations, ${mib} MiB, are live). ` +
          'dispose() the tensors you no longer need, or run each step of a loop inside tidy(): the garbage ' +
          'collector frees undisposed tensors only between tasks, never during a synchronous loop',
      );
    }
    this.#live.set(ptr, size);
    this.#liveBytes += size;
    this.#placement?.allocated(ptr, size);
    return ptr;
  }

  /** Whether ptr is a slot of the active placement (a model run's arena), not a plain allocation. */
  inArena(ptr) {
    return this.#placement !== null && this.#placement.holds(ptr);
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
    if (this.#signatures) checkArguments(this.#signatures, where, name, args);
    const status = this.#exports[name](...args);
    if (status !== 0) throw statusError(status, where, name);
  }

  /** A size_t result of an exported function (wasm returns it as a signed i32). */
  size(name, ...args) {
    if (this.#signatures) checkArguments(this.#signatures, 'size', name, args);
    return this.#exports[name](...args) >>> 0;
  }

  /**
   * Tests and the fuzzer only: from now on every argument of call() and size() is checked against the parameter
   * types of the export (signatures: name -> ['i32' | 'f32' | ...], tools/fuzz/signatures.mjs). wasm converts a
   * number for an i32 parameter with ToInt32, so 2^32 would arrive as 0 and 0.5 as 0, silently.
   */
  checkCallsForTests(signatures) {
    this.#signatures = signatures;
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
    return { liveBytes: this.#liveBytes, liveAllocations: this.#live.size, wasmMemoryBytes: this.#memory.buffer.byteLength };
  }

  #cString(ptr) {
    const bytes = new Uint8Array(this.#memory.buffer, ptr);
    return new TextDecoder().decode(bytes.slice(0, bytes.indexOf(0))); // a copy: TextDecoder refuses shared memory
  }
}

/** An argument list that the export's parameter types would change is an internal error (checkCallsForTests). */
function checkArguments(signatures, where, name, args) {
  const params = signatures.get(name);
  if (params?.length !== args.length) throw new Error(`qwasm internal error: ${where}: ${name} takes ${params?.length} arguments, got ${args.length}`);
  args.forEach((v, i) => {
    const type = params[i];
    const ok = type === 'i32' ? Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 32 : type === 'f32' || type === 'f64' ? typeof v === 'number' : true;
    if (!ok) throw new Error(`qwasm internal error: ${where}: argument ${i} of ${name} is ${String(v)}, which its ${type} parameter would change`);
  });
}

// The builds: SIMD128 and scalar on one thread; over a shared memory (threads, and relaxed SIMD), SIMD128 and
// SIMD128 with the relaxed-SIMD GEMM.
const FILES = {
  simd: 'qwasm-simd.wasm', scalar: 'qwasm-scalar.wasm', simdThreads: 'qwasm-simd-threads.wasm',
  relaxedThreads: 'qwasm-relaxed-threads.wasm',
};

function defaultUrl(build) {
  // Literal new URL(..., import.meta.url) calls: the form Vite and webpack 5 rewrite into assets.
  if (build === 'simdThreads') {
    return packageFileUrl(new URL('../../dist/qwasm-simd-threads.wasm', import.meta.url), 'dist/qwasm-simd-threads.wasm');
  }
  if (build === 'relaxedThreads') {
    return packageFileUrl(new URL('../../dist/qwasm-relaxed-threads.wasm', import.meta.url), 'dist/qwasm-relaxed-threads.wasm');
  }
  return build === 'simd'
    ? packageFileUrl(new URL('../../dist/qwasm-simd.wasm', import.meta.url), 'dist/qwasm-simd.wasm')
    : packageFileUrl(new URL('../../dist/qwasm-scalar.wasm', import.meta.url), 'dist/qwasm-scalar.wasm');
}

function resolveUrl(wasmPaths, build) {
  if (wasmPaths == null) return defaultUrl(build);
  if (typeof wasmPaths === 'string' || wasmPaths instanceof URL) {
    // A prefix, as onnxruntime-web's wasmPaths: a directory URL or path ending in '/'.
    const prefix = String(wasmPaths);
    return prefix.endsWith('/') ? prefix + FILES[build] : `${prefix}/${FILES[build]}`;
  }
  if (typeof wasmPaths === 'object') {
    const entry = wasmPaths[build];
    if (entry == null) {
      throw new TypeError(`init: wasmPaths.${build} is missing`);
    }
    return String(entry);
  }
  throw new TypeError(`init: wasmPaths must be a string prefix or { simd, scalar, simdThreads, relaxedThreads }, got ${typeof wasmPaths}`);
}

const isNode = typeof process !== 'undefined' && process.versions?.node != null;
/** The major version of Node's V8 (0 where unknown). */
const v8Major = () => Number.parseInt(process.versions?.v8 ?? '0', 10) || 0;

const IMPORTS = {
  env: {
    // Called by the module after memory.grow; views are recreated on every use, so nothing to do.
    emscripten_notify_memory_growth() {},
  },
};

/** The thread count init() asked for: undefined -> 1, 0 -> defaultThreadCount(). */
/**
 * Checks init's simd, relaxedSimd and numThreads options (on every init call, also once a backend runs); returns the
 * thread count numThreads asks for.
 */
export function checkInitOptions({ simd, relaxedSimd = 'auto', numThreads }) {
  if (simd != null && typeof simd !== 'boolean') {
    throw new TypeError(`init: simd must be a boolean, got ${String(simd)}`);
  }
  if (relaxedSimd !== 'auto' && typeof relaxedSimd !== 'boolean') {
    throw new TypeError(`init: relaxedSimd must be true, false or 'auto', got ${String(relaxedSimd)}`);
  }
  return threadCount(numThreads);
}

function threadCount(numThreads) {
  if (numThreads === undefined) return 1;
  if (!Number.isInteger(numThreads) || numThreads < 0 || numThreads > MAX_THREADS) {
    throw new RangeError(`init: numThreads must be an integer in [0, ${MAX_THREADS}] (0: one per core), got ${String(numThreads)}`);
  }
  return numThreads === 0 ? defaultThreadCount() : numThreads;
}

const warned = new Set();
function warnOnce(kind, message) {
  if (warned.has(kind)) return;
  warned.add(kind);
  console.warn(message);
}

let probeRelaxed = relaxedDotSemantics;
/** Tests only: replaces the relaxed-SIMD probe (to run the relaxed kernels on operands every semantics agrees on). */
export function setRelaxedProbeForTests(probe) {
  probeRelaxed = probe ?? relaxedDotSemantics;
}

/** Whether to try the relaxed-SIMD build: { semantics } or { semantics: null, reason }. */
function relaxedChoice(relaxedSimd, useSimd) {
  if (relaxedSimd === false) return { semantics: null, reason: 'relaxedSimd: false' };
  if (!useSimd) return { semantics: null, reason: 'the scalar build runs' };
  if (relaxedSimd !== true && isNode && v8Major() < 13) {
    // Node 20 (V8 11) needs a flag for relaxed SIMD, and its baseline compiler computed the dot product wrongly;
    // Node 22's V8 12 lowers it to saturating pairs on x86 even with AVX-VNNI. Node 24 (V8 13) probes as browsers do:
    // there tests/js/node24.test.js checks the relaxed kernels' bytes under each compiler tier.
    return { semantics: null, reason: 'Node before 24 keeps SIMD128 unless relaxedSimd: true' };
  }
  return probeRelaxed();
}

/**
 * Instantiates a backend. options: { simd?: boolean, numThreads?: number, relaxedSimd?: boolean | 'auto',
 * wasmPaths?: string | URL | {simd, scalar, simdThreads, relaxedThreads}, wasmBinary?: ArrayBuffer | Uint8Array |
 * WebAssembly.Module }.
 * numThreads > 1 runs the threads build with workers; where that cannot be (no cross-origin isolation,
 * no SharedArrayBuffer or wasm atomics, a worker that does not start, the scalar build asked for), the
 * single-thread build runs instead, backendInfo().threadsFallback says why, and console.warn says so once.
 * The relaxed-SIMD build (a threads build: it needs a shared memory too, which for one thread Chromium makes in any
 * page) runs where the engine's relaxed dot product is exact for full bytes (relaxed.js), by default in browsers
 * and in Node 24 or later; relaxedSimd: true asks for it in older Node too and warns once when it cannot run, false
 * never uses it.
 */
export async function loadBackend(options = {}) {
  const { simd, wasmPaths, wasmBinary, relaxedSimd = 'auto' } = options;
  const threads = checkInitOptions(options);
  const supported = simdSupported();
  if (simd === true && !supported) {
    throw new UnsupportedError('init: simd: true was requested, but this engine does not support wasm SIMD128 (i32x4.dot_i16x8_s)');
  }
  const useSimd = simd ?? supported;
  const relaxed = relaxedChoice(relaxedSimd, useSimd);
  let fallback; // why fewer threads than asked for run
  let relaxedFallback = relaxed.reason; // why the relaxed kernels do not run
  if (threads > 1 || relaxed.semantics) {
    // Workers need a cross-origin isolated page; the relaxed build on one thread needs only a shared memory, which
    // Chromium makes in any page.
    const noMemory = useSimd ? sharedMemoryUnavailable() : 'threads need the SIMD128 build';
    const noWorkers = threads > 1 ? noMemory ?? threadsUnavailable() : null;
    const poolThreads = noWorkers === null ? threads : 1;
    fallback = noWorkers ?? undefined;
    if (relaxed.semantics && noMemory !== null) relaxedFallback = noMemory;
    // The relaxed build where the probe allows it, then the SIMD128 threads build for more than one thread.
    const attempts = [...(relaxed.semantics && noMemory === null ? [relaxed.semantics] : []), ...(poolThreads > 1 ? [null] : [])];
    for (const semantics of attempts) {
      try {
        const backend = await loadThreaded(poolThreads, wasmPaths, wasmBinary, semantics);
        if (semantics && !backend.relaxed) relaxedFallback = 'the wasmBinary given has no relaxed-SIMD kernels';
        if (poolThreads < threads) warnOnce('threads', `qwasm: running on 1 thread instead of ${threads}: ${fallback}`);
        return finish(backend, fallback, backend.relaxed ? undefined : relaxedFallback);
      } catch (error) {
        if (semantics) relaxedFallback = error.message;
        else fallback = error.message;
      }
    }
    if (threads > 1) {
      fallback ??= relaxedFallback;
      warnOnce('threads', `qwasm: running on 1 thread instead of ${threads}: ${fallback}`);
    } else {
      fallback = undefined;
    }
  }
  // Says, once, why relaxedSimd: true could not be honoured; records the reasons on the backend.
  function finish(backend, threadsFallback, relaxedReason) {
    backend.threadsFallback = threadsFallback;
    if (relaxedSimd === true && relaxedReason !== undefined) {
      backend.relaxedFallback = relaxedReason;
      warnOnce('relaxed', `qwasm: relaxed SIMD is not used: ${relaxedReason}`);
    }
    return backend;
  }
  let module;
  let source;
  if (wasmBinary != null) {
    source = 'wasmBinary';
    module = await moduleOf(wasmBinary);
  } else {
    source = String(resolveUrl(wasmPaths, useSimd ? 'simd' : 'scalar'));
    module = await compile(await readBytes(source, 'qwasm', 'the wasm binary at '), source);
  }
  if (importsMemory(module)) {
    // The threads build given as wasmBinary runs on one thread too, where a shared memory can be made.
    const backend = await loadThreaded(1, null, module).catch((error) => {
      throw new Error(`qwasm: the wasm binary from ${source} is the threads build, which cannot run here: ${fallback ?? error.message}`);
    });
    return finish(backend, fallback, relaxedFallback);
  }
  let instance;
  try {
    instance = await WebAssembly.instantiate(module, IMPORTS);
  } catch (error) {
    throw new Error(`qwasm: could not instantiate the wasm binary from ${source}: ${error.message}`, { cause: error });
  }
  checkQwasm(instance, source);
  return finish(new Backend(instance, source), fallback, relaxedFallback);
}

/**
 * A threads build, one instance per thread over a shared memory (threads.js): the relaxed-SIMD one with its kernels
 * for `semantics` ('usdot' | 'sdot'), or the SIMD128 one (semantics null). Throws when it cannot run.
 */
async function loadThreaded(threads, wasmPaths, wasmBinary, semantics = null) {
  let source;
  let module;
  if (wasmBinary != null) {
    source = 'wasmBinary';
    module = await moduleOf(wasmBinary);
    if (!importsMemory(module)) throw new Error('the wasmBinary given is not a threads build (qwasm-simd-threads.wasm)');
  } else {
    source = String(resolveUrl(wasmPaths, semantics ? 'relaxedThreads' : 'simdThreads'));
    module = await compile(await readBytes(source, 'qwasm', 'the wasm binary at '), source);
  }
  // The build's own limits: 16 MiB to start, growable to 4 GiB (CMakeLists.txt).
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true });
  let instance;
  try {
    instance = await WebAssembly.instantiate(module, { env: { ...IMPORTS.env, memory } });
  } catch (error) {
    throw new Error(`could not instantiate the wasm binary from ${source}: ${error.message}`, { cause: error });
  }
  checkQwasm(instance, source);
  const backend = new Backend(instance, source, memory);
  if (semantics && !backend.useRelaxed(semantics) && wasmBinary == null) {
    throw new Error(`the wasm binary from ${source} has no relaxed-SIMD kernels`);
  }
  const pool = await startWorkers(module, memory, instance.exports, threads);
  backend.threads = pool.count;
  return backend;
}

function importsMemory(module) {
  return WebAssembly.Module.imports(module).some((i) => i.kind === 'memory');
}

function checkQwasm(instance, source) {
  if (typeof instance.exports.qw_isa !== 'function') {
    throw new Error(`qwasm: the wasm binary from ${source} is not a qwasm build (no qw_isa export)`);
  }
}

async function moduleOf(wasmBinary) {
  if (wasmBinary instanceof WebAssembly.Module) return wasmBinary;
  if (wasmBinary instanceof ArrayBuffer || ArrayBuffer.isView(wasmBinary)) return compile(wasmBinary, 'wasmBinary');
  throw new TypeError('init: wasmBinary must be an ArrayBuffer, a typed array or a WebAssembly.Module');
}

async function compile(bytes, source) {
  try {
    return await WebAssembly.compile(bytes);
  } catch (error) {
    throw new Error(`qwasm: the wasm binary from ${source} does not compile: ${error.message}`, { cause: error });
  }
}
