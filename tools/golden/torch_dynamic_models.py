"""A BERT-shaped encoder quantized with torch.ao.quantization.quantize_dynamic (dynamic int8 Linear, float
embeddings, LayerNorm, GELU, Softmax and attention around it), exported by the exporter, with PyTorch's values.

    /usr/bin/python3 tools/golden/torch_dynamic_models.py        # torch 1.13 (qnnpack) -> tests/fixtures/torch/models
    build/venv/bin/python tools/golden/torch_dynamic_models.py   # torch 2.13 (qnnpack, fbgemm, x86) -> torch2/models/<engine>

Writes bert_dynamic.onnx and .json: {inputs, output, linears: [{node, input, output}]}: every dynamic linear's
float input and output as PyTorch computed them (the file's DynamicQuantizeMatMul nodes must reproduce them bit for
bit from those inputs; export() checks it) and `float_error`, the largest difference export()'s numpy reference of
the float operators left elsewhere (they run with ONNX Runtime's arithmetic in qwasm, not PyTorch's).
"""
import math
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
warnings.filterwarnings("ignore")
from common import FIXTURES, plain, write_fixture  # noqa: E402
from export_torch import export  # noqa: E402

GENERATOR = "tools/golden/torch_dynamic_models.py"
FBGEMM_BUILD = "fbgemm" in torch.backends.quantized.supported_engines


class Layer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads, self.d = heads, hidden // heads
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.ff1, self.ff2 = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.act = nn.GELU()

    def forward(self, x):
        b, t, h = x.size()
        def heads(y):
            return y.view(b, t, self.heads, self.d).transpose(1, 2)
        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d), dim=-1)
        ctx = torch.matmul(att, v).transpose(1, 2).contiguous().view(b, t, h)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ff2(self.act(self.ff1(x))))


class TinyBert(nn.Module):
    """Embeddings (word + position, LayerNorm), 2 encoder layers (hidden 32, 4 heads, FFN 64), a tanh pooler on
    the first token and a classifier: every Linear dynamically quantized."""

    def __init__(self, vocab=50, hidden=32, seq=8):
        super().__init__()
        self.word, self.pos = nn.Embedding(vocab, hidden), nn.Embedding(seq, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.layers = nn.Sequential(Layer(hidden, 4, 64), Layer(hidden, 4, 64))
        self.pool, self.cls = nn.Linear(hidden, hidden), nn.Linear(hidden, 3)

    def forward(self, ids):
        x = self.ln(self.word(ids) + self.pos.weight)
        x = self.layers(x)
        return self.cls(torch.tanh(self.pool(x[:, 0])))


def write(engine, outdir):
    torch.backends.quantized.engine = engine
    torch.manual_seed(0)
    m = torch.ao.quantization.quantize_dynamic(TinyBert().eval(), {nn.Linear}, dtype=torch.qint8)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 50, (1, 8), generator=g)
    exp = export(m, ids, os.path.join(outdir, "bert_dynamic.onnx"), engine=engine)
    cases = []
    for x in (ids,):
        cap = exp.capture(x)
        with torch.no_grad():
            y = m(x)
        linears = [{"node": nd.name, "input": plain(cap[nd.input[0]].detach().numpy().ravel()),
                    "input_shape": list(cap[nd.input[0]].shape), "output": plain(cap[nd.output[0]].detach().numpy().ravel())}
                   for nd in exp.model.graph.node if nd.op_type == "DynamicQuantizeMatMul"]
        cases.append({"inputs": {"input": {"dtype": "int64", "shape": list(x.shape), "data": x.numpy().ravel().tolist()}},
                      "output": {"shape": list(y.shape), "data": plain(y.numpy().ravel())}, "linears": linears})
    meta = {p.key: p.value for p in exp.model.metadata_props}
    hdr = {"generator": GENERATOR, "torch": torch.__version__, "engine": engine, "semantics": meta["qwasm.semantics"],
           "model": "bert_dynamic.onnx", "description": " ".join(TinyBert.__doc__.split()),
           "float_error": exp.float_error, "covers": sorted({nd.op_type for nd in exp.model.graph.node})}
    size = write_fixture(os.path.join(outdir, "bert_dynamic.json"), hdr, {"cases": cases})
    print("%-8s bert_dynamic: %d nodes, %d dynamic linears bit-exact, float ops within %.3g of torch, %d bytes json"
          % (engine, len(exp.model.graph.node), len(cases[0]["linears"]), exp.float_error, size))


def main():
    torch.set_num_threads(1)
    if FBGEMM_BUILD:
        for engine in ("qnnpack", "fbgemm", "x86"):
            write(engine, os.path.join(FIXTURES, "torch2", "models", engine))
    else:
        write("qnnpack", os.path.join(FIXTURES, "torch", "models"))


if __name__ == "__main__":
    main()
