// The quantize view's worker: calibration on up to 1437 images, quantization, the SQNR report and the held-out
// accuracies run here, off the page's thread, and report their progress as they go (ptq-view.js shows it). The
// arithmetic is qwasm's; ptq-compute.js orchestrates it.
import * as qwasm from './qwasm/js/index.js';
import { accuracyOf, qparamsByTensor, quantizeDigits } from './ptq-compute.js';
import { Transfer, serve } from './worker-rpc.js';

const FILES = { data: 'models/digits-data.json', float: 'models/digits-float.onnx', torch: 'models/digits.onnx' };
const files = { data: null, floatBytes: null, torchQ: null, baseline: null };

async function fetchOk(url) {
  const response = await fetch(new URL(url, import.meta.url));
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
  return response;
}

/** At most one progress message per `ms`, and always the last of a pass, so the page is not flooded. */
function throttled(progress, ms = 40) {
  let last = 0;
  return (p) => {
    const now = performance.now();
    if (p.done === p.total || now - last >= ms) {
      last = now;
      progress(p);
    }
  };
}

/** The float model and PyTorch's int8 model on the held-out images, once; PyTorch's qparams by tensor. */
async function baselines(progress) {
  if (files.baseline) return files.baseline;
  const floatModel = await qwasm.loadModel(files.floatBytes);
  let torchModel = null;
  try {
    torchModel = await qwasm.loadModel(new URL(FILES.torch, import.meta.url));
    files.torchQ = qparamsByTensor(torchModel);
    const test = files.data.test;
    const float = await accuracyOf(floatModel, test, (done, total) => progress({ stage: 'accuracy-float', done, total }));
    const torch = await accuracyOf(torchModel, test, (done, total) => progress({ stage: 'accuracy-torch', done, total }));
    files.baseline = { float, torch };
  } finally {
    floatModel.dispose();
    torchModel?.dispose();
  }
  return files.baseline;
}

serve({
  /** Starts qwasm and reads the float model and the splits: { isa, simd, train, test } (image counts). */
  async init() {
    const info = await qwasm.init();
    const [data, floatBytes] = await Promise.all([
      fetchOk(FILES.data).then((r) => r.json()),
      fetchOk(FILES.float).then(async (r) => new Uint8Array(await r.arrayBuffer())),
    ]);
    Object.assign(files, { data, floatBytes });
    return { isa: info.isa, simd: info.simd, train: data.train.images.length, test: data.test.images.length };
  },

  /**
   * Calibrates on `count` training images and quantizes (qconfig, batchSize), then measures the new model on the
   * held-out images: { rows, ms, accuracy, baseline, bytes (the QDQ file, moved to the page), fusedLayers }.
   * Progress: { stage: 'accuracy-float' | 'accuracy-torch' | 'calibrate' | 'measure' | 'accuracy', done, total }.
   */
  async quantize(options, progress) {
    const report = throttled(progress);
    const baseline = await baselines(report);
    const fresh = await quantizeDigits(qwasm, files.floatBytes, files.data, options, files.torchQ, report);
    try {
      const accuracy = await accuracyOf(fresh.result.model, files.data.test, (done, total) => report({ stage: 'accuracy', done, total }));
      const bytes = fresh.result.bytes;
      return new Transfer({ rows: fresh.rows, ms: fresh.ms, accuracy, baseline, bytes, fusedLayers: fresh.result.model.layers.filter((l) => l.weight).length },
        [bytes.buffer]);
    } finally {
      fresh.result.model.dispose();
    }
  },

  memoryStats: () => qwasm.memoryStats(),
});
