#!/usr/bin/python3
"""How PyTorch's post-training quantization rounds weights and biases, for quantizeStatic (js/model/ptq.js).

Run with Debian's system Python (torch 1.13, qnnpack): /usr/bin/python3 tools/golden/torch_ptq_rounding.py

A float network whose Conv2d and Linear both read the graph input (so their input scale is the input observer's,
which qwasm reproduces exactly), with weights and biases placed where rounding x * (1 / scale) (PyTorch) and x /
scale (ONNX's QuantizeLinear) disagree. torch quantizes it with the qnnpack qconfig (prepare, calibrate,
convert); the fixture records the integers torch's converted modules hold:
  weights  conv.weight().int_repr(), fc.weight().int_repr() (per-tensor symmetric qint8)
  biases   the int32 bias PyTorch's qnnpack engine adds: quantize_per_tensor(bias, w_scale * x_scale, 0, qint32)
           (its own quantize, the bias scale a double product), checked against the conv's output at the input's
           zero point
Writes tests/fixtures/torch/ptq_rounding.onnx (the float model, torch.onnx.export) and .json.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import FIXTURES, plain  # noqa: E402
from torch.ao.quantization import QuantStub, DeQuantStub, convert, get_default_qconfig, prepare  # noqa: E402

F32 = np.float32
torch.backends.quantized.engine = "qnnpack"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 6, 3, padding=1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.conv(x), self.fc(torch.flatten(x, 1))


class QNet(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.quant, self.dq1, self.dq2 = QuantStub(), DeQuantStub(), DeQuantStub()
        self.conv, self.fc = net.conv, net.fc

    def forward(self, x):
        x = self.quant(x)
        return self.dq1(self.conv(x)), self.dq2(self.fc(torch.flatten(x, 1)))


def disagree(values, scale):
    """Where rint(v * (1.0f / s)) and rint(v / s) (float32) differ."""
    v = np.asarray(values, dtype=F32)
    return np.rint(v * (F32(1) / F32(scale))) != np.rint(v / F32(scale))


def tie_values(rng, scale, n, lo, hi):
    """n float32 values k * scale near half steps, where the two roundings disagree (searched)."""
    out = []
    while len(out) < n:
        k = rng.integers(lo, hi) + 0.5
        v = F32(k * np.float64(scale))
        for cand in (v, np.nextafter(v, F32(np.inf)), np.nextafter(v, F32(-np.inf))):
            if disagree([cand], scale)[0]:
                out.append(cand)
                break
    return np.array(out, dtype=F32)


def main():
    rng = np.random.default_rng(31008)
    torch.manual_seed(0)
    net = Net().eval()
    # Weights: max |w| = 1 fixes the symmetric scale at 1 / 127.5; a third of the rest on disagreeing half steps.
    ws = F32(1.0) / F32(127.5)
    with torch.no_grad():
        for lin in (net.conv, net.fc):
            w = rng.uniform(-0.9, 0.9, lin.weight.shape).astype(F32).ravel()
            w[0] = 1.0
            k = len(w) // 3
            w[1:1 + k] = tie_values(rng, ws, k, -120, 120)
            lin.weight.copy_(torch.from_numpy(w.reshape(lin.weight.shape)))
    images = [rng.uniform(0, 1, (2, 4, 4)).astype(F32) for _ in range(12)]
    images[0][0, 0, 0] = 1.0  # the input range [0, 1]
    q = QNet(net)
    q.qconfig = get_default_qconfig("qnnpack")
    prepare(q, inplace=True)
    with torch.no_grad():
        for i in range(0, len(images), 4):
            q(torch.from_numpy(np.stack(images[i:i + 4])))
    xs, xz = q.quant.activation_post_process.calculate_qparams()
    xs = float(xs)
    # Biases on disagreeing half steps of their scale (float)(w_scale * x_scale): set after calibration (the input
    # observer does not see them), in the float model and in the one torch converts.
    with torch.no_grad():
        for lin in (net.conv, net.fc):
            bs = F32(np.float64(ws) * xs)
            lin.bias.copy_(torch.from_numpy(tie_values(rng, bs, lin.bias.numel(), -3000, 3000)))
    convert(q, inplace=True)
    x0 = torch.from_numpy(images[0][None])
    path = os.path.join(FIXTURES, "torch", "ptq_rounding.onnx")
    torch.onnx.export(net, x0, path, opset_version=13, input_names=["input"], output_names=["conv", "fc"])
    layers = {}
    for name in ("conv", "fc"):
        m = getattr(q, name)
        w = m.weight()
        bias_scale = float(w.q_scale()) * xs
        b = torch.quantize_per_tensor(m.bias().detach(), bias_scale, 0, torch.qint32).int_repr().numpy()
        if name == "conv":  # the int32 bias torch adds: the conv's output for an input at its zero point
            zero = torch._make_per_tensor_quantized_tensor(torch.full((1, 2, 4, 4), int(xz), dtype=torch.uint8), xs, int(xz))
            acc_scale = F32(w.q_scale()) * F32(xs)
            probe = torch.ops.quantized.conv2d(zero, m._packed_params, float(acc_scale), 128)
            assert np.array_equal(probe.int_repr().numpy()[0, :, 1, 1].astype(np.int64) - 128, np.clip(b, -128, 127)), \
                "the conv's bias integers are not quantize_per_tensor's"
        layers[name] = {"weight": {"name": name + ".weight", "scale": float(w.q_scale()), "zero_point": int(w.q_zero_point()),
                                   "q": w.int_repr().numpy().ravel().tolist(),
                                   "onnx_rule_differs": int(disagree(getattr(net, name).weight.detach().numpy().ravel(),
                                                                      w.q_scale()).sum())},
                        "bias": {"name": name + ".bias", "scale": float(F32(bias_scale)), "q": b.tolist(),
                                 "onnx_rule_differs": int(disagree(m.bias().detach().numpy(), F32(bias_scale)).sum())}}
    doc = {"generator": "tools/golden/torch_ptq_rounding.py", "torch": torch.__version__, "engine": "qnnpack",
           "model": "ptq_rounding.onnx", "qconfig": "qnnpack", "batch_size": 4,
           "input": {"name": "input", "shape": [1, 2, 4, 4], "scale": xs, "zero_point": int(xz)},
           "calibration": [plain(im.ravel()) for im in images], "layers": layers}
    with open(os.path.join(FIXTURES, "torch", "ptq_rounding.json"), "w") as fh:
        json.dump(doc, fh)
    print("ptq_rounding: input scale %r; x / scale would differ on %s weight and %s bias integers"
          % (xs, [layers[n]["weight"]["onnx_rule_differs"] for n in layers],
             [layers[n]["bias"]["onnx_rule_differs"] for n in layers]))


if __name__ == "__main__":
    main()
