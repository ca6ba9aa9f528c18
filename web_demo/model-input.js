// The model view's input: the drawing pad, the 8x8 preview of what the model sees, the held-out test images, and
// next to the pad the current prediction (so that on a phone, drawing and its result stay on one screen).
import { createPad, paintDigit } from './model-canvas.js';
import { h } from './dom.js';
import { describeError, isBlank } from './model-state.js';

const SAMPLES_URL = 'models/digits.json';

/** Builds the input panel; changes to the image announce 'input'. Returns { panel, loadSamples(), selectSample(i) }. */
export function mountInput(state) {
  const pad = h('canvas', { class: 'mv-pad', width: 256, height: 256, 'aria-label': 'Draw a digit here' });
  const preview = h('canvas', { class: 'mv-preview', width: 96, height: 96, 'aria-label': 'The 8x8 input the model sees' });
  const clearButton = h('button', { type: 'button', class: 'mv-clear', text: 'Clear' });
  const thumbs = h('div', { class: 'mv-thumbs' });
  const note = h('p', { class: 'mv-note mv-input-note' });
  const live = h('div', { class: 'mv-live-result', 'aria-live': 'polite' });
  const panel = h('section', { class: 'panel mv-input' },
    h('h2', { text: 'Input' }),
    h('div', { class: 'mv-draw' },
      h('div', { class: 'mv-pad-wrap' }, pad, h('div', { class: 'mv-pad-actions' }, h('span', { class: 'mv-hint', text: 'Draw a digit (mouse, pen or finger)' }), clearButton)),
      h('div', { class: 'mv-draw-side' },
        live,
        h('figure', { class: 'mv-preview-wrap' }, preview, h('figcaption', { text: 'what the model sees: 8×8, each pixel a count 0..16 of a 4×4 block of the 32×32 bitmap, ÷ 16' })))),
    h('h3', { text: 'or pick a held-out test image' }),
    thumbs,
    note);

  const markSelected = () => [...thumbs.children].forEach((b, k) => b.classList.toggle('selected', k === state.sample));
  function setImage(image, sample) {
    state.image = image;
    state.sample = sample;
    paintDigit(preview, image);
    markSelected();
    state.emit('input');
  }

  const drawPad = createPad(pad, (image) => setImage(image, null));
  clearButton.addEventListener('click', () => {
    drawPad.clear();
    setImage(new Float32Array(64), null);
  });

  function selectSample(i) {
    drawPad.clear();
    setImage(Float32Array.from(state.samples.test_images[i].image), i);
  }

  function renderThumbs() {
    const images = state.samples?.test_images ?? [];
    thumbs.replaceChildren(...images.map((s, i) => {
      const c = h('canvas', { width: 40, height: 40 });
      paintDigit(c, s.image);
      return h('button', { type: 'button', class: 'mv-thumb', title: `test image #${s.index}, label ${s.label}`, 'data-index': String(i), onclick: () => selectSample(i) },
        c, h('span', { text: String(s.label) }));
    }));
    markSelected();
    note.textContent = state.samples
      ? `${images.length} images from the held-out split (${state.samples.split?.test ?? '?'} images; accuracy there: float ${(state.samples.float_accuracy * 100).toFixed(1)} %, int8 ${(state.samples.int8_accuracy * 100).toFixed(1)} % in PyTorch). The number under each is its label.`
      : '';
  }

  /** Fetches the test images; the first (or `initial`) becomes the input, without announcing it. */
  async function loadSamples(initial = 0) {
    try {
      const response = await fetch(SAMPLES_URL);
      if (!response.ok) throw new Error(`HTTP ${response.status} for ${SAMPLES_URL}`);
      state.samples = await response.json();
      const n = state.samples.test_images?.length ?? 0;
      if (n) {
        state.sample = Math.min(Math.max(0, initial), n - 1);
        state.image = Float32Array.from(state.samples.test_images[state.sample].image);
      }
    } catch (error) {
      note.textContent = `The test images could not be loaded: ${describeError(error)}`;
    }
    paintDigit(preview, state.image);
    renderThumbs();
  }

  state.on('result', () => {
    const r = state.result;
    if (!r) return live.replaceChildren();
    const best = r.best;
    live.replaceChildren(
      h('span', { class: 'mv-live-title', text: `${state.model.quantized ? 'int8' : 'float'} prediction` }),
      h('span', { class: 'mv-live-class', text: String(best) }),
      h('span', { class: 'mv-live-prob', text: isBlank(state) ? 'blank input' : `${(r.probs[best] * 100).toFixed(1)} %` }));
  });

  paintDigit(preview, state.image);
  return { panel, loadSamples, selectSample };
}
