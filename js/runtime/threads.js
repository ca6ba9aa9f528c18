// Threads without Emscripten's pthread runtime: qwasm-simd-threads.wasm imports a shared memory, and each
// worker instantiates the same compiled module over that memory, sets its own stack (allocated by the main
// instance) and enters qw_thread_main, which runs the tiles the operators hand out (src/threadpool.h).
// Workers never allocate and never return to JS until shutdown. Works with module-less workers from a
// Blob URL in browsers (no extra file for bundlers to find) and with worker_threads in Node.

/** Most threads init({ numThreads }) accepts (src/threadpool.h QW_MAX_THREADS). */
export const MAX_THREADS = 64;

/** Stack of each worker's instance: the kernels' frames are small. */
const WORKER_STACK_BYTES = 256 * 1024;

/** How long workers may take to start before qwasm gives up on them. */
const START_TIMEOUT_MS = 15000;

const isNode = typeof process !== 'undefined' && process.versions?.node != null;

// A module that validates only where wasm threads do: a shared memory and one atomic instruction.
const ATOMICS_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 5, 4, 1, 3, 1, 1, 10, 11, 1, 9, 0, 65, 0, 254, 16, 2,
  0, 26, 11,
]);

/** The number of threads `numThreads: 0` means: the machine's logical cores, at most 8. */
export function defaultThreadCount() {
  let cores = 1;
  if (isNode) {
    const os = process.getBuiltinModule?.('node:os');
    cores = os?.availableParallelism?.() ?? os?.cpus?.().length ?? 1;
  } else if (typeof navigator !== 'undefined') {
    cores = navigator.hardwareConcurrency ?? 1;
  }
  return Math.max(1, Math.min(8, cores));
}

/**
 * Why this engine cannot make the shared wasm memory the threads builds import, or null when it can. One thread
 * needs no more: Chromium makes one in any page (only sending it to a worker needs cross-origin isolation), so the
 * relaxed-SIMD build (a threads build) runs on one thread there without the headers.
 */
export function sharedMemoryUnavailable() {
  try {
    if (!WebAssembly.validate(ATOMICS_PROBE)) return 'this engine does not support wasm threads (atomics)';
    new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
  } catch (error) {
    return `this engine cannot create a shared wasm memory here (${error.message})`;
  }
  return null;
}

/** Why this engine cannot run qwasm's threads (workers over a shared memory), or null when it can. */
export function threadsUnavailable() {
  if (typeof SharedArrayBuffer !== 'function') {
    return 'SharedArrayBuffer is not available (a page must be cross-origin isolated: serve it with ' +
      'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)';
  }
  if (!isNode && globalThis.crossOriginIsolated !== true) {
    return 'the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and ' +
      'Cross-Origin-Embedder-Policy: require-corp)';
  }
  const memory = sharedMemoryUnavailable();
  if (memory !== null) return memory;
  if (isNode) {
    if (!process.getBuiltinModule?.('node:worker_threads')) return 'node:worker_threads is not available';
  } else if (typeof Worker !== 'function' || typeof Blob !== 'function' || typeof URL?.createObjectURL !== 'function') {
    return 'Web Workers are not available';
  }
  return null;
}

// Runs inside each worker; self-contained (it is sent as source text). `port` receives the start message,
// `post` answers.
function workerMain(port, post) {
  port((message) => {
    const { module, memory, index, stackTop } = message;
    let exports;
    try {
      const imports = { env: { memory, emscripten_notify_memory_growth() {} } };
      exports = new WebAssembly.Instance(module, imports).exports;
      exports.stackRestore(stackTop);
    } catch (error) {
      post({ index, error: `could not instantiate the module in worker ${index}: ${error.message}` });
      return;
    }
    post({ index, ready: true });
    try {
      exports.qw_thread_main(index); // returns after qw_threadpool_shutdown
      post({ index, exited: true });
    } catch (error) {
      post({ index, error: `worker ${index} stopped: ${error.message}` });
    }
  });
}

function spawnWorker(onMessage, onError) {
  if (isNode) {
    const { Worker } = process.getBuiltinModule('node:worker_threads');
    // process.getBuiltinModule, not require: an eval'd worker is an ES module when the process runs with
    // --input-type=module (workers inherit execArgv).
    const source = `const { parentPort } = process.getBuiltinModule('node:worker_threads');
(${workerMain})((f) => parentPort.once('message', f), (m) => parentPort.postMessage(m));`;
    const worker = new Worker(source, { eval: true });
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.unref(); // a process may exit while its workers wait for work
    return { post: (m) => worker.postMessage(m), terminate: () => worker.terminate() };
  }
  const source = `(${workerMain})((f) => { self.onmessage = (e) => { self.onmessage = null; f(e.data); }; }, (m) => self.postMessage(m));`;
  const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  let worker;
  try {
    worker = new Worker(url);
  } finally {
    URL.revokeObjectURL(url);
  }
  worker.onmessage = (e) => onMessage(e.data);
  worker.onerror = (e) => {
    e.preventDefault?.();
    onError(new Error(e.message || 'the worker script could not be loaded (a Content-Security-Policy without worker-src blob:?)'));
  };
  return { post: (m) => worker.postMessage(m), terminate: () => worker.terminate() };
}

/**
 * Starts count - 1 workers on the threads build's module and memory and sizes the pool; resolves once
 * every worker runs qw_thread_main. Throws (after stopping whatever started) when one cannot start.
 * exports: the main instance's exports (its allocator provides the workers' stacks).
 */
export async function startWorkers(module, memory, exports, count) {
  if (count === 1) return { count, stop() {} };
  const workers = [];
  const stacks = [];
  let settle;
  const started = new Promise((resolve, reject) => (settle = { resolve, reject }));
  let ready = 0;
  const stop = () => {
    exports.qw_threadpool_shutdown();
    for (const w of workers) w.terminate();
  };
  const timer = setTimeout(
    () => settle.reject(new Error(`${count - 1 - ready} of ${count - 1} workers did not start within ${START_TIMEOUT_MS / 1000} s`)),
    START_TIMEOUT_MS,
  );
  try {
    for (let index = 1; index < count; index++) {
      const stack = exports.qw_alloc(WORKER_STACK_BYTES) >>> 0;
      if (stack === 0) throw new Error('out of wasm memory for the workers\' stacks');
      stacks.push(stack);
      const worker = spawnWorker(
        (m) => {
          if (m.error) settle.reject(new Error(m.error));
          else if (m.ready && ++ready === count - 1) settle.resolve();
        },
        (error) => settle.reject(new Error(`worker ${index} failed: ${error.message}`)),
      );
      workers.push(worker);
      worker.post({ module, memory, index, stackTop: stack + WORKER_STACK_BYTES });
    }
    await started;
  } catch (error) {
    stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const status = exports.qw_threadpool_set_threads(count);
  if (status !== 0) {
    stop();
    throw new Error(`qw_threadpool_set_threads(${count}) failed with status ${status}`);
  }
  return { count, stop };
}
