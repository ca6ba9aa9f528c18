// Activation memory for Model.run, planned once and reused: ONNX Runtime's "memory pattern" idea.
// A run whose input shapes have no plan yet records every wasm allocation made while the graph
// executes (size, when it was made, when it was freed). The allocations freed within the run (layer
// outputs and kernel scratch, not packed weights) are then placed in ONE arena: greedy by size, each
// at the lowest offset free of the allocations whose lifetimes overlap its own (the TFLite / ORT
// heuristic). Later runs with the same shapes take the k-th allocation from its planned slot: no
// malloc/free per layer, and a fixed footprint (`arenaBytes`).
//
// Replaying is guarded, never trusted: the k-th allocation must have the recorded size and no other
// allocation sharing its bytes may still be live. Otherwise that run finishes on malloc and the
// next run records again, so a wrong plan costs time, never correctness.

const ALIGN = 16; // qw_alloc's alignment: SIMD loads in the kernels may rely on it

const alignUp = (n) => Math.ceil(n / ALIGN) * ALIGN;

/** Greedy-by-size placement of [{ bytes, start, end }] (lifetimes as event indices); returns offsets and size. */
export function placeByLifetime(blocks) {
  const order = blocks.map((_, i) => i).sort((a, b) => blocks[b].bytes - blocks[a].bytes || blocks[a].start - blocks[b].start);
  const offsets = new Array(blocks.length);
  const placed = [];
  let size = 0;
  for (const i of order) {
    const b = blocks[i];
    const busy = placed
      .filter((j) => blocks[j].start < b.end && b.start < blocks[j].end)
      .map((j) => [offsets[j], offsets[j] + alignUp(blocks[j].bytes)])
      .sort((x, y) => x[0] - y[0]);
    let offset = 0;
    for (const [lo, hi] of busy) {
      if (offset + b.bytes <= lo) break;
      offset = Math.max(offset, hi);
    }
    offsets[i] = offset;
    placed.push(i);
    size = Math.max(size, offset + alignUp(b.bytes));
  }
  return { offsets, size };
}

export class MemoryPlan {
  #backend;
  #key = null; // input shapes the plan is for
  #slots = null; // [{ bytes, offset, conflicts: slot indices sharing bytes }]
  #arena = 0;
  #arenaBytes = 0;
  #retired = [];
  // per run
  #mode = 'off';
  #events = 0;
  #next = 0;
  #recorded = null; // recording: ptr -> block, and the block list
  #blocks = null;
  #live = null; // replaying: ptr -> slot index, and which slots hold data
  #holding = null;
  #broken = false;
  #mallocs = null; // ptr -> bytes of the run's plain allocations, for the peak
  #mallocBytes = 0;
  #peak = 0;

  constructor(backend) {
    this.#backend = backend;
  }

  /** { arenaBytes, slots, plannedBytes } of the current plan (zeros before the first planned run). */
  get stats() {
    const slots = this.#slots ?? [];
    return { arenaBytes: this.#arenaBytes, slots: slots.length, plannedBytes: slots.reduce((s, x) => s + x.bytes, 0) };
  }

  /** The most bytes a run held at once: its arena slots plus its plain allocations (packed weights excluded). */
  get runPeakBytes() {
    return this.#peak;
  }

  /** Runs fn() with wasm allocations recorded (no plan for these shapes) or served from the plan. */
  run(shapeKey, fn) {
    if (shapeKey !== this.#key) this.#drop();
    this.#key = shapeKey;
    this.#mode = this.#slots ? 'replay' : 'record';
    this.#events = 0;
    this.#next = 0;
    this.#broken = false;
    this.#recorded = new Map();
    this.#blocks = [];
    this.#live = new Map();
    this.#holding = new Uint8Array(this.#slots?.length ?? 0);
    this.#mallocs = new Map();
    this.#mallocBytes = 0;
    this.#peak = this.#arenaBytes;
    this.#backend.setPlacement(this);
    let ok = false;
    try {
      const result = fn();
      ok = true;
      return result;
    } finally {
      this.#backend.setPlacement(null);
      // Every run-time allocation is freed when run() cleans up; one still held would be overwritten
      // by the next run. Persistent objects (packed weights) are made inside backend.outsidePlan().
      if (this.#live.size > 0) {
        this.#retired.push(this.#arena); // the escaped data keeps it until dispose(); never reused
        this.#slots = null;
        this.#arena = 0;
        this.#arenaBytes = 0;
        if (ok) throw new Error('Model.run: internal error, arena memory outlived the run');
      }
      if (this.#mode === 'record' && ok) this.#plan();
      else if (this.#broken) this.#drop();
      this.#mode = 'off';
      this.#recorded = this.#blocks = this.#live = this.#holding = this.#mallocs = null;
    }
  }

  /** Backend hook: a pointer for this allocation, or 0 for a plain qw_alloc. */
  alloc(bytes) {
    this.#events++;
    if (this.#mode === 'record') return 0; // allocated normally; allocated() records it
    const k = this.#next++;
    const slot = this.#slots[k];
    if (this.#broken || !slot || slot.bytes !== bytes || slot.conflicts.some((j) => this.#holding[j])) {
      this.#broken = true; // the pattern changed: finish this run on malloc, plan again next time
      return 0;
    }
    this.#holding[k] = 1;
    const ptr = this.#arena + slot.offset;
    this.#live.set(ptr, k);
    return ptr;
  }

  /** Backend hook: a plain allocation was made (recording keeps its lifetime). */
  allocated(ptr, bytes) {
    this.#mallocs.set(ptr, bytes);
    this.#mallocBytes += bytes;
    this.#peak = Math.max(this.#peak, this.#mallocBytes + (this.#mode === 'replay' ? this.#arenaBytes : 0));
    if (this.#mode !== 'record') return;
    const block = { bytes, start: this.#events - 1, end: Infinity };
    this.#recorded.set(ptr, block);
    this.#blocks.push(block);
  }

  /** Backend hook: true when ptr is an arena slot (nothing to free). */
  free(ptr) {
    this.#events++;
    const bytes = this.#mallocs.get(ptr);
    if (bytes !== undefined) {
      this.#mallocBytes -= bytes;
      this.#mallocs.delete(ptr);
    }
    if (this.#mode === 'record') {
      const block = this.#recorded.get(ptr);
      if (block) {
        block.end = this.#events;
        this.#recorded.delete(ptr);
      }
      return false;
    }
    const k = this.#live.get(ptr);
    if (k === undefined) return this.#arena !== 0 && ptr >= this.#arena && ptr < this.#arena + this.#arenaBytes;
    this.#holding[k] = 0;
    this.#live.delete(ptr);
    return true;
  }

  /** Frees the arena. */
  dispose() {
    this.#drop();
    for (const ptr of this.#retired) this.#backend.free(ptr);
    this.#retired = [];
    this.#key = null;
  }

  #plan() {
    // Allocations still live after the run (packed weights made on first use) stay outside the arena;
    // dropping them from the pattern is what lets the next run, which does not repeat them, match it.
    const blocks = this.#blocks.filter((b) => b.end !== Infinity);
    if (blocks.length === 0) return;
    const { offsets, size } = placeByLifetime(blocks);
    const slots = blocks.map((b, i) => ({ bytes: b.bytes, offset: offsets[i], conflicts: [] }));
    for (let i = 0; i < slots.length; i++) {
      for (let j = 0; j < i; j++) {
        const a = slots[i];
        const b = slots[j];
        if (a.offset < b.offset + alignUp(b.bytes) && b.offset < a.offset + alignUp(a.bytes)) {
          a.conflicts.push(j);
          b.conflicts.push(i);
        }
      }
    }
    this.#arena = this.#backend.alloc(size);
    this.#arenaBytes = size;
    this.#slots = slots;
  }

  #drop() {
    if (this.#arena) this.#backend.free(this.#arena);
    this.#arena = 0;
    this.#arenaBytes = 0;
    this.#slots = null;
  }
}
