/*
 * Parallel loops for the operator drivers, on XNNPACK's model (an operator's setup describes its work
 * as a task over a range of tiles, src/operator-run.c's xnn_compute_* over pthreadpool_parallelize_*):
 * a driver calls qw_parallelize(task, context, range, tile) and every tile of the range runs exactly
 * once, on the calling thread or on a worker, as task(context, thread, start, count). `thread` (< qw_threads())
 * says which per-thread slice of the caller's workspace the task may write; tasks write disjoint
 * outputs, allocate nothing and never call qw_parallelize themselves. Integer kernels make the split
 * invisible: each output element is computed by the same kernel calls whichever thread runs its tile,
 * so results are bit-identical for any number of threads.
 *
 * Builds:
 *   QW_THREADS=0 (qwasm-simd.wasm, qwasm-scalar.wasm): one thread; qw_parallelize is a plain loop.
 *   QW_THREADS=1, wasm (qwasm-simd-threads.wasm): the module's memory is shared by one instance per
 *     worker (js/runtime/threads.js); each worker instance sets its own stack and calls qw_thread_main,
 *     which waits in memory.atomic.wait32 between jobs. The pool's state lives in linear memory, so
 *     every instance sees the same pool.
 *   QW_THREADS=1, native (the C tests): the same pool with pthreads calling qw_thread_main.
 *
 * Scheduling: the calling thread publishes a job with tile 0 already its own, wakes the workers that sleep and
 * claims tiles itself; tiles are claimed one at a time with a compare-and-swap on (job generation, next tile), so a worker that wakes
 * late can never take a tile of a later job, and the caller never waits for a worker that has no tile:
 * it returns as soon as every tile is done. A worker that never started only leaves more tiles to the
 * caller. Workers spin for a while before they sleep, so a model's consecutive layers find them awake.
 */
#ifndef QWASM_THREADPOOL_H
#define QWASM_THREADPOOL_H

#include <stddef.h>
#include <stdint.h>

/* Most threads a pool runs (the caller included). */
#define QW_MAX_THREADS 64

/* Runs tiles [start, start + count) of a parallel loop. */
typedef void (*qw_task_fn)(const void* context, size_t thread, size_t start, size_t count);

/* Threads that run tasks, the caller included: 1 until qw_threadpool_set_threads says otherwise. Workspace
 * sizes with per-thread parts are multiplied by it, so it must not change while operators hold workspaces. */
size_t qw_threads(void);

/* Runs task over [0, range) in tiles of `tile` (the last one shorter), in parallel when the pool has
 * workers and there is more than one tile. Returns when every tile is done. */
void qw_parallelize(qw_task_fn task, const void* context, size_t range, size_t tile);

/* Tiles of `unit` elements (rows, columns) for a loop over `range` of them: about `per_thread` tiles
 * per thread, so that a thread delayed by the system leaves its share to the others; at least
 * min_tile units per tile. */
size_t qw_parallel_tile(size_t range, size_t unit, size_t per_thread, size_t min_tile);

/* Fewer elements than this per tile cost more to hand to a worker than they take. */
#define QW_TILE_MIN_ELEMENTS (16 * 1024)

/* Tiles for an elementwise loop over n elements (QLinearAdd, quantize, dequantize): 64-element multiples, at
 * least QW_TILE_MIN_ELEMENTS each, so small tensors stay on the calling thread. */
size_t qw_elementwise_tile(size_t n);

/* Tiles for a loop over `rows` rows of row_elements elements each (broadcast rows, strided-copy runs): about
 * per_thread tiles per thread, at least QW_TILE_MIN_ELEMENTS elements (one row of any length) each. */
size_t qw_row_tile(size_t rows, size_t row_elements, size_t per_thread);

#endif /* QWASM_THREADPOOL_H */
