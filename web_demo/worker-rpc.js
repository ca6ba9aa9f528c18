// The demo's workers and the page talk through this: call(method, args, { onProgress }) on the page, a table of
// async handlers in the worker. A handler gets (args, progress) and returns a value, or { value, transfer } to hand
// ArrayBuffers over without a copy. Errors come back with their name (TypeError, ModelFormatError, ...) and message.

/** Page side: starts the module worker at `url`; returns { call, terminate }. */
export function connect(url) {
  const worker = new Worker(url, { type: 'module' });
  const pending = new Map();
  let next = 1;
  const failAll = (error) => {
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };
  worker.addEventListener('message', ({ data }) => {
    const p = pending.get(data.id);
    if (!p) return;
    if (data.progress !== undefined) {
      p.onProgress?.(data.progress);
      return;
    }
    pending.delete(data.id);
    if (data.error) {
      const error = new Error(data.error.message);
      error.name = data.error.name;
      p.reject(error);
    } else {
      p.resolve(data.value);
    }
  });
  worker.addEventListener('error', (e) => failAll(new Error(`the worker failed: ${e.message ?? 'it could not start'}`)));
  worker.addEventListener('messageerror', () => failAll(new Error('the worker sent a message that could not be read')));
  return {
    call(method, args = {}, { onProgress, transfer = [] } = {}) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, onProgress });
        worker.postMessage({ id, method, args }, transfer);
      });
    },
    terminate() {
      worker.terminate();
      failAll(new Error('the worker was stopped'));
    },
  };
}

/** Worker side: answers the page's calls with `handlers` ({ method: async (args, progress) => value }). */
export function serve(handlers) {
  self.addEventListener('message', async ({ data: { id, method, args } }) => {
    try {
      if (!Object.hasOwn(handlers, method)) throw new TypeError(`the worker has no method "${method}"`);
      const out = await handlers[method](args, (progress) => self.postMessage({ id, progress }));
      const { value, transfer } = out instanceof Transfer ? out : { value: out, transfer: [] };
      self.postMessage({ id, value }, transfer);
    } catch (error) {
      self.postMessage({ id, error: { name: error?.name ?? 'Error', message: error?.message ?? String(error) } });
    }
  });
}

/** A handler's result whose `transfer` buffers move to the page instead of being copied. */
export class Transfer {
  constructor(value, transfer) {
    this.value = value;
    this.transfer = transfer;
  }
}
