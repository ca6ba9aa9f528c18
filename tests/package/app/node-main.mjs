// Plain Node ESM with qwasm installed: the bundled model found both documented ways (qwasm/models and
// import.meta.resolve), run on the first held-out image; prints what it got as JSON.
import { readFile } from 'node:fs/promises';
import * as qwasm from 'qwasm';
import { digits } from 'qwasm/models';
import { roundHalfEven } from 'qwasm/reference';

const info = await qwasm.init();
const sample = JSON.parse(await readFile(digits.samples, 'utf8')).test_images[0];
const results = [];
for (const source of [digits.model, import.meta.resolve('qwasm/models/digits.onnx')]) {
  const model = await qwasm.loadModel(source);
  const { output } = await model.run({ input: Float32Array.from(sample.image) });
  results.push(Array.from(output.data));
  model.dispose();
}
console.log(JSON.stringify({
  isa: info.isa, source: info.source, modelUrl: String(digits.model), logits: results, expected: sample.logits,
  tie: roundHalfEven(2.5), liveBytes: qwasm.memoryStats().liveBytes,
}));
