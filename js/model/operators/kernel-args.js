// Arguments of the wasm kernels that depend only on shapes (broadcast strides, the dims and strides lists the C
// functions read from wasm memory), computed once per shape plan through ctx.memo and kept in wasm memory
// outside the run's arena.
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { QW_MAX_RANK } from '../../runtime/abi.js';
import { backend } from '../../runtime/runtime.js';
import { ptrOf, releaseValue, wasmValue } from '../values.js';

/** numpy broadcasting of several shapes: { dims, strides } with each operand's element strides over dims (0 where broadcast). */
export function broadcastStrides(shapes, where) {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const dims = [];
  for (let k = 0; k < rank; k++) {
    let d = 1;
    for (const s of shapes) {
      const x = s[k - rank + s.length] ?? 1;
      if (x !== 1) {
        if (d !== 1 && d !== x) throw new ModelFormatError(`${where}: shapes ${shapes.map((t) => `[${t}]`).join(' and ')} do not broadcast`);
        d = x;
      }
    }
    dims.push(d);
  }
  const strides = shapes.map((s) => {
    const st = new Array(rank).fill(0);
    let step = 1;
    for (let k = s.length - 1; k >= 0; k--) {
      st[k + rank - s.length] = s[k] === 1 && dims[k + rank - s.length] !== 1 ? 0 : step;
      step *= s[k];
    }
    return st;
  });
  if (rank > QW_MAX_RANK) throw new UnsupportedError(`${where}: ${rank}-dimensional operands are not supported (at most ${QW_MAX_RANK})`);
  return { dims, strides };
}

/**
 * int32 lists copied into wasm memory once (call inside ctx.memo): { ptrs: one address per list, dispose() }.
 * The C kernels read dims and strides through these pointers.
 */
export function int32Lists(lists) {
  const b = backend();
  const total = lists.reduce((s, l) => s + l.length, 0);
  const base = b.alloc(Math.max(1, 4 * total));
  const ptrs = [];
  let at = base;
  for (const l of lists) {
    b.i32(at, l.length).set(l);
    ptrs.push(at);
    at += 4 * l.length;
  }
  return { ptrs, dispose: () => b.free(base) };
}

/** The broadcast of `shapes` with its dims and strides in wasm memory: { dims, rank, ptrs: [dims, ...strides], dispose }. */
export function broadcastArgs(shapes, where) {
  const { dims, strides } = broadcastStrides(shapes, where);
  const lists = int32Lists([dims, ...strides]);
  return { dims, rank: dims.length, ptrs: lists.ptrs, dispose: lists.dispose };
}

/**
 * The element offset of each operand at every index of a broadcast batch shape, in row-major order: operands are
 * [{ dims, strides }] of their own batch dimensions (aligned to the right of `batch`; a size-1 one broadcasts).
 */
export function batchOffsets(batch, operands) {
  const out = [];
  const count = batch.reduce((a, b) => a * b, 1);
  for (let i = 0; i < count; i++) {
    const offsets = operands.map(() => 0);
    for (let d = 0, rest = i; d < batch.length; d++) {
      const size = batch.slice(d + 1).reduce((a, b) => a * b, 1);
      const idx = Math.floor(rest / size);
      rest %= size;
      operands.forEach((o, j) => {
        const k = d - (batch.length - o.dims.length);
        if (k >= 0 && o.dims[k] !== 1) offsets[j] += idx * o.strides[k];
      });
    }
    out.push(offsets);
  }
  return out;
}

/** A normalized axis of a `rank`-dimensional input (ModelFormatError when out of range). */
export function axisOf(axis, rank, where, extra = 0) {
  const a = axis < 0 ? axis + rank + extra : axis;
  if (!(a >= 0 && a < rank + extra)) throw new ModelFormatError(`${where}: axis ${axis} is out of range for a ${rank}-dimensional input`);
  return a;
}

/** A new wasm value filled by fill(ptr); released again when fill throws. */
export function produce(dtype, dims, fill) {
  const y = wasmValue(dtype, dims);
  try {
    fill(ptrOf(y));
  } catch (error) {
    releaseValue(y);
    throw error;
  }
  return y;
}

/** Runs fn(...views) with each value (undefined stays undefined) in wasm memory, released afterwards. */
export function withWasm(ctx, values, fn) {
  const views = [];
  try {
    for (const v of values) views.push(v === undefined ? undefined : ctx.wasm(v));
    return fn(...views);
  } finally {
    for (const v of views) releaseValue(v);
  }
}

/** The wasm address of an optional operand (0 when absent). */
export const ptrOrNull = (v) => (v === undefined ? 0 : ptrOf(v));
