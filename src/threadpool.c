/* The pool of threadpool.h. */
#include "threadpool.h"

#include "qwasm.h"

size_t qw_parallel_tile(size_t range, size_t unit, size_t per_thread, size_t min_tile) {
  const size_t parts = qw_threads() * per_thread;
  size_t tile = (range + parts - 1) / parts;
  tile = (tile + unit - 1) / unit * unit;
  return tile < min_tile ? min_tile : tile;
}

size_t qw_elementwise_tile(size_t n) {
  return qw_parallel_tile(n, 64, 2, QW_TILE_MIN_ELEMENTS);
}

size_t qw_row_tile(size_t rows, size_t row_elements, size_t per_thread) {
  return qw_parallel_tile(rows, 1, per_thread, (QW_TILE_MIN_ELEMENTS + row_elements - 1) / row_elements);
}

#if !QW_THREADS

size_t qw_threads(void) {
  return 1;
}

void qw_parallelize(qw_task_fn task, const void* context, size_t range, size_t tile) {
  for (size_t start = 0; start < range; start += tile) {
    task(context, 0, start, range - start < tile ? range - start : tile);
  }
}

qw_status qw_threadpool_set_threads(size_t threads) {
  return threads == 1 ? QW_OK : QW_UNSUPPORTED;
}

void qw_thread_main(size_t index) {
  (void)index;
}

void qw_threadpool_shutdown(void) {}

#else

#include <stdatomic.h>

#if defined(__wasm__)
/* Workers sleep in memory.atomic.wait32 (allowed in workers; the caller, which may be a page's main
 * thread where waiting traps, only ever spins). */
static void wait_while_equal(_Atomic uint32_t* word, uint32_t value) {
  __builtin_wasm_memory_atomic_wait32((int32_t*)word, (int32_t)value, -1);
}
static void wake_all(_Atomic uint32_t* word) {
  __builtin_wasm_memory_atomic_notify((int32_t*)word, UINT32_MAX);
}
#else
#include <sched.h>
/* Native test builds: a worker yields instead of sleeping. */
static void wait_while_equal(_Atomic uint32_t* word, uint32_t value) {
  while (atomic_load_explicit(word, memory_order_acquire) == value) {
    sched_yield();
  }
}
static void wake_all(_Atomic uint32_t* word) {
  (void)word;
}
#endif

/* Loads before a worker sleeps: long enough to bridge the gap between a model's layers. */
#define SPIN_LOADS 200000

/* The pool lives in linear memory: every instance (thread) of the module sees this one. The job's
 * fields are atomics too, read relaxed: a worker that wakes late may read a newer job's fields, which
 * it then never uses (its claim fails on the generation). */
static struct {
  _Atomic uint32_t generation; /* the current job; workers wait for it to change */
  _Atomic uint32_t sleepers;   /* workers in (or about to enter) wait_while_equal */
  _Atomic uint64_t work;       /* generation << 32 | next tile */
  _Atomic uint32_t done;       /* tiles of the current job finished */
  _Atomic uint32_t stop;
  _Atomic(qw_task_fn) task;
  _Atomic(const void*) context;
  _Atomic size_t range, tile;
  _Atomic uint32_t tiles;
  _Atomic uint32_t threads;
} pool = {.threads = 1};

size_t qw_threads(void) {
  return atomic_load_explicit(&pool.threads, memory_order_relaxed);
}

qw_status qw_threadpool_set_threads(size_t threads) {
  if (threads == 0 || threads > QW_MAX_THREADS) {
    return QW_INVALID_ARGUMENT;
  }
  atomic_store_explicit(&pool.threads, (uint32_t)threads, memory_order_relaxed);
  return QW_OK;
}

/* Claims and runs tiles of job `generation` until none is left or a newer job has started. */
static void run_tiles(uint32_t generation, size_t thread) {
  const qw_task_fn task = atomic_load_explicit(&pool.task, memory_order_relaxed);
  const void* context = atomic_load_explicit(&pool.context, memory_order_relaxed);
  const size_t range = atomic_load_explicit(&pool.range, memory_order_relaxed);
  const size_t tile = atomic_load_explicit(&pool.tile, memory_order_relaxed);
  const uint32_t tiles = atomic_load_explicit(&pool.tiles, memory_order_relaxed);
  uint64_t work = atomic_load_explicit(&pool.work, memory_order_acquire);
  for (;;) {
    if ((uint32_t)(work >> 32) != generation || (uint32_t)work >= tiles) {
      return;
    }
    /* A successful claim proves job `generation` was still running, so the fields read above are its own. */
    if (!atomic_compare_exchange_weak_explicit(&pool.work, &work, work + 1, memory_order_acq_rel,
                                               memory_order_acquire)) {
      continue;
    }
    const size_t start = (size_t)(uint32_t)work * tile;
    task(context, thread, start, range - start < tile ? range - start : tile);
    atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
    work = atomic_load_explicit(&pool.work, memory_order_acquire);
  }
}

void qw_thread_main(size_t index) {
  if (index == 0 || index >= QW_MAX_THREADS) { /* thread 0 is the caller's: a worker there would share its slice */
    return;
  }
  uint32_t seen = atomic_load_explicit(&pool.generation, memory_order_acquire);
  for (;;) {
    uint32_t generation;
    unsigned spins = 0;
    while ((generation = atomic_load_explicit(&pool.generation, memory_order_acquire)) == seen) {
      if (++spins == SPIN_LOADS) {
        /* Counted before the wait checks the generation, and the caller reads the count after it publishes one
         * (both sequentially consistent): either the caller sees a sleeper and wakes it, or the wait sees the new
         * generation and returns at once. */
        atomic_fetch_add_explicit(&pool.sleepers, 1, memory_order_seq_cst);
        wait_while_equal(&pool.generation, seen);
        atomic_fetch_sub_explicit(&pool.sleepers, 1, memory_order_relaxed);
        spins = 0;
      }
    }
    seen = generation;
    if (atomic_load_explicit(&pool.stop, memory_order_acquire)) {
      return;
    }
    if (index < qw_threads()) { /* a worker beyond the pool's size has no workspace slice */
      run_tiles(generation, index);
    }
  }
}

void qw_threadpool_shutdown(void) {
  atomic_store_explicit(&pool.stop, 1, memory_order_release);
  atomic_fetch_add_explicit(&pool.generation, 1, memory_order_acq_rel);
  wake_all(&pool.generation);
}

void qw_parallelize(qw_task_fn task, const void* context, size_t range, size_t tile) {
  const size_t tiles = (range + tile - 1) / tile;
  if (qw_threads() == 1 || tiles <= 1) {
    for (size_t start = 0; start < range; start += tile) {
      task(context, 0, start, range - start < tile ? range - start : tile);
    }
    return;
  }
  /* Only the calling thread publishes jobs. */
  const uint32_t generation = atomic_load_explicit(&pool.generation, memory_order_relaxed) + 1;
  atomic_store_explicit(&pool.task, task, memory_order_relaxed);
  atomic_store_explicit(&pool.context, context, memory_order_relaxed);
  atomic_store_explicit(&pool.range, range, memory_order_relaxed);
  atomic_store_explicit(&pool.tile, tile, memory_order_relaxed);
  atomic_store_explicit(&pool.tiles, (uint32_t)tiles, memory_order_relaxed);
  atomic_store_explicit(&pool.done, 0, memory_order_relaxed);
  /* Tile 0 is the caller's before the workers see the job: a job split in one tile per thread then gives the
   * caller the first part every time, and consecutive layers split the same way (rows, say) leave each thread
   * reading what it wrote. Claimed by whoever came first, the parts swapped threads from layer to layer. */
  atomic_store_explicit(&pool.work, (uint64_t)generation << 32 | 1, memory_order_release);
  atomic_store_explicit(&pool.generation, generation, memory_order_seq_cst);
  if (atomic_load_explicit(&pool.sleepers, memory_order_seq_cst) != 0) {
    wake_all(&pool.generation); /* memory.atomic.notify takes the engine's lock: only when a worker sleeps */
  }
  task(context, 0, 0, tile);
  atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
  run_tiles(generation, 0);
  while (atomic_load_explicit(&pool.done, memory_order_acquire) != tiles) {
  }
}

#endif
