"""BERT-shaped encoders with random weights, exported and quantized the way people meet them in the browser.

    build/venv/bin/python tools/transformer/bert.py            # tiny -> tests/fixtures/transformer/
    build/venv/bin/python tools/transformer/bert.py --minilm   # MiniLM-sized -> build/models/transformer/

(the venv comes from `bash tools/setup-python.sh`: torch 2.13, onnx, onnxruntime 1.30.)

The module is written here (no `transformers` package) with Hugging Face BERT's layout and arithmetic:
embeddings = LayerNorm(word[input_ids] + token_type[token_type_ids] + position[position_ids[:, :S]]);
the additive attention mask built as transformers' `_prepare_4d_attention_mask` does
(mask[:, None, None, :].expand(B, 1, S, S).to(float); inverted = 1 - m;
inverted.masked_fill(inverted.to(bool), finfo.min)) -> Unsqueeze / Expand / Cast / Sub / Cast / Where, or with
`mask_form="mul"` the older `(1 - m) * finfo.min` (Cast / Sub / Mul); per layer: Q, K, V Linear,
softmax(QK^T / sqrt(d) + mask), output Linear + residual + LayerNorm (eps 1e-12), FFN Linear -> GELU
(F.gelu, exact: Erf) -> Linear + residual + LayerNorm; Tanh pooler on the first token.

Files (per model name N):
  N-opset14.onnx          torch.onnx.export, TorchScript exporter, opset 14 (LayerNorm decomposed:
                          ReduceMean / Sub / Pow / Sqrt / Div)
  N-opset17.onnx          the same at opset 17 (LayerNormalization)
  N-dynamo.onnx           torch.onnx.export(dynamo=True) (opset 18), when the exporter works
  N-*_q8.onnx             onnxruntime.quantization.quantize_dynamic of each, in transformers.js's "q8"
                          settings (Q8_SETTINGS below)
  N-opset14_qdq.onnx / N-opset17_qdq.onnx
                          onnxruntime.quantization.quantize_static (QDQ format, uint8 activations, int8 weights
                          per tensor), calibrated on the recorded inputs: the static-QDQ form of a transformer
  N-opt.onnx / N-opt_q8.onnx
                          N-opset14.onnx through onnxruntime.transformers.optimizer (model_type "bert",
                          attention fusion off so the MatMuls stay), then quantized as above
  N-ort_q8.onnx           N-opset14_q8.onnx as onnxruntime's own graph optimizer leaves it (session level
                          "extended", saved with optimized_model_filepath): DynamicQuantizeMatMul and
                          friends, the form onnxruntime-web runs
  N.json                  inputs (int64 token ids, token types, attention masks; several sequence lengths,
                          padding), onnxruntime (Python, CPU EP) outputs of every file ("outputs") and
                          onnxruntime-web's ("web", recorded by tools/transformer/bert_web.mjs), float32
                          little-endian bytes in base64
"""
import argparse
import base64
import json
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn
from torch.nn import functional as F

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# transformers.js scripts/quantize.py (huggingface/transformers.js, commit 124f7dd, quantize_q8 and the Q8 branch
# of quantize()): ONNXQuantizer(per_channel=None, reduce_range=None, mode=IntegerOps, static=False,
# weight_qType=QInt8 (QUInt8 when the model holds Conv / GroupQueryAttention / MultiHeadAttention),
# activation_qType=QUInt8, op_types_to_quantize=IntegerOpsRegistry keys,
# extra_options={EnableSubgraph: True, MatMulConstBOnly: True}). quantize_dynamic builds the same quantizer
# (after loading the model with shape inference, which transformers.js skips).
Q8_SETTINGS = dict(per_channel=False, reduce_range=False,
                   extra_options={"EnableSubgraph": True, "MatMulConstBOnly": True})

CONFIGS = {
    # name: vocab, hidden, layers, heads, ffn, max positions, type vocab
    "tiny-bert": dict(vocab=64, hidden=16, layers=2, heads=2, ffn=64, max_pos=32, type_vocab=2),
    "minilm": dict(vocab=30522, hidden=384, layers=6, heads=12, ffn=1536, max_pos=512, type_vocab=2),
}


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word = nn.Embedding(c["vocab"], c["hidden"])
        self.position = nn.Embedding(c["max_pos"], c["hidden"])
        self.token_type = nn.Embedding(c["type_vocab"], c["hidden"])
        self.norm = nn.LayerNorm(c["hidden"], eps=1e-12)
        self.register_buffer("position_ids", torch.arange(c["max_pos"]).unsqueeze(0), persistent=False)

    def forward(self, input_ids, token_type_ids):
        seq = input_ids.shape[1]
        position_ids = self.position_ids[:, :seq]  # a Slice in the export
        x = self.word(input_ids) + self.token_type(token_type_ids) + self.position(position_ids)
        return self.norm(x)


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.heads, self.head_dim = c["heads"], h // c["heads"]
        self.q, self.k, self.v, self.o = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.norm1 = nn.LayerNorm(h, eps=1e-12)
        self.ffn_in, self.ffn_out = nn.Linear(h, c["ffn"]), nn.Linear(c["ffn"], h)
        self.norm2 = nn.LayerNorm(h, eps=1e-12)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        context = torch.matmul(F.softmax(scores, dim=-1), v)
        b, _, s, _ = context.shape
        context = context.permute(0, 2, 1, 3).reshape(b, s, self.heads * self.head_dim)
        x = self.norm1(self.o(context) + x)
        return self.norm2(self.ffn_out(F.gelu(self.ffn_in(x))) + x)


class Encoder(nn.Module):
    def __init__(self, c, mask_form="where"):
        super().__init__()
        self.mask_form = mask_form
        self.embeddings = Embeddings(c)
        self.layers = nn.ModuleList([Layer(c) for _ in range(c["layers"])])
        self.pooler = nn.Linear(c["hidden"], c["hidden"])

    def additive_mask(self, attention_mask, seq):
        lowest = torch.finfo(torch.float32).min
        if self.mask_form == "mul":  # transformers < 4.36: (1 - mask) * finfo.min
            return (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * lowest
        b = attention_mask.shape[0]  # transformers' _prepare_4d_attention_mask
        expanded = attention_mask[:, None, None, :].expand(b, 1, seq, seq).to(torch.float32)
        inverted = 1.0 - expanded
        return inverted.masked_fill(inverted.to(torch.bool), lowest)

    def forward(self, input_ids, attention_mask, token_type_ids):
        x = self.embeddings(input_ids, token_type_ids)
        mask = self.additive_mask(attention_mask, input_ids.shape[1])
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pooler(x[:, 0]))


INPUT_NAMES = ["input_ids", "attention_mask", "token_type_ids"]
OUTPUT_NAMES = ["last_hidden_state", "pooler_output"]
DYNAMIC = {n: {0: "batch", 1: "sequence"} for n in INPUT_NAMES}
DYNAMIC.update({"last_hidden_state": {0: "batch", 1: "sequence"}, "pooler_output": {0: "batch"}})


def make_model(config, seed):
    torch.manual_seed(seed)
    model = Encoder(config)
    # BERT's initializer range (normal, std 0.02) makes every layer nearly the identity; a wider spread
    # gives attention probabilities and GELU inputs that exercise the approximations over their range.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.1 * torch.randn_like(p) if name.endswith("weight") else 0.1 * torch.randn_like(p))
            elif p.dim() == 2:
                p.normal_(0.0, 1.0 / math.sqrt(p.shape[1]))
            else:
                p.normal_(0.0, 0.1)
    return model.eval()


def make_inputs(config, cases, seed):
    """[(batch, seq, padded lengths)] -> feeds with int64 ids; padded positions are masked out."""
    rng = np.random.default_rng(seed)
    feeds = []
    for batch, seq, lengths in cases:
        ids = rng.integers(1, config["vocab"], size=(batch, seq), dtype=np.int64)
        ids[:, 0] = 0  # a [CLS]-like first token
        mask = np.ones((batch, seq), dtype=np.int64)
        types = np.zeros((batch, seq), dtype=np.int64)
        for b, n in enumerate(lengths):
            mask[b, n:] = 0
            ids[b, n:] = 0
            types[b, n // 2:n] = 1
        feeds.append({"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
    return feeds


def export_torchscript(model, feed, path, opset):
    args = tuple(torch.from_numpy(feed[n]) for n in INPUT_NAMES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, opset_version=opset, input_names=INPUT_NAMES, output_names=OUTPUT_NAMES,
                          dynamic_axes=DYNAMIC, dynamo=False, do_constant_folding=True)


def export_dynamo(model, feed, path):
    args = tuple(torch.from_numpy(feed[n]) for n in INPUT_NAMES)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence", min=2, max=model.embeddings.position.num_embeddings)
    shapes = {n: {0: batch, 1: seq} for n in INPUT_NAMES}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(model, args, input_names=INPUT_NAMES, output_names=OUTPUT_NAMES,
                                    dynamic_shapes=shapes, dynamo=True, verbose=False)
    program.save(path)
    # The exporter's per-node debug metadata (FX node, stack trace with this machine's paths) is dropped: it
    # changes nothing the runtime reads and would make the file depend on where it was built.
    model = onnx.load(path)
    for node in model.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    onnx.save(model, path)


def quantize_q8(src, dst, contrib_ops=False):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    settings = dict(Q8_SETTINGS, extra_options=dict(Q8_SETTINGS["extra_options"]))
    if contrib_ops:  # shape inference cannot type the outputs of com.microsoft ops: say they are float
        settings["extra_options"]["DefaultTensorType"] = onnx.TensorProto.FLOAT
    quantize_dynamic(src, dst, weight_type=QuantType.QInt8, **settings)


def quantize_qdq(src, dst, feeds):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter(feeds)

        def get_next(self):
            return next(self.feeds, None)

    quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=False)


def transformer_optimize(src, dst, config):
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions
    options = FusionOptions("bert")
    options.enable_attention = False  # keep the MatMuls (transformers.js files keep them too)
    model = optimizer.optimize_model(src, model_type="bert", num_heads=config["heads"], hidden_size=config["hidden"],
                                     optimization_options=options, opt_level=0, use_gpu=False)
    model.save_model_to_file(dst)


def ort_session(path, optimized_path=None, level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    if optimized_path:
        so.optimized_model_filepath = optimized_path
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def op_census(path):
    counts = {}
    for node in onnx.load(path, load_external_data=False).graph.node:
        key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def bits(a):
    """float32 bytes (little-endian) as base64."""
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minilm", action="store_true", help="the MiniLM-sized bench model (into build/)")
    parser.add_argument("--out", help="output directory")
    args = parser.parse_args()
    name = "minilm" if args.minilm else "tiny-bert"
    config = CONFIGS[name]
    out = args.out or os.path.join(REPO, "build/models/transformer" if args.minilm else "tests/fixtures/transformer")
    os.makedirs(out, exist_ok=True)
    p = lambda suffix: os.path.join(out, f"{name}-{suffix}.onnx")

    model = make_model(config, seed=11)
    if args.minilm:
        cases = [(1, 128, [128]), (1, 128, [100])]
    else:
        cases = [(2, 8, [8, 5]), (2, 13, [13, 9]), (1, 32, [27])]
    feeds = make_inputs(config, cases, seed=12)

    files = {}
    export_torchscript(model, feeds[0], p("opset14"), 14)
    export_torchscript(model, feeds[0], p("opset17"), 17)
    files["opset14"], files["opset17"] = p("opset14"), p("opset17")
    try:
        export_dynamo(model, feeds[0], p("dynamo"))
        files["dynamo"] = p("dynamo")
    except Exception as e:  # noqa: BLE001 - report and go on without it
        print(f"dynamo exporter failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}", file=sys.stderr)
    for key in list(files):
        quantize_q8(files[key], p(f"{key}_q8"))
        files[f"{key}_q8"] = p(f"{key}_q8")
    for key in ("opset14", "opset17"):
        quantize_qdq(files[key], p(f"{key}_qdq"), feeds)
        files[f"{key}_qdq"] = p(f"{key}_qdq")
    transformer_optimize(p("opset14"), p("opt"), config)
    files["opt"] = p("opt")
    quantize_q8(p("opt"), p("opt_q8"), contrib_ops=True)
    files["opt_q8"] = p("opt_q8")
    ort_session(p("opset14_q8"), p("ort_q8"), ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
    files["ort_q8"] = p("ort_q8")

    with torch.no_grad():
        torch_out = [model(*(torch.from_numpy(f[n]) for n in INPUT_NAMES)) for f in feeds]
    record = {
        "generator": "tools/transformer/bert.py", "torch": torch.__version__, "onnxruntime": ort.__version__,
        "onnx": onnx.__version__, "config": config, "q8_settings": {k: v for k, v in Q8_SETTINGS.items()},
        "inputs": [{k: {"dims": list(v.shape), "data": v.reshape(-1).tolist()} for k, v in f.items()} for f in feeds],
        "files": {},
    }
    for key, path in files.items():
        session = ort_session(path)
        outs = [session.run(OUTPUT_NAMES, f) for f in feeds]
        err = max(float(np.abs(o[0] - t[0].numpy()).max()) for o, t in zip(outs, torch_out))
        record["files"][key] = {
            "file": os.path.basename(path), "bytes": os.path.getsize(path), "ops": op_census(path),
            "max_abs_diff_vs_torch": err,
            "outputs": [{n: {"dims": list(o.shape), "bits": bits(o)} for n, o in zip(OUTPUT_NAMES, oo)} for oo in outs],
        }
        print(f"{os.path.basename(path):28s} {os.path.getsize(path):>9d} bytes  max|ort - torch| {err:.3g}  "
              + " ".join(f"{k}:{v}" for k, v in record["files"][key]["ops"].items()))
    record_path = os.path.join(out, f"{name}.json")
    with open(record_path, "w") as fh:
        json.dump(record, fh, separators=(",", ":"))
        fh.write("\n")
    # onnxruntime-web's outputs, the reference qwasm reproduces
    subprocess.run(["node", os.path.join(REPO, "tools/transformer/bert_web.mjs"), record_path], check=True, cwd=REPO)


if __name__ == "__main__":
    main()
