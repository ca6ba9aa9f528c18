// A fuzz worker: a child process of tools/fuzz/runner.mjs that runs cases (tools/fuzz/case.mjs) one at a time. The
// parent enforces the time and memory limits (it kills a worker that exceeds them) and starts a fresh worker after a
// trap or a blow-up.
import * as qwasm from '../../js/index.js';
import { runCase } from './case.mjs';
import { checkCalls } from './signatures.mjs';

const info = await qwasm.init({ simd: process.env.QWASM_SIMD !== '0', numThreads: Number(process.env.QWASM_THREADS ?? 1) });
// every call into wasm checked: an argument its parameter type would change is a raw (internal) error
checkCalls(info);

process.on('message', async (c) => {
  let result;
  try {
    result = await runCase(qwasm, c);
  } catch (error) {
    result = { outcome: 'fuzzer-error', message: String(error?.stack ?? error).slice(0, 2000), description: '' };
  }
  process.send({ id: c.id, ...result });
});
process.send({ ready: true });
