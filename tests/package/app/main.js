// The page: the digits model on the main thread, then in a module Worker built from the same code.
import { runDigits } from './digits.js';

function inWorker() {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  return new Promise((resolve) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => resolve({ error: `worker: ${e.message}` });
    worker.postMessage('run');
  }).finally(() => worker.terminate());
}

try {
  window.result = { main: await runDigits(), worker: await inWorker() };
} catch (error) {
  window.result = { error: String(error?.stack ?? error) };
}
