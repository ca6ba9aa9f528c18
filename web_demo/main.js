// Page shell: starts qwasm, switches views, and lets the model view hand tensors to the explorer.
// Each view is a module exporting mount(element, context); they share nothing else. The quantize view
// hands the QDQ model it makes to the model view through context.openInModelView.
import * as qwasm from './qwasm/js/index.js';
import * as explorer from './explorer.js';
import * as modelView from './model-view.js';
import * as ptqView from './ptq-view.js';
import * as similarityView from './similarity-view.js';

const $ = (sel) => document.querySelector(sel);

function show(view) {
  for (const b of document.querySelectorAll('nav button')) b.classList.toggle('active', b.dataset.view === view);
  for (const s of document.querySelectorAll('.view')) s.classList.toggle('active', s.id === view);
}

async function start() {
  const info = await qwasm.init();
  $('#backend').textContent = `backend: ${info.simd ? 'SIMD128' : 'scalar'} WebAssembly`;
  document.body.dataset.backend = info.simd ? 'simd' : 'scalar';
  for (const b of document.querySelectorAll('nav button')) b.addEventListener('click', () => show(b.dataset.view));
  const context = {
    qwasm,
    info,
    /** Shows a tensor in the explorer: values is a Float32Array, dims its shape, label names its origin. */
    sendToExplorer(label, values, dims) {
      explorer.setTensor(label, values, dims);
      show('explorer');
    },
    /** Makes a model (ONNX bytes) the model view's current one and shows it; set up by the model view. */
    async openInModelView(bytes, name) {
      if (!context.openModel) throw new Error('the model view is not ready');
      await context.openModel(bytes, name);
      show('model');
    },
  };
  explorer.mount($('#explorer'), context);
  await modelView.mount($('#model'), context);
  ptqView.mount($('#ptq'), context);
  similarityView.mount($('#similarity'), context);
  window.qwasmDemo = { ready: true, qwasm, show };
}

start().catch((error) => {
  const el = $('#fatal');
  el.hidden = false;
  el.textContent = `The demo could not start: ${error.message}`;
  window.qwasmDemo = { ready: false, error: error.message };
  throw error;
});
