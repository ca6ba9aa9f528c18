// Platform-neutral use of qwasm's declarations: compiled twice, under the default DOM libs (tsconfig.dom.json) and
// under Node-only libs (tsconfig.node.json), both without skipLibCheck.
import * as qwasm from 'qwasm';
import { digits } from 'qwasm/models';
import { quantizeTorch, RANGES } from 'qwasm/reference';

export interface Digits {
  isa: string;
  logits: number[];
  ints: number[];
  reference: number;
}

export async function classify(image: Float32Array): Promise<Digits> {
  const info: qwasm.BackendInfo = await qwasm.init();
  const model: qwasm.Model = await qwasm.loadModel(digits.model);
  const t = qwasm.quantizePerTensor([-1, 0, 0.25, 1, 200], [5], 0.5, 2, 'quint8');
  const ints = Array.from(t.intRepr());
  t[Symbol.dispose]();
  const [qmin, qmax] = RANGES.uint8;
  try {
    const { output } = await model.run({ input: image });
    return { isa: info.isa, logits: Array.from(output.data as Float32Array), ints, reference: quantizeTorch(0.25, 0.5, 2, qmin, qmax) };
  } finally {
    model.dispose();
  }
}
