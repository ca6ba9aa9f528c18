// Activation memory for Model.run, planned once per input shape and reused: ONNX Runtime's "memory pattern" idea.
// A run whose input shapes have no plan yet records every wasm allocation made while the graph
// executes (size, when it was made, when it was freed). The allocations freed within the run (layer
// outputs and kernel scratch, not packed weights) are then placed in ONE arena: greedy by size, each
// at the lowest offset free of the allocations whose lifetimes overlap its own (the TFLite / ORT
// heuristic). Later runs with the same shapes take the k-th allocation from its planned slot: no
// malloc/free per layer, and a fixed footprint (`arenaBytes`).
//
// A plan belongs to one shape key (a transformer's sequence length changes every allocation); the last
// MAX_PLANS keys keep their plans, so alternating between a few lengths never records again. They share one
// arena, as large as the largest of them.
//
// Replaying is guarded, never trusted: the k-th allocation must have the recorded size and no other
// allocation sharing its bytes may still be live. Otherwise that run finishes on malloc and the
// next run with those shapes records again, so a wrong plan costs time, never correctness.

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

/** How many shape keys keep their plans (least recently used dropped first). */
export const MAX_PLANS = 8;

export class MemoryPlan {
  #backend;
  #plans = new Map(); // shape key -> { slots: [{ bytes, offset, conflicts: slot indices sharing bytes }], size }, oldest first
  #key = null; // the key of the current (or last) run
  #slots = null; // its plan's slots, or null while recording
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

  /**
   * { arenaBytes, slots, plannedBytes, plans }: the arena (shared by every kept plan), the slots of the last run's
   * plan and the sum of their sizes (zeros before its shapes were planned), how many shape keys have a plan.
   */
  get stats() {
    const slots = this.#plans.get(this.#key)?.slots ?? [];
    return { arenaBytes: this.#arenaBytes, slots: slots.length, plannedBytes: slots.reduce((s, x) => s + x.bytes, 0), plans: this.#plans.size };
  }

  /** The most bytes a run held at once: its arena slots plus its plain allocations (packed weights excluded). */
  get runPeakBytes() {
    return this.#peak;
  }

  /** Runs fn() with wasm allocations recorded (no plan for these shapes) or served from the plan. */
  run(shapeKey, fn) {
    this.#key = shapeKey;
    const plan = this.#plans.get(shapeKey);
    if (plan) {
      this.#plans.delete(shapeKey); // most recently used last
      this.#plans.set(shapeKey, plan);
      this.#ensureArena(plan.size);
    }
    this.#slots = plan ? plan.slots : null;
    this.#mode = plan ? 'replay' : 'record';
    this.#events = 0;
    this.#next = 0;
    this.#broken = false;
    this.#recorded = new Map();
    this.#blocks = [];
    this.#live = new Map();
    this.#holding = new Uint8Array(this.#slots?.length ?? 0);
    this.#mallocs = new Map();
    this.#mallocBytes = 0;
    this.#peak = this.#mode === 'replay' ? this.#arenaBytes : 0;
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
        this.#arena = 0;
        this.#arenaBytes = 0;
        this.#plans.clear();
        if (ok) throw new Error('Model.run: internal error, arena memory outlived the run');
      }
      if (this.#mode === 'record' && ok) this.#plan();
      else if (this.#broken) this.#plans.delete(shapeKey);
      this.#mode = 'off';
      this.#slots = null;
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

  /** Backend hook: whether ptr is an arena slot this run holds. */
  holds(ptr) {
    return this.#live !== null && this.#live.has(ptr);
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

  /** Frees the arena and forgets every plan. */
  dispose() {
    this.#plans.clear();
    this.#dropArena();
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
    this.#plans.set(this.#key, { slots, size });
    while (this.#plans.size > MAX_PLANS) this.#plans.delete(this.#plans.keys().next().value);
    this.#ensureArena(size);
  }

  /** An arena of at least `size` bytes (a bigger plan grows it; smaller plans use its start). */
  #ensureArena(size) {
    if (this.#arenaBytes >= size) return;
    this.#dropArena();
    this.#arena = this.#backend.outsidePlan(() => this.#backend.alloc(size));
    this.#arenaBytes = size;
  }

  #dropArena() {
    if (this.#arena) this.#backend.free(this.#arena);
    this.#arena = 0;
    this.#arenaBytes = 0;
  }
}
