import * as qwasm from 'qwasm';
import { digits } from 'qwasm/models'; // the URLs of the models the package ships
import { readFileSync } from 'node:fs';

await qwasm.init();
// The bundled model: a small CNN trained on scikit-learn's 8x8 digits, quantized by PyTorch (qnnpack).
const model = await qwasm.loadModel(digits.model);
const { test_images: images } = JSON.parse(readFileSync(digits.samples, 'utf8'));
console.log('semantics', model.semantics);
console.log(model.layers.map((l) => l.opType).join(' -> '));

for (const { image, label, logits: torchLogits } of images.slice(0, 5)) {
  const { output } = await model.run({ input: Float32Array.from(image) }); // pixels / 16, shape [1, 1, 8, 8]
  const logits = Array.from(output.data);
  const predicted = logits.indexOf(Math.max(...logits));
  const same = logits.every((v, i) => v === Math.fround(torchLogits[i]));
  console.log(`label ${label} predicted ${predicted}, logits ${same ? 'equal' : 'differ from'} PyTorch's`);
}
model.dispose();
console.log('live bytes', qwasm.memoryStats().liveBytes);
