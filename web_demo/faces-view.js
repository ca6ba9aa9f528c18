// Faces view: a real pretrained image model, face-api's facial expression classifier (npm @vladmandic/face-api,
// MIT; face-api.js by Vincent Mühler, MIT), quantized to int8 by tools/pretrained/faces.py (onnxruntime's
// quantize_static, calibrated on real face crops; models/faces/). The user sees a photo (the astronaut, public
// domain, by default) or drops / picks their own, moves and sizes the square around the face; the square, resized to
// 112x112 by the canvas, is the model's input (faces-compute.js). qwasm runs the int8 file and, as the reference,
// the float file (qwasm's float32 kernels: the float file reproduces face-api's logits to ~1e-5,
// tests/js/model-faces.test.js); both run in the page. On demand onnxruntime-web runs the int8 file to show the
// same bits, and the int8 file opens in the model view (its layers and their scales).
// The model files are fetched when the view is first shown. Deep link: #faces?face=x,y,side (the square on the
// default photo, in its pixels).
import { h, scrollable } from './dom.js';
import { CLASSES, INPUT_DIMS, SIZE, faceInput, softmax } from './faces-compute.js';
import { argmax, loadFloatReference, maxAbsDiff } from './model-float.js';
import { describeLatency, timeRuns } from './timing.js';

const DIR = new URL('./models/faces/', import.meta.url);
const FILES = { int8: 'expression-int8.onnx', float: 'expression-float.onnx', photo: 'astronaut-face.png', record: 'faces.json' };
const DISPLAY = 360; // the photo's canvas, CSS pixels at most (it shrinks with the page)
const describeError = (e) => `${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e?.message ?? e}`;

async function fetchBytes(name) {
  const response = await fetch(new URL(name, DIR));
  if (!response.ok) throw new Error(`models/faces/${name}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** The square [x, y, side] kept inside a w x h image, side at least 8 px. */
function clampSquare([x, y, side], w, h) {
  const s = Math.max(8, Math.min(side, w, h));
  return [Math.min(Math.max(0, x), w - s), Math.min(Math.max(0, y), h - s), s];
}

export function mount(root, context, link = new URLSearchParams()) {
  const { qwasm } = context;
  const state = { image: null, isDefault: true, square: [0, 0, 0], defaultSquare: null, int8: null, float: null, int8Bytes: null, ort: null, pending: false, running: false };

  const photo = h('canvas', { class: 'fc-photo', 'aria-label': 'The photo; drag the square onto the face' });
  const cropCanvas = h('canvas', { class: 'fc-crop', width: SIZE, height: SIZE, 'aria-label': 'What the model sees: 112 x 112' });
  const sizeSlider = h('input', { type: 'range', class: 'fc-size', min: 8, max: 100, value: 50, 'aria-label': 'Size of the face square' });
  const fileInput = h('input', { type: 'file', accept: 'image/*', class: 'fc-file', 'aria-label': 'Use your own photo' });
  const resetButton = h('button', { type: 'button', class: 'fc-reset', text: 'Back to the astronaut' });
  const status = h('p', { class: 'fc-status', 'aria-live': 'polite', text: 'loading the model…' });
  const error = h('p', { class: 'error fc-error', role: 'alert', hidden: true });
  const prediction = h('div', { class: 'fc-prediction' });
  const ortButton = h('button', { type: 'button', class: 'fc-ort', text: 'Same int8 file in onnxruntime-web' });
  const openButton = h('button', { type: 'button', class: 'fc-open', text: 'Open the int8 file in the model view' });
  const ortResult = h('div', { class: 'fc-ort-result', 'aria-live': 'polite' });

  const drop = h('div', { class: 'fc-drop' }, photo,
    h('p', { class: 'mv-note', text: 'Drag the square onto a face (or tap where the face is); the slider sizes it. Drop a photo here or pick one below: it stays in this page, nothing is uploaded.' }));
  root.replaceChildren(h('div', { class: 'fc' },
    h('section', { class: 'panel fc-input' },
      h('h2', { text: 'Facial expressions with a pretrained int8 CNN' }),
      h('p', { class: 'mv-note', text: 'Which of 7 expressions a face shows, by a real pretrained network quantized to int8, run by qwasm in this page.' }),
      drop,
      h('div', { class: 'fc-controls' },
        h('label', {}, 'Square ', sizeSlider),
        h('label', { class: 'fc-file-label' }, 'Your photo: ', fileInput),
        resetButton),
      error),
    h('section', { class: 'panel fc-result' },
      h('h2', { text: 'What the model sees, and what it says' }),
      h('div', { class: 'fc-result-row' }, cropCanvas, h('div', { class: 'fc-result-text' }, status)),
      scrollable(h('div', { class: 'mv-table-wrap' }, prediction)),
      h('div', { class: 'fc-actions' }, ortButton, openButton),
      ortResult,
      h('p', { class: 'mv-note fc-about', text: 'face-api\'s expression classifier (npm @vladmandic/face-api, MIT; originally face-api.js by Vincent Mühler, MIT): a 112 x 112 face crop through four dense blocks of depthwise-separable convolutions (31 convolutions, 24 residual sums, 0.32 M parameters) to 7 expressions. tools/pretrained/faces.py checked the network against face-api itself and quantized it to int8 with onnxruntime\'s quantize_static (per-channel int8 weights, uint8 activations), calibrated on 147 real face crops. qwasm runs the int8 file; the float file, run by qwasm\'s float32 kernels, is the reference.' }),
      h('p', { class: 'mv-note', text: 'The default photo: scikit-image\'s astronaut (Eileen Collins, NASA, public domain).' }))));

  const showError = (prefix, e) => {
    error.hidden = false;
    error.textContent = `${prefix}: ${describeError(e)}`;
  };

  function draw() {
    const img = state.image;
    if (!img) return;
    const scale = Math.min(1, DISPLAY / Math.max(img.width, img.height));
    photo.width = Math.round(img.width * scale);
    photo.height = Math.round(img.height * scale);
    const g = photo.getContext('2d');
    g.drawImage(img, 0, 0, photo.width, photo.height);
    const [x, y, side] = state.square.map((v) => v * scale);
    g.lineWidth = 2;
    g.strokeStyle = '#2f6fd6';
    g.strokeRect(x + 1, y + 1, side - 2, side - 2);
    const c = cropCanvas.getContext('2d', { willReadFrequently: true });
    c.imageSmoothingEnabled = true;
    c.imageSmoothingQuality = 'high';
    c.clearRect(0, 0, SIZE, SIZE);
    c.drawImage(img, state.square[0], state.square[1], state.square[2], state.square[2], 0, 0, SIZE, SIZE);
  }

  function setSquare(square) {
    state.square = clampSquare(square.map(Math.round), state.image.width, state.image.height);
    const minSide = Math.min(state.image.width, state.image.height);
    sizeSlider.value = String(Math.round((100 * state.square[2]) / minSide));
    draw();
    const moved = state.isDefault && state.square.join() !== state.defaultSquare.join();
    context.setLink?.('faces', moved ? { face: state.square.join(',') } : {});
    schedule();
  }

  /** Runs the models on the current crop; a change during a run runs again once it ends. */
  function schedule() {
    state.pending = true;
    if (!state.running && state.int8) run();
  }

  async function run() {
    state.running = true;
    try {
      while (state.pending) {
        state.pending = false;
        const pixels = cropCanvas.getContext('2d', { willReadFrequently: true }).getImageData(0, 0, SIZE, SIZE).data;
        const feeds = { input: { data: faceInput(pixels), dims: INPUT_DIMS } };
        let int8;
        const time = await timeRuns(async () => { int8 = (await state.int8.run(feeds)).logits.data; });
        const float = (await state.float.run(feeds)).logits.data;
        render(Float32Array.from(int8), Float32Array.from(float), time);
      }
    } catch (e) {
      showError('Could not run the model', e);
    } finally {
      state.running = false;
    }
  }

  function render(int8, float, time) {
    const [p8, pf] = [softmax(int8), softmax(float)];
    const best = argmax(int8);
    const latency = describeLatency(time);
    prediction.dataset.logits = JSON.stringify(Array.from(int8));
    prediction.dataset.floatLogits = JSON.stringify(Array.from(float));
    prediction.dataset.label = CLASSES[best];
    status.dataset.ms = String(time.ms);
    status.replaceChildren(
      h('strong', { class: 'fc-label', text: `${CLASSES[best]} ${(100 * p8[best]).toFixed(1)}%` }),
      h('span', { class: `fc-agree ${best === argmax(float) ? '' : 'error'}`, text: best === argmax(float) ? ' (float agrees)' : ` (float says ${CLASSES[argmax(float)]})` }),
      h('br'),
      `qwasm int8: ${latency.value} per run; ${latency.detail}`);
    prediction.replaceChildren(h('table', { class: 'fc-table' },
      h('thead', {}, h('tr', {}, h('th', { text: 'expression' }), h('th', { text: 'int8 (qwasm)' }), h('th', { text: 'float' }), h('th', { text: '|int8 − float|' }))),
      h('tbody', {}, ...CLASSES.map((name, i) => h('tr', { class: i === best ? 'fc-best' : '' },
        h('th', { text: name }),
        h('td', { class: 'num fc-p8', 'data-value': String(p8[i]), style: `background: linear-gradient(to right, rgba(47, 111, 214, 0.25) ${(100 * p8[i]).toFixed(1)}%, transparent 0)`, text: p8[i].toFixed(4) }),
        h('td', { class: 'num fc-pf', 'data-value': String(pf[i]), text: pf[i].toFixed(4) }),
        h('td', { class: 'num', text: Math.abs(p8[i] - pf[i]).toFixed(4) }))))));
    ortResult.replaceChildren();
  }

  async function useImage(img, isDefault, square) {
    state.image?.close?.();
    state.image = img;
    state.isDefault = isDefault;
    const side = Math.round(0.5 * Math.min(img.width, img.height));
    setSquare(square ?? [(img.width - side) / 2, (img.height - side) / 2, side]);
  }

  async function loadDefault(square) {
    const img = await createImageBitmap(new Blob([await fetchBytes(FILES.photo)], { type: 'image/png' }));
    await useImage(img, true, square ?? state.defaultSquare);
  }

  async function useFile(file) {
    error.hidden = true;
    try {
      if (!file) return;
      await useImage(await createImageBitmap(file), false);
    } catch (e) {
      showError(`Could not read ${file?.name ?? 'the file'} as an image`, e);
    }
  }

  // pointer: press inside the square drags it; elsewhere centres it there
  let drag = null;
  const toImage = (e) => {
    const r = photo.getBoundingClientRect();
    const k = state.image.width / r.width;
    return [(e.clientX - r.left) * k, (e.clientY - r.top) * k];
  };
  photo.addEventListener('pointerdown', (e) => {
    if (!state.image) return;
    const [px, py] = toImage(e);
    const [x, y, side] = state.square;
    const inside = px >= x && px <= x + side && py >= y && py <= y + side;
    drag = inside ? [px - x, py - y] : [side / 2, side / 2];
    photo.setPointerCapture(e.pointerId);
    setSquare([px - drag[0], py - drag[1], side]);
  });
  photo.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const [px, py] = toImage(e);
    setSquare([px - drag[0], py - drag[1], state.square[2]]);
  });
  photo.addEventListener('pointerup', () => { drag = null; });
  sizeSlider.addEventListener('input', () => {
    const [x, y, side] = state.square;
    const next = (Number(sizeSlider.value) / 100) * Math.min(state.image.width, state.image.height);
    setSquare([x + (side - next) / 2, y + (side - next) / 2, next]);
  });
  fileInput.addEventListener('change', () => useFile(fileInput.files[0]));
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('fc-dragging'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('fc-dragging'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('fc-dragging');
    useFile(e.dataTransfer.files[0]);
  });
  resetButton.addEventListener('click', () => {
    error.hidden = true;
    loadDefault().catch((e) => showError('Could not load the default photo', e));
  });

  ortButton.addEventListener('click', async () => {
    if (!prediction.dataset.logits) return;
    ortButton.disabled = true;
    ortResult.textContent = 'loading onnxruntime-web…';
    try {
      state.ort ??= await loadFloatReference(new URL(FILES.int8, DIR).href);
      const { ort, session } = state.ort;
      const pixels = cropCanvas.getContext('2d', { willReadFrequently: true }).getImageData(0, 0, SIZE, SIZE).data;
      const out = await session.run({ input: new ort.Tensor('float32', faceInput(pixels), INPUT_DIMS) });
      const theirs = Float32Array.from(out.logits.data);
      const ours = Float32Array.from(JSON.parse(prediction.dataset.logits));
      const same = theirs.every((v, i) => Object.is(v, ours[i]));
      ortResult.dataset.same = String(same);
      ortResult.dataset.maxDiff = String(maxAbsDiff(theirs, ours));
      ortResult.replaceChildren(h('p', { class: same ? '' : 'error', text: `onnxruntime-web ${state.ort.version} on the same int8 file and input: ${same ? 'the same 7 logits, bit for bit' : `DIFFERENT logits (max difference ${ortResult.dataset.maxDiff})`}.` }));
    } catch (e) {
      ortResult.replaceChildren(h('p', { class: 'error', text: `onnxruntime-web could not run ${FILES.int8}: ${describeError(e)}` }));
    } finally {
      ortButton.disabled = false;
    }
  });
  openButton.addEventListener('click', async () => {
    try {
      await context.openInModelView(state.int8Bytes, FILES.int8);
    } catch (e) {
      showError(`Could not open ${FILES.int8} in the model view`, e);
    }
  });

  async function start() {
    status.textContent = `loading ${FILES.int8} and ${FILES.float}…`;
    const [record, int8Bytes, floatBytes] = await Promise.all([
      fetch(new URL(FILES.record, DIR)).then((r) => r.json()), fetchBytes(FILES.int8), fetchBytes(FILES.float)]);
    const [x0, y0, x1] = record.demo_image.face;
    state.defaultSquare = [x0, y0, x1 - x0];
    state.int8Bytes = int8Bytes;
    [state.int8, state.float] = await Promise.all([qwasm.loadModel(int8Bytes), qwasm.loadModel(floatBytes)]);
    const linked = link.get('face')?.split(',').map(Number);
    await loadDefault(linked?.length === 3 && linked.every(Number.isFinite) ? linked : undefined);
    root.dataset.ready = 'true';
  }
  // The files (1.7 MB) are fetched when the view is first shown, not when the page starts.
  const startOnce = () => {
    if (!root.classList.contains('active') || root.dataset.ready) return;
    root.dataset.ready = 'loading';
    start().catch((e) => {
      status.textContent = '';
      showError('The faces view could not start', e);
      root.dataset.ready = 'error';
    });
  };
  new MutationObserver(startOnce).observe(root, { attributes: true, attributeFilter: ['class'] });
  startOnce();
}
