// Wasm memory an object owns besides tensor storage (packed weights with their requantization blob and workspace,
// a model's packed layers and activation arena): dispose() frees it, and a FinalizationRegistry frees it when the
// owner is garbage-collected undisposed. A safety net only, as for tensors: dispose what you create.

const registry = new FinalizationRegistry((held) => held.release());

/**
 * Calls held.release() when `owner` is garbage-collected, unless forget(owner) was called first. `held` must not
 * reference the owner, and must not be a closure made inside the owner's constructor or methods: V8 keeps such a
 * closure's whole scope, `this` included, and the owner would never be collected. Pass an Allocations, or an object
 * of a class defined for the purpose.
 */
export function releaseWhenCollected(owner, held) {
  registry.register(owner, held, owner);
}

/** The owner released its memory itself (dispose()): nothing is left for the registry to do. */
export function forget(owner) {
  registry.unregister(owner);
}

/**
 * Wasm allocations held under names ({ packed, blob, workspace }), freed together: what an owner keeps and what
 * its release closure frees.
 */
export class Allocations {
  constructor(backend) {
    this.backend = backend;
    this.ptrs = {};
  }

  get(name) {
    return this.ptrs[name] ?? 0;
  }

  /** Holds ptr under name, freeing what was held there before. */
  set(name, ptr) {
    this.free(name);
    this.ptrs[name] = ptr;
  }

  free(name) {
    const ptr = this.ptrs[name];
    if (ptr) this.backend.free(ptr);
    this.ptrs[name] = 0;
  }

  freeAll() {
    for (const name of Object.keys(this.ptrs)) this.free(name);
  }

  /** What the registry calls for a collected owner. */
  release() {
    this.freeAll();
  }
}
