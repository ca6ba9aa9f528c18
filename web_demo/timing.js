// Latency that means something at the browser's coarse clock. Without cross-origin isolation performance.now()
// advances in steps of 100 µs (5 µs with it), longer than one run of the digits model, so a median of a few runs
// reads 0, 100 or 200 µs. Instead: measure the clock's step, then repeat the run until the total time is at least
// 100 steps (the step is then < 1% of what is measured), and report the mean. A few untimed runs come first, so
// that the engine's JIT has compiled the calling code (the first runs of a page are several times slower).

/** The smallest step performance.now() takes here, in ms. */
export function timerStep() {
  let step = Infinity;
  for (let k = 0; k < 8; k++) {
    const t0 = performance.now();
    let t1 = performance.now();
    while (t1 === t0) t1 = performance.now();
    step = Math.min(step, t1 - t0);
  }
  return step;
}

/** Steps of the clock the measured total must span: the step is then below 1% of it. */
export const STEPS = 100;

/** Untimed warm-up: this many runs, or fewer if they take longer than WARMUP_MS together. */
const WARMUP_RUNS = 10;
const WARMUP_MS = 50;

/**
 * Runs `run` (async) a few times untimed, then repeatedly until the elapsed time is at least STEPS clock steps:
 * { ms (mean per run), runs, totalMs, stepMs, warmup }. At least one timed run.
 */
export async function timeRuns(run, stepMs = timerStep()) {
  let warmup = 0;
  for (const w0 = performance.now(); warmup < WARMUP_RUNS && performance.now() - w0 < WARMUP_MS; warmup++) await run();
  const needed = STEPS * stepMs;
  let runs = 0;
  const t0 = performance.now();
  let elapsed = 0;
  do {
    await run();
    runs++;
    elapsed = performance.now() - t0;
  } while (elapsed < needed);
  return { ms: elapsed / runs, runs, totalMs: elapsed, stepMs, warmup };
}

/** A latency for people: µs below a millisecond, with the run count and the clock step it was measured with. */
export function describeLatency(t) {
  const value = t.ms < 1 ? `${(t.ms * 1000).toFixed(t.ms < 0.1 ? 1 : 0)} µs` : `${t.ms.toFixed(2)} ms`;
  const step = `${Number((t.stepMs * 1000).toPrecision(3))} µs`;
  return { value, detail: `mean of ${t.runs} run${t.runs === 1 ? '' : 's'} over ${t.totalMs.toFixed(1)} ms after ${t.warmup} untimed; the clock's step here is ${step}, < 1% of that` };
}
