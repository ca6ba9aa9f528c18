// BERT's uncased WordPiece tokenizer, as Hugging Face's tokenizers runs it for all-MiniLM-L6-v2's tokenizer.json
// (BertNormalizer with clean_text, handle_chinese_chars, lowercase and so strip_accents; BertPreTokenizer; WordPiece
// with "##" continuations and 100 characters at most per word; [CLS] … [SEP]; truncation to maxLength ids).
// The rules follow huggingface/tokenizers' tokenizers/src/normalizers/bert.rs, pre_tokenizers/bert.rs and
// models/wordpiece/mod.rs; tests/js/pretrained-minilm.test.js checks the ids against that library's on
// tests/fixtures/pretrained/tokenizer-cases.json. Free of the DOM, so Node runs it as it is.
//
// It lives in the demo, not in the package: qwasm runs tensors in and out; turning text into ids (and pooling the
// outputs) belongs to the application, like the digits view's resampling of a drawing.

const CONTROL = /\p{C}/u; // Unicode "other" (Cc, Cf, Cs, Co, Cn): dropped, except tab, newline, carriage return
const WHITESPACE = /\s/u;
const NONSPACING_MARK = /\p{Mn}/gu;
const SPECIAL_TOKENS = /(\[PAD\]|\[UNK\]|\[CLS\]|\[SEP\]|\[MASK\])/; // a capturing split keeps them
const PUNCTUATION = /[!-/:-@[-`{-~]|\p{P}/u; // ASCII punctuation (symbols like $ + < = > ^ ` | ~ too) or Unicode P*

function isChinese(cp) {
  return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df)
    || (cp >= 0x2a700 && cp <= 0x2b73f) || (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b820 && cp <= 0x2ceaf)
    || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}

/** BertNormalizer: clean the text, space out CJK ideographs, strip accents (NFD, drop Mn), lowercase per character. */
export function normalize(text) {
  let out = '';
  for (const c of text) {
    const cp = c.codePointAt(0);
    if (cp === 0 || cp === 0xfffd || (CONTROL.test(c) && c !== '\t' && c !== '\n' && c !== '\r')) continue;
    if (WHITESPACE.test(c)) out += ' ';
    else if (isChinese(cp)) out += ` ${c} `;
    else out += c;
  }
  out = out.normalize('NFD').replace(NONSPACING_MARK, '');
  // per character, as Rust's char::to_lowercase: no context (a final capital sigma becomes σ, not ς)
  let lower = '';
  for (const c of out) lower += c.toLowerCase();
  return lower;
}

/** BertPreTokenizer: split on whitespace (dropped) and around each punctuation character (kept as a word). */
export function preTokenize(text) {
  const words = [];
  let word = '';
  for (const c of text) {
    if (WHITESPACE.test(c) || PUNCTUATION.test(c)) {
      if (word) words.push(word);
      word = '';
      if (!WHITESPACE.test(c)) words.push(c);
    } else {
      word += c;
    }
  }
  if (word) words.push(word);
  return words;
}

/**
 * A tokenizer for vocab.txt's text (one token per line, the line number its id).
 * encode(text) -> { ids: number[], tokens: string[] }: [CLS], the word pieces (truncated so that at most
 * maxLength ids come out), [SEP].
 */
export function createTokenizer(vocabText, { maxLength = 256, maxCharsPerWord = 100 } = {}) {
  if (typeof vocabText !== 'string') throw new TypeError(`createTokenizer: vocabText must be a string (vocab.txt), got ${typeof vocabText}`);
  if (!Number.isInteger(maxLength) || maxLength < 2) throw new RangeError(`createTokenizer: maxLength must be an integer >= 2, got ${maxLength}`);
  const vocab = new Map();
  vocabText.split('\n').forEach((line, i) => {
    const token = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (token && !vocab.has(token)) vocab.set(token, i);
  });
  for (const t of ['[CLS]', '[SEP]', '[UNK]']) {
    if (!vocab.has(t)) throw new TypeError(`createTokenizer: vocabText has no "${t}" token: not a BERT vocab.txt`);
  }

  /** WordPiece: greedy longest match from the left; a word with a piece not in the vocabulary is [UNK] whole. */
  function wordPieces(word) {
    const chars = Array.from(word);
    if (chars.length > maxCharsPerWord) return ['[UNK]'];
    const pieces = [];
    for (let start = 0; start < chars.length;) {
      let end = chars.length;
      let piece = null;
      for (; end > start; end--) {
        const candidate = (start > 0 ? '##' : '') + chars.slice(start, end).join('');
        if (vocab.has(candidate)) {
          piece = candidate;
          break;
        }
      }
      if (piece === null) return ['[UNK]'];
      pieces.push(piece);
      start = end;
    }
    return pieces;
  }

  return {
    vocabSize: vocab.size,
    encode(text) {
      if (typeof text !== 'string') throw new TypeError(`tokenizer.encode: text must be a string, got ${typeof text}`);
      // special tokens written in the text are those tokens (tokenizer.json's added_tokens: matched on the raw
      // text, case-sensitive); the text between them is normalized and split
      const pieces = text.split(SPECIAL_TOKENS).flatMap((part, i) => (i % 2 ? [part] : preTokenize(normalize(part)).flatMap(wordPieces)))
        .slice(0, maxLength - 2);
      const tokens = ['[CLS]', ...pieces, '[SEP]'];
      return { ids: tokens.map((t) => vocab.get(t)), tokens };
    },
  };
}
