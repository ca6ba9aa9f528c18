// The model view's one shared state, read by its modules (model-input, -load, -predict, -layers, -explain), and
// the events they announce changes with: 'model' (another model is current), 'input' (another image),
// 'result' (a run finished), 'float' (the float reference's status changed).

export function createModelState() {
  const listeners = new Map();
  return {
    worker: null, // the model worker (worker-rpc.js client)
    backend: null, // the worker's qwasm backend: { isa, simd, stepMs, ... }
    model: null, // { id, name, isDefault, quantized, inputs, outputs, semantics, layers, bytes, ... } from the worker
    samples: null, // models/digits.json: held-out images with PyTorch's results
    image: new Float32Array(64), // the current 8x8 input, values in [0, 1]
    sample: null, // index into samples.test_images when the input is one of them
    result: null, // { logits, probs, outputs, intermediates, latency, float, layerSqnr } of the last run
    explain: { layer: -1, element: -1 },
    float: { status: 'off', ref: null, error: '', manifest: null }, // off | loading | ready | failed
    on(event, fn) {
      if (!listeners.has(event)) listeners.set(event, []);
      listeners.get(event).push(fn);
    },
    emit(event) {
      for (const fn of listeners.get(event) ?? []) fn();
    },
  };
}

export const describeError = (e) => `${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e?.message ?? e}`;

/** An input is blank when it is a drawing with no ink: no prediction verdicts are drawn from it. */
export const isBlank = (state) => state.sample === null && state.image.every((v) => v === 0);
