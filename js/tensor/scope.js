// tidy() scopes: the QTensors created while a scope is open are disposed when it closes, except those it
// returns and those passed to keep(). tfjs's answer to the same problem: a FinalizationRegistry cleans up only
// between tasks, so a synchronous loop that never calls dispose() holds every output it made until it ends
// (3000 calls of a 128x384x1536 linear: 590 MB of wasm memory, 3.3 instead of 1.75 ms per call as the heap grows).
// The scopes hold whatever qtensor.js hands them (its tensors); this module does not import it.

/** The open scopes, innermost last: each the tensors created while it was innermost. */
const scopes = [];
/** Tensors no scope disposes (keep()). */
const kept = new WeakSet();
/** > 0 while library internals create tensors that outlive the call (a model's cached values). */
let untrackedDepth = 0;

/** Called by QTensor's constructor: the innermost open scope takes the new tensor. */
export function trackTensor(t) {
  if (scopes.length > 0 && untrackedDepth === 0) scopes[scopes.length - 1].push(t);
}

/** Runs fn() with no scope taking the tensors it creates: for internal state that must outlive the caller's scope. */
export function untracked(fn) {
  untrackedDepth++;
  try {
    return fn();
  } finally {
    untrackedDepth--;
  }
}

/**
 * Runs fn() and disposes every QTensor created during the call, except the ones in its result (a QTensor, or
 * QTensors inside arrays, plain objects, Maps and Sets, at any depth) and the ones passed to keep(). Returned
 * tensors pass to the enclosing tidy(), if any. fn must be synchronous: a returned Promise is an error. When fn
 * throws, its tensors are disposed and the error propagates. Packed weights and models are not affected.
 */
export function tidy(fn) {
  if (typeof fn !== 'function') {
    throw new TypeError(`tidy: expected a function, got ${fn === null ? 'null' : typeof fn}`);
  }
  const created = [];
  scopes.push(created);
  let result;
  try {
    result = fn();
  } catch (error) {
    close(created, null);
    throw error;
  }
  if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
    close(created, null);
    // The async work goes on without its scope: its failures (most likely "this tensor was disposed") are
    // reported by the TypeError below, not as an unhandled rejection later.
    Promise.resolve(result).catch(() => {});
    throw new TypeError(
      'tidy: the function returned a Promise; tidy() scopes are synchronous. Await outside tidy(), or call ' +
        'tidy() inside the async function around each synchronous part',
    );
  }
  close(created, result);
  return result;
}

/** Marks a tracked object (qtensor.js's keep() checks it is a QTensor) so that no scope disposes it. */
export function keepTracked(t) {
  kept.add(t);
  return t;
}

/** Closes the innermost scope (created): disposes its tensors but result's, which move to the enclosing scope. */
function close(created, result) {
  scopes.pop();
  const returned = new Set();
  if (result !== null && typeof result === 'object' && created.length > 0) collect(result, new Set(created), returned, new Set());
  const parent = scopes.length > 0 ? scopes[scopes.length - 1] : null;
  for (const t of created) {
    if (returned.has(t)) {
      parent?.push(t);
    } else if (!kept.has(t)) {
      t.dispose();
    }
  }
}

/**
 * The tracked objects in value (members of `tracked`): itself, or inside arrays, plain objects, Maps and Sets at any
 * depth (seen guards against cycles). Other objects, tensors included, are not searched.
 */
function collect(value, tracked, found, seen) {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  if (tracked.has(value)) {
    found.add(value);
  } else if (Array.isArray(value) || value instanceof Set) {
    for (const v of value) collect(v, tracked, found, seen);
  } else if (value instanceof Map) {
    for (const [k, v] of value) {
      collect(k, tracked, found, seen);
      collect(v, tracked, found, seen);
    }
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null) {
      for (const v of Object.values(value)) collect(v, tracked, found, seen);
    }
  }
}
