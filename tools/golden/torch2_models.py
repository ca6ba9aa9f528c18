"""Whole quantized models from PyTorch 2.13 (qnnpack, fbgemm and x86 engines) exported by the exporter
(python/qwasm_export), with PyTorch's exact values of every tensor.

Run from the venv (bash tools/setup-python.sh prints its python):
    build/venv/bin/python tools/golden/torch2_models.py              # committed fixtures (~1 min)
    build/venv/bin/python tools/golden/torch2_models.py --cnn DIR    # + the CNN architectures into DIR (~2 min)

Writes tests/fixtures/torch2/models/<engine>/<name>.onnx and .json, the format of tools/golden/torch_models.py
(whose synthetic models, eager mode, it reuses with each engine's default qconfig), plus an FX graph mode model
(prepare_fx / convert_fx with the engine's default qconfig mapping). --cnn exports ResNet18, MobileNetV2,
MobileNetV3-Large and ShuffleNetV2 (tools/golden/cnn_archs.py: random weights, BatchNorm statistics re-estimated,
PTQ on random data) for each engine into DIR/<engine>/<name>.onnx with <name>.json (input, output, the int8
logits) and <name>.bin (every quantized tensor's int_repr, row-major, in the order and with the shapes the JSON's
`tensors` lists): too big to commit; npm test writes them (tools/test.sh) and tests/js/model-torch2.test.js
compares qwasm with them on every tensor.

export() itself checks every file against PyTorch through its numpy reference; this script fails otherwise.
torch.set_num_threads(1): PyTorch's generic kernels split their loops across threads, which moves the
positions where their vector and scalar code paths meet.
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import cnn_archs  # noqa: E402
import torch_models as TM  # noqa: E402
from common import FIXTURES, plain  # noqa: E402
from export_torch import export  # noqa: E402
from torch.ao.quantization import get_default_qconfig, prepare, convert  # noqa: E402

GENERATOR = "tools/golden/torch2_models.py"
ENGINES = ("qnnpack", "fbgemm", "x86")
OUTDIR = os.path.join(FIXTURES, "torch2", "models")


class FXNet(nn.Module):
    """FX graph mode (prepare_fx / convert_fx, the engine's default qconfig mapping): Conv + BatchNorm + ReLU, a
    residual `+`, torch.cat, max pool, adaptive average pool, flatten, Linear + ReLU, Linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.conv3 = nn.Conv2d(16, 8, 1)
        self.fc1 = nn.Linear(24, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = x + self.conv2(x)
        x = torch.cat([x, self.conv3(x)], dim=1)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc2(F.relu(self.fc1(x)))

    input_shape = (2, 3, 6, 6)


def build_fx(engine, seed=0):
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = engine
    torch.manual_seed(seed)
    m = FXNet().eval()
    example = torch.randn(*FXNet.input_shape)
    prepared = prepare_fx(m, get_default_qconfig_mapping(engine), (example,))
    with torch.no_grad():
        for _ in range(8):
            prepared(torch.randn(*FXNet.input_shape) * 1.5)
    return convert_fx(prepared)


def write_fx(engine, outdir):
    """An FX model's fixture, in torch_models.write_model's format (the graph input is the float input)."""
    m = build_fx(engine)
    qnode = next(n for n in m.graph.nodes if n.op == "call_function" and n.target is torch.quantize_per_tensor)
    scale = float(getattr(m, qnode.args[1].target))
    saved = TM.build_quantized, TM.quant_scale
    TM.build_quantized, TM.quant_scale = (lambda cls, seed, eng: m), (lambda model: scale)
    try:
        return TM.write_model("fxnet", FXNet, engine=engine, outdir=outdir, generator=GENERATOR)
    finally:
        TM.build_quantized, TM.quant_scale = saved


def write_fixtures():
    for engine in ENGINES:
        outdir = os.path.join(OUTDIR, engine)
        for name, cls in TM.MODELS:
            TM.write_model(name, cls, engine=engine, outdir=outdir, generator=GENERATOR)
        write_fx(engine, outdir)


def build_cnn(cls, engine, size=224):
    torch.backends.quantized.engine = engine
    torch.manual_seed(0)
    m = cls().eval()
    TM.reestimate_bn(m, (4, 3, size, size), 2)
    m.fuse_model()
    m.qconfig = get_default_qconfig(engine)
    prepare(m, inplace=True)
    with torch.no_grad():
        for _ in range(2):
            m(torch.randn(2, 3, size, size))
    convert(m, inplace=True)
    return m


def write_cnns(outdir, names=None):
    for engine in ENGINES:
        d = os.path.join(outdir, engine)
        os.makedirs(d, exist_ok=True)
        for name, cls in cnn_archs.ARCHITECTURES:
            if names and name not in names:
                continue
            t0 = time.time()
            m = build_cnn(cls, engine)
            x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
            exp = export(m, x, os.path.join(d, name + ".onnx"), engine=engine)
            cap = exp.capture(x)
            with torch.no_grad():
                y = m(x)
            tensors, blobs, offset = [], [], 0
            for t_name, v in cap.items():
                if v.is_quantized:
                    q = v.int_repr().contiguous().numpy().astype(np.uint8).ravel()
                    tensors.append({"name": t_name, "shape": list(v.shape), "offset": offset,
                                    "scale": v.q_scale(), "zero_point": v.q_zero_point()})
                    blobs.append(q)
                    offset += q.size
            with open(os.path.join(d, name + ".bin"), "wb") as fh:
                fh.write(np.concatenate(blobs).tobytes())
            doc = {"generator": GENERATOR + " --cnn", "torch": torch.__version__, "engine": engine,
                   "semantics": {p.key: p.value for p in exp.model.metadata_props}["qwasm.semantics"],
                   "input": {"name": exp.model.graph.input[0].name, "shape": list(x.shape),
                             "data": plain(x.flatten().numpy())},
                   "output": {"name": exp.model.graph.output[0].name, "shape": list(y.shape),
                              "data": plain(y.flatten().numpy())},
                   "tensors": tensors}
            with open(os.path.join(d, name + ".json"), "w") as fh:
                json.dump(doc, fh)
            print("%-8s %-20s ok: %d nodes, %d tensors, bit-exact with torch on every tensor (%.0f s)"
                  % (engine, name, len(exp.model.graph.node), len(tensors), time.time() - t0), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cnn", metavar="DIR", help="also export the CNN architectures into DIR (not committed)")
    ap.add_argument("--cnn-only", action="store_true", help="skip the committed fixtures (what npm test runs)")
    ap.add_argument("--only", help="comma-separated architecture names")
    args = ap.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")  # torch 2.13 warns that torch.ao.quantization and quantized dtypes are deprecated
    if not args.cnn_only:
        write_fixtures()
    if args.cnn:
        write_cnns(args.cnn, args.only.split(",") if args.only else None)


if __name__ == "__main__":
    main()
