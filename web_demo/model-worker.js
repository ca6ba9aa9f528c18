// The model view's worker: it holds the qwasm Models the view shows, so that downloading, decoding, packing the
// weights (the first run) and every later run happen off the page's thread, and a MobileNet-sized file leaves the
// page responsive. The page (model-load.js, model-predict.js) calls it through worker-rpc.js. A model replaces the
// current one only once it has loaded, run on the current image and been described, so a file that fails at any
// step leaves the page's model as it was.
import * as qwasm from './qwasm/js/index.js';
import { describeLayers, feedFor, isQuantized } from './model-analysis.js';
import { isTokenModel } from './model-transformer-analysis.js';
import { timeRuns, timerStep } from './timing.js';
import { serve } from './worker-rpc.js';

const models = new Map(); // id -> qwasm Model
let nextId = 1;
let stepMs = null;

function modelOf(id) {
  const model = models.get(id);
  if (!model) throw new Error(`no model ${id} in the worker (it was replaced)`);
  return model;
}

/** The bytes at `url`, with { phase: 'download', loaded, total } progress (total 0 when the server gives none). */
async function download(url, progress) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
  const total = Number(response.headers.get('content-length')) || 0;
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    progress({ phase: 'download', loaded, total });
  }
  const bytes = new Uint8Array(loaded);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.length;
  }
  return bytes;
}

serve({
  async init() {
    const info = await qwasm.init();
    stepMs = timerStep();
    return { ...info, stepMs, crossOriginIsolated: self.crossOriginIsolated === true };
  },

  /** Loads a model from `url` or `bytes` and runs it once on `image`: { id, inputs, outputs, semantics, layers, ... }. */
  async load({ url, bytes, image }, progress) {
    const data = bytes ?? (await download(url, progress));
    progress({ phase: 'decode', total: data.length });
    const model = await qwasm.loadModel(data);
    if (isTokenModel(model)) { // a text encoder: the page's transformer panel runs it (model-transformer.js)
      model.dispose();
      return { tokenModel: true };
    }
    try {
      progress({ phase: 'prepare' }); // the first run packs the weights and plans the activation memory
      await model.run(feedFor(model, image));
      progress({ phase: 'describe' });
      const layers = describeLayers(model);
      const id = nextId++;
      models.set(id, model);
      return {
        id, bytes: data.length, inputs: model.inputs, outputs: model.outputs, semantics: model.semantics,
        metadata: model.metadata, layers, quantized: isQuantized(layers), peakBytes: model.peakBytes,
      };
    } catch (error) {
      model.dispose();
      throw error;
    }
  },

  /**
   * Runs model `id` on `image`: { outputs, intermediates, latency }, latency ({ ms, runs, totalMs, stepMs }, timing.js)
   * from plain runs repeated until the clock's step is below 1% of their total; the returned tensors from one more
   * run that keeps every intermediate.
   */
  async run({ id, image, time = true }) {
    const model = modelOf(id);
    const feeds = feedFor(model, image);
    const latency = time ? await timeRuns(() => model.run(feeds), stepMs ?? timerStep()) : null;
    const result = await model.run(feeds, { intermediates: true });
    const outputs = Object.fromEntries(model.outputs.map((o) => [o.name, result[o.name]]));
    return { outputs, intermediates: result.intermediates, latency };
  },

  dispose({ id }) {
    models.get(id)?.dispose();
    models.delete(id);
  },

  memoryStats() {
    return { ...qwasm.memoryStats(), models: models.size };
  },
});
