// outputRange: an integer clamp fused into linear / conv2d (how the loader folds an ONNX Clip with
// 8-bit bounds into the layer before it) must equal the layer followed by a separate clamp, for
// ranges inside, overlapping and outside the layer's own clamp.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import { mulberry32 } from '../../tools/bench/cases.mjs';
import { assertBitEqual, failOnLeaks, qwasm } from './helpers.js';

failOnLeaks(before, afterEach);

test('conv2d and linear with outputRange equal the layer then clamp, for every kind of range', () => {
  const rng = mulberry32(5);
  const x = qwasm.fromIntRepr(Uint8Array.from({ length: 2 * 3 * 6 * 6 }, () => rng() & 255), [2, 3, 6, 6], 0.05, 120, 'quint8');
  const w = qwasm.fromIntRepr(Int8Array.from({ length: 4 * 3 * 3 * 3 }, () => (rng() & 255) - 128), [4, 3, 3, 3], 0.01, 0, 'qint8');
  const lw = qwasm.fromIntRepr(Int8Array.from({ length: 5 * 108 }, () => (rng() & 255) - 128), [5, 108], 0.01, 0, 'qint8');
  const conv = qwasm.packConv2d(w, null, { padding: 1 });
  const fc = qwasm.packLinear(lw, null);
  const flat = x.reshape([2, 108]);
  try {
    for (const relu of [false, true]) {
      for (const range of [[0, 255], [100, 200], [150, 150], [0, 90], [200, 255], [0, 10], [250, 255]]) {
        const out = { scale: 0.2, zeroPoint: 100, relu };
        for (const [run, label] of [[(o) => qwasm.conv2d(x, conv, o), 'conv2d'], [(o) => qwasm.linear(flat, fc, o), 'linear']]) {
          const fused = run({ ...out, outputRange: range });
          const plain = run(out);
          const clamped = plain.intRepr().map((v) => Math.min(Math.max(v, range[0]), range[1]));
          assertBitEqual(assert, fused.intRepr(), clamped, `${label} relu=${relu} range=${range}`);
          fused.dispose();
          plain.dispose();
        }
      }
    }
    assert.throws(() => qwasm.conv2d(x, conv, { scale: 0.2, zeroPoint: 100, outputRange: [5, 1] }), /conv2d: outputRange must be \[lo, hi\]/);
    assert.throws(() => qwasm.linear(flat, fc, { scale: 0.2, zeroPoint: 100, outputRange: [0.5, 1] }), /linear: outputRange must be \[lo, hi\]/);
  } finally {
    for (const t of [x, w, lw, conv, fc, flat]) t.dispose();
  }
});
