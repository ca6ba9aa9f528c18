// The activation arena (js/model/memory-plan.js): placement never overlaps two allocations that are live
// at once, a model's later runs are served from the arena with the same bytes as PyTorch's fixture, and
// a run that departs from the recorded pattern falls back to malloc instead of sharing memory.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { assertBitEqual, failOnLeaks, qwasm } from './helpers.js';
import { MemoryPlan, placeByLifetime } from '../../js/model/memory-plan.js';
import { backend } from '../../js/runtime/runtime.js';
import { rawTensor } from '../../js/tensor/qtensor.js';
import { mulberry32 } from '../../tools/bench/cases.mjs';

failOnLeaks(before, afterEach);

const root = new URL('../../', import.meta.url);

test('placeByLifetime: blocks live at the same time never share bytes; disjoint lifetimes may', () => {
  const next = mulberry32(7);
  const rand = () => next() / 2 ** 32;
  for (let trial = 0; trial < 200; trial++) {
    const blocks = Array.from({ length: 1 + Math.floor(rand() * 40) }, () => {
      const start = Math.floor(rand() * 100);
      return { bytes: 1 + Math.floor(rand() * 5000), start, end: start + 1 + Math.floor(rand() * 30) };
    });
    const { offsets, size } = placeByLifetime(blocks);
    for (let i = 0; i < blocks.length; i++) {
      assert.equal(offsets[i] % 16, 0, 'slots are 16-byte aligned');
      assert.ok(offsets[i] + blocks[i].bytes <= size, 'slot inside the arena');
      for (let j = 0; j < blocks.length; j++) {
        const a = blocks[i];
        const b = blocks[j];
        if (j === i) continue;
        const timeOverlap = a.start < b.end && b.start < a.end;
        const memOverlap = offsets[i] < offsets[j] + b.bytes && offsets[j] < offsets[i] + a.bytes;
        assert.ok(!(timeOverlap && memOverlap), `trial ${trial}: blocks ${i} and ${j} are live together and share bytes`);
      }
    }
  }
  // Two allocations that are never live together take the same slot.
  const { offsets } = placeByLifetime([{ bytes: 64, start: 0, end: 2 }, { bytes: 64, start: 3, end: 5 }]);
  assert.equal(offsets[0], offsets[1]);
});

test('MemoryPlan: records, replays from the arena, falls back when the pattern changes', async () => {
  await qwasm.init();
  const b = backend();
  const plan = new MemoryPlan(b);
  const pattern = () => {
    const p = b.alloc(100);
    const q = b.alloc(200);
    b.free(p);
    const r = b.alloc(50);
    b.free(q);
    b.free(r);
    return [p, q, r];
  };
  pattern(); // outside a run: plain allocations
  plan.run('k', pattern); // records
  const { arenaBytes, slots } = plan.stats;
  assert.equal(slots, 3);
  assert.ok(arenaBytes >= 208 + 112 && arenaBytes <= 208 + 112 + 16, `arena ${arenaBytes}`);
  const [p, q, r] = plan.run('k', pattern); // replays
  assert.equal(r, p, 'r is allocated after p is freed: same slot');
  assert.notEqual(q, p);
  assert.equal(plan.runPeakBytes, arenaBytes, 'a replayed run makes no plain allocation');

  // A different pattern: the mismatching allocation comes from malloc, and the plan is dropped.
  plan.run('k', () => {
    const x = b.alloc(100);
    const y = b.alloc(300); // recorded as 200 bytes
    assert.ok(plan.runPeakBytes > arenaBytes, 'the 300-byte allocation is a plain one');
    b.free(y);
    b.free(x);
  });
  assert.deepEqual([plan.stats.slots, plan.stats.plans], [0, 0], 'plan dropped');
  plan.run('k', pattern);
  assert.equal(plan.stats.slots, 3, 're-recorded');

  // Another shape key: its own plan, kept beside the first; the arena grows to the larger of the two.
  const bigger = () => {
    const p = b.alloc(1000);
    const q = b.alloc(2000);
    b.free(q);
    b.free(p);
  };
  plan.run('k2', bigger); // records
  assert.equal(plan.stats.plans, 2);
  assert.ok(plan.stats.arenaBytes >= 3000, `arena ${plan.stats.arenaBytes} holds the larger plan`);
  const [p2] = plan.run('k', pattern); // the first key replays: no plain allocation
  assert.equal(plan.runPeakBytes, plan.stats.arenaBytes, 'k replays from the shared arena');
  assert.equal(plan.stats.slots, 3);
  plan.run('k2', bigger);
  assert.equal(plan.runPeakBytes, plan.stats.arenaBytes, 'k2 replays too');
  assert.ok(p2 > 0);

  // Memory kept past the end of a run would be overwritten by the next run: refused loudly.
  let kept = 0;
  assert.throws(() => plan.run('k', () => { kept = b.alloc(100); }), /arena memory outlived the run/);
  assert.ok(kept > 0); // still valid: its arena is retired (never reused) until dispose()
  plan.dispose();
});


test('arena slots: the backend tells them from plain allocations; tensors on them are marked for no finalizer', async () => {
  await qwasm.init();
  const b = backend();
  const plan = new MemoryPlan(b);
  const seen = [];
  const pattern = () => {
    const p = b.alloc(64);
    // a tensor made inside the run: on an arena slot when the run replays (its storage then registers no finalizer)
    const t = qwasm.fromIntRepr(new Int8Array(32), [32], 0.5, 0, 'qint8');
    seen.push([b.inArena(p), rawTensor(t, 'test').storage.inArena, t.intRepr().length]);
    t.dispose();
    b.free(p);
  };
  plan.run('k', pattern); // records: plain allocations
  plan.run('k', pattern); // replays: arena slots
  assert.deepEqual(seen, [[false, false, 32], [true, true, 32]]);
  const outside = b.alloc(64);
  assert.equal(b.inArena(outside), false, 'outside any run');
  b.free(outside);
  plan.dispose();
});
test('digits model: every run after the first is served from one arena, outputs still equal PyTorch', async () => {
  const digits = JSON.parse(readFileSync(new URL('models/digits.json', root), 'utf8'));
  const model = await qwasm.loadModel(new Uint8Array(readFileSync(new URL('models/digits.onnx', root))));
  try {
    assert.deepEqual(model.memoryPlan, { arenaBytes: 0, slots: 0, plannedBytes: 0, plans: 0 });
    for (const [i, img] of digits.test_images.entries()) {
      const out = await model.run({ input: Float32Array.from(img.image) }, { intermediates: i % 2 === 1 });
      assertBitEqual(assert, out.output.data, Float32Array.from(img.logits), `image ${i}`);
      const plan = model.memoryPlan;
      assert.ok(plan.slots > 10 && plan.arenaBytes > 0, `image ${i}: ${JSON.stringify(plan)}`);
      assert.ok(plan.arenaBytes < plan.plannedBytes, 'the arena reuses bytes across layers');
      if (i > 0) assert.equal(model.peakBytes, plan.arenaBytes, `image ${i}: no allocation outside the arena`);
    }
  } finally {
    model.dispose();
  }
});
