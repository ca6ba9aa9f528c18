#!/usr/bin/python3
"""Whole quantized models exported with tools/export_torch.py, with PyTorch's exact outputs.

Run with Debian's system Python (torch 1.13, onnx 1.12): /usr/bin/python3 tools/golden/torch_models.py

Writes tests/fixtures/torch/models/<name>.onnx and <name>.json for small synthetic models that exercise every
exporter path (see MODELS). Each JSON file is {generator, torch, engine, model, description, covers, cases}; a
case is {name, inputs, outputs, quantized_outputs, tensors}:
  inputs   {name: {dtype: "float32", shape, data}} (graph inputs)
  outputs  {name: tensor} (graph outputs: float32, after DequantizeLinear)
  quantized_outputs  {graph output name: the quint8 tensor its DequantizeLinear reads}
  tensors  {onnx tensor name: tensor} for every tensor the model's modules produce (torch's own values, for
           debugging a mismatch layer by layer)
A tensor is {dtype, shape, data} (float32) or {dtype: "quint8", shape, scale, zero_point, q} (q = int_repr).

Every case is also run through export_torch.run_reference(), a numpy interpreter of the exporter's ONNX profile
with PyTorch's qnnpack arithmetic (the formulas of tools/golden/README.md), and every tensor must equal torch's
bit for bit; the script fails otherwise. --torchvision DIR additionally exports torchvision's quantizable
MobileNetV2 / MobileNetV3-Large / ResNet18 / ShuffleNetV2 (random init, PTQ on random data) into DIR (too big to
commit) and checks them the same way.
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

sys.dont_write_bytecode = True  # keep tools/ free of __pycache__
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from common import FIXTURES, plain, write_fixture  # noqa: E402
from export_torch import export, quantize_bias, verify  # noqa: E402

import torch.ao.nn.quantized as nnq  # noqa: E402
from torch.ao.quantization import (DeQuantStub, MinMaxObserver, PerChannelMinMaxObserver, QConfig,  # noqa: E402
                                   QuantStub, convert, fuse_modules, get_default_qconfig, prepare)

torch.backends.quantized.engine = "qnnpack"
GENERATOR = "tools/golden/torch_models.py"
OUTDIR = os.path.join(FIXTURES, "torch", "models")
F32 = np.float32


# =========================================================================================================
# Recording

def rec(t):
    if t.is_quantized:
        return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "scale": t.q_scale(),
                "zero_point": t.q_zero_point(), "q": t.int_repr().numpy().ravel().astype(int).tolist()}
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
            "data": [float(v) for v in t.detach().numpy().astype(F32).ravel()]}


def check_bias_rounding(rng, n=4000):
    """export_torch.quantize_bias against torch: a Linear whose input sits at its zero point outputs
    requant(bias_int32); with y_scale = w_scale * x_scale (multiplier exactly 1) the output is bias_int32 + yz.
    Biases on and next to half steps of w_scale * x_scale. Returns (values checked, mismatches)."""
    bad = done = 0
    while done < n:
        xs = float(F32(np.exp(rng.uniform(np.log(1e-3), np.log(0.5)))))
        ws = float(F32(np.exp(rng.uniform(np.log(1e-3), np.log(0.5)))))
        ys = float(F32(ws) * F32(xs))
        if F32(ws) * F32(xs) * (F32(1) / F32(ys)) != F32(1):
            continue
        bint = rng.integers(-120, 120, size=100)
        b = (bint + rng.choice([0.5, -0.5, 0.49999, 0.50001, 0.0, 0.25], size=100)) * np.float64(ws) * xs
        b = b.astype(F32)
        lin = nnq.Linear(3, 100)
        w = torch.quantize_per_tensor(torch.randn(100, 3), ws, 0, torch.qint8)
        lin.set_weight_bias(w, torch.from_numpy(b))
        lin.scale, lin.zero_point = ys, 128
        x = torch.quantize_per_tensor(torch.zeros(1, 3), xs, 7, torch.quint8)
        got = lin(x).int_repr().numpy().ravel().astype(np.int64) - 128
        want = quantize_bias(b, np.full(100, ws), xs).astype(np.int64)
        bad += int(np.sum(got != want))
        done += 100
    return done, bad


# =========================================================================================================
# Synthetic models

def per_channel_affine_qconfig(engine):
    """qint8 weights with per-channel *affine* (non-zero) zero points; QNNPACK and FBGEMM accept them."""
    return QConfig(activation=get_default_qconfig(engine).activation,
                   weight=PerChannelMinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_channel_affine))


def per_channel_symmetric_qconfig(engine):
    return QConfig(activation=get_default_qconfig(engine).activation,
                   weight=PerChannelMinMaxObserver.with_args(dtype=torch.qint8,
                                                             qscheme=torch.per_channel_symmetric))


def per_tensor_affine_qconfig(engine):
    return QConfig(activation=get_default_qconfig(engine).activation,
                   weight=MinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_tensor_affine))


class ConvNet(nn.Module):
    """Convolution paths: per-channel symmetric (fused BN + ReLU), depthwise stride 2, ReLU6 whose 6.0 saturates
    at 255, dilated conv with per-channel affine weights (non-zero zero points, no bias), Hardtanh on a
    channels-last tensor (torch 1.13 writes its result transposed: Clip + Transpose + Reshape), dilated max pool
    over padding (QNNPACK edge clamping), asymmetric kernel/stride/padding, grouped conv, ReLU6 below 255,
    max pool with ceil_mode."""

    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.relu6 = nn.ReLU6()
        self.dil = nn.Conv2d(8, 12, 3, padding=2, dilation=2, bias=False)
        self.htanh = nn.Hardtanh(-0.5, 1.0)
        self.pool = nn.MaxPool2d(3, stride=1, padding=1, dilation=2)
        self.asym = nn.Conv2d(12, 6, (1, 3), stride=(1, 2), padding=(0, 1))
        self.grouped = nn.Conv2d(6, 10, 3, padding=1, groups=2)
        self.relu6b = nn.ReLU6()
        self.pool2 = nn.MaxPool2d(2, ceil_mode=True)
        self.dequant = DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu1(self.bn1(self.conv1(x)))
        x = self.relu6(self.dw(x).contiguous())
        x = self.htanh(self.dil(x))  # channels-last input: torch 1.13 writes the result transposed
        x = self.pool(x)
        x = self.asym(x)
        x = self.relu6b(self.grouped(x).contiguous())
        x = self.pool2(x)
        return self.dequant(x)

    def prepare_float(self, engine):
        with torch.no_grad():
            self.dw.weight.mul_(0.15)      # keeps the depthwise output below 6: ReLU6's bound saturates at 255
            self.grouped.weight.mul_(6.0)  # ... and the grouped conv's output far above 6
        fuse_modules(self, [["conv1", "bn1", "relu1"]], inplace=True)
        self.qconfig = get_default_qconfig(engine)
        self.conv1.qconfig = per_channel_symmetric_qconfig(engine)
        self.dil.qconfig = per_channel_affine_qconfig(engine)
        self.grouped.qconfig = per_tensor_affine_qconfig(engine)

    input_shape = (1, 3, 11, 11)


class BlockNet(nn.Module):
    """Elementwise paths: add with different scales, add_relu, cat, mul (same shape and broadcast
    [N,C,1,1] x [N,C,H,W]), adaptive avg pool to 1x1 and to 2x2, Hardswish and Sigmoid tables, standalone
    ReLU, avg pool (QNNPACK, count_include_pad=False ignored; and ceil_mode), torch.flatten, LinearReLU with
    per-channel weights, Linear with per-tensor affine weights."""

    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.conv_a = nn.Conv2d(4, 6, 3, padding=1)
        self.relu_a = nn.ReLU()
        self.conv_b = nn.Conv2d(4, 6, 1)
        self.add = nnq.FloatFunctional()
        self.skip = nn.Conv2d(4, 6, 1, bias=False)
        self.add_relu = nnq.FloatFunctional()
        self.cat = nnq.FloatFunctional()
        self.conv_m = nn.Conv2d(12, 12, 1)
        self.mul = nnq.FloatFunctional()
        self.se_pool = nn.AdaptiveAvgPool2d(1)
        self.se_act = nn.Sigmoid()
        self.se_mul = nnq.FloatFunctional()
        self.hswish = nn.Hardswish()
        self.relu = nn.ReLU()
        self.avg = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.avg_ceil = nn.AvgPool2d(2, ceil_mode=True)
        self.pool22 = nn.AdaptiveAvgPool2d(2)
        self.fc1 = nn.Linear(48, 20)
        self.fc1_relu = nn.ReLU()
        self.fc2 = nn.Linear(20, 7)
        self.dequant = DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        a = self.relu_a(self.conv_a(x))
        s = self.add.add(a, self.conv_b(x))
        s = self.add_relu.add_relu(s, self.skip(x))
        c = self.cat.cat([s, a], dim=1)
        m = self.mul.mul(c, self.conv_m(c))
        m = self.se_mul.mul(self.se_act(self.se_pool(m)), m)
        h = self.relu(self.hswish(m))
        h = self.avg(h)
        h = self.avg_ceil(h)
        h = self.pool22(h)
        h = torch.flatten(h, 1)
        h = self.fc1_relu(self.fc1(h))
        return self.dequant(self.fc2(h))

    def prepare_float(self, engine):
        fuse_modules(self, [["conv_a", "relu_a"], ["fc1", "fc1_relu"]], inplace=True)
        self.qconfig = get_default_qconfig(engine)
        self.fc1.qconfig = per_channel_symmetric_qconfig(engine)
        self.fc2.qconfig = per_tensor_affine_qconfig(engine)
        self.conv_b.qconfig = per_channel_affine_qconfig(engine)

    input_shape = (1, 4, 7, 7)


class ShapeNet(nn.Module):
    """Reshapes and Linear on a batch of 3: view, transpose (channel shuffle), chunk + cat, Tensor.relu on a
    strided view, mean over (2, 3), Linear with per-channel affine weights (non-zero zero points), Linear without
    bias, LeakyReLU and Hardsigmoid tables (PyTorch's generic kernels, checked to be position independent for
    these qparams), reshape."""

    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.conv = nn.Conv2d(4, 8, 3, padding=1)
        self.relu = nn.ReLU()
        self.cat = nnq.FloatFunctional()
        self.fc1 = nn.Linear(8, 16)
        self.leaky = nn.LeakyReLU(0.125)
        self.fc2 = nn.Linear(16, 5, bias=False)
        self.hsig = nn.Hardsigmoid()
        self.dequant = DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu(self.conv(x))
        n, c, h, w = x.size()
        x = x.view(n, 2, c // 2, h, w)
        x = torch.transpose(x, 1, 2).contiguous()
        x = x.view(n, c, h, w)
        a, b = x.chunk(2, dim=1)
        x = self.cat.cat([b, a.relu()], dim=1)
        x = x.mean([2, 3])
        x = self.leaky(self.fc1(x))
        x = self.hsig(self.fc2(x))
        return self.dequant(x.reshape(n, 5))

    def prepare_float(self, engine):
        fuse_modules(self, [["conv", "relu"]], inplace=True)
        self.qconfig = get_default_qconfig(engine)
        self.fc1.qconfig = per_channel_affine_qconfig(engine)

    input_shape = (3, 4, 5, 5)


class ModsNet(nn.Module):
    """The modules the exporter rewrites into other ONNX operators: nearest upsampling (Gather), ConvTranspose2d (a
    convolution of the input spread out with its zero point), pixel_unshuffle / PixelShuffle (Reshape, Transpose),
    a broadcasting add (PyTorch's float kernel), add_scalar and mul_scalar (tables or new qparams), Conv1d (a
    convolution of height 1)."""

    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.relu = nn.ReLU()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.convt = nn.ConvTranspose2d(8, 8, 4, stride=2, padding=1)
        self.add = nnq.FloatFunctional()
        self.unshuffle = nn.PixelUnshuffle(2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.badd = nnq.FloatFunctional()
        self.shift = nnq.FloatFunctional()
        self.halve = nnq.FloatFunctional()
        self.conv1d = nn.Conv1d(32, 16, 3, stride=2, padding=1)
        self.shuffle = nn.PixelShuffle(2)
        self.dequant = DeQuantStub()

    def forward(self, x):
        x = self.relu(self.conv(self.quant(x)))
        s = self.add.add(self.up(x), self.convt(x))
        p = self.unshuffle(s)
        b = self.badd.add(p, self.pool(p))
        b = self.halve.mul_scalar(self.shift.add_scalar(b, 0.3), 0.5)
        c = self.conv1d(b.flatten(2))
        return self.dequant(self.shuffle(c.reshape(c.shape[0], 16, 3, 6)))

    def prepare_float(self, engine):
        fuse_modules(self, [["conv", "relu"]], inplace=True)
        self.qconfig = get_default_qconfig(engine)
        # PyTorch's ConvTranspose takes per-tensor weights only
        self.convt.qconfig = QConfig(activation=self.qconfig.activation,
                                     weight=MinMaxObserver.with_args(dtype=torch.qint8,
                                                                     qscheme=torch.per_tensor_symmetric))

    input_shape = (1, 3, 6, 6)


MODELS = [("convnet", ConvNet), ("blocknet", BlockNet), ("shapenet", ShapeNet), ("modsnet", ModsNet)]


def build_quantized(cls, seed, engine="qnnpack"):
    torch.backends.quantized.engine = engine
    torch.manual_seed(seed)
    m = cls().eval()
    with torch.no_grad():  # non-trivial BN statistics
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 2.0)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.2, 0.2)
    m.prepare_float(engine)
    prepare(m, inplace=True)
    with torch.no_grad():
        for _ in range(16):
            m(torch.randn(*cls.input_shape) * 1.5)
    convert(m, inplace=True)
    return m


def test_inputs(cls, exported_scale, seed):
    """Random inputs, one beyond the calibration range (saturating QuantizeLinear), one on rounding ties."""
    g = torch.Generator().manual_seed(seed)
    shape = cls.input_shape
    xs = [torch.randn(*shape, generator=g), torch.randn(*shape, generator=g) * 4.0]
    k = torch.randint(-60, 60, shape, generator=g).to(torch.float32)
    xs.append((torch.from_numpy(((k.numpy() + 0.5) * np.float64(exported_scale)).astype(F32))))
    return xs


def quant_scale(model):
    return float(model.quant.scale)


def write_model(name, cls, seed=0, engine="qnnpack", outdir=OUTDIR, generator=GENERATOR):
    m = build_quantized(cls, seed, engine)
    example = torch.zeros(*cls.input_shape)
    path = os.path.join(outdir, name + ".onnx")
    with warnings.catch_warnings():  # ConvNet reproduces torch's channels-last hardtanh bug on purpose
        warnings.filterwarnings("ignore", message=".*reads this channels-last input in memory order")
        exp = export(m, example, path, engine=engine)
    dq_in = {nd.output[0]: nd.input[0] for nd in exp.model.graph.node if nd.op_type == "DequantizeLinear"}
    inputs = test_inputs(cls, quant_scale(m), seed + 1)
    cases = []
    for i, x in enumerate(inputs):
        cap = verify(exp, (x,), "%s case %d" % (name, i))
        with torch.no_grad():
            y = m(x)
        outs = {o.name: rec(cap[o.name]) for o in exp.model.graph.output}
        assert all(np.array_equal(np.array(outs[o.name]["data"], dtype=F32), y.numpy().ravel())
                   for o in exp.model.graph.output)
        cases.append({"name": ["randn", "randn_x4", "quantize_ties"][i],
                      "inputs": {exp.model.graph.input[0].name: rec(x)},
                      "outputs": outs,
                      "quantized_outputs": {o.name: rec(cap[dq_in[o.name]]) for o in exp.model.graph.output
                                            if o.name in dq_in},
                      "tensors": {k: rec(v) for k, v in cap.items() if v.is_quantized}})
    covers = sorted({("%s.%s" % (nd.domain, nd.op_type)) if nd.domain else nd.op_type
                     for nd in exp.model.graph.node})
    hdr = {"generator": generator, "torch": torch.__version__, "engine": engine,
           "semantics": exp.model.metadata_props[0].value, "model": name + ".onnx",
           "description": " ".join(cls.__doc__.split()), "covers": covers}
    size = write_fixture(os.path.join(outdir, name + ".json"), hdr, {"cases": cases})
    print("%-10s %6d bytes onnx, %7d bytes json, %2d nodes: %s" % (name, os.path.getsize(path), size,
                                                                   len(exp.model.graph.node), ", ".join(covers)))
    return exp


# =========================================================================================================
# torchvision (not committed: too big)

def reestimate_bn(m, shape, runs):
    """BatchNorm statistics of a randomly initialized model re-estimated on random inputs (realistic ranges)."""
    with torch.no_grad():
        m.train()
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.reset_running_stats()
                mod.momentum = None
        for _ in range(runs):
            m(torch.randn(*shape))
        m.eval()


def torchvision_models(outdir):
    import time
    from torchvision.models import quantization as tvq
    builders = [("mobilenet_v2", tvq.mobilenet_v2), ("mobilenet_v3_large", tvq.mobilenet_v3_large),
                ("resnet18", tvq.resnet18), ("shufflenet_v2_x1_0", tvq.shufflenet_v2_x1_0)]
    torch.manual_seed(0)
    for name, fn in builders:
        t0 = time.time()
        m = fn(weights=None, quantize=False).eval()
        reestimate_bn(m, (4, 3, 224, 224), 4)
        m.fuse_model(is_qat=False) if "is_qat" in m.fuse_model.__code__.co_varnames else m.fuse_model()
        m.qconfig = get_default_qconfig("qnnpack")
        prepare(m, inplace=True)
        with torch.no_grad():
            for _ in range(4):
                m(torch.randn(2, 3, 224, 224))
        convert(m, inplace=True)
        x = torch.randn(1, 3, 224, 224)
        path = os.path.join(outdir, name + ".onnx")
        exp = export(m, x, path)
        # The same converted model through torch.onnx.export (QDQ), and the expected results for both files.
        try:
            torch.onnx.export(m, x, os.path.join(outdir, name + "_qdq.onnx"), opset_version=13,
                              input_names=["input"], output_names=["output"])
        except Exception as e:  # torch 1.13 cannot export every quantized graph (ShuffleNetV2's slicing)
            print("%-20s torch.onnx.export failed: %s" % (name, str(e).splitlines()[0][:120]))
        q = exp.capture(x)
        out_name = exp.model.graph.output[0].name
        last_q = [n for n in exp.model.graph.node if n.op_type == "DequantizeLinear"][-1].input[0]
        with torch.no_grad():
            y = m(x)
        doc = {"generator": "tools/golden/torch_models.py --torchvision", "torch": torch.__version__, "engine": "qnnpack",
               "input": {"name": exp.model.graph.input[0].name, "shape": list(x.shape), "data": plain(x.flatten().numpy())},
               "output": {"name": out_name, "shape": list(y.shape), "data": plain(y.flatten().numpy())},
               "quantized_output": {"name": last_q, "q": plain(q[last_q].int_repr().flatten().numpy())}}
        with open(os.path.join(outdir, name + ".json"), "w") as f:
            json.dump(doc, f)
        print("%-20s ok: %d nodes, %.1f MB, bit-exact with torch on every tensor (%.0f s)"
              % (name, len(exp.model.graph.node), os.path.getsize(path) / 1e6, time.time() - t0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--torchvision", metavar="DIR", help="also export and check torchvision's quantizable models")
    ap.add_argument("--torchvision-only", action="store_true", help="skip the committed fixtures (what npm test runs)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.torchvision_only:
        torchvision_models(args.torchvision)
        return
    done, bad = check_bias_rounding(np.random.default_rng(0))
    print("int32 bias rounding vs torch: %d biases, %d mismatches" % (done, bad))
    if bad:
        sys.exit(1)
    for name, cls in MODELS:
        write_model(name, cls)
    if args.torchvision:
        torchvision_models(args.torchvision)


if __name__ == "__main__":
    main()
