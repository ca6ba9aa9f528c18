// Quantization explorer: pick a tensor and quantization settings, see the scale and zero point
// qwasm's observers choose (with the formula and the numbers in it), the integers and the error.
// Every quantized number comes from qwasm (observers, chooseQParams, quantize, intRepr, dequantize);
// see explorer-compute.js. The page shell calls mount(section, context) and setTensor(label, values, dims).
import { DISTRIBUTIONS, PRESETS, parseNumbers, synthesize } from './explorer-data.js';
import { customRange, explore, gridLevels } from './explorer-compute.js';
import { drawHistogram } from './explorer-chart.js';
import { scrollable } from './dom.js';

const TABLE_ROWS = 64;
const ordinal = (n) => `${n}${[11, 12, 13].includes(n % 100) ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] ?? 'th')}`;
let view = null; // { root, els, qwasm, ... } once mounted
let pendingTensor = null; // setTensor before mount


const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
/** Shortest text that reads back as the same double (float32 values print as torch's .item() does). */
const num = (v) => (Object.is(v, -0) ? '0' : String(v));
/** A number for substitution into a formula: negatives in parentheses. */
const sub = (v) => (v < 0 ? `(${num(v)})` : num(v));
const short = (v, d = 6) => {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  return a >= 1e6 || a < 1e-4 ? v.toExponential(3) : String(Number(v.toPrecision(d)));
};

const CONTROLS_HTML = `
<form class="qx-controls panel" autocomplete="off" onsubmit="return false">
  <fieldset>
    <legend>Tensor</legend>
    <div class="qx-seg" role="radiogroup" aria-label="Source">
      <label><input type="radio" name="source" value="preset" checked> Seed</label>
      <label><input type="radio" name="source" value="synthetic"> Synthetic</label>
      <label><input type="radio" name="source" value="paste"> Paste</label>
      <label><input type="radio" name="source" value="model" disabled> Model</label>
    </div>
    <div class="qx-src" data-src="preset">
      <label>Preset <select name="preset">${Object.entries(PRESETS).map(([k, p]) => `<option value="${k}">${esc(p.label)}</option>`).join('')}</select></label>
    </div>
    <div class="qx-src" data-src="synthetic" hidden>
      <label>Distribution <select name="dist">${Object.entries(DISTRIBUTIONS).map(([k, l]) => `<option value="${k}">${esc(l)}</option>`).join('')}</select></label>
      <label>Size <span class="qx-out" data-out="size"></span><input type="range" name="sizeExp" min="3" max="17" step="0.5" value="10"></label>
      <div class="qx-row">
        <label>Seed <input type="number" name="seed" value="1" min="0" step="1"></label>
        <label>Channels <input type="number" name="channels" value="4" min="1" max="64" step="1"></label>
      </div>
    </div>
    <div class="qx-src" data-src="paste" hidden>
      <label>Numbers <textarea name="paste" rows="4" spellcheck="false" placeholder="-10, -5, 0, 5, 10">0.1, -0.42, 1.7, 2.5, -3.25, 0</textarea></label>
      <p class="qx-hint">Commas, spaces or brackets; lines of equal length make rows (channels).</p>
    </div>
    <div class="qx-src" data-src="model" hidden>
      <p class="qx-hint">From the model view: <b data-out="modelLabel">none yet</b></p>
    </div>
  </fieldset>
  <fieldset>
    <legend>Integers</legend>
    <label>dtype <select name="dtype"><option value="quint8">quint8 (unsigned, 0 … 255)</option><option value="qint8">qint8 (signed, −128 … 127)</option></select></label>
    <label>Bit width <span class="qx-out" data-out="bits"></span><input type="range" name="bits" min="2" max="8" step="1" value="8"></label>
    <label class="qx-check"><input type="checkbox" name="reduceRange"> reduce_range (one bit less)</label>
  </fieldset>
  <fieldset>
    <legend>Scheme</legend>
    <div class="qx-seg" role="radiogroup" aria-label="Scheme">
      <label><input type="radio" name="scheme" value="affine" checked> Affine</label>
      <label><input type="radio" name="scheme" value="symmetric"> Symmetric</label>
    </div>
    <div class="qx-seg" role="radiogroup" aria-label="Granularity">
      <label><input type="radio" name="granularity" value="tensor" checked> Per tensor</label>
      <label><input type="radio" name="granularity" value="channel"> Per channel (axis 0)</label>
    </div>
    <label>Observer <select name="observer">
      <option value="minmax">MinMax</option>
      <option value="moving">MovingAverageMinMax</option>
      <option value="histogram">Histogram (L2 search)</option>
      <option value="percentile">Percentile</option>
    </select></label>
    <p class="qx-na" data-out="notApplicable" role="note" hidden></p>
    <div class="qx-opt" data-for="moving" hidden>
      <div class="qx-row">
        <label>averaging_constant <input type="number" name="averagingConstant" value="0.01" min="0" max="1" step="0.01"></label>
        <label>Batches <input type="number" name="batches" value="8" min="1" max="256" step="1"></label>
      </div>
    </div>
    <div class="qx-opt" data-for="percentile" hidden>
      <label>Percentile <span class="qx-out" data-out="percentile"></span><input type="range" name="percentile" min="90" max="100" step="0.01" value="99.9"></label>
    </div>
    <label>Rounding <select name="rounding">
      <option value="torch">torch: x * (1/scale)</option>
      <option value="onnx">onnx: x / scale</option>
    </select></label>
  </fieldset>
  <p class="qx-hint qx-note" data-out="note"></p>
</form>`;

const MAIN_HTML = `
<div class="qx-main">
  <div class="error qx-error" role="alert" hidden></div>
  <div class="qx-results">
    <section class="panel qx-chart-panel">
      <div class="qx-chart-head">
        <h2>Values and the integer grid</h2>
        <span class="qx-summary" data-out="summary"></span>
      </div>
      <div class="qx-canvas-wrap"><canvas aria-label="Histogram of the values with the quantization grid"></canvas></div>
      <div class="qx-legend">
        <span><i class="sw sw-bar"></i>values</span>
        <span class="qx-few"><i class="sw sw-deq"></i>dequantized</span>
        <span><i class="sw sw-grid"></i><span data-out="gridNote">representable levels</span></span>
        <span><i class="sw sw-clip"></i>clipped: outside [(qmin − zp)·scale, (qmax − zp)·scale]</span>
        <label class="qx-ch" hidden>channel <input type="number" name="channel" value="0" min="0" step="1"></label>
      </div>
    </section>
    <section class="qx-cards">
      <div class="card"><span data-out="scaleLabel">scale</span><b class="num" data-out="scale"></b></div>
      <div class="card"><span data-out="zpLabel">zero point</span><b class="num" data-out="zeroPoint"></b></div>
      <div class="card"><span>[qmin, qmax]</span><b class="num" data-out="range"></b></div>
      <div class="card"><span>MSE</span><b class="num" data-out="mse"></b></div>
      <div class="card"><span>SQNR</span><b class="num" data-out="sqnr"></b></div>
      <div class="card"><span>max |error|</span><b class="num" data-out="maxAbs"></b></div>
    </section>
    <section class="panel qx-formula">
      <h2>How the observer chose them</h2>
      <div data-out="formula"></div>
    </section>
    <section class="panel qx-why" data-out="why"></section>
    <section class="panel">
      <h2>Per element <small data-out="tableNote"></small></h2>
      <div class="qx-table-wrap"><table class="qx-table qx-elements">
        <thead><tr><th>i</th><th class="qx-chcol">ch</th><th>x</th><th>q</th><th>dequantized</th><th>|error|</th><th>error %</th></tr></thead>
        <tbody></tbody>
      </table></div>
    </section>
    <section class="panel qx-round">
      <h2>torch vs onnx rounding <small data-out="disagreeCount"></small></h2>
      <div data-out="disagree"></div>
    </section>
  </div>
</div>`;

function readSettings(form) {
  const f = form.elements;
  const pick = (name) => form.querySelector(`input[name="${name}"]:checked`).value;
  const int = (el, lo, hi, dflt) => {
    const v = Math.round(Number(el.value));
    return Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : dflt;
  };
  const ac = Number(f.averagingConstant.value);
  return {
    source: pick('source'),
    preset: f.preset.value,
    dist: f.dist.value,
    size: Math.round(2 ** Number(f.sizeExp.value)),
    seed: int(f.seed, 0, 2 ** 31, 1),
    channels: int(f.channels, 1, 64, 1),
    paste: f.paste.value,
    dtype: f.dtype.value,
    bits: Number(f.bits.value),
    reduceRange: f.reduceRange.checked,
    scheme: pick('scheme'),
    granularity: pick('granularity'),
    observer: f.observer.value,
    averagingConstant: Number.isFinite(ac) ? Math.min(1, Math.max(0, ac)) : 0.01,
    batches: int(f.batches, 1, 256, 8),
    percentile: Number(f.percentile.value),
    rounding: f.rounding.value,
  };
}

/** The float tensor for the current source: { values, dims, label, note } or { error }. */
function currentTensor(s) {
  if (s.source === 'preset') {
    const p = PRESETS[s.preset];
    return { values: Float32Array.from(p.values), dims: [p.values.length], label: `seed tensor ${p.label}`, note: p.note(s), wants: p.wants };
  }
  if (s.source === 'synthetic') {
    const c = s.channels;
    const inner = Math.max(1, Math.ceil(s.size / c));
    const values = synthesize(s.dist, c * inner, s.seed);
    // Channels of different magnitude, as the rows of a real weight: what per-channel is for.
    if (c > 1) for (let k = 0; k < c; k++) for (let j = 0; j < inner; j++) values[k * inner + j] *= 0.25 + (1.75 * k) / (c - 1);
    return { values, dims: [c, inner], label: `${DISTRIBUTIONS[s.dist]}, seed ${s.seed}`, note: '' };
  }
  if (s.source === 'paste') {
    const r = parseNumbers(s.paste);
    return r.error ? r : { ...r, label: 'pasted numbers', note: '' };
  }
  if (!view.model) return { error: 'No tensor from the model view yet: open the Model view and send a weight or activation.' };
  return { ...view.model, note: '' };
}

function rangeText(s, qp) {
  const full = view.qwasm.DTYPES[s.dtype];
  const parts = [];
  if (s.bits < 8) {
    const r = customRange(s.dtype, s.bits);
    parts.push(`${s.bits}-bit ${s.dtype === 'qint8' ? 'signed' : 'unsigned'}: quant_min, quant_max = ${r.quantMin}, ${r.quantMax}`);
  } else parts.push(`${s.dtype}: ${full.min} … ${full.max}`);
  if (s.reduceRange) parts.push(`reduce_range halves it (floor division by 2): [${qp.quantMin}, ${qp.quantMax}]`);
  return parts.join('; ');
}

function formulaHtml(s, res, c) {
  const { qp } = res;
  const qmin = qp.quantMin;
  const qmax = qp.quantMax;
  const scale = qp.scales[c];
  const zp = qp.zeroPoints[c];
  const min = qp.min[c];
  const max = qp.max[c];
  const minNeg = Math.min(min, 0);
  const maxPos = Math.max(max, 0);
  const where = s.granularity === 'channel' ? ` for channel ${c}` : '';
  const obsName = { minmax: 'MinMaxObserver: min and max of the data', moving: `MovingAverageMinMaxObserver over ${s.batches} batches: min += ${s.averagingConstant}·(batch_min − min)`,
    histogram: 'HistogramObserver: the range its L2 search keeps (_non_linear_param_search)', percentile: `the ${s.percentile}th and ${(100 - s.percentile).toFixed(2).replace(/\.?0+$/, '')}th percentiles of the data` }[s.observer];
  const lines = [];
  lines.push(`<p class="qx-obs">Range${where}: ${esc(obsName)} → <code>min = ${num(min)}</code>, <code>max = ${num(max)}</code>.
    Integers: <code>${esc(rangeText(s, qp))}</code>.</p>`);
  if (zp < qmin || zp > qmax) {
    lines.push(`<p class="qx-warn">The zero point ${zp} is outside [${qmin}, ${qmax}]: PyTorch's HistogramObserver accepts symmetric
      quint8 with reduce_range (MinMaxObserver refuses it) and gives exactly this, so values clamp at ${qmax}. Avoid the combination.</p>`);
  }
  lines.push(`<pre class="qx-eq">min_neg = min(min, 0) = ${num(minNeg)}      max_pos = max(max, 0) = ${num(maxPos)}</pre>`);
  const epsNote = scale === Math.fround(2 ** -23) ? '   (the range is empty: scale = eps)' : '';
  if (s.scheme === 'symmetric') {
    const amax = Math.max(-minNeg, maxPos);
    const half = (qmax - qmin) / 2;
    let zpLine;
    if (s.dtype === 'qint8') zpLine = 'zero_point = 0                                    (qint8: symmetric means 0)';
    else if (s.bits < 8) zpLine = `zero_point = (qmin + qmax) // 2 = (${qmin} + ${qmax}) // 2 = ${zp}   (quint8, custom range)`;
    else zpLine = `zero_point = 128                                  (quint8: PyTorch's fixed midpoint)`;
    lines.push(`<pre class="qx-eq">amax  = max(−min_neg, max_pos) = max(${num(-minNeg)}, ${num(maxPos)}) = ${num(amax)}
scale = amax / ((qmax − qmin) / 2)
      = ${num(amax)} / ((${qmax} − ${sub(qmin)}) / 2) = ${num(amax)} / ${num(half)}
      = <b>${num(scale)}</b>${epsNote}
${zpLine.replace(String(zp), `<b>${zp}</b>`)}</pre>`);
  } else {
    const ratio = Math.fround(minNeg / scale);
    lines.push(`<pre class="qx-eq">scale = (max_pos − min_neg) / (qmax − qmin)
      = (${num(maxPos)} − ${sub(minNeg)}) / (${qmax} − ${sub(qmin)})
      = <b>${num(scale)}</b>${epsNote}
zero_point = qmin − round(min_neg / scale)
           = ${qmin} − round(${sub(short(ratio, 8))}) = <b>${zp}</b>   (round half to even, then clamped to [qmin, qmax])</pre>`);
  }
  const lv = res.levels;
  lines.push(`<p>Representable values: <code>scale · (q − zero_point)</code> for q in [${qmin}, ${qmax}]: ${lv.length} levels from
    <code>${num(lv[0])}</code> to <code>${num(lv[lv.length - 1])}</code>, one step = scale. Anything outside is clipped.</p>`);
  if (s.granularity === 'channel' && qp.scales.length > 1) {
    const n = Math.min(qp.scales.length, 16);
    const rows = [];
    for (let k = 0; k < n; k++) rows.push(`<tr${k === c ? ' class="sel"' : ''}><td>${k}</td><td>${num(qp.min[k])}</td><td>${num(qp.max[k])}</td><td>${num(qp.scales[k])}</td><td>${qp.zeroPoints[k]}</td></tr>`);
    lines.push(`<div class="qx-table-wrap"><table class="qx-table qx-ch-table"><thead><tr><th>ch</th><th>min</th><th>max</th><th>scale</th><th>zero point</th></tr></thead>
      <tbody>${rows.join('')}</tbody></table></div>${qp.scales.length > n ? `<p class="qx-hint">first ${n} of ${qp.scales.length} channels</p>` : ''}`);
  }
  return lines.join('');
}

function whyHtml(s, res) {
  if (s.scheme !== 'symmetric') {
    return `<h2>Affine: the range is [min, max] with 0 inside</h2><p>The observer stretches [min, max] to include 0 and spreads it
      over all ${res.qp.quantMax - res.qp.quantMin} steps; the zero point is the integer that lands on 0.0, so zero padding and
      ReLU's zeros stay exact. <code>scale</code> is a step size: values per integer, not integers per value. A "scale" of
      <code>qmax / max|x|</code> is upside down (its inverse), and quantizing with it sends almost everything to the zero point.</p>`;
  }
  const { quantMin: qmin, quantMax: qmax } = res.qp;
  return `<h2>Why symmetric ${s.bits === 8 && !s.reduceRange && s.dtype === 'qint8' ? 'int8 divides by 127.5' : `divides by (qmax − qmin)/2 = ${(qmax - qmin) / 2}`}</h2>
    <p>PyTorch's <code>_calculate_qparams</code> (torch/ao/quantization/observer.py) computes
    <code>scale = max(−min_neg, max_pos) / (float(quant_max − quant_min) / 2)</code>. For qint8 that is
    (127 − (−128)) / 2 = <b>127.5</b>, not 127: the ${qmax - qmin} steps between qmin and qmax are spread over
    [−amax, amax]. So +amax lands on (or, after float rounding, next to) ${(qmax - qmin) / 2}${s.dtype === 'qint8' && s.bits === 8 && !s.reduceRange ? ': a tie that rounds to the even 128 and clamps to 127' : ''},
    and −amax on or next to −${(qmax - qmin) / 2}${s.dtype === 'qint8' && s.bits === 8 && !s.reduceRange ? ', whose tie goes to the even −128' : ''}. Dividing by 127 instead (as some tutorials do) gives a slightly larger scale that leaves −128 unused.
    ${s.dtype === 'quint8' ? `On quint8 the zero point is fixed at ${s.bits < 8 ? '(qmin + qmax) // 2' : '128'} instead of 0.` : ''}</p>`;
}

function tableHtml(s, res, values, dims) {
  const n = Math.min(values.length, TABLE_ROWS);
  const inner = s.granularity === 'channel' ? values.length / dims[0] : values.length;
  const rows = [];
  for (let i = 0; i < n; i++) {
    const x = values[i];
    const d = res.deq[i];
    const e = Math.abs(d - x);
    const pct = x === 0 ? (e === 0 ? '0' : '—') : short((e / Math.abs(x)) * 100, 3);
    const diff = res.torchInts[i] !== res.onnxInts[i];
    const clipped = res.ints[i] === res.qp.quantMin || res.ints[i] === res.qp.quantMax;
    rows.push(`<tr class="${diff ? 'diff' : ''}${clipped ? ' clipped' : ''}"><td>${i}</td><td class="qx-chcol">${Math.floor(i / inner)}</td><td>${short(x, 7)}</td><td>${res.ints[i]}</td>
      <td>${short(d, 7)}</td><td>${short(e, 4)}</td><td>${pct}</td></tr>`);
  }
  return { html: rows.join(''), note: values.length > n ? `(first ${n} of ${values.length})` : '' };
}

function disagreeHtml(s, res, values) {
  if (res.disagreeCount === 0) {
    return `<p>Both rules give the same integers for every element at this scale. PyTorch multiplies by a rounded
      reciprocal, <code>x * (1/scale)</code>; ONNX divides, <code>x / scale</code>. They part ways only where
      x/scale is within a rounding error of k + 0.5: the seed preset [-10, -5, 0, 5, 10] with quint8 affine MinMax shows one
      (10 · (1/scale) = 127.5 exactly, 10 / scale = 127.49999).</p>`;
  }
  const perChannel = s.granularity === 'channel';
  const rows = res.disagree.map((i) => {
    const c = perChannel ? Math.floor(i / (values.length / res.qp.scales.length)) : 0;
    const sc = Math.fround(res.qp.scales[c]);
    const x = values[i];
    // What each rule rounds, in float32 (shown to explain the difference, not used to quantize).
    const mul = Math.fround(x * Math.fround(1 / sc));
    const div = Math.fround(x / sc);
    return `<tr><td>${i}</td><td>${num(x)}</td><td>${num(mul)}</td><td>${res.torchInts[i]}</td><td>${num(div)}</td><td>${res.onnxInts[i]}</td></tr>`;
  });
  return `<p>At this scale the two rules round these elements differently (highlighted in the table above too):</p>
    <div class="qx-table-wrap"><table class="qx-table"><thead><tr><th>i</th><th>x</th><th>x * (1/scale)</th><th>torch q</th><th>x / scale</th><th>onnx q</th></tr></thead>
    <tbody>${rows.join('')}</tbody></table></div>
    ${res.disagreeCount > res.disagree.length ? `<p class="qx-hint">first ${res.disagree.length} of ${res.disagreeCount}</p>` : ''}`;
}

function syncVisibility(s) {
  const { form } = view.els;
  for (const el of form.querySelectorAll('.qx-src')) el.hidden = el.dataset.src !== s.source;
  for (const el of form.querySelectorAll('.qx-opt')) el.hidden = el.dataset.for !== s.observer;
  form.querySelector('[data-out="size"]').textContent = s.size.toLocaleString('en-US');
  form.querySelector('[data-out="bits"]').textContent = `${s.bits} bits${s.bits < 8 ? ` (${customRange(s.dtype, s.bits).quantMin} … ${customRange(s.dtype, s.bits).quantMax})` : ""}`;
  form.querySelector('[data-out="percentile"]').textContent = `${s.percentile}%`;
  form.querySelector('input[name="channels"]').closest('label').hidden = false;
  const hist = form.querySelector('select[name="observer"] option[value="histogram"]');
  hist.textContent = s.granularity === 'channel' ? 'Histogram (per tensor only)' : 'Histogram (L2 search)';
  // A control that does not apply says so where it is, instead of being replaced by another without a word.
  const na = form.querySelector('[data-out="notApplicable"]');
  const reason = s.observer === 'histogram' && s.granularity === 'channel'
    ? 'Not applicable per channel: PyTorch\'s HistogramObserver has only a per-tensor form (there is no PerChannelHistogramObserver). Choose Per tensor, or another observer.'
    : '';
  na.textContent = reason;
  na.hidden = !reason;
  view.root.dataset.notApplicable = reason ? 'observer' : '';
}

/** The preset's note for these settings, with a button to the settings its question is about when they differ. */
function showNote(tensor, s) {
  const el = out('note');
  el.replaceChildren(tensor.note ?? '');
  const wants = Object.entries(tensor.wants ?? {}).filter(([k, v]) => s[k] !== v);
  if (tensor.error || wants.length === 0) return;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'qx-note-apply';
  button.textContent = `Show it: ${wants.map(([, v]) => v).join(', ')}`;
  button.addEventListener('click', () => {
    for (const [k, v] of wants) setField(view.els.form, k, v);
    render();
  });
  el.append(' ', button);
}

// ---- deep links: the settings as #explorer?name=value&…, only those that differ from the defaults -------------
const LINK_FIELDS = ['source', 'preset', 'dist', 'sizeExp', 'seed', 'channels', 'paste', 'dtype', 'bits', 'reduceRange', 'scheme',
  'granularity', 'observer', 'averagingConstant', 'batches', 'percentile', 'rounding', 'channel'];

function getField(root, name) {
  const els = [...root.querySelectorAll(`[name="${name}"]`)];
  if (els[0].type === 'radio') return els.find((e) => e.checked)?.value ?? '';
  if (els[0].type === 'checkbox') return els[0].checked ? '1' : '0';
  return els[0].value;
}

function setField(root, name, value) {
  const els = [...root.querySelectorAll(`[name="${name}"]`)];
  if (els.length === 0) return;
  if (els[0].type === 'radio') {
    const el = els.find((e) => e.value === value && !e.disabled);
    if (el) el.checked = true;
  } else if (els[0].type === 'checkbox') {
    els[0].checked = value === '1';
  } else if (els[0].tagName !== 'SELECT' || [...els[0].options].some((o) => o.value === value)) {
    els[0].value = value;
  }
}

/** The settings on screen that differ from the defaults, as link parameters (a tensor from the model is not linkable). */
function linkParams() {
  const params = new URLSearchParams();
  for (const name of LINK_FIELDS) {
    const value = getField(view.root, name);
    if (value !== view.defaults[name] && !(name === 'source' && value === 'model')) params.set(name, value);
  }
  return params;
}

/** Applies a deep link's parameters (unknown names and values are ignored) and renders. */
export function applyLink(params) {
  if (!view) return;
  for (const name of LINK_FIELDS) setField(view.root, name, params.get(name) ?? view.defaults[name]);
  render();
}

function showError(message) {
  const { root, error, results } = view.els;
  error.textContent = message;
  error.hidden = false;
  results.classList.add('qx-stale');
  results.hidden = true;
  root.dataset.error = message;
  view.state = { error: message, version: (view.state?.version ?? 0) + 1 };
  publish();
}

function publish() {
  view.context.setLink?.('explorer', linkParams());
  const api = { state: view.state, render, setTensor, applyLink };
  window.qwasmExplorer = api;
  if (window.qwasmDemo) window.qwasmDemo.explorer = api;
  view.root.dataset.version = String(view.state.version);
}

function out(name) {
  return view.root.querySelector(`[data-out="${name}"]`);
}

/** Recomputes everything from the controls. Synchronous: input events update the view at once. */
export function render() {
  if (!view) return;
  const s = readSettings(view.els.form);
  syncVisibility(s);
  const tensor = currentTensor(s);
  showNote(tensor, s);
  if (tensor.error) { showError(tensor.error); return; }
  const { values, dims, label } = tensor;
  const qwasm = view.qwasm;
  let res;
  try {
    res = explore(qwasm, values, dims, s);
  } catch (e) {
    showError(`${e.name === 'NotImplementedError' ? 'PyTorch does not support this combination: ' : ''}${e.message}`);
    return;
  }
  const channels = res.qp.scales.length;
  const chInput = view.root.querySelector('input[name="channel"]');
  chInput.max = String(channels - 1);
  const c = Math.min(Math.max(0, Math.round(Number(chInput.value)) || 0), channels - 1);
  chInput.closest('label').hidden = channels === 1;
  res.levels = gridLevels(qwasm, res.qp, c, s.dtype);
  const { root, error, results } = view.els;
  error.hidden = true;
  results.hidden = false;
  delete root.dataset.error;

  const inner = values.length / channels;
  const chValues = channels === 1 ? values : values.subarray(c * inner, (c + 1) * inner);
  const chDeq = channels === 1 ? res.deq : res.deq.subarray(c * inner, (c + 1) * inner);
  const wrap = root.querySelector('.qx-canvas-wrap');
  view.drawnWidth = wrap.clientWidth;
  const drawn = drawHistogram(view.els.canvas, { values: chValues, deq: chDeq, levels: res.levels, clipLo: res.levels[0],
    clipHi: res.levels[res.levels.length - 1], cssWidth: wrap.clientWidth || 600, cssHeight: wrap.clientWidth < 500 ? 200 : 260 });
  out('gridNote').textContent = drawn.step > 1 ? `every ${ordinal(drawn.step)} of ${res.levels.length} levels (too dense to draw all)` : `all ${res.levels.length} representable levels`;
  const shape = `[${dims.join(', ')}]`;
  out('summary').textContent = `${label} · shape ${shape} · min ${short(res.dataMin)} · max ${short(res.dataMax)}${channels > 1 ? ` · channel ${c} shown` : ''}`;

  const sc = res.qp.scales[c];
  const zp = res.qp.zeroPoints[c];
  out('scaleLabel').textContent = channels > 1 ? `scale (channel ${c})` : 'scale';
  out('zpLabel').textContent = channels > 1 ? `zero point (ch ${c})` : 'zero point';
  out('scale').textContent = num(sc);
  out('zeroPoint').textContent = String(zp);
  out('range').textContent = `[${res.qp.quantMin}, ${res.qp.quantMax}]`;
  out('mse').textContent = short(res.mse, 5);
  out('sqnr').textContent = Number.isFinite(res.sqnr) ? `${res.sqnr.toFixed(2)} dB` : res.sqnr > 0 ? '∞ (exact)' : '—';
  out('maxAbs').textContent = short(res.maxAbs, 5);
  out('formula').innerHTML = formulaHtml(s, res, c);
  out('why').innerHTML = whyHtml(s, res);
  const table = tableHtml(s, res, values, dims);
  root.querySelector('.qx-elements tbody').innerHTML = table.html;
  root.classList.toggle('qx-perchannel', channels > 1);
  root.classList.toggle('qx-fewvalues', chValues.length <= 64);
  out('tableNote').textContent = table.note;
  out('disagreeCount').textContent = `${res.disagreeCount} of ${values.length} element${values.length === 1 ? '' : 's'} differ`;
  out('disagree').innerHTML = disagreeHtml(s, res, values);
  for (const wrap of root.querySelectorAll('.qx-table-wrap')) scrollable(wrap);

  view.state = {
    version: (view.state?.version ?? 0) + 1,
    error: null,
    settings: s,
    label,
    dims: dims.slice(),
    numel: values.length,
    scales: res.qp.scales.slice(),
    zeroPoints: res.qp.zeroPoints.slice(),
    quantMin: res.qp.quantMin,
    quantMax: res.qp.quantMax,
    observedMin: res.qp.min.slice(),
    observedMax: res.qp.max.slice(),
    ints: Array.from(res.ints.subarray(0, 256)),
    dequantized: Array.from(res.deq.subarray(0, 256)),
    mse: res.mse,
    sqnr: res.sqnr,
    maxAbs: res.maxAbs,
    disagreeCount: res.disagreeCount,
    disagree: res.disagree.slice(),
    gridLevels: res.levels.length,
    gridShown: drawn.shownLevels,
  };
  Object.assign(root.dataset, { scale: num(sc), zeroPoint: String(zp), mse: String(res.mse), sqnr: String(res.sqnr),
    maxAbs: String(res.maxAbs), disagree: String(res.disagreeCount) });
  publish();
}

export function mount(el, context, link = new URLSearchParams()) {
  el.innerHTML = `<div class="qx">
    <p class="qx-intro">Quantization stores <code>real = scale · (q − zero_point)</code> with integer <code>q</code>.
      Pick a tensor and settings: qwasm's observers (PyTorch 1.13's, bit for bit) choose scale and zero point, and
      qwasm's kernels quantize. Everything below is computed live by the WebAssembly build.</p>
    <div class="qx-grid">${CONTROLS_HTML}${MAIN_HTML}</div></div>`;
  const root = el.querySelector('.qx');
  view = {
    root,
    qwasm: context.qwasm,
    context,
    model: null,
    state: null,
    els: { root, form: root.querySelector('form'), error: root.querySelector('.qx-error'), results: root.querySelector('.qx-results'),
      canvas: root.querySelector('canvas') },
  };
  root.addEventListener('input', render);
  root.addEventListener('change', render);
  // Redraw when the chart's width changes, including when the view is shown after a render while hidden.
  new ResizeObserver(() => {
    const w = root.querySelector('.qx-canvas-wrap').clientWidth;
    if (w && w !== view.drawnWidth && view.state && !view.state.error) render();
  }).observe(root.querySelector('.qx-canvas-wrap'));
  view.defaults = Object.fromEntries(LINK_FIELDS.map((name) => [name, getField(root, name)]));
  for (const name of LINK_FIELDS) if (link.has(name)) setField(root, name, link.get(name));
  if (pendingTensor) { const p = pendingTensor; pendingTensor = null; setTensor(...p); } else render();
}

/** The model view sends a weight or activation: keep its dims so per-channel works along axis 0. */
export function setTensor(label, values, dims) {
  if (!view) { pendingTensor = [label, values, dims]; return; }
  const v = Float32Array.from(values);
  let d = Array.isArray(dims) || ArrayBuffer.isView(dims) ? Array.from(dims, Number) : [v.length];
  if (d.length === 0) d = [1];
  if (d.reduce((a, b) => a * b, 1) !== v.length) d = [v.length];
  const bad = v.findIndex((x) => !Number.isFinite(x));
  view.model = { values: v, dims: d, label: String(label) };
  const radio = view.els.form.querySelector('input[name="source"][value="model"]');
  radio.disabled = false;
  radio.checked = true;
  out('modelLabel').textContent = `${label} [${d.join(', ')}]`;
  if (bad >= 0) { view.model = null; showError(`The tensor "${label}" holds ${v[bad]} at index ${bad}; observers need finite values.`); return; }
  render();
}
