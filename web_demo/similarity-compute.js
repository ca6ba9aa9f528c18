// The sentence-similarity view's arithmetic, free of the DOM (Node tests import it): the encoder's feeds for one
// sentence's token ids, sentence-transformers' mean pooling of last_hidden_state, cosine similarity. The encoder
// itself runs in qwasm (or onnxruntime-web for the comparison); nothing here is a model.

/** int64 feeds for one sequence (batch 1, no padding): the ids, an attention mask of ones, token types of zeros. */
export function sentenceFeeds(ids) {
  const dims = [1, ids.length];
  return {
    input_ids: { data: BigInt64Array.from(ids, BigInt), dims },
    attention_mask: { data: new BigInt64Array(ids.length).fill(1n), dims },
    token_type_ids: { data: new BigInt64Array(ids.length), dims },
  };
}

/** Mean of the token vectors of last_hidden_state [1, S, H] (every token counts: one unpadded sentence). */
export function meanPool(hidden, dims) {
  if (dims.length !== 3 || dims[0] !== 1) throw new RangeError(`meanPool: last_hidden_state must be [1, S, H], got [${dims}]`);
  const [, seq, width] = dims;
  const sum = new Float64Array(width);
  for (let t = 0; t < seq; t++) for (let i = 0; i < width; i++) sum[i] += hidden[t * width + i];
  return Float32Array.from(sum, (v) => v / seq);
}

export function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

/** Every pair's cosine similarity: an n × n array of arrays. */
export const similarityMatrix = (embeddings) => embeddings.map((a) => embeddings.map((b) => cosine(a, b)));

/**
 * Embeds each sentence with `run(feeds) -> Promise<{ data, dims }>` (last_hidden_state of one sentence):
 * { tokens: [{ ids, tokens }], hidden: [{ data, dims }], embeddings: [Float32Array], similarity }.
 */
export async function embedSentences(tokenizer, sentences, run) {
  const tokens = sentences.map((s) => tokenizer.encode(s));
  const hidden = [];
  for (const t of tokens) hidden.push(await run(sentenceFeeds(t.ids)));
  const embeddings = hidden.map((h) => meanPool(h.data, h.dims));
  return { tokens, hidden, embeddings, similarity: similarityMatrix(embeddings) };
}
