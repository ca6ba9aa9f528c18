// "Quantize in the page": post-training static quantization of the float digits CNN (models/digits-float.onnx)
// by qwasm.quantizeStatic, in the browser. Pick a qconfig, the number of training images to calibrate on and
// the calibration batch size; the page observes the float activations with PyTorch's default-qconfig observers,
// quantizes the weights, writes a QDQ ONNX file and loads it as an int8 model. It shows each quantized tensor's
// scale, zero point and SQNR next to PyTorch's own choice for the same tensor (models/digits.onnx), the held-out
// accuracy of the float model, the page's int8 model and PyTorch's, and offers the QDQ file for download.
// The work runs in ptq-worker.js (the page stays responsive through a calibration on all 1437 images, with
// progress); the arithmetic lives in ptq-compute.js.
import { fileNameFor, sqnrBarPercent } from './ptq-compute.js';
import { h, scrollable } from './dom.js';
import { connect } from './worker-rpc.js';

const FILES = { data: 'models/digits-data.json', float: 'models/digits-float.onnx', torch: 'models/digits.onnx' };
const COUNTS = [32, 256, 1437];
const QCONFIGS = {
  qnnpack: 'qnnpack: HistogramObserver activations (uint8), per-tensor symmetric int8 weights (MinMaxObserver)',
  x86: 'x86: HistogramObserver activations with reduce_range (uint8 in 0..127), per-channel symmetric int8 weights',
};

const fmtScale = (s) => Number(s).toPrecision(6);
const fmtMs = (ms) => (ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(2)} s`);
const fmtDb = (db) => (db === null ? '–' : Number.isFinite(db) ? `${db.toFixed(1)} dB` : '∞ dB');
const fmtPct = (a) => `${(a * 100).toFixed(1)} %`;
/** A relative difference: in % when it is a real one, as 1.2e-7 when it is float32 rounding noise. */
const fmtRel = (d) => `${d >= 0 ? '+' : '−'}${Math.abs(d) >= 1e-3 ? `${(Math.abs(d) * 100).toFixed(1)} %` : `${Math.abs(d).toExponential(1)} rel.`}`;
const describeError = (e) => `${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e?.message ?? e}`;
const STAGES = {
  'accuracy-float': 'Held-out accuracy of the float model',
  'accuracy-torch': 'Held-out accuracy of PyTorch\'s int8 model',
  calibrate: 'Calibrating: observing the float activations',
  measure: 'Measuring each quantized tensor\'s SQNR against float',
  accuracy: 'Held-out accuracy of the new int8 model',
};

/** Mounts the view. link: the deep link's parameters (qconfig, count, batch). */
export function mount(root, context, link = new URLSearchParams()) {
  const state = {
    worker: connect(new URL('./ptq-worker.js', import.meta.url)),
    counts: null, // { train, test } image counts of the splits
    current: null, // { rows, bytes, url, name, options, accuracy, baseline, ms, fusedLayers }
  };

  // ---- layout ------------------------------------------------------------------------------------
  const qconfigSelect = h('select', { class: 'pq-qconfig' },
    ...Object.keys(QCONFIGS).map((k) => h('option', { value: k, text: k })));
  const qconfigHint = h('p', { class: 'pq-hint' });
  const countSelect = h('select', { class: 'pq-count' },
    ...COUNTS.map((n) => h('option', { value: String(n), text: n === 1437 ? 'all 1437' : String(n), selected: n === 256 })));
  const batchInput = h('input', { type: 'number', class: 'pq-batch', min: '1', step: '1', value: '256' });
  const runButton = h('button', { type: 'button', class: 'pq-run', disabled: true, text: 'Calibrate and quantize' });
  const status = h('p', { class: 'pq-status', 'aria-live': 'polite', text: 'Loading the float model and the digits splits…' });
  const progressBar = h('progress', { class: 'pq-progress-bar' });
  const progressText = h('span', { class: 'pq-progress-text' });
  const progress = h('p', { class: 'pq-progress', hidden: true }, progressBar, progressText);
  const error = h('p', { class: 'error pq-error', role: 'alert', hidden: true });
  const table = h('table', { class: 'pq-table' });
  const tableNote = h('p', { class: 'pq-note' });
  const accuracy = h('div', { class: 'pq-accuracy' });
  const download = h('div', { class: 'pq-download' });
  const results = h('div', { class: 'pq-results', hidden: true },
    h('section', { class: 'panel pq-tensors' },
      h('h2', {}, 'Quantized tensors ', h('small', { class: 'pq-tensors-sub' })),
      h('div', { class: 'pq-table-wrap' }, table),
      tableNote),
    h('div', { class: 'pq-bottom' },
      h('section', { class: 'panel pq-accuracy-panel' },
        h('h2', {}, 'Held-out accuracy ', h('small', { class: 'pq-accuracy-sub' })),
        accuracy),
      h('section', { class: 'panel pq-download-panel' },
        h('h2', { text: 'The quantized model' }),
        download)));

  root.replaceChildren(h('div', { class: 'pq' },
    h('p', { class: 'pq-intro' },
      'Post-training static quantization without Python: the float digits CNN (', h('code', { text: FILES.float }),
      ', the trained weights before quantization) runs on training images while PyTorch\'s default-qconfig observers watch its activations; the weights are quantized, a QDQ ONNX file is written and loaded as an int8 model, all in this page by ',
      h('code', { text: 'qwasm.quantizeStatic' }), '. PyTorch 1.13 did the same in ', h('code', { text: 'tools/train_digits.py' }),
      ' to make the bundled ', h('code', { text: FILES.torch }), ' (qnnpack, all 1437 training images, batches of 256).'),
    h('div', { class: 'pq-grid' },
      h('section', { class: 'panel pq-controls' },
        h('h2', { text: 'Calibration' }),
        h('label', {}, 'qconfig', qconfigSelect),
        qconfigHint,
        h('label', {}, 'calibration images (training split)', countSelect),
        h('label', {}, 'batch size', batchInput),
        h('p', { class: 'pq-hint pq-batch-note', text: 'HistogramObserver re-bins its histogram whenever a batch widens the range seen so far, so the scales depend on how the images are split into batches; 256 is the batch torch calibrated with.' }),
        runButton,
        progress,
        status,
        error),
      results)));

  scrollable(table.parentElement);
  const showHint = () => { qconfigHint.textContent = QCONFIGS[qconfigSelect.value]; };
  qconfigSelect.addEventListener('change', showHint);

  // ---- deep link: qconfig, count, batch when they differ from the defaults ---------------------------
  const defaults = { qconfig: qconfigSelect.value, count: countSelect.value, batch: batchInput.value };
  const controls = { qconfig: qconfigSelect, count: countSelect, batch: batchInput };
  for (const [k, el] of Object.entries(controls)) if (link.has(k)) el.value = link.get(k);
  if (!qconfigSelect.value) qconfigSelect.value = defaults.qconfig;
  const publishLink = () => context.setLink?.('ptq', Object.fromEntries(Object.entries(controls)
    .filter(([k, el]) => el.value !== defaults[k]).map(([k, el]) => [k, el.value])));
  for (const el of Object.values(controls)) el.addEventListener('change', publishLink);
  showHint();

  // ---- results -----------------------------------------------------------------------------------
  function renderTable({ rows, options }) {
    const sameCount = rows.filter((r) => r.same).length;
    const compared = rows.filter((r) => r.torch).length;
    root.querySelector('.pq-tensors-sub').textContent =
      `${rows.length} tensors · SQNR over the ${options.count} calibration images · ${sameCount} of ${compared} identical to PyTorch's`;
    table.replaceChildren(
      h('thead', {}, h('tr', {},
        ...['tensor', 'producing op', 'scale', 'zero point'].map((t) => h('th', { text: t })),
        h('th', { class: 'pq-sqnr-head', title: 'The int8 model\'s value of the tensor, dequantized (q), against the float model\'s (f), over the calibration images: 10·log₁₀(Σf² / Σ(f − q)²)' }, 'SQNR int8 vs float'),
        h('th', { text: 'PyTorch scale / zp (digits.onnx)' }),
        h('th', { text: 'vs PyTorch' }))),
      h('tbody', {}, ...rows.map((r) => {
        const vs = !r.torch
          ? h('span', { class: 'pq-muted', text: 'no tensor of this name' })
          : r.same
            ? h('span', { class: 'pq-same', text: '✓ same as PyTorch' })
            : h('span', { class: 'pq-diff', title: `ours ${r.scale}, PyTorch ${r.torch.scale}` },
              `scale ${fmtRel(r.relDiff)}`, r.zpDiff ? `, zp ${r.zpDiff > 0 ? '+' : '−'}${Math.abs(r.zpDiff)}` : '');
        return h('tr', {
          'data-tensor': r.tensor, 'data-scale': String(r.scale), 'data-zero-point': String(r.zeroPoint),
          'data-sqnr': r.sqnrDb === null ? '' : String(r.sqnrDb),
          'data-torch-scale': r.torch ? String(r.torch.scale) : '', 'data-torch-zero-point': r.torch ? String(r.torch.zeroPoint) : '',
          'data-same': r.torch ? String(r.same) : '',
        },
        h('td', { class: 'pq-name' }, h('code', { text: r.tensor })),
        r.producer === null
          ? h('td', { class: 'pq-op pq-muted', text: 'graph input' })
          : h('td', { class: 'pq-op', title: r.producer, text: r.opType }),
        h('td', { class: 'num', text: fmtScale(r.scale) }),
        h('td', { class: 'num', text: String(r.zeroPoint) }),
        h('td', { class: 'pq-sqnr' },
          h('span', { class: 'pq-bar' }, h('span', { class: 'pq-bar-fill', style: `width:${sqnrBarPercent(r.sqnrDb).toFixed(1)}%` })),
          h('span', { class: 'num', text: fmtDb(r.sqnrDb) })),
        h('td', { class: 'num pq-torch', text: r.torch ? `${fmtScale(r.torch.scale)} / ${r.torch.zeroPoint}` : '–' }),
        h('td', { class: 'pq-vs' }, vs));
      })));
    tableNote.replaceChildren(
      options.qconfig === 'qnnpack' && options.count === 1437 && options.batchSize === 256
        ? 'These are PyTorch\'s calibration settings. '
        : `PyTorch calibrated with qnnpack on all 1437 images in batches of 256; with other settings (here ${options.qconfig}, ${options.count} images, batch ${options.batchSize}) the scales differ for real. `,
      'With the same settings a scale can still differ from PyTorch\'s by float32 rounding noise (a few parts in 10⁷): the float activations are computed here with a different summation order than PyTorch\'s conv, so an observer can see a min or max a few ulps apart. ',
      h('code', { text: 'input' }), ' / ', h('code', { text: 'output' }), ' are the float graph\'s input and output, which share the qparams of ',
      h('code', { text: 'quant' }), ' / ', h('code', { text: 'fc' }), '.');
  }

  function accuracyRow(key, label, detail, acc) {
    return h('div', { class: `pq-acc pq-acc-${key}`, 'data-model': key, 'data-right': String(acc.right), 'data-total': String(acc.total) },
      h('div', { class: 'pq-acc-label' }, h('strong', { text: label }), h('span', { class: 'pq-muted', text: detail })),
      h('span', { class: 'pq-bar pq-acc-bar' }, h('span', { class: 'pq-bar-fill', style: `width:${(acc.accuracy * 100).toFixed(2)}%` })),
      h('span', { class: 'num pq-acc-value', text: fmtPct(acc.accuracy) }),
      h('span', { class: 'num pq-muted', text: `${acc.right} / ${acc.total}` }));
  }

  function renderAccuracy({ accuracy: acc, options, baseline }) {
    root.querySelector('.pq-accuracy-sub').textContent = `${state.counts.test} test images, never used for training or calibration`;
    accuracy.replaceChildren(
      accuracyRow('float', 'float', 'digits-float.onnx, qwasm\'s float kernels', baseline.float),
      accuracyRow('int8', 'int8 · this page', `${options.qconfig}, ${options.count} images, batch ${options.batchSize}`, acc),
      accuracyRow('torch', 'int8 · PyTorch', 'digits.onnx: qnnpack, 1437 images, batch 256', baseline.torch));
  }

  function renderDownload({ url, name, bytes, fusedLayers }) {
    const open = context.openInModelView
      ? h('button', { type: 'button', class: 'pq-open', text: 'Use in the model view', onclick: () => openInModelView() })
      : null;
    download.replaceChildren(
      h('p', { class: 'pq-download-line' },
        h('a', { class: 'pq-link', href: url, download: name, text: `Download QDQ model (.onnx)` }),
        h('span', { class: 'pq-muted', text: ` ${name}, ${(bytes.length / 1024).toFixed(1)} KiB` }), open),
      h('p', { class: 'pq-note', text: `A QDQ ONNX file (QuantizeLinear / DequantizeLinear around float ops, the form onnxruntime's quantize_static writes): onnxruntime loads it and computes the same outputs as the int8 model here; qwasm.loadModel fuses it into ${fusedLayers} integer conv / linear layers.` }));
  }

  async function openInModelView() {
    const cur = state.current;
    if (!cur) return;
    error.hidden = true;
    try {
      await context.openInModelView(cur.bytes, cur.name);
    } catch (e) {
      showError(`The model view could not use ${cur.name}: ${describeError(e)}`);
    }
  }

  function showError(message) {
    error.hidden = false;
    error.textContent = message;
  }

  // ---- running -----------------------------------------------------------------------------------
  function showProgress({ stage, done, total }) {
    progress.hidden = false;
    Object.assign(progress.dataset, { stage, done: String(done), total: String(total) });
    progressBar.max = total;
    progressBar.value = done;
    progressText.textContent = `${STAGES[stage] ?? stage}: ${done} / ${total} images`;
  }

  async function run() {
    const options = { qconfig: qconfigSelect.value, count: Number(countSelect.value), batchSize: Number(batchInput.value) };
    runButton.disabled = true;
    error.hidden = true;
    root.dataset.status = 'running';
    const t0 = performance.now();
    status.textContent = `Working in a background thread: ${options.qconfig}, ${options.count} training images, batch ${options.batchSize}…`;
    try {
      const out = await state.worker.call('quantize', options, { onProgress: showProgress });
      const name = fileNameFor(options.qconfig);
      const next = { ...out, options, name, url: URL.createObjectURL(new Blob([out.bytes], { type: 'application/octet-stream' })) };
      if (state.current) URL.revokeObjectURL(state.current.url);
      state.current = next;
      renderTable(next);
      renderAccuracy(next);
      renderDownload(next);
      results.hidden = false;
      status.replaceChildren(
        `Done in ${fmtMs(performance.now() - t0)}: calibration, quantization and SQNR report `,
        h('strong', { class: 'pq-time', text: fmtMs(next.ms) }),
        `, held-out accuracy ${fmtMs(next.accuracy.ms)} (qwasm ${context.info.simd ? 'SIMD128' : 'scalar'} build, in a worker).`);
      root.dataset.status = 'done';
      root.dataset.runs = String(Number(root.dataset.runs ?? 0) + 1);
    } catch (e) {
      status.textContent = `Failed after ${fmtMs(performance.now() - t0)}.`;
      const message = describeError(e);
      showError(`Could not quantize: ${message}${/[.!?]$/.test(message) ? '' : '.'}${state.current ? ' The results below are from the previous run.' : ''}`);
      root.dataset.status = 'error';
    } finally {
      progress.hidden = true;
      runButton.disabled = false;
    }
  }
  runButton.addEventListener('click', run);

  // ---- start -------------------------------------------------------------------------------------
  state.worker.call('init').then((counts) => {
    state.counts = counts;
    const all = countSelect.lastElementChild;
    const wasAll = countSelect.value === all.value;
    all.textContent = `all ${counts.train}`;
    all.value = String(counts.train);
    if (wasAll || link.get('count') === String(counts.train)) countSelect.value = all.value;
    status.textContent = `Ready: ${counts.train} training images to calibrate on, ${counts.test} held-out images to measure accuracy on.`;
    runButton.disabled = false;
  }).catch((e) => {
    status.textContent = '';
    showError(`The float model or the digits data could not be loaded: ${describeError(e)}`);
  }).finally(() => {
    root.dataset.ready = 'true';
  });
  /** For tests: the worker's wasm memory. */
  window.qwasmPtqView = { memoryStats: () => state.worker.call('memoryStats') };
}
