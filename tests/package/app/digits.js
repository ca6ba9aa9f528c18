// The digits model through the installed package's public entry points only: 'qwasm', 'qwasm/models' (the
// bundled files' URLs, turned into assets by the bundler) and 'qwasm/reference'.
import * as qwasm from 'qwasm';
import { digits } from 'qwasm/models';
import { roundHalfEven } from 'qwasm/reference';

export async function runDigits() {
  const info = await qwasm.init();
  const response = await fetch(digits.samples);
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${digits.samples}`);
  const sample = (await response.json()).test_images[0];
  const model = await qwasm.loadModel(digits.model);
  const { output } = await model.run({ input: Float32Array.from(sample.image) });
  model.dispose();
  const t = qwasm.quantizePerTensor([-1, 0, 0.25, 1, 200], [5], 0.5, 2, 'quint8');
  const ints = Array.from(t.intRepr());
  t.dispose();
  return {
    isa: info.isa, ints, tie: roundHalfEven(2.5), logits: Array.from(output.data), expected: sample.logits,
    liveBytes: qwasm.memoryStats().liveBytes, modelUrl: String(digits.model),
  };
}
