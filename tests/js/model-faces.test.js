// The pretrained image model: face-api's facial expression classifier (npm @vladmandic/face-api 1.7.15, MIT), made
// by tools/pretrained/faces.py into models/faces/ (README.md there). The reference is face-api itself: its logits
// and probabilities for the astronaut's face crop, recorded by tools/pretrained/faceapi-reference.mjs (tfjs 4.22,
// cpu backend) in tests/fixtures/faces/faceapi-astronaut.json.
// - the float file reproduces face-api's logits (float sums in another order: close, not the same bits), in
//   onnxruntime-web and in qwasm's float loader;
// - qwasm runs the int8 QDQ file to the same bits as onnxruntime-web on the same file, on the crop and on
//   variations of it (mirrored, shifted, brighter, darker, noisy), and classifies the crop as face-api does;
// - the committed files are what the scripts make: tools/pretrained/faces.sh runs faces.py again into
//   build/models/faces/ (tools/test.sh runs it first), and the bytes must be the same.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { mulberry32 } from '../../tools/bench/cases.mjs';
import { CLASSES, INPUT_DIMS, SIZE, faceInput, softmax } from '../../web_demo/faces-compute.js';
import { argmax, maxAbsDiff } from '../../web_demo/model-float.js';
import { assertBitEqual, failOnLeaks, fixture, withQwasmAndOrt } from './helpers.js';

failOnLeaks(before, afterEach);

const root = new URL('../../', import.meta.url);
const read = (path) => new Uint8Array(readFileSync(new URL(path, root)));
const reference = fixture('faces/faceapi-astronaut.json');
const crop = Buffer.from(reference.crop.base64, 'base64'); // 112 x 112 RGB, as face-api saw it
const record = JSON.parse(readFileSync(new URL('models/faces/faces.json', root), 'utf8'));

/** Variations of the crop (RGB bytes): what a user's slightly different square or lighting gives. */
function variations() {
  const at = (x, y, c) => crop[(Math.min(SIZE - 1, Math.max(0, y)) * SIZE + Math.min(SIZE - 1, Math.max(0, x))) * 3 + c];
  const make = (f) => Uint8Array.from({ length: SIZE * SIZE * 3 }, (_, i) => {
    const c = i % 3;
    const p = (i - c) / 3;
    return Math.min(255, Math.max(0, Math.round(f(p % SIZE, Math.floor(p / SIZE), c))));
  });
  const rng = mulberry32(15);
  const noise = () => (rng() / 2 ** 32 - 0.5) * 24;
  return {
    crop: Uint8Array.from(crop),
    mirrored: make((x, y, c) => at(SIZE - 1 - x, y, c)),
    'shifted 5 px right, 3 down': make((x, y, c) => at(x - 5, y - 3, c)),
    'shifted 4 px left, 6 up': make((x, y, c) => at(x + 4, y + 6, c)),
    'brighter 1.25x': make((x, y, c) => at(x, y, c) * 1.25),
    'darker 0.7x': make((x, y, c) => at(x, y, c) * 0.7),
    'low contrast': make((x, y, c) => 128 + (at(x, y, c) - 128) * 0.6),
    noisy: make((x, y, c) => at(x, y, c) + noise()),
    grey: make((x, y) => (at(x, y, 0) + at(x, y, 1) + at(x, y, 2)) / 3),
  };
}

test('the float file reproduces face-api on the astronaut crop: onnxruntime-web and qwasm\'s float loader', async (t) => {
  const x = faceInput(crop, 3);
  await withQwasmAndOrt(read('models/faces/expression-float.onnx'), async (run) => {
    const { ours, ref } = await run('input', x, INPUT_DIMS);
    for (const [who, logits] of [['onnxruntime-web', ref.logits], ['qwasm float', ours.logits.data]]) {
      const diff = maxAbsDiff(logits, reference.faceapi_logits);
      t.diagnostic(`${who} vs face-api: max |logit difference| ${diff.toExponential(2)}`);
      assert.ok(diff < 1e-4, `${who}: ${diff}`);
      assert.equal(argmax(logits), argmax(reference.faceapi_logits));
      assert.ok(maxAbsDiff(softmax(logits), reference.faceapi_probabilities) < 1e-5);
    }
  });
  assert.equal(CLASSES[argmax(reference.faceapi_logits)], 'happy');
});

test('int8: qwasm equals onnxruntime-web bit for bit on the crop and 8 variations; the crop classified as face-api does', async (t) => {
  await withQwasmAndOrt(read('models/faces/expression-int8.onnx'), async (run, model) => {
    const ops = model.layers.map((l) => l.opType);
    assert.equal(ops.filter((o) => o === 'QLinearConv').length, 31); // 1 conv + 15 depthwise-separable pairs
    assert.equal(ops.filter((o) => o === 'QLinearAdd').length, 24); // 6 sums in each of the 4 dense blocks
    assert.deepEqual(ops.slice(-4), ['QLinearAveragePool', 'Flatten', 'QGemm', 'DequantizeLinear']);
    assert.equal(ops[0], 'QuantizeLinear');
    for (const [name, pixels] of Object.entries(variations())) {
      const { ours, ref } = await run('input', faceInput(pixels, 3), INPUT_DIMS);
      assert.deepEqual(ours.logits.dims, [1, 7]);
      assertBitEqual(assert, ours.logits.data, ref.logits, `${name}: qwasm vs onnxruntime-web`);
      if (name === 'crop') {
        const probabilities = softmax(ours.logits.data);
        const diff = maxAbsDiff(probabilities, reference.faceapi_probabilities);
        t.diagnostic(`int8 vs face-api on the crop: ${CLASSES[argmax(ours.logits.data)]} ${probabilities[1].toFixed(6)}, max |probability difference| ${diff.toExponential(2)}`);
        assert.equal(argmax(ours.logits.data), argmax(reference.faceapi_logits));
        assert.ok(diff < 0.01, `int8 probabilities ${diff} from face-api's`);
      }
    }
  });
  // what faces.py measured over all 21 faces of its photos (onnxruntime, Python), recorded with the files
  assert.equal(record.checks.int8_same_class_as_faceapi, record.checks.crops);
  assert.ok(record.checks.torch_vs_faceapi_max_logit_diff < 1e-3);
});

/** build/models/faces/ made by tools/pretrained/faces.sh now if missing; a skip reason when it cannot be made. */
function regenerated() {
  try {
    execFileSync('bash', [new URL('tools/pretrained/faces.sh', root).pathname], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    return `tools/pretrained/faces.sh could not run faces.py: ${String(e.stderr ?? e.message).trim().split('\n').pop()}`;
  }
  return existsSync(new URL('build/models/faces/done', root)) ? false : 'tools/pretrained/faces.sh made no build/models/faces/done';
}

test('the committed files are what tools/pretrained/faces.py makes (a fresh run, the same bytes)', { skip: regenerated() }, () => {
  for (const f of ['expression-int8.onnx', 'expression-float.onnx', 'astronaut-face.png', 'faces.json']) {
    assert.ok(Buffer.from(read(`build/models/faces/${f}`)).equals(Buffer.from(read(`models/faces/${f}`))), `models/faces/${f} differs from a fresh run`);
  }
  assert.ok(Buffer.from(read('build/models/faces/fixture/faceapi-astronaut.json')).equals(Buffer.from(read('tests/fixtures/faces/faceapi-astronaut.json'))));
});

test('faceInput: named errors for a wrong size', () => {
  assert.throws(() => faceInput(new Uint8Array(10)), /faceInput: expected 112x112x4 values, got 10/);
  assert.throws(() => faceInput(crop, 4), RangeError);
  // RGBA (a canvas's ImageData) and RGB give the same input
  const rgba = Uint8Array.from({ length: SIZE * SIZE * 4 }, (_, i) => (i % 4 === 3 ? 255 : crop[(i >> 2) * 3 + (i % 4)]));
  assert.deepEqual(faceInput(rgba), faceInput(crop, 3));
});
