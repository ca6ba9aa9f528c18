// The model view's panel for text encoders (a model whose inputs are token ids, e.g. a transformers.js "q8" BERT:
// onnxruntime's quantize_dynamic output): token ids in, the encoder run in qwasm with its latency and per-operator
// time, every dynamic int8 product with its weight qparams and the activation qparams chosen for this input, and
// one output element of such a product recomputed in integers (model-transformer-analysis.js) and compared with
// the kernel's. The model view (model-view.js) shows this panel instead of the image panels for such a model.
import { h } from './dom.js';
import { extent } from './model-analysis.js';
import { activationQParams, dynamicLayers, explainDynamic, tokenFeeds, vocabularySize } from './model-transformer-analysis.js';

const fmt = (v) => (v === null || v === undefined ? '–' : Number(v).toPrecision(6));
const fmtMs = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
const describeError = (e) => `${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e?.message ?? e}`;

/** The panel: show(model, name) takes the model over (and disposes it later), hide() gives the page back. */
export function createTransformerPanel() {
  let model = null;
  let layers = [];
  let result = null;
  let explained = null; // { layer index into layers, row, col }
  const ids = h('input', { type: 'text', class: 'tf-ids', 'aria-label': 'Token ids', size: 60 });
  const runButton = h('button', { type: 'button', class: 'tf-run', text: 'Run' });
  const summary = h('div', { class: 'tf-summary', 'aria-live': 'polite' });
  const error = h('p', { class: 'error tf-error', role: 'alert', hidden: true });
  const table = h('table', { class: 'tf-layers' });
  const explainer = h('div', { class: 'tf-explainer' });
  const root = h('div', { class: 'tf', hidden: true },
    h('section', { class: 'panel tf-input' },
      h('h2', { text: 'Token ids' }),
      h('p', { class: 'mv-note', text: 'An encoder takes token ids; this page has no tokenizer, so type the ids (space or comma separated). Attention mask inputs get ones, token type inputs zeros.' }),
      h('div', { class: 'tf-input-row' }, ids, runButton),
      summary, error),
    h('section', { class: 'panel tf-layers-panel' },
      h('h2', { text: 'Dynamic int8 products' }),
      h('p', { class: 'mv-note', text: 'Each product quantizes its float input to uint8 at run time (its scale and zero point depend on this input), multiplies it by int8 weights quantized once, and scales the int32 sums back to float. Pick a row to take one output apart.' }),
      h('div', { class: 'mv-table-wrap' }, table)),
    h('section', { class: 'panel tf-explain-panel' },
      h('h2', { text: 'One output of a dynamic int8 product, in integers' }),
      explainer));

  const parseIds = () => {
    const values = ids.value.split(/[\s,]+/).filter(Boolean).map(Number);
    const vocab = vocabularySize(model);
    const bad = values.find((v) => !Number.isInteger(v) || v < 0 || (vocab !== null && v >= vocab));
    if (values.length === 0 || bad !== undefined) throw new RangeError(`token ids must be integers in [0, ${vocab ?? '∞'}); got ${bad ?? 'nothing'}`);
    return values;
  };

  async function run() {
    if (!model) return;
    try {
      const feeds = tokenFeeds(model, parseIds());
      await model.run(feeds); // the first run with these shapes plans them; time the next ones
      const times = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await model.run(feeds);
        times.push(performance.now() - t0);
      }
      const { profile } = await model.run(feeds, { profile: true });
      const out = await model.run(feeds, { intermediates: true });
      result = { out, profile, latency: extent(times)[0] };
      error.hidden = true;
      renderSummary();
      renderTable();
      renderExplainer();
    } catch (e) {
      error.hidden = false;
      error.textContent = `Could not run: ${describeError(e)}`;
    }
  }

  function renderSummary() {
    const byOp = new Map();
    for (const p of result.profile) byOp.set(p.opType, (byOp.get(p.opType) ?? 0) + p.ms);
    const top = [...byOp].sort((a, b) => b[1] - a[1]).slice(0, 5);
    const outputs = model.outputs.map((o) => {
      const t = result.out[o.name];
      return `${o.name} [${t.dims.join('×')}]: ${Array.from(t.data.slice(0, 4), (v) => fmt(v)).join(', ')}…`;
    });
    summary.dataset.latency = String(result.latency);
    summary.replaceChildren(
      h('p', { class: 'tf-latency', text: `qwasm: ${fmtMs(result.latency)} per run (best of 3, after the first run planned these shapes)` }),
      h('p', { class: 'mv-note', text: `time by operator: ${top.map(([op, ms]) => `${op} ${fmtMs(ms)}`).join(' · ')}` }),
      h('ul', { class: 'tf-outputs' }, ...outputs.map((t) => h('li', { text: t }))));
  }

  function renderTable() {
    table.replaceChildren(
      h('thead', {}, h('tr', {}, ...['#', 'layer', 'op', 'weight [K×N]', 'weight scale / zp', 'activation scale / zp (this input)', ''].map((t) => h('th', { text: t })))),
      h('tbody', {}, ...layers.map((info, i) => {
        const q = activationQParams(model, info, result.out.intermediates);
        const w = info.weight;
        const [lo, hi] = extent(w.scales);
        const scales = w.scales.length > 1 ? `${fmt(lo)} … ${fmt(hi)} (${w.scales.length})` : fmt(w.scales[0]);
        const button = h('button', { type: 'button', class: 'tf-explain', text: 'explain', onclick: () => { explained = { layer: i, row: 0, col: 0 }; renderExplainer(); } });
        return h('tr', { 'data-layer': info.layer.name },
          h('td', { text: String(info.index) }), h('td', {}, h('code', { text: info.layer.name })), h('td', { text: info.layer.opType }),
          h('td', { text: w.dims.join('×') }), h('td', { text: `${scales} / ${w.zeroPoints.length > 1 ? 'per column' : w.zeroPoints[0]}` }),
          h('td', { class: 'tf-act', text: `${fmt(q.scale)} / ${q.zeroPoint}` }), h('td', {}, button));
      })));
  }

  function renderExplainer() {
    if (!result || !explained) {
      explainer.replaceChildren(h('p', { class: 'mv-note', text: 'Pick a product in the table.' }));
      return;
    }
    const info = layers[explained.layer];
    let e;
    try {
      e = explainDynamic(model, info, result.out.intermediates, explained.row, explained.col);
    } catch (err) {
      explainer.replaceChildren(h('p', { class: 'error', text: describeError(err) }));
      return;
    }
    const number = (label, value, max, onchange) => h('label', { class: 'tf-pick' }, `${label} `,
      h('input', { type: 'number', min: 0, max, value, onchange: (ev) => onchange(Math.min(max, Math.max(0, Math.trunc(Number(ev.target.value)) || 0))) }));
    const q = e.qparams;
    const shown = e.terms.slice(0, 6);
    explainer.dataset.equal = String(e.equal);
    explainer.replaceChildren(
      h('p', {}, h('code', { text: info.layer.name }), ` (${info.layer.opType}): output `,
        number('row', explained.row, e.rows - 1, (v) => { explained.row = v; renderExplainer(); }),
        number('column', explained.col, e.n - 1, (v) => { explained.col = v; renderExplainer(); })),
      h('ol', { class: 'tf-steps' },
        h('li', {}, info.layer.opType === 'DynamicQuantizeMatMul'
          ? `Activation qparams for this input (${q.source}): range [${fmt(q.min)}, ${fmt(q.max)}] widened to include 0, scale sₐ = (max − min) / 255 = ${fmt(q.scale)}, zero point zₐ = round(0 − min / sₐ) = ${q.zeroPoint}.`
          : `Activation qparams (${q.source}): sₐ = ${fmt(q.scale)}, zₐ = ${q.zeroPoint}.`),
        h('li', {}, `Row ${explained.row} of the activations as uint8 q = round(x / sₐ) + zₐ: ${shown.map((t) => (t.x === undefined ? t.q : `${fmt(t.x)}→${t.q}`)).join(', ')}${e.k > shown.length ? ', …' : ''} (K = ${e.k}).`),
        h('li', {}, `Column ${explained.col} of the int8 weights (zero point ${e.wZero}): ${shown.map((t) => t.w).join(', ')}${e.k > shown.length ? ', …' : ''}.`),
        h('li', {}, `Accumulator Σ (q − zₐ)(w − z_w) = ${shown.map((t) => t.product).join(' + ')}${e.k > shown.length ? ' + …' : ''} = ${e.acc} (exact, int32).`),
        h('li', {}, `Scale product sₐ · s_w = ${fmt(q.scale)} · ${fmt(e.bScale)} = ${fmt(e.scaleProduct)} (float32).`),
        h('li', {}, `Float result y = float(acc) · (sₐ · s_w)${e.bias === undefined ? '' : ` + bias ${fmt(e.bias)}`} = ${fmt(e.result)}.`)),
      h('p', { class: e.equal ? 'tf-equal' : 'error' }, e.equal
        ? `The kernel computed ${fmt(e.kernel)}: equal bit for bit.`
        : `The kernel computed ${fmt(e.kernel)}: DIFFERENT from the rule.`));
  }

  runButton.addEventListener('click', run);
  ids.addEventListener('change', run);

  return {
    root,
    get model() {
      return model;
    },
    /** Takes `m` over (the panel disposes it) and runs it on a default sequence. */
    async show(m) {
      this.hide();
      model = m;
      layers = dynamicLayers(m);
      const vocab = vocabularySize(m) ?? 100;
      ids.value = Array.from({ length: 8 }, (_, i) => (i * 37 + 1) % vocab).join(' ');
      explained = layers.length ? { layer: 0, row: 0, col: 0 } : null;
      root.hidden = false;
      await run();
    },
    /** Hides the panel and disposes its model. */
    hide() {
      model?.dispose();
      model = null;
      result = null;
      root.hidden = true;
    },
  };
}
