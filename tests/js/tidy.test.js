// tidy() and keep(): the tensors a scope creates are disposed when it closes, except what it returns or keeps.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, afterEach, before, describe, test } from 'node:test';

import { Backend, loadBackend } from '../../js/runtime/wasm.js';
import { failOnLeaks, qwasm, setup } from './helpers.js';

const live = () => qwasm.memoryStats().liveBytes;
const small = (v = 1) => qwasm.quantizePerTensor(Float32Array.of(v, 2 * v, 3 * v), [3], 0.5, 0, 'qint8');

describe('tidy', () => {
  failOnLeaks(before, afterEach);

  test('a synchronous loop of linear layers inside tidy keeps its memory flat', () => {
    const w = qwasm.fromIntRepr(Int8Array.from({ length: 64 * 48 }, (_, i) => (i * 7) % 255 - 127), [64, 48], 0.01, 0, 'qint8');
    const x = qwasm.fromIntRepr(Uint8Array.from({ length: 16 * 48 }, (_, i) => (i * 13) % 256), [16, 48], 0.02, 128, 'quint8');
    const packed = qwasm.packLinear(w, null);
    try {
      const reference = qwasm.tidy(() => qwasm.relu(qwasm.linear(x, packed, { scale: 0.05, zeroPoint: 128 })).intRepr());
      const start = live();
      for (let i = 0; i < 200; i++) {
        const ints = qwasm.tidy(() => {
          const y = qwasm.linear(x, packed, { scale: 0.05, zeroPoint: 128 });
          return qwasm.relu(y).intRepr(); // y and the relu output are disposed; the host copy is returned
        });
        assert.deepEqual(ints, reference);
        assert.equal(live(), start, `iteration ${i}: the scope left wasm memory allocated`);
      }
    } finally {
      for (const t of [w, x, packed]) t.dispose();
    }
  });

  test('disposes what it created, returns its result, and leaves older tensors alone', () => {
    const outside = small();
    let inner;
    const result = qwasm.tidy(() => {
      inner = small(2);
      const sum = qwasm.add(inner, outside, { scale: 0.5, zeroPoint: 0 });
      return { sum, note: 'plain values pass through', nested: [[qwasm.relu(sum)]] };
    });
    assert.equal(inner.disposed, true);
    assert.equal(outside.disposed, false);
    assert.equal(result.note, 'plain values pass through');
    assert.deepEqual(Array.from(result.sum.intRepr()), [6, 12, 18]);
    assert.deepEqual(Array.from(result.nested[0][0].intRepr()), [6, 12, 18]);
    for (const t of [outside, result.sum, result.nested[0][0]]) t.dispose();
  });

  test('finds returned tensors in arrays, plain objects, Maps (keys and values) and Sets', () => {
    const r = qwasm.tidy(() => {
      const [a, b, c, d, e] = [1, 2, 3, 4, 5].map(small);
      const cyclic = { a };
      cyclic.self = cyclic;
      small(6); // not returned
      return { cyclic, list: [b], map: new Map([[c, d]]), set: new Set([e]) };
    });
    const kept = [r.cyclic.a, r.list[0], ...r.map.keys(), ...r.map.values(), ...r.set];
    assert.equal(kept.length, 5);
    for (const t of kept) {
      assert.equal(t.disposed, false);
      t.dispose();
    }
  });

  test('a class instance is not searched: tensors inside it are disposed', () => {
    class Holder {
      constructor(t) {
        this.t = t;
      }
    }
    const h = qwasm.tidy(() => new Holder(small()));
    assert.equal(h.t.disposed, true);
  });

  test('views keep the storage they share with a disposed tensor', () => {
    const row = qwasm.tidy(() => {
      const m = qwasm.quantizePerTensor(Float32Array.of(1, 2, 3, 4, 5, 6), [2, 3], 1, 0, 'qint8');
      return m.select(0, 1);
    });
    assert.deepEqual(Array.from(row.intRepr()), [4, 5, 6]);
    row.dispose();
  });

  test('nested scopes: the inner result passes to the outer scope', () => {
    let fromInner, innerTemp;
    const outerResult = qwasm.tidy(() => {
      fromInner = qwasm.tidy(() => {
        innerTemp = small(1);
        return small(2);
      });
      assert.equal(innerTemp.disposed, true, 'the inner scope disposed its temporary');
      assert.equal(fromInner.disposed, false, 'the inner result is alive in the outer scope');
      return 'done';
    });
    assert.equal(outerResult, 'done');
    assert.equal(fromInner.disposed, true, 'the outer scope disposed the inner result it did not return');
  });

  test('keep() exempts a tensor from every scope; dispose() still frees it', () => {
    let held;
    qwasm.tidy(() => {
      qwasm.tidy(() => {
        held = qwasm.keep(small());
      });
    });
    assert.equal(held.disposed, false);
    held.dispose();
    assert.equal(held.disposed, true);
  });

  test('a tensor disposed inside the scope is fine at its close', () => {
    qwasm.tidy(() => {
      small().dispose();
    });
  });

  test('when fn throws, its tensors are disposed and the error propagates', () => {
    let t;
    assert.throws(
      () =>
        qwasm.tidy(() => {
          t = small();
          throw new Error('boom');
        }),
      /boom/,
    );
    assert.equal(t.disposed, true);
    // the scope is closed: a tensor made now belongs to no scope
    const after = small();
    qwasm.tidy(() => 0);
    assert.equal(after.disposed, false);
    after.dispose();
  });

  test('an async function is refused, and its synchronous tensors are disposed', async () => {
    let t;
    assert.throws(
      () =>
        qwasm.tidy(async () => {
          t = small();
          await null;
          return t.intRepr(); // t was disposed when the scope closed: this rejects, and tidy swallows it
        }),
      (e) => e instanceof TypeError && /returned a Promise/.test(e.message),
    );
    assert.equal(t.disposed, true);
    await new Promise((resolve) => setTimeout(resolve, 0)); // no unhandled rejection fails the test run
  });

  test('bad arguments name the problem', () => {
    assert.throws(() => qwasm.tidy(42), (e) => e instanceof TypeError && /tidy: expected a function, got number/.test(e.message));
    assert.throws(() => qwasm.tidy(), (e) => e instanceof TypeError && /got undefined/.test(e.message));
    assert.throws(() => qwasm.keep({}), (e) => e instanceof TypeError && /keep: expected a QTensor, got Object/.test(e.message));
    assert.throws(() => qwasm.keep(null), (e) => e instanceof TypeError && /got null/.test(e.message));
  });

  test('packed weights made inside a scope are not disposed by it', () => {
    let matmulWeights;
    const packed = qwasm.tidy(() => {
      const w = qwasm.quantizePerTensor(Float32Array.of(1, 2, 3, 4), [2, 2], 1, 0, 'qint8');
      matmulWeights = qwasm.packMatMul(w); // not returned, and not disposed: only QTensors are tracked
      return qwasm.packLinear(w, null);
    });
    assert.equal(packed.disposed, false);
    assert.equal(matmulWeights.disposed, false);
    packed.dispose();
    matmulWeights.dispose();
  });
});

describe('tidy around a model', () => {
  let model;
  const input = Float32Array.from({ length: 64 }, (_, i) => (i % 17) / 16);
  before(async () => {
    await setup();
    model = await qwasm.loadModel(readFileSync(new URL('../../models/digits.onnx', import.meta.url)));
  });
  after(() => model.dispose());

  test("a run started inside tidy keeps the model's cached state", async () => {
    const first = await model.run({ input });
    let pending;
    qwasm.tidy(() => {
      pending = model.run({ input }); // the run's synchronous part happens inside the scope
    });
    const inside = await pending;
    const again = await model.run({ input });
    for (const name of Object.keys(first)) {
      assert.deepEqual(inside[name].data, first[name].data);
      assert.deepEqual(again[name].data, first[name].data);
    }
  });
});

test('running out of wasm memory names what is live and points at dispose() and tidy()', async () => {
  // A backend over a real instance whose allocator refuses anything above 1 MiB: the error path without
  // filling 4 GiB.
  const real = await loadBackend({ simd: false });
  const exports = { ...real.exports, _initialize() {}, qw_alloc: (n) => (n > 2 ** 20 ? 0 : real.exports.qw_alloc(n)) };
  const b = new Backend({ exports }, 'test', real.exports.memory);
  const held = [b.alloc(2 ** 20, 'first'), b.alloc(2 ** 20, 'second')];
  assert.throws(
    () => b.alloc(2 ** 21, 'linear'),
    (e) =>
      e instanceof RangeError &&
      e.message.startsWith('linear: out of wasm memory allocating 2097152 bytes (2 allocations, 2.0 MiB, are live)') &&
      /dispose\(\) the tensors you no longer need, or run each step of a loop inside tidy\(\)/.test(e.message),
  );
  for (const ptr of held) b.free(ptr);
  assert.equal(b.memoryStats().liveBytes, 0);
});
