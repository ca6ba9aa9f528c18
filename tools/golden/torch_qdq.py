"""QDQ-format ONNX models exported by torch.onnx from real qnnpack-quantized PyTorch models.

    /usr/bin/python3 tools/golden/torch_qdq.py

torch.onnx (1.13) exports a converted eager-mode model as float operators wrapped in
QuantizeLinear/DequantizeLinear pairs ("QDQ"). qwasm's loader fuses those pairs back into integer
operators (js/model/qdq.js). For each model this writes tests/fixtures/torch/qdq/NAME.onnx and
NAME.json holding a few inputs and PyTorch's outputs for them (qnnpack engine, float32 values).
"""
import io
import json
import os

import torch
import torch.nn as nn
from torch.ao import quantization as tq

from common import FIXTURES, plain

OUT = os.path.join(FIXTURES, "torch", "qdq")


class ConvNet(nn.Module):
    """Conv+ReLU (fused), max pool, flatten, linear: the QLinearConv / QGemm path."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 10)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.pool(self.relu(self.conv(self.quant(x))))
        return self.dequant(self.fc(torch.flatten(x, 1)))

    fuse = [["conv", "relu"]]


class ResNetLet(nn.Module):
    """Residual add, global average pool and a ReLU6-clamped linear: QLinearAdd, QLinearGlobalAveragePool."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.skip = nn.quantized.FloatFunctional()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.relu1(self.conv1(self.quant(x)))
        x = self.skip.add(x, self.conv2(x))
        x = torch.flatten(self.pool(x), 1)
        return self.dequant(self.fc(x))

    fuse = [["conv1", "relu1"]]


class PoolNet(nn.Module):
    """A padded AvgPool2d (torch.onnx writes Pad + AveragePool) and x.mean([2, 3]) (ReduceMean) between QDQ pairs."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(2, 6, 3, padding=1)
        self.relu = nn.ReLU()
        self.pool = nn.AvgPool2d(3, stride=1, padding=1)
        self.fc = nn.Linear(6, 4)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.pool(self.relu(self.conv(self.quant(x))))
        return self.dequant(self.fc(x.mean([2, 3])))

    fuse = [["conv", "relu"]]


def build(cls, shape, seed):
    torch.manual_seed(seed)
    m = cls().eval()
    m.qconfig = tq.get_default_qconfig("qnnpack")
    tq.fuse_modules(m, cls.fuse, inplace=True)
    tq.prepare(m, inplace=True)
    gen = torch.Generator().manual_seed(seed + 1)
    for _ in range(4):
        m(torch.randn((16,) + shape[1:], generator=gen))
    tq.convert(m, inplace=True)
    return m, gen


def main():
    torch.backends.quantized.engine = "qnnpack"
    os.makedirs(OUT, exist_ok=True)
    for name, cls, shape in [("convnet", ConvNet, (1, 1, 8, 8)), ("resnetlet", ResNetLet, (1, 3, 6, 6)),
                             ("poolnet", PoolNet, (1, 2, 7, 7))]:
        m, gen = build(cls, shape, seed=len(name))
        buf = io.BytesIO()
        torch.onnx.export(m, torch.randn(shape, generator=gen), buf, opset_version=13,
                          input_names=["x"], output_names=["y"])
        with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
            f.write(buf.getvalue())
        cases = []
        for _ in range(4):
            x = torch.randn(shape, generator=gen)
            with torch.no_grad():
                y = m(x)
            cases.append({"x": plain(x.flatten().numpy()), "y": plain(y.flatten().numpy())})
        doc = {"generator": "tools/golden/torch_qdq.py", "torch": torch.__version__, "engine": "qnnpack",
               "input": "x", "output": "y", "input_dims": list(shape), "output_dims": list(y.shape),
               "output_scale": float(m.fc.scale), "cases": cases}
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(doc, f)
        print(name, len(buf.getvalue()), "bytes")


if __name__ == "__main__":
    main()
