// "Quantize in the page", free of the DOM: the digits splits as model feeds, post-training quantization of
// the float digits CNN through qwasm.quantizeStatic, held-out accuracy, and each quantized tensor's qparams
// next to PyTorch's for the same tensor (models/digits.onnx, read through Model.layers). Every number comes
// from qwasm; this module only orchestrates it and compares.

/** models/digits-data.json's encoding (tools/digits_data.py): 64 chars per image, pixel k = charCode - 97, input k / 16. */
export function decodeImage(s) {
  if (typeof s !== 'string' || s.length !== 64) throw new Error(`a digits image is 64 characters, got ${typeof s === 'string' ? s.length : typeof s}`);
  return Float32Array.from(s, (c) => (c.charCodeAt(0) - 97) / 16);
}

/** The first `count` images of a split ({ images, labels }) as feeds for the model's input `inputName`. */
export function feedsOf(split, count = split.images.length, inputName = 'input') {
  return split.images.slice(0, count).map((s) => ({ [inputName]: decodeImage(s) }));
}

const argmax = (a) => {
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i] > a[best]) best = i;
  return best;
};

/**
 * Runs `model` on every image of `split`: { right, total, accuracy, ms }. The first output holds the logits.
 * onImage(done, total) after each image.
 */
export async function accuracyOf(model, split, onImage = () => {}) {
  const t0 = performance.now();
  const input = model.inputs[0].name;
  const output = model.outputs[0].name;
  let right = 0;
  for (let i = 0; i < split.images.length; i++) {
    const out = await model.run({ [input]: decodeImage(split.images[i]) });
    const logits = out[output].data;
    if (argmax(logits) === split.labels[i]) right++;
    onImage(i + 1, split.images.length);
  }
  return { right, total: split.images.length, accuracy: right / split.images.length, ms: performance.now() - t0 };
}

/** PyTorch's qparams by tensor name: Map(output tensor -> { scale, zeroPoint, dtype }) from a Model's layers. */
export function qparamsByTensor(model) {
  const map = new Map();
  for (const l of model.layers) if (l.output && !map.has(l.outputs[0])) map.set(l.outputs[0], { ...l.output });
  return map;
}

/**
 * The report's rows with PyTorch's qparams for the same tensor: each row gains torch ({ scale, zeroPoint } or
 * null when digits.onnx has no tensor of that name), same (scale and zero point identical), relDiff
 * ((ours − torch) / torch scale) and zpDiff.
 */
export function compareWithTorch(report, torchQ) {
  return report.map((row) => {
    const t = torchQ.get(row.tensor) ?? null;
    if (!t) return { ...row, torch: null, same: null, relDiff: null, zpDiff: null };
    return {
      ...row,
      torch: { scale: t.scale, zeroPoint: t.zeroPoint },
      same: row.scale === t.scale && row.zeroPoint === t.zeroPoint,
      relDiff: (row.scale - t.scale) / t.scale,
      zpDiff: row.zeroPoint - t.zeroPoint,
    };
  });
}

/** A bar's width in % for an SQNR in dB: 0 dB empty, `full` dB (or more, or ∞) full. */
export function sqnrBarPercent(db, full = 60) {
  if (db === null || Number.isNaN(db)) return 0;
  return Math.max(0, Math.min(100, (db / full) * 100));
}

/** The download's file name: digits-int8-<qconfig>.onnx. */
export const fileNameFor = (qconfig) => `digits-int8-${qconfig}.onnx`;

/**
 * Calibrates and quantizes the float model: qwasm.quantizeStatic on the first `count` training images, observed
 * `batchSize` at a time; onProgress as quantizeStatic's. Resolves to { result (quantizeStatic's; dispose
 * result.model), rows (report with PyTorch's qparams), ms }.
 */
export async function quantizeDigits(qwasm, floatBytes, data, { qconfig, count, batchSize }, torchQ, onProgress) {
  const calibration = feedsOf(data.train, count);
  const t0 = performance.now();
  const result = await qwasm.quantizeStatic(floatBytes, calibration, { qconfig, batchSize, onProgress });
  const ms = performance.now() - t0;
  return { result, rows: compareWithTorch(result.report, torchQ), ms };
}
