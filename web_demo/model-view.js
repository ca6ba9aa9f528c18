// Model view: a quantized digits CNN (or a model you load) running in a worker next to the page. Draw a digit or
// pick a test image; the model classifies it. The view is assembled from modules that share one state
// (model-state.js): the model bar and loading (model-load.js), the input (model-input.js), the prediction with its
// latency and the on-demand float reference (model-predict.js), the layer table (model-layers.js) and the integer
// explainer (model-explain.js). The models themselves live in model-worker.js. A text encoder dropped in (token-id
// inputs) is run in the page by the transformer panel (model-transformer.js) in place of the image panels.
import { h } from './dom.js';
import { mountExplainer } from './model-explain.js';
import { mountInput } from './model-input.js';
import { mountLayers } from './model-layers.js';
import { mountLoader } from './model-load.js';
import { mountPrediction } from './model-predict.js';
import { createModelState, describeError } from './model-state.js';
import { createTransformerPanel } from './model-transformer.js';
import { connect } from './worker-rpc.js';

/** Mounts the view in `root`. link: the deep link's parameters (sample); context: the page's shell. */
export async function mount(root, context, link = new URLSearchParams()) {
  const state = createModelState();
  state.worker = connect(new URL('./model-worker.js', import.meta.url));
  const transformer = createTransformerPanel();
  let imagePanels = [];
  const showImagePanels = (shown) => {
    for (const p of imagePanels) p.hidden = !shown;
  };
  const loader = mountLoader(state, {
    /** A text encoder: loaded in the page and shown by the transformer panel (which disposes it). */
    async onTokenModel(bytes) {
      const model = await context.qwasm.loadModel(bytes);
      showImagePanels(false);
      await transformer.show(model);
      return model;
    },
  });
  state.on('model', () => {
    transformer.hide();
    showImagePanels(true);
  });
  const input = mountInput(state);
  const predict = mountPrediction(state, root);
  const explain = mountExplainer(state);
  const layers = mountLayers(state, context, explain.explainLayer);
  const top = h('div', { class: 'mv-top' }, input.panel, predict.panel);
  imagePanels = [top, layers.panel, explain.panel];
  root.replaceChildren(h('div', { class: 'mv' },
    loader.bar,
    transformer.root,
    top,
    layers.panel,
    explain.panel));

  state.on('input', () => context.setLink?.('model', state.sample === null ? {} : { sample: state.sample }));
  /** For the quantize view (main.js's openInModelView): its QDQ model, shown here as a loaded file. */
  context.openModel = (bytes, name) => loader.loadBytes(bytes, name).then(() => predict.idle());

  try {
    state.backend = await state.worker.call('init');
    await input.loadSamples(Number(link.get('sample') ?? 0));
    await loader.loadDefault();
    await predict.idle();
  } catch (error) {
    loader.fail('digits.onnx', error);
  }
  root.dataset.ready = 'true';
  /** For tests and the console: the worker's wasm memory, and every layer's output for the current input. */
  window.qwasmModelView = {
    memoryStats: () => state.worker.call('memoryStats'),
    backend: () => state.backend, // what init() gave in the worker
    snapshot() {
      const r = state.result;
      return {
        source: r ? (r.sample === null ? 'draw' : `sample:${r.sample}`) : '',
        model: state.model?.name ?? '',
        layers: (state.model?.layers ?? []).map((info, i) => {
          const tensor = info.layer.outputs[0];
          const t = r?.intermediates[tensor];
          const f = r?.float?.activations[tensor];
          return {
            index: info.index, name: info.layer.name, tensor, dtype: t?.dtype ?? null, dims: t ? Array.from(t.dims) : null,
            scale: info.output?.scale ?? null, zeroPoint: info.output?.zeroPoint ?? null,
            data: t ? Array.from(t.data, Number) : null, float: f ? Array.from(f.data) : null, sqnr: r?.layerSqnr?.[i] ?? null,
          };
        }),
      };
    },
    describeError,
  };
}
