// The model view's prediction: runs the current model on the current image in the model worker (runs asked for
// while one is in flight coalesce into one more), shows the class, the probabilities and the latency, and for the
// bundled digits model the float reference: its float export run by onnxruntime-web, loaded only when asked for
// (its download size on the button), with the float prediction, the agreement, the SQNR of the int8 logits
// against the float ones and, for test images, ORT's float logits against PyTorch's.
import { h } from './dom.js';
import { argmax, floatReferenceManifest, loadFloatReference, maxAbsDiff, runFloat } from './model-float.js';
import { dequantizeValue, extent, softmax } from './model-analysis.js';
import { describeError, isBlank } from './model-state.js';
import { sqnrDb } from './qwasm/js/reference.js';
import { describeLatency } from './timing.js';

const FLOAT_MODEL = 'models/digits-float.onnx';
/** |ORT float logits − PyTorch float logits| below this counts as agreement (float kernels differ in the last bits). */
const FLOAT_TOLERANCE = 1e-4;
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;

/**
 * Builds the prediction panel. Returns { panel, schedule(), idle() }: schedule asks for a run (resolving when it is
 * done), idle resolves when no run is in flight.
 */
export function mountPrediction(state, root) {
  const prediction = h('div', { class: 'mv-prediction' });
  const int8Title = h('div', { class: 'mv-pred-title' });
  const floatPrediction = h('div', { class: 'mv-float-prediction' });
  const agreement = h('div', { class: 'mv-agreement' });
  const legend = h('div', { class: 'mv-legend' });
  const bars = h('div', { class: 'mv-bars' });
  const runInfo = h('p', { class: 'mv-runinfo' });
  const floatInfo = h('div', { class: 'mv-float', 'data-status': 'off' });
  const reference = h('p', { class: 'mv-reference' });
  const runError = h('p', { class: 'error mv-run-error', role: 'alert', hidden: true });
  const panel = h('section', { class: 'panel mv-output', 'aria-live': 'polite' },
    h('h2', { text: 'Prediction' }),
    h('div', { class: 'mv-preds' },
      h('div', { class: 'mv-pred mv-pred-int8' }, int8Title, prediction),
      h('div', { class: 'mv-pred mv-pred-float' }, h('div', { class: 'mv-pred-title', text: 'float · onnxruntime-web' }), floatPrediction),
      agreement),
    legend, bars, runInfo, floatInfo, reference, runError);

  // ---- running -----------------------------------------------------------------------------------
  /** The real values of the model's first output (dequantized when it ends in integers). */
  function logitsOf(outputs) {
    const name = state.model.outputs[0].name;
    const t = outputs[name];
    const producer = state.model.layers.find((l) => l.layer.outputs.includes(name));
    return dequantizeValue(t, t.dtype === 'float32' ? null : producer?.output);
  }

  /** Per layer: the SQNR in dB of its dequantized output against the float activation of the same name, or null. */
  function layerSqnrs(intermediates, activations) {
    return state.model.layers.map((info) => {
      const name = info.layer.outputs[0];
      const f = activations?.[name];
      const t = intermediates[name];
      if (!f || !t || f.data.length !== t.data.length) return null;
      return sqnrDb(f.data, dequantizeValue(t, t.dtype === 'float32' ? null : info.output));
    });
  }

  let running = null;
  let queued = false;
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
    const [image, sample] = [state.image, state.sample];
    try {
      const run = await state.worker.call('run', { id: model.id, image });
      if (model !== state.model) return; // replaced meanwhile
      const logits = logitsOf(run.outputs);
      let float = null;
      if (model.isDefault && state.float.status === 'ready') {
        try {
          const f = await runFloat(state.float.ref, image);
          float = { ...f, probs: softmax(f.logits) };
        } catch (error) {
          state.float = { ...state.float, status: 'failed', ref: null, error: `onnxruntime-web could not run the float model: ${describeError(error)}` };
        }
        if (model !== state.model) return;
      }
      const probs = softmax(logits);
      state.result = { ...run, logits, probs, best: argmax(probs), float, image, sample, layerSqnr: layerSqnrs(run.intermediates, float?.activations) };
      runError.hidden = true;
      show();
      state.emit('result');
    } catch (error) {
      if (model !== state.model) return; // the error of a model that was replaced meanwhile
      runError.hidden = false;
      runError.textContent = `The model could not run on this input: ${describeError(error)}`;
    }
  }

  // ---- prediction --------------------------------------------------------------------------------
  function show() {
    const { probs, logits, latency, best } = state.result;
    const blank = isBlank(state);
    const kind = state.model.quantized ? 'int8' : 'float';
    int8Title.textContent = `${kind} · qwasm`;
    prediction.dataset.class = String(best);
    prediction.dataset.logits = JSON.stringify(Array.from(logits));
    prediction.dataset.source = state.sample === null ? 'draw' : `sample:${state.sample}`;
    prediction.dataset.model = state.model.name;
    prediction.dataset.kind = kind;
    prediction.replaceChildren(
      h('span', { class: 'mv-class', text: String(best) }),
      h('span', { class: 'mv-prob', text: `${(probs[best] * 100).toFixed(1)} %` }),
      ...(blank ? [h('span', { class: 'mv-muted', text: '(blank input: draw something)' })] : []));
    const float = state.result.float;
    const fProbs = float?.probs;
    const fBest = float ? argmax(float.logits) : -1;
    const order = probs.map((p, i) => i);
    const shown = order.length > 10 ? order.sort((a, b) => probs[b] - probs[a]).slice(0, 10) : order;
    const pct = (p) => `${(p * 100).toFixed(1)}%`;
    bars.classList.toggle('paired', !!float);
    bars.replaceChildren(...shown.map((i) => h('div', {
      class: `mv-bar${i === best ? ' best' : ''}${i === fBest ? ' float-best' : ''}`,
      title: `class ${i}: ${kind} logit ${logits[i]}, p = ${probs[i]}${float ? `; float logit ${float.logits[i]}, p = ${fProbs[i]}` : ''}`,
    },
    h('span', { class: 'mv-bar-label', text: String(i) }),
    h('span', { class: 'mv-bar-tracks' },
      h('span', { class: 'mv-bar-track' }, h('span', { class: 'mv-bar-fill', style: `width:${(probs[i] * 100).toFixed(2)}%` })),
      float ? h('span', { class: 'mv-bar-track mv-bar-track-float' }, h('span', { class: 'mv-bar-fill', style: `width:${(fProbs[i] * 100).toFixed(2)}%` })) : null),
    h('span', { class: 'mv-bar-value' }, pct(probs[i]), float ? h('span', { class: 'mv-bar-value-float', text: pct(fProbs[i]) }) : null))));
    legend.replaceChildren(...(float
      ? [h('span', { class: 'mv-key mv-key-int8' }), 'int8 ', h('span', { class: 'mv-key mv-key-float' }), 'float · probabilities: softmax of each model\'s logits (int8: dequantized)']
      : [`probabilities: softmax of the ${state.model.quantized ? 'dequantized int8' : 'float'} logits${probs.length > 10 ? ` (the 10 most likely of ${probs.length} classes)` : ''}`]));
    const q = describeLatency(latency);
    runInfo.dataset.runs = String(latency.runs);
    runInfo.dataset.totalMs = String(latency.totalMs);
    runInfo.dataset.stepMs = String(latency.stepMs);
    runInfo.dataset.ms = String(latency.ms);
    runInfo.replaceChildren(
      `${kind}: `, h('strong', { class: 'mv-latency-int8', text: q.value }),
      ` per run (qwasm ${state.backend.simd ? 'SIMD128' : 'scalar'} build in a worker, intermediates not kept; ${q.detail})`,
      ...(float ? [h('br'), 'float: ', h('strong', { class: 'mv-latency-float', text: describeLatency(float.latency).value }),
        ` per run (onnxruntime-web${state.float.ref.version ? ` ${state.float.ref.version}` : ''} wasm backend, 1 thread; ${describeLatency(float.latency).detail})`] : []));
    showFloat();
    showReference();
  }

  /** The float side: a button that loads it, its status, or its prediction, agreement and SQNR. */
  function showFloat() {
    const float = state.result?.float;
    const el = floatInfo;
    for (const k of Object.keys(el.dataset)) delete el.dataset[k];
    el.dataset.source = prediction.dataset.source ?? '';
    el.dataset.model = state.model?.name ?? '';
    agreement.replaceChildren();
    agreement.className = 'mv-agreement';
    const placeholder = (text) => floatPrediction.replaceChildren(h('span', { class: 'mv-float-none', text }));
    if (!state.model?.isDefault) {
      el.dataset.status = 'none';
      placeholder('no float reference');
      el.replaceChildren(h('p', { class: 'mv-note', text: `No float reference for ${state.model?.name ?? 'this model'}: only the bundled digits model ships its float export (models/digits-float.onnx).` }));
      return;
    }
    const f = state.float;
    if (f.status === 'off') {
      el.dataset.status = 'off';
      placeholder('not loaded');
      const size = f.manifest ? `${mb(f.manifest.bytes)} download: onnxruntime-web ${f.manifest.version}, mostly its .wasm` : 'onnxruntime-web, about 15 MB';
      el.replaceChildren(
        h('button', { type: 'button', class: 'mv-float-load', onclick: startFloat, 'data-bytes': f.manifest ? String(f.manifest.bytes) : '' }, `Compare with the float model (${size})`),
        h('p', { class: 'mv-note', text: 'The float export of the same trained weights (models/digits-float.onnx, 64 KB), run by a real float engine; it is loaded only when you ask.' }));
      return;
    }
    if (!float) {
      el.dataset.status = f.status === 'failed' ? 'failed' : 'loading';
      placeholder(f.status === 'failed' ? 'unavailable' : 'loading…');
      el.replaceChildren(f.status === 'failed'
        ? h('p', { class: 'mv-note mv-float-error', text: `Float reference unavailable: ${f.error}. The int8 model is unaffected.` })
        : h('p', { class: 'mv-note', text: `Loading the float reference (onnxruntime-web${f.manifest ? `, ${mb(f.manifest.bytes)}` : ''})…` }));
      return;
    }
    const best = state.result.best;
    const fBest = argmax(float.logits);
    const sqnr = sqnrDb(float.logits, state.result.logits);
    const maxLogit = maxAbsDiff(float.logits, state.result.logits);
    Object.assign(el.dataset, { status: 'ready', class: String(fBest), logits: JSON.stringify(Array.from(float.logits)), sqnr: String(sqnr), agree: String(fBest === best) });
    floatPrediction.replaceChildren(
      h('span', { class: 'mv-class', text: String(fBest) }),
      h('span', { class: 'mv-prob', text: `${(float.probs[fBest] * 100).toFixed(1)} %` }));
    if (isBlank(state)) {
      agreement.replaceChildren('blank input: no verdict');
    } else {
      agreement.classList.add(fBest === best ? 'ok' : 'bad');
      agreement.replaceChildren(fBest === best ? '✓ same class' : '✗ classes differ');
    }
    const [lo, hi] = extent(float.logits);
    const rows = [
      ['SQNR int8 vs float', h('span', { title: 'f: the float logits, q: the dequantized int8 logits' },
        h('strong', { class: 'mv-sqnr', text: Number.isFinite(sqnr) ? `${sqnr.toFixed(1)} dB` : '∞ dB' }), ' = 10·log₁₀(Σf² / Σ(f − q)²)')],
      ['max |float − int8|', h('span', {}, h('strong', { class: 'num', text: maxLogit.toPrecision(3) }),
        ` (float logits span ${lo.toFixed(2)} … ${hi.toFixed(2)})`)],
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

  function showReference() {
    const s = state.model.isDefault && state.sample !== null ? state.samples?.test_images[state.sample] : null;
    if (!s) {
      reference.dataset.bitexact = '';
      reference.replaceChildren(state.model.isDefault ? 'A drawing: PyTorch\'s own results (int8 and float) are stored for the test images only.' : '');
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
      ', PyTorch (qnnpack int8) predicted ', h('strong', { text: String(s.prediction) }),
      state.result.best === s.prediction ? '' : ` (this page: ${state.result.best})`, '. ',
      exact ? h('span', { class: 'mv-ok', text: '✓ logits bit-exact with PyTorch' }) : h('span', { class: 'mv-bad', text: '✗ logits differ from PyTorch' }));
  }

  // ---- float reference ---------------------------------------------------------------------------
  /** Imports onnxruntime-web and opens the float model: only when the user asks (the button). */
  function startFloat() {
    if (state.float.status === 'loading' || state.float.status === 'ready') return;
    state.float = { ...state.float, status: 'loading', error: '' };
    state.emit('float');
    showFloat();
    loadFloatReference(FLOAT_MODEL).then((ref) => {
      state.float = { ...state.float, status: 'ready', ref };
      state.emit('float');
      if (state.model?.isDefault) schedule();
    }, (error) => {
      state.float = { ...state.float, status: 'failed', ref: null, error: `onnxruntime-web could not be loaded (${describeError(error)})` };
      state.emit('float');
      showFloat();
    });
  }
  floatReferenceManifest().then((manifest) => {
    state.float = { ...state.float, manifest };
    if (state.float.status === 'off') showFloat();
  }, () => {}); // without the manifest the button names an approximate size

  state.on('input', schedule);
  state.on('model', () => {
    runError.hidden = true;
    showFloat();
  });
  const idle = () => running ?? Promise.resolve();
  state.on('model', schedule);
  return { panel, schedule, idle, startFloat };
}
