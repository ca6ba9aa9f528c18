"""A small CNN quantized with PyTorch's eager-mode post-training quantization, for the exporter's round trip
(docs/exporter.md): `qwasm-export examples/export_tiny_cnn.py:build -o tiny_cnn.onnx`.

build() returns (converted model, example input). The engine is QWASM_ENGINE, else the current
torch.backends.quantized.engine when the exporter supports it (x86 by default on torch 2.x), else qnnpack (Debian's
torch 1.13 defaults to onednn). Deterministic: fixed seeds.
"""
import os

import torch
import torch.nn as nn
from torch.ao.quantization import DeQuantStub, QuantStub, convert, fuse_modules, get_default_qconfig, prepare


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant, self.dequant = QuantStub(), DeQuantStub()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.relu2 = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.relu2(self.conv2(self.relu1(self.conv1(self.quant(x)))))
        return self.dequant(self.fc(torch.flatten(self.pool(x), 1)))


def build():
    engine = os.environ.get("QWASM_ENGINE", torch.backends.quantized.engine)
    if engine not in ("qnnpack", "fbgemm", "x86"):
        engine = "qnnpack"
    torch.backends.quantized.engine = engine
    torch.manual_seed(0)
    m = TinyCNN().eval()
    fuse_modules(m, [["conv1", "relu1"], ["conv2", "relu2"]], inplace=True)
    m.qconfig = get_default_qconfig(engine)
    prepare(m, inplace=True)
    with torch.no_grad():
        for _ in range(8):
            m(torch.rand(4, 1, 8, 8))
    convert(m, inplace=True)
    return m, torch.rand(1, 1, 8, 8)
