// The model view's model bar: which model is current, loading another (the bundled digits model, a file, or the
// quantize view's result) in the model worker with its progress, and the errors of a file that cannot be used,
// which name that file and leave the current model in place.
import { h } from './dom.js';
import { describeError } from './model-state.js';

export const DEFAULT_MODEL = { url: 'models/digits.onnx', name: 'digits.onnx' };
const PHASES = {
  download: 'Downloading',
  decode: 'Reading the ONNX file',
  prepare: 'Packing the weights and planning the activation memory (the first run)',
  describe: 'Listing the layers',
};
const mb = (n) => `${(n / 1e6).toFixed(n < 1e7 ? 2 : 1)} MB`;

/**
 * Builds the model bar. Returns { bar, loadDefault(), loadBytes(bytes, name) }; a successful load announces 'model'.
 * onTokenModel(bytes, name): takes a text encoder (token-id inputs) the worker declined, returns its qwasm Model.
 */
export function mountLoader(state, { onTokenModel } = {}) {
  const info = h('div', { class: 'mv-model-info' });
  const error = h('p', { class: 'error mv-load-error', role: 'alert', hidden: true });
  const progressText = h('span', { class: 'mv-progress-text' });
  const progressBar = h('progress', { class: 'mv-progress-bar' });
  const progress = h('p', { class: 'mv-progress', 'aria-live': 'polite', hidden: true }, progressBar, progressText);
  const fileInput = h('input', { type: 'file', accept: '.onnx,application/octet-stream', class: 'mv-file', 'aria-label': 'Load your own ONNX model' });
  const resetButton = h('button', { type: 'button', class: 'mv-reset', hidden: true, text: 'Back to the digits model' });
  const bar = h('section', { class: 'panel mv-modelbar' },
    h('div', { class: 'mv-modelbar-main' }, info),
    h('div', { class: 'mv-modelbar-load' },
      h('label', { class: 'mv-file-label' }, 'Load your own ONNX model ', fileInput),
      resetButton),
    progress,
    error);

  function renderInfo() {
    const m = state.model;
    const io = (v) => `"${v.name}" ${v.dtype}[${v.dims.join('×')}]`;
    info.replaceChildren(
      h('h2', {}, 'Model ', h('code', { class: 'mv-model-name', text: m.name }), ' ',
        h('span', { class: `mv-kind mv-kind-${m.quantized ? 'int8' : 'float'}`, text: m.quantized ? 'int8' : 'float' })),
      h('p', { class: 'mv-model-meta' },
        `${m.layers.length} layers · ${mb(m.bytes)} · input ${m.inputs.map(io).join(', ')} → output ${m.outputs.map(io).join(', ')} · `,
        m.quantized ? ['semantics ', h('code', { text: m.semantics }),
          m.semantics === 'pytorch-qnnpack' ? ' (PyTorch\'s qnnpack engine: quantize x·(1/s), float32 requantization, round half to even)' : ' (the ONNX specification: quantize x/s, round half to even)']
          : 'a float model: no layer computes in integers; qwasm runs it with its float kernels',
        m.isDefault
          ? ' · a small CNN trained on scikit-learn\'s 8×8 digits, quantized by PyTorch post-training quantization (tools/train_digits.py)'
          : ' · the drawing and the test images are resampled (nearest) to its input; classes are the output\'s indices'));
    resetButton.hidden = m.isDefault;
  }

  function showProgress(name, p) {
    progress.hidden = false;
    progress.dataset.phase = p.phase;
    if (p.phase === 'download' && p.total) {
      progressBar.max = p.total;
      progressBar.value = p.loaded;
      progressText.textContent = `${name}: ${PHASES.download} ${mb(p.loaded)} of ${mb(p.total)}`;
    } else {
      progressBar.removeAttribute('value'); // indeterminate
      progressText.textContent = `${name}: ${PHASES[p.phase] ?? p.phase}${p.phase === 'download' ? ` ${mb(p.loaded)}` : p.total ? ` (${mb(p.total)})` : ''}…`;
    }
  }

  let loading = 0;
  /** Loads { url | bytes } as `name` in the worker, then makes it current. Rejects (the current model stays) on error. */
  async function load({ url, bytes, name, isDefault }) {
    const token = ++loading;
    error.hidden = true;
    showProgress(name, { phase: bytes ? 'decode' : 'download', loaded: 0, total: bytes?.length ?? 0 });
    try {
      const loaded = await state.worker.call('load', { url: url && new URL(url, document.baseURI).href, bytes, image: state.image },
        { onProgress: (p) => showProgress(name, p) });
      if (token !== loading) { // another load started meanwhile and wins
        state.worker.call('dispose', { id: loaded.id });
        return;
      }
      if (loaded.tokenModel) { // a text encoder: the current model stays in the worker for the way back
        if (!bytes || !onTokenModel) throw new TypeError(`${name} takes token ids; only a file dropped in can be run as a text encoder`);
        const model = await onTokenModel(bytes, name);
        info.replaceChildren(h('h2', {}, 'Model ', h('code', { class: 'mv-model-name', text: name })),
          h('p', { class: 'mv-model-meta', text: `${model.layers.length} nodes after onnxruntime's fusions · inputs ${model.inputs.map((i) => `"${i.name}" ${i.dtype}[${i.dims.join('×')}]`).join(', ')}` }));
        resetButton.hidden = false;
        return;
      }
      const old = state.model;
      state.model = { ...loaded, name, isDefault };
      state.result = null;
      state.explain = { layer: -1, element: -1 };
      renderInfo();
      state.emit('model');
      if (old) state.worker.call('dispose', { id: old.id });
    } finally {
      if (token === loading) progress.hidden = true;
    }
  }

  const loadDefault = () => load({ url: DEFAULT_MODEL.url, name: DEFAULT_MODEL.name, isDefault: true });
  /** A file's bytes (or the quantize view's model) as the current model. */
  const loadBytes = (bytes, name) => load({ bytes: bytes.slice(), name, isDefault: false }); // a copy: the caller keeps its bytes

  function fail(name, e) {
    error.hidden = false;
    error.textContent = `Could not use "${name}": ${describeError(e)}.${state.model ? ` The model in use is still ${state.model.name}.` : ''}`;
  }

  fileInput.addEventListener('change', async () => {
    const file = fileInput.files?.[0];
    if (!file) return;
    try {
      await loadBytes(new Uint8Array(await file.arrayBuffer()), file.name);
    } catch (e) {
      fail(file.name, e);
    } finally {
      fileInput.value = '';
    }
  });
  resetButton.addEventListener('click', () => loadDefault().catch((e) => fail(DEFAULT_MODEL.name, e)));

  return { bar, loadDefault, loadBytes, fail };
}
