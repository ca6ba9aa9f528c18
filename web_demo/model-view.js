// Model view: a quantized digits CNN running in the page. Draw a digit or pick a test image; the int8
// model classifies it (softmax of the dequantized logits, with latency); the layer table shows each
// layer's qparams and weights and sends tensors to the explorer; the explainer recomputes one output
// element of a conv / linear layer in integers and checks it against the kernel. For the digits model, the
// float export of the same weights runs next to it in onnxruntime-web (model-float.js): float prediction,
// agreement and the SQNR of the int8 logits against the float ones; the export also returns the float
// activations named like the int8 model's tensors, so the layer table shows each layer's output SQNR too.
import { createPad, paintDigit } from './model-canvas.js';
import { h } from './dom.js';
import { LINEAR_OPS, dequantizeValue, dequantizeWeight, describeLayers, explainElement, softmax } from './model-analysis.js';
import { argmax, loadFloatReference, maxAbsDiff, runFloat } from './model-float.js';
import { sqnrDb } from './qwasm/js/reference.js';
import { createTransformerPanel } from './model-transformer.js';
import { isTokenModel } from './model-transformer-analysis.js';

const DEFAULT = { model: 'models/digits.onnx', samples: 'models/digits.json', name: 'digits.onnx', floatModel: 'models/digits-float.onnx' };
/** |ORT float logits − PyTorch float logits| below this counts as agreement (float kernels differ in the last bits). */
const FLOAT_TOLERANCE = 1e-4;
const TIMED_RUNS = 5;

const fmtScale = (s) => (s === undefined ? '–' : Number(s).toPrecision(4));
const fmtQ = (q) => (q ? `${fmtScale(q.scale)} / ${q.zeroPoint}` : 'float');
const fmtMs = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const describeError = (e) => `${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e?.message ?? e}`;

export async function mount(root, context) {
  const { qwasm } = context;
  const state = {
    model: null, // the qwasm Model in use
    name: '',
    isDefault: false,
    samples: null, // models/digits.json (test images with PyTorch's results)
    layers: [], // describeLayers(model)
    image: new Float32Array(64), // the current 8x8 input, values in [0, 1]
    sample: null, // index into samples.test_images when the input is a test image
    result: null, // { output, intermediates, probs, logits, latency, float: { logits, probs, latency, activations } | null, layerSqnr }
    explain: { layer: -1, element: -1 },
    float: { status: 'idle', ref: null, error: '' }, // the float reference (digits model only): idle | loading | ready | failed
  };

  // ---- layout ------------------------------------------------------------------------------------
  const modelInfo = h('div', { class: 'mv-model-info' });
  const loadError = h('p', { class: 'error mv-load-error', role: 'alert', hidden: true });
  const fileInput = h('input', { type: 'file', accept: '.onnx,application/octet-stream', class: 'mv-file', 'aria-label': 'Load your own ONNX model' });
  const resetButton = h('button', { type: 'button', class: 'mv-reset', hidden: true, text: 'Back to the digits model' });
  const pad = h('canvas', { class: 'mv-pad', width: 256, height: 256, 'aria-label': 'Draw a digit here' });
  const preview = h('canvas', { class: 'mv-preview', width: 96, height: 96, 'aria-label': 'The 8x8 input the model sees' });
  const clearButton = h('button', { type: 'button', class: 'mv-clear', text: 'Clear' });
  const thumbs = h('div', { class: 'mv-thumbs' });
  const inputNote = h('p', { class: 'mv-note mv-input-note' });
  const prediction = h('div', { class: 'mv-prediction' });
  const floatPrediction = h('div', { class: 'mv-float-prediction' });
  const agreement = h('div', { class: 'mv-agreement' });
  const legend = h('div', { class: 'mv-legend' });
  const bars = h('div', { class: 'mv-bars' });
  const runInfo = h('p', { class: 'mv-runinfo' });
  const floatInfo = h('div', { class: 'mv-float', 'data-status': 'idle' });
  const reference = h('p', { class: 'mv-reference' });
  const runError = h('p', { class: 'error mv-run-error', role: 'alert', hidden: true });
  const layerTable = h('table', { class: 'mv-layers' });
  const layerNote = h('p', { class: 'mv-note' });
  const explainer = h('div', { class: 'mv-explainer' });

  const transformer = createTransformerPanel(); // text encoders (token-id inputs) get their own panels
  const imagePanels = [];
  root.replaceChildren(h('div', { class: 'mv' },
    h('section', { class: 'panel mv-modelbar' },
      h('div', { class: 'mv-modelbar-main' }, modelInfo),
      h('div', { class: 'mv-modelbar-load' },
        h('label', { class: 'mv-file-label' }, 'Load your own ONNX model ', fileInput),
        resetButton),
      loadError),
    transformer.root,
    h('div', { class: 'mv-top' },
      h('section', { class: 'panel mv-input' },
        h('h2', { text: 'Input' }),
        h('div', { class: 'mv-draw' },
          h('div', { class: 'mv-pad-wrap' }, pad, h('div', { class: 'mv-pad-actions' }, h('span', { class: 'mv-hint', text: 'Draw a digit (mouse, pen or finger)' }), clearButton)),
          h('figure', { class: 'mv-preview-wrap' }, preview, h('figcaption', { text: 'what the model sees: 8×8, each pixel a count 0..16 of a 4×4 block of the 32×32 bitmap, ÷ 16' }))),
        h('h3', { text: 'or pick a held-out test image' }),
        thumbs,
        inputNote),
      h('section', { class: 'panel mv-output', 'aria-live': 'polite' },
        h('h2', { text: 'Prediction: int8 and float' }),
        h('div', { class: 'mv-preds' },
          h('div', { class: 'mv-pred mv-pred-int8' }, h('div', { class: 'mv-pred-title', text: 'int8 · qwasm' }), prediction),
          h('div', { class: 'mv-pred mv-pred-float' }, h('div', { class: 'mv-pred-title', text: 'float · onnxruntime-web' }), floatPrediction),
          agreement),
        legend, bars, runInfo, floatInfo, reference, runError)),
    h('section', { class: 'panel mv-layers-panel' },
      h('h2', { text: 'Layers' }),
      h('div', { class: 'mv-table-wrap' }, layerTable),
      layerNote),
    h('section', { class: 'panel mv-explain-panel' },
      h('h2', { text: 'One output, step by step in integers' }),
      explainer)));
  imagePanels.push(...root.querySelectorAll('.mv-top, .mv-layers-panel, .mv-explain-panel'));

  // ---- running -----------------------------------------------------------------------------------
  function feedFor(model, image) {
    if (model.inputs.length !== 1) throw new Error(`the demo feeds one image; this model has ${model.inputs.length} inputs`);
    const spec = model.inputs[0];
    if (spec.dtype !== 'float32') throw new Error(`the demo feeds float32 images; input "${spec.name}" is ${spec.dtype}`);
    const dims = spec.dims.map((d) => (typeof d === 'number' ? d : 1));
    const n = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (dims.length === 4) {
      const [, , H, W] = dims; // every batch item and channel gets the image, resampled (nearest) to H x W
      for (let i = 0; i < n; i++) {
        const y = Math.floor(i / W) % H;
        const x = i % W;
        data[i] = image[Math.min(7, Math.floor((y * 8) / H)) * 8 + Math.min(7, Math.floor((x * 8) / W))];
      }
    } else if (n % 64 === 0) {
      for (let i = 0; i < n; i++) data[i] = image[i % 64];
    } else {
      throw new Error(`the demo cannot turn an 8x8 image into input "${spec.name}" of shape [${spec.dims}]`);
    }
    return { [spec.name]: { data, dims } };
  }

  /** The real values of the first output (dequantized when the model ends in integers). */
  function logitsOf(model, result) {
    const name = model.outputs[0].name;
    const t = result[name];
    const producer = state.layers.find((l) => l.layer.outputs.includes(name));
    return dequantizeValue(t, t.dtype === 'float32' ? null : producer?.output);
  }

  /**
   * Per layer (aligned with state.layers): the SQNR in dB of its output tensor, dequantized with its scale / zero
   * point, against the float activation of the same name (digits-float.onnx's extra outputs); null without one.
   */
  function layerSqnrs(intermediates, activations) {
    return state.layers.map((info) => {
      const name = info.layer.outputs[0];
      const f = activations?.[name];
      const t = intermediates[name];
      if (!f || !t || f.data.length !== t.data.length) return null;
      return sqnrDb(f.data, dequantizeValue(t, t.dtype === 'float32' ? null : info.output));
    });
  }

  async function evaluate(model, image) {
    const feeds = feedFor(model, image);
    const times = [];
    for (let i = 0; i < TIMED_RUNS; i++) {
      const t0 = performance.now();
      await model.run(feeds);
      times.push(performance.now() - t0);
    }
    const result = await model.run(feeds, { intermediates: true });
    return { result, latency: median(times) };
  }

  let running = null;
  let queued = false;
  /** Runs the model on state.image; calls made while a run is in flight coalesce into one more run. */
  function schedule() {
    if (running) {
      queued = true;
      return running;
    }
    running = (async () => {
      root.dataset.busy = 'true';
      try {
        do {
          queued = false;
          await runNow();
        } while (queued);
      } finally {
        running = null;
        delete root.dataset.busy;
      }
    })();
    return running;
  }

  async function runNow() {
    const model = state.model;
    if (!model) return;
    try {
      const { result, latency } = await evaluate(model, state.image);
      if (model !== state.model) return; // replaced meanwhile
      const logits = logitsOf(model, result);
      let float = null;
      if (state.isDefault && state.float.status === 'ready') {
        try {
          const f = await runFloat(state.float.ref, state.image, TIMED_RUNS);
          float = { ...f, probs: softmax(f.logits) };
        } catch (error) {
          state.float = { status: 'failed', ref: null, error: `onnxruntime-web could not run the float model: ${describeError(error)}` };
        }
        if (model !== state.model) return;
      }
      state.result = { output: result, intermediates: result.intermediates, logits, probs: softmax(logits), latency, float,
        layerSqnr: layerSqnrs(result.intermediates, float?.activations) };
      runError.hidden = true;
      showPrediction();
      renderLayerButtons();
      renderLayerSqnr();
      renderExplainer();
    } catch (error) {
      runError.hidden = false;
      runError.textContent = `The model could not run on this input: ${describeError(error)}`;
    }
  }

  // ---- prediction --------------------------------------------------------------------------------
  function showPrediction() {
    const { probs, logits, latency } = state.result;
    const best = probs.indexOf(Math.max(...probs));
    const empty = state.sample === null && state.image.every((v) => v === 0);
    prediction.dataset.class = String(best);
    prediction.dataset.logits = JSON.stringify(Array.from(logits));
    prediction.dataset.source = state.sample === null ? 'draw' : `sample:${state.sample}`;
    prediction.dataset.model = state.name;
    prediction.replaceChildren(
      h('span', { class: 'mv-class', text: String(best) }),
      h('span', { class: 'mv-prob', text: `${(probs[best] * 100).toFixed(1)} %` }),
      ...(empty ? [h('span', { class: 'mv-muted', text: '(blank input: draw something)' })] : []));
    const float = state.result.float;
    const fProbs = float?.probs;
    const fBest = float ? argmax(float.logits) : -1;
    const order = probs.map((p, i) => i);
    const shown = order.length > 10 ? order.sort((a, b) => probs[b] - probs[a]).slice(0, 10) : order;
    const pct = (p) => `${(p * 100).toFixed(1)}%`;
    bars.classList.toggle('paired', !!float);
    bars.replaceChildren(...shown.map((i) => h('div', {
      class: `mv-bar${i === best ? ' best' : ''}${i === fBest ? ' float-best' : ''}`,
      title: `class ${i}: int8 logit ${logits[i]}, p = ${probs[i]}${float ? `; float logit ${float.logits[i]}, p = ${fProbs[i]}` : ''}`,
    },
    h('span', { class: 'mv-bar-label', text: String(i) }),
    h('span', { class: 'mv-bar-tracks' },
      h('span', { class: 'mv-bar-track' }, h('span', { class: 'mv-bar-fill', style: `width:${(probs[i] * 100).toFixed(2)}%` })),
      float ? h('span', { class: 'mv-bar-track mv-bar-track-float' }, h('span', { class: 'mv-bar-fill', style: `width:${(fProbs[i] * 100).toFixed(2)}%` })) : null),
    h('span', { class: 'mv-bar-value' }, pct(probs[i]), float ? h('span', { class: 'mv-bar-value-float', text: pct(fProbs[i]) }) : null))));
    legend.replaceChildren(...(float
      ? [h('span', { class: 'mv-key mv-key-int8' }), 'int8 ', h('span', { class: 'mv-key mv-key-float' }), 'float · probabilities: softmax of each model\'s logits (int8: dequantized)']
      : ['probabilities: softmax of the dequantized int8 logits']));
    runInfo.replaceChildren(
      'int8: ', h('strong', { class: 'mv-latency-int8', text: fmtMs(latency) }),
      ` per run (median of ${TIMED_RUNS} model.run calls, qwasm ${context.info.simd ? 'SIMD128' : 'scalar'} build, intermediates not kept) · wasm memory in use: `,
      h('span', { class: 'mv-live', text: `${qwasm.memoryStats().liveBytes} bytes` }),
      ...(float ? [h('br'), 'float: ', h('strong', { class: 'mv-latency-float', text: fmtMs(float.latency) }),
        ` per run (median of ${TIMED_RUNS} session.run calls, onnxruntime-web${state.float.ref.version ? ` ${state.float.ref.version}` : ''} wasm backend, 1 thread)`] : []));
    showFloat(best);
    showReference(best);
  }

  /** The float side: prediction, agreement, SQNR, and for test images ORT's float logits against PyTorch's. */
  function showFloat(best) {
    const float = state.result?.float;
    const el = floatInfo;
    for (const k of Object.keys(el.dataset)) delete el.dataset[k];
    el.dataset.source = prediction.dataset.source ?? '';
    el.dataset.model = state.name;
    agreement.replaceChildren();
    agreement.className = 'mv-agreement';
    const placeholder = (text) => floatPrediction.replaceChildren(h('span', { class: 'mv-float-none', text }));
    if (!state.isDefault) {
      el.dataset.status = 'none';
      placeholder('no float reference');
      el.replaceChildren(h('p', { class: 'mv-note', text: `No float reference for ${state.name}: only the bundled digits model ships its float export (models/digits-float.onnx).` }));
      return;
    }
    if (!float) {
      el.dataset.status = state.float.status === 'failed' ? 'failed' : 'loading';
      placeholder(state.float.status === 'failed' ? 'unavailable' : 'loading…');
      el.replaceChildren(state.float.status === 'failed'
        ? h('p', { class: 'mv-note mv-float-error', text: `Float reference unavailable: ${state.float.error}. The int8 model is unaffected.` })
        : h('p', { class: 'mv-note', text: 'Loading the float reference (onnxruntime-web, wasm backend)…' }));
      return;
    }
    const fBest = argmax(float.logits);
    const sqnr = sqnrDb(float.logits, state.result.logits);
    const maxLogit = maxAbsDiff(float.logits, state.result.logits);
    Object.assign(el.dataset, { status: 'ready', class: String(fBest), logits: JSON.stringify(Array.from(float.logits)), sqnr: String(sqnr), agree: String(fBest === best) });
    floatPrediction.replaceChildren(
      h('span', { class: 'mv-class', text: String(fBest) }),
      h('span', { class: 'mv-prob', text: `${(float.probs[fBest] * 100).toFixed(1)} %` }));
    agreement.classList.add(fBest === best ? 'ok' : 'bad');
    agreement.replaceChildren(fBest === best ? '✓ same class' : '✗ classes differ');
    const rows = [
      ['SQNR int8 vs float', h('span', { title: 'f: the float logits, q: the dequantized int8 logits' },
        h('strong', { class: 'mv-sqnr', text: Number.isFinite(sqnr) ? `${sqnr.toFixed(1)} dB` : '∞ dB' }), ' = 10·log₁₀(Σf² / Σ(f − q)²)')],
      ['max |float − int8|', h('span', {}, h('strong', { class: 'num', text: maxLogit.toPrecision(3) }),
        ` (float logits span ${Math.min(...float.logits).toFixed(2)} … ${Math.max(...float.logits).toFixed(2)})`)],
    ];
    const s = state.sample !== null ? state.samples?.test_images[state.sample] : null;
    if (s?.float_logits) {
      const d = maxAbsDiff(float.logits, s.float_logits);
      const close = d < FLOAT_TOLERANCE;
      el.dataset.torchDiff = String(d);
      el.dataset.torchClose = String(close);
      rows.push(['ORT vs PyTorch float', h('span', { title: 'onnxruntime-web\'s float logits against PyTorch\'s (models/digits.json float_logits). Different float kernels sum in different orders: close, not bit for bit.' },
        'max |Δ| = ', h('strong', { class: 'num mv-torch-diff', text: d.toExponential(1) }), ' ',
        close ? h('span', { class: 'mv-ok', text: `✓ < ${FLOAT_TOLERANCE.toExponential(0)}` }) : h('span', { class: 'mv-bad', text: `✗ ≥ ${FLOAT_TOLERANCE.toExponential(0)}` }),
        ` · PyTorch float predicted ${argmax(s.float_logits)}`)]);
    }
    el.replaceChildren(h('dl', { class: 'mv-compare' }, ...rows.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)])));
  }

  function showReference(best) {
    const s = state.isDefault && state.sample !== null ? state.samples?.test_images[state.sample] : null;
    if (!s) {
      reference.dataset.bitexact = '';
      reference.replaceChildren(state.isDefault
        ? 'A drawing: PyTorch\'s own results (int8 and float) are stored for the test images only.'
        : '');
      return;
    }
    const ours = state.result.logits;
    const torch = Float32Array.from(s.logits);
    const qName = state.samples.output?.quantized_name;
    const q = qName ? state.result.intermediates[qName]?.data : null;
    const sameLogits = ours.length === torch.length && ours.every((v, i) => Object.is(v, torch[i]));
    const sameQ = !q || (q.length === s.q.length && s.q.every((v, i) => Number(q[i]) === v));
    const exact = sameLogits && sameQ;
    reference.dataset.bitexact = String(exact);
    reference.replaceChildren(
      `Test image #${s.index}: label `, h('strong', { text: String(s.label) }),
      `, PyTorch (qnnpack int8) predicted `, h('strong', { text: String(s.prediction) }),
      best === s.prediction ? '' : ` (this page: ${best})`, '. ',
      exact ? h('span', { class: 'mv-ok', text: '✓ logits bit-exact with PyTorch' }) : h('span', { class: 'mv-bad', text: '✗ logits differ from PyTorch' }));
  }

  // ---- inputs ------------------------------------------------------------------------------------
  const drawPad = createPad(pad, (image) => {
    state.sample = null;
    state.image = image;
    for (const b of thumbs.children) b.classList.remove('selected');
    paintDigit(preview, image);
    schedule();
  });
  clearButton.addEventListener('click', () => {
    drawPad.clear();
    state.sample = null;
    state.image = new Float32Array(64);
    for (const b of thumbs.children) b.classList.remove('selected');
    paintDigit(preview, state.image);
    schedule();
  });

  function selectSample(i) {
    state.sample = i;
    state.image = Float32Array.from(state.samples.test_images[i].image);
    drawPad.clear();
    paintDigit(preview, state.image);
    [...thumbs.children].forEach((b, k) => b.classList.toggle('selected', k === i));
    return schedule();
  }

  function renderThumbs() {
    const images = state.samples?.test_images ?? [];
    thumbs.replaceChildren(...images.map((s, i) => {
      const c = h('canvas', { width: 40, height: 40 });
      paintDigit(c, s.image);
      return h('button', { type: 'button', class: 'mv-thumb', title: `test image #${s.index}, label ${s.label}`, 'data-index': String(i), onclick: () => selectSample(i) },
        c, h('span', { text: String(s.label) }));
    }));
    inputNote.textContent = state.samples
      ? `${images.length} images from the held-out split (${state.samples.split?.test ?? '?'} images; accuracy there: float ${(state.samples.float_accuracy * 100).toFixed(1)} %, int8 ${(state.samples.int8_accuracy * 100).toFixed(1)} % in PyTorch). The number under each is its label.`
      : '';
  }

  // ---- model -------------------------------------------------------------------------------------
  function renderModelInfo() {
    const m = state.model;
    const io = (v) => `"${v.name}" ${v.dtype}[${v.dims.join('×')}]`;
    modelInfo.replaceChildren(
      h('h2', {}, 'Model ', h('code', { class: 'mv-model-name', text: state.name })),
      h('p', { class: 'mv-model-meta' },
        `${m.layers.length} layers · input ${m.inputs.map(io).join(', ')} → output ${m.outputs.map(io).join(', ')} · semantics `,
        h('code', { text: m.semantics }),
        m.semantics === 'pytorch-qnnpack' ? ' (PyTorch\'s qnnpack engine: quantize x·(1/s), float32 requantization, round half to even)' : ' (the ONNX specification: quantize x/s, round half to even)',
        state.isDefault
          ? ' · a small CNN trained on scikit-learn\'s 8×8 digits, quantized by PyTorch post-training quantization (tools/train_digits.py)'
          : ' · the drawing and the test images are resampled (nearest) to its input; classes are the output\'s indices'));
    resetButton.hidden = state.isDefault;
  }

  /** Makes `model` current (disposing the previous one) and runs it on the current input. */
  async function useModel(model, name, isDefault) {
    transformer.hide();
    for (const p of imagePanels) p.hidden = false;
    const old = state.model;
    state.model = model;
    state.name = name;
    state.isDefault = isDefault;
    state.layers = describeLayers(model);
    state.result = null;
    state.explain = { layer: -1, element: -1 };
    if (old && old !== model) {
      await running; // let an in-flight run on the old model finish before freeing its weights
      old.dispose();
    }
    renderModelInfo();
    renderLayerTable();
    await schedule();
  }

  async function loadDefault() {
    const model = await qwasm.loadModel(DEFAULT.model);
    await useModel(model, DEFAULT.name, true);
  }

  /** Loads ONNX bytes as the current model (as a loaded file); rejects, keeping the current model, if unusable. */
  async function useBytes(bytes, name) {
    let model = null;
    try {
      model = await qwasm.loadModel(bytes);
      if (isTokenModel(model)) { // a text encoder: the transformer panel takes it over
        await running;
        state.model?.dispose();
        Object.assign(state, { model: null, name, isDefault: false, layers: [], result: null });
        for (const p of imagePanels) p.hidden = true;
        modelInfo.replaceChildren(h('h2', {}, 'Model ', h('code', { class: 'mv-model-name', text: name })),
          h('p', { class: 'mv-model-meta', text: `${model.layers.length} nodes after onnxruntime's fusions · inputs ${model.inputs.map((i) => `"${i.name}" ${i.dtype}[${i.dims.join('×')}]`).join(', ')}` }));
        resetButton.hidden = false;
        await transformer.show(model);
        return;
      }
      await evaluate(model, state.image); // a model the page cannot feed is rejected before it replaces the current one
      await useModel(model, name, false);
    } catch (error) {
      model?.dispose();
      throw error;
    }
  }
  /** For the quantize view (main.js's openInModelView): its QDQ model, shown here as a loaded file. */
  context.openModel = async (bytes, name) => {
    loadError.hidden = true;
    await useBytes(bytes, name);
  };

  fileInput.addEventListener('change', async () => {
    const file = fileInput.files?.[0];
    if (!file) return;
    loadError.hidden = true;
    try {
      await useBytes(new Uint8Array(await file.arrayBuffer()), file.name);
    } catch (error) {
      loadError.hidden = false;
      loadError.textContent = `Could not use "${file.name}": ${describeError(error)}. The previous model (${state.name}) is still loaded.`;
    } finally {
      fileInput.value = '';
    }
  });
  resetButton.addEventListener('click', async () => {
    loadError.hidden = true;
    try {
      await loadDefault();
    } catch (error) {
      loadError.hidden = false;
      loadError.textContent = `Could not reload the digits model: ${describeError(error)}`;
    }
  });

  // ---- layer table -------------------------------------------------------------------------------
  function renderLayerTable() {
    const withSqnr = state.isDefault; // only the bundled digits model has a float reference
    layerTable.replaceChildren(
      h('thead', {}, h('tr', {},
        ...['#', 'layer', 'op', 'input scale / zp', 'output scale / zp'].map((t) => h('th', { text: t })),
        withSqnr ? h('th', { class: 'mv-sqnr-head', title: 'The layer\'s output, dequantized (dq), against the float model\'s activation at the same point (f), for the current input: 10·log₁₀(Σf² / Σ(f − dq)²)' }, 'SQNR int8 vs float') : null,
        ...['weights', 'weight scale min … max', 'explorer'].map((t) => h('th', { text: t })))),
      h('tbody', {}, ...state.layers.map((info) => {
        const { layer, input, output, weight } = info;
        const wText = weight
          ? `${weight.dtype} [${weight.dims.join('×')}] ${weight.perChannel ? 'per-channel' : 'per-tensor'} ${weight.symmetric ? 'symmetric' : 'affine'}, ints ${weight.intMin}…${weight.intMax}`
          : '–';
        const range = weight ? (weight.perChannel ? `${fmtScale(weight.scaleMin)} … ${fmtScale(weight.scaleMax)}` : fmtScale(weight.scaleMin)) : '–';
        const fused = layer.attributes.qwasm_output_range;
        const op = fused ? `${layer.opType} + Clip [${fused[0]}, ${fused[1]}]` : layer.opType;
        return h('tr', { 'data-layer': String(info.index) },
          h('td', { class: 'num', text: String(info.index) }),
          h('td', { class: 'mv-lname' }, h('code', { text: layer.name || layer.outputs[0] })),
          h('td', { class: 'mv-op', text: op, title: layer.domain || 'ai.onnx' }),
          h('td', { class: 'num', text: layer.opType === 'QuantizeLinear' ? 'float' : fmtQ(input) }),
          h('td', { class: 'num', text: layer.opType === 'DequantizeLinear' ? 'float' : fmtQ(output) }),
          withSqnr ? h('td', { class: 'num mv-layer-sqnr', 'data-tensor': layer.outputs[0], text: '…' }) : null,
          h('td', { class: 'mv-w', text: wText }),
          h('td', { class: 'num', text: range }),
          h('td', { class: 'mv-actions' },
            weight ? h('button', { type: 'button', class: 'mv-send-weights', title: 'Show the dequantized weights in the explorer', onclick: () => sendWeights(info), text: 'weights' }) : null,
            h('button', { type: 'button', class: 'mv-send-output', title: 'Show this layer\'s output for the current input (dequantized) in the explorer', onclick: () => sendOutput(info), text: 'output', disabled: true }),
            LINEAR_OPS.has(layer.opType) && weight ? h('button', { type: 'button', class: 'mv-explain-this', title: 'Explain one of its outputs below', onclick: () => explainLayer(info.index), text: 'explain' }) : null));
      })));
    layerNote.textContent = 'Scale / zp: the scale and zero point of the layer\'s (first) input and its output, real = scale · (q − zp). '
      + (state.isDefault
        ? 'SQNR int8 vs float: the layer\'s output for the current input, dequantized (dq), against the float model\'s activation at the same point (f), 10·log₁₀(Σf² / Σ(f − dq)²). '
          + 'The float export returns these activations next to its logits, named like the int8 tensors (a fused Conv + BN + ReLU is compared after the float ReLU); each value carries the error of every layer before it, and fc\'s (and dequant\'s) is the logits\' SQNR above. '
          + 'skip\'s add before its ReLU has no float tensor of its own (–). '
        : 'No float reference for this model: SQNR against float is shown for the bundled digits model only. ')
      + '"weights" and "output" open the dequantized tensor in the quantization explorer; outputs are those of the current input.';
  }

  /** Fills the layer table's SQNR column from state.result.layerSqnr (or says why it is empty). */
  function renderLayerSqnr() {
    const values = state.result?.layerSqnr;
    const status = state.result?.float ? 'ready' : state.float.status === 'failed' ? 'failed' : 'loading';
    for (const td of layerTable.querySelectorAll('.mv-layer-sqnr')) {
      const index = Number(td.closest('tr').dataset.layer);
      const v = values?.[index] ?? null;
      const tensor = td.dataset.tensor;
      td.dataset.sqnr = v === null ? '' : String(v);
      if (status !== 'ready') {
        td.textContent = status === 'failed' ? '–' : '…';
        td.title = status === 'failed' ? 'The float reference is unavailable (see above).' : 'Waiting for the float reference.';
      } else if (v === null) {
        td.textContent = '–';
        td.title = `The float model has no activation for "${tensor}".`;
      } else {
        td.textContent = Number.isFinite(v) ? `${v.toFixed(1)} dB` : '∞ dB';
        td.title = `"${tensor}": SQNR ${v} dB against the float activation of the same name`;
      }
    }
  }

  function renderLayerButtons() {
    for (const b of layerTable.querySelectorAll('.mv-send-output')) b.disabled = !state.result;
  }

  function sendWeights(info) {
    context.sendToExplorer(`${state.name} · ${info.layer.name} weights`, dequantizeWeight(info.weight), info.weight.dims.slice());
    window.scrollTo(0, 0);
  }

  function sendOutput(info) {
    const name = info.layer.outputs[0];
    const t = state.result?.intermediates[name];
    if (!t) return;
    const values = dequantizeValue(t, t.dtype === 'float32' ? null : info.output);
    context.sendToExplorer(`${state.name} · ${info.layer.name} output`, values, t.dims.slice());
    window.scrollTo(0, 0);
  }

  // ---- explainer ---------------------------------------------------------------------------------
  function explainLayer(index) {
    state.explain = { layer: index, element: -1 };
    renderExplainer();
    explainer.scrollIntoView({ behavior: 'smooth', block: 'start' });
  }

  function renderExplainer() {
    const candidates = state.layers.filter((l) => LINEAR_OPS.has(l.layer.opType) && l.weight && l.input && l.output);
    if (!state.result || candidates.length === 0) {
      explainer.replaceChildren(h('p', { class: 'mv-note', text: candidates.length ? 'Run the model first.' : 'This model has no QLinearConv, QGemm or QLinearMatMul layer with constant weights to take apart.' }));
      return;
    }
    let info = candidates.find((l) => l.index === state.explain.layer);
    if (!info) info = candidates[candidates.length - 1];
    const x = state.result.intermediates[info.layer.inputs[0]];
    const y = state.result.intermediates[info.layer.outputs[0]];
    if (!x || !y) {
      explainer.replaceChildren(h('p', { class: 'mv-note', text: `The input of ${info.layer.name} is not an intermediate of the run.` }));
      return;
    }
    let element = state.explain.element;
    if (!(element >= 0 && element < y.data.length)) {
      // default: the layer's largest output (for the classifier: the predicted class)
      element = 0;
      for (let i = 1; i < y.data.length; i++) if (Number(y.data[i]) > Number(y.data[element])) element = i;
    }
    state.explain = { layer: info.index, element };
    const e = explainElement(info, x, y, element, state.model.semantics);

    const layerSelect = h('select', { class: 'mv-ex-layer', 'aria-label': 'layer', onchange: (ev) => { state.explain = { layer: Number(ev.target.value), element: -1 }; renderExplainer(); } },
      ...candidates.map((l) => h('option', { value: String(l.index), selected: l.index === info.index, text: `${l.layer.name} (${l.layer.opType})` })));
    const coordInputs = y.dims.map((d, k) => h('input', { type: 'number', min: 0, max: d - 1, value: String(e ? e.coords[k] : 0), class: 'mv-ex-coord', 'aria-label': `index ${k}` }));
    const go = () => {
      let flat = 0;
      y.dims.forEach((d, k) => { flat = flat * d + Math.min(d - 1, Math.max(0, Math.trunc(Number(coordInputs[k].value) || 0))); });
      state.explain.element = flat;
      renderExplainer();
    };
    for (const c of coordInputs) c.addEventListener('change', go);
    const randomButton = h('button', { type: 'button', text: 'random element', onclick: () => { state.explain.element = Math.floor(Math.random() * y.data.length); renderExplainer(); } });
    const controls = h('div', { class: 'mv-ex-controls' },
      h('label', {}, 'layer ', layerSelect),
      h('label', {}, `output element [${y.dims.join(', ')}] `, h('span', { class: 'mv-ex-coords' }, ...coordInputs)),
      randomButton);
    if (!e) {
      explainer.replaceChildren(controls, h('p', { class: 'mv-note', text: 'This layer\'s weights have batch dimensions; the explainer takes 2-D ones only.' }));
      return;
    }
    explainer.replaceChildren(controls, renderSteps(e, info, x));
  }

  function renderSteps(e, info, x) {
    const xd = x.dtype;
    const wd = info.weight.dtype;
    const outD = info.output.dtype;
    const qnn = e.form === 'qnnpack';
    const shown = 12;
    const terms = h('table', { class: 'mv-terms' },
      h('thead', {}, h('tr', {}, ...['where', 'x', 'w', '(x − zₓ)(w − z_w)'].map((t) => h('th', { text: t })))),
      h('tbody', {}, ...e.terms.slice(0, shown).map((t) => h('tr', {},
        h('td', { text: t.where }), h('td', { class: 'num', text: String(t.x) }), h('td', { class: 'num', text: String(t.w) }), h('td', { class: 'num', text: String(t.product) })))));
    const more = e.terms.length > shown ? h('p', { class: 'mv-note', text: `… and ${e.terms.length - shown} more terms (${e.terms.length} in all; ${e.terms.filter((t) => t.product !== 0).length} non-zero).` }) : null;
    const step = (n, title, formula, value, note) => h('li', { class: 'mv-step' },
      h('div', { class: 'mv-step-title' }, h('span', { class: 'mv-step-n', text: String(n) }), title),
      h('div', { class: 'mv-step-body' }, h('code', { class: 'mv-formula' }, formula), value !== null ? h('span', { class: 'mv-eq' }, ' = ', h('strong', { class: 'num', text: String(value) })) : null),
      note ? h('div', { class: 'mv-step-note', text: note }) : null);
    const multForm = qnn ? `float32(float32(s_w · sₓ) · float32(1 / s_y))` : `float32(float32(sₓ · s_w) / s_y)`;
    const fixedSame = e.fixedResult === e.result;
    return h('div', { class: 'mv-ex-body' },
      h('div', { class: 'mv-ex-left' },
        h('p', {}, `Output `, h('code', { text: `${info.layer.outputs[0]}[${e.coords.join(', ')}]` }), ` of `, h('code', { text: info.layer.name }),
          ` (${e.opType}, output channel ${e.channel}). Inputs: x = ${xd} with sₓ = ${e.xScale.toPrecision(8)}, zₓ = ${e.xZero}; weights w = ${wd} with s_w = ${e.wScale.toPrecision(8)}, z_w = ${e.wZero}; output ${outD} with s_y = ${e.yScale.toPrecision(8)}, z_y = ${e.yZero}.`),
        terms, more),
      h('ol', { class: 'mv-steps' },
        step(1, 'int32 accumulator', `acc = Σ (x − ${e.xZero})·(w − ${e.wZero})`, e.acc, `${e.terms.length} products of integers, summed exactly in int32 (padding reads zₓ, so it adds 0).`),
        step(2, 'bias', `acc + b = ${e.acc} + ${e.bias}`, e.sum, e.biasDtype
          ? `b is the ${e.biasDtype} bias stored in the file, at scale sₓ·s_w${qnn ? ' (PyTorch rounded its float bias to int32 with that scale; qnnpack adds it in int32)' : ' (ONNX QLinearConv / QGemm: int32 bias given)'}.`
          : 'This layer has no bias.'),
        step(3, 'multiplier M = sₓ·s_w / s_y, in float32 as the kernel forms it', multForm, e.multiplier.toPrecision(9),
          `exactly ${e.exact.toPrecision(12)} in float64. Fixed-point form (gemmlowp / TFLite): M0 = ${e.m0} (a Q31 integer in [2³⁰, 2³¹)), ${e.left ? `left shift ${e.left}: M ≈ M0 · 2⁻³¹ · 2^${e.left}` : `shift = ${e.right}: M ≈ M0 · 2⁻³¹ · 2^−${e.right}`} = ${(e.m0 * 2 ** (e.shift - 31)).toPrecision(12)}.`),
        step(4, 'scale', `float32(${e.sum}) · ${e.multiplier.toPrecision(9)}`, e.scaled.toPrecision(9), 'one float32 multiply (the int32 sum converted to float32 first).'),
        step(5, 'round half to even', `nearbyint(${e.scaled.toPrecision(9)})`, e.rounded, Math.abs(e.scaled - Math.trunc(e.scaled)) === 0.5 ? 'a tie: rounded to the even neighbour.' : null),
        step(6, 'add the output zero point', `${e.rounded} + ${e.yZero}`, e.shifted, null),
        step(7, `clamp to [${e.qmin}, ${e.qmax}]`, `clamp(${e.shifted})`, e.result,
          `${e.fused ? `${outD}'s range narrowed by the Clip (ReLU / ReLU6) the loader fused into this layer, [${e.fused[0]}, ${e.fused[1]}]` : `${outD}'s range`}${e.result !== e.shifted ? ': saturated.' : '.'}`),
        h('li', { class: `mv-step mv-check ${e.matches ? 'ok' : 'bad'}`, 'data-match': String(e.matches) },
          h('div', { class: 'mv-step-title' }, h('span', { class: 'mv-step-n', text: e.matches ? '✓' : '✗' }), 'the kernel produced'),
          h('div', { class: 'mv-step-body' }, h('strong', { class: 'num', text: String(e.kernel) }),
            e.matches ? ` — equal to the step-by-step result (real value s_y·(q − z_y) = ${e.real.toPrecision(6)}).` : ` — differs from ${e.result}.`)),
        h('li', { class: 'mv-step mv-fixed' },
          h('div', { class: 'mv-step-title' }, h('span', { class: 'mv-step-n', text: '∗' }), 'integer only, for comparison (requantization mode \'fixedpoint\')'),
          h('div', { class: 'mv-step-body' }, h('code', { class: 'mv-formula', text: `RoundingDivideByPOT(SRDHM(${e.sum}${e.left ? ` · 2^${e.left}` : ''}, ${e.m0}), ${e.right}) = ${e.fixedScaled}; + ${e.yZero}, clamp` }),
            h('span', { class: 'mv-eq' }, ' = ', h('strong', { class: 'num', text: String(e.fixedResult) }))),
          h('div', { class: 'mv-step-note', text: fixedSame ? 'the same integer here. This model runs the float32 rule above (' + (qnn ? 'PyTorch qnnpack' : 'ONNX') + '), which can differ from the fixed-point one by a step on rare values.' : `differs by ${e.fixedResult - e.result}: the model follows ${qnn ? 'PyTorch qnnpack' : 'ONNX'}'s float32 rule, not the fixed-point one.` }))));
  }

  // ---- float reference ---------------------------------------------------------------------------
  /** Imports onnxruntime-web and opens the float model, once, the first time the view is shown. */
  function startFloat() {
    if (state.float.status !== 'idle') return;
    state.float = { status: 'loading', ref: null, error: '' };
    loadFloatReference(DEFAULT.floatModel).then((ref) => {
      state.float = { status: 'ready', ref, error: '' };
      if (state.isDefault) schedule();
    }, (error) => {
      state.float = { status: 'failed', ref: null, error: `onnxruntime-web could not be loaded (${describeError(error)})` };
      if (state.result) showFloat(state.result.probs.indexOf(Math.max(...state.result.probs)));
      renderLayerSqnr();
    });
  }
  if (root.classList.contains('active')) startFloat();
  else {
    const watch = new MutationObserver(() => {
      if (!root.classList.contains('active')) return;
      watch.disconnect();
      startFloat();
    });
    watch.observe(root, { attributes: true, attributeFilter: ['class'] });
  }

  // ---- start -------------------------------------------------------------------------------------
  paintDigit(preview, state.image);
  try {
    const response = await fetch(DEFAULT.samples);
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${DEFAULT.samples}`);
    state.samples = await response.json();
  } catch (error) {
    inputNote.textContent = `The test images could not be loaded: ${describeError(error)}`;
  }
  renderThumbs();
  try {
    if (state.samples?.test_images?.length) {
      state.sample = 0;
      state.image = Float32Array.from(state.samples.test_images[0].image);
      paintDigit(preview, state.image);
      thumbs.children[0]?.classList.add('selected');
    }
    await loadDefault();
  } catch (error) {
    loadError.hidden = false;
    loadError.textContent = `The digits model could not be loaded: ${describeError(error)}`;
  }
  root.dataset.ready = 'true';
  /** For tests and the console: every layer's output tensor for the current input, int8 and float, and its SQNR. */
  window.qwasmModelView = {
    snapshot() {
      const r = state.result;
      return {
        source: prediction.dataset.source ?? '',
        model: state.name,
        layers: state.layers.map((info, i) => {
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
  };
}
