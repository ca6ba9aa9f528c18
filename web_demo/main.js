// Page shell: starts qwasm, switches views, keeps the address a deep link to what is shown, and lets the model
// view hand tensors to the explorer. Each view is a module exporting mount(element, context, link); they share
// nothing else. The quantize view hands the QDQ model it makes to the model view through context.openInModelView.
//
// Deep links: #explorer?dtype=qint8&scheme=symmetric…, #model?sample=3, #ptq?qconfig=x86&count=32, #faces?face=40,40,140. A view reports
// its settings with context.setLink(view, params) (only what differs from its defaults); the address follows the
// view on screen, and opening such an address restores the view and its settings.
import * as qwasm from './qwasm/js/index.js';
import * as explorer from './explorer.js';
import * as facesView from './faces-view.js';
import * as modelView from './model-view.js';
import * as ptqView from './ptq-view.js';
import * as similarityView from './similarity-view.js';

const $ = (sel) => document.querySelector(sel);
const VIEWS = ['explorer', 'model', 'ptq', 'similarity', 'faces'];
const links = Object.fromEntries(VIEWS.map((v) => [v, '']));
let active = 'explorer';

/** The view and its parameters named by the address (#view?a=1&b=2). */
function readLink() {
  const [view, query = ''] = decodeURIComponent(location.hash.slice(1)).split('?');
  return { view: VIEWS.includes(view) ? view : 'explorer', params: new URLSearchParams(query) };
}
const addressOf = (view) => `#${view}${links[view] ? `?${links[view]}` : ''}`;

function show(view, { push = false } = {}) {
  active = view;
  for (const b of document.querySelectorAll('nav button')) b.classList.toggle('active', b.dataset.view === view);
  for (const s of document.querySelectorAll('.view')) s.classList.toggle('active', s.id === view);
  if (location.hash !== addressOf(view)) history[push ? 'pushState' : 'replaceState'](null, '', addressOf(view));
}

async function start() {
  const info = await qwasm.init();
  // The relaxed dot product runs where the engine computes it exactly for full bytes (qwasm's probe says which way).
  const relaxed = info.relaxed ? ` + relaxed-SIMD dot product (${info.relaxed})` : '';
  $('#backend').textContent = `backend: ${info.simd ? 'SIMD128' : 'scalar'}${relaxed} WebAssembly`;
  document.body.dataset.backend = info.simd ? 'simd' : 'scalar';
  if (info.relaxed) document.body.dataset.relaxed = info.relaxed;
  const link = readLink();
  links[link.view] = link.params.toString();
  for (const b of document.querySelectorAll('nav button')) b.addEventListener('click', () => show(b.dataset.view, { push: true }));
  const context = {
    qwasm,
    info,
    /** A view's settings for its deep link (an object or URLSearchParams; only what differs from its defaults). */
    setLink(view, params) {
      links[view] = new URLSearchParams(params).toString();
      if (view === active) show(view);
    },
    /** Shows a tensor in the explorer: values is a Float32Array, dims its shape, label names its origin. */
    sendToExplorer(label, values, dims) {
      explorer.setTensor(label, values, dims);
      show('explorer', { push: true });
    },
    /** Makes a model (ONNX bytes) the model view's current one and shows it; set up by the model view. */
    async openInModelView(bytes, name) {
      if (!context.openModel) throw new Error('the model view is not ready');
      await context.openModel(bytes, name);
      show('model', { push: true });
    },
  };
  const paramsOf = (view) => (view === link.view ? link.params : new URLSearchParams());
  show(link.view);
  explorer.mount($('#explorer'), context, paramsOf('explorer'));
  ptqView.mount($('#ptq'), context, paramsOf('ptq'));
  similarityView.mount($('#similarity'), context);
  facesView.mount($('#faces'), context, paramsOf('faces'));
  await modelView.mount($('#model'), context, paramsOf('model'));
  // Back / forward and edited addresses: the view and, for the explorer, its settings.
  window.addEventListener('popstate', () => {
    const next = readLink();
    links[next.view] = next.params.toString();
    if (next.view === 'explorer') explorer.applyLink(next.params);
    show(next.view);
  });
  window.qwasmDemo = { ready: true, qwasm, show };
}

start().catch((error) => {
  const el = $('#fatal');
  el.hidden = false;
  el.textContent = `The demo could not start: ${error.message}`;
  window.qwasmDemo = { ready: false, error: error.message };
  throw error;
});
