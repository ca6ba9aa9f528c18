#!/usr/bin/python3
"""Train the demo model: a small CNN on scikit-learn's digits, int8 via PyTorch post-training quantization.

Run with Debian's system Python (torch 1.13, sklearn, onnx): /usr/bin/python3 tools/train_digits.py

Writes models/digits.onnx (exported with tools/export_torch.py, qnnpack semantics), models/digits-float.onnx
(the same trained weights before quantization, by torch.onnx.export, opset 13, BatchNorm folded into the convs;
the demo's float reference, run there by onnxruntime-web; its first output "output" is the logits, the others
are the float activations wherever digits.onnx has a quantized tensor, named like that tensor: see FLOAT_TAPS)
and models/digits.json:
  float_accuracy, int8_accuracy   on the held-out 20 % split (stratified, random_state 0; 360 images)
  test_images                     the first 20 held-out images: image (64 floats in [0, 1], row-major 8x8),
                                  label, torch's int8 logits (float, after DeQuantStub), and the quantized output
                                  before DeQuantStub (int_repr q, scale, zero_point), prediction, and
                                  float_logits: the float model's logits (torch, before quantization)
  float_activations               the names of digits-float.onnx's outputs after "output" (FLOAT_TAPS)
Deterministic: fixed seeds, one thread. Under 10 s on one core.
"""
import copy
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from export_torch import export, verify  # noqa: E402

import torch.ao.nn.quantized as nnq  # noqa: E402
from torch.ao.quantization import DeQuantStub, QuantStub, convert, fuse_modules, get_default_qconfig, prepare  # noqa

REPO = os.path.dirname(HERE)
MODELS = os.path.join(REPO, "models")
ENGINE = "qnnpack"
SEED = 0
EPOCHS = 40
N_SAMPLES = 20


class DigitsNet(nn.Module):
    """8x8 digit -> 10 logits. 15.5k parameters; a residual block with a FloatFunctional add_relu."""

    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.relu2 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv3 = nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(32)
        self.relu3 = nn.ReLU()
        self.conv4 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.bn4 = nn.BatchNorm2d(32)
        self.skip = nnq.FloatFunctional()
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)
        self.dequant = DeQuantStub()

    def forward(self, x):
        x = self.quant(x)                                    # [N, 1, 8, 8]
        x = self.relu1(self.bn1(self.conv1(x)))              # [N, 8, 8, 8]
        x = self.pool(self.relu2(self.bn2(self.conv2(x))))   # [N, 16, 4, 4]
        x = self.relu3(self.bn3(self.conv3(x)))              # [N, 32, 4, 4]
        x = self.skip.add_relu(self.bn4(self.conv4(x)), x)   # residual
        x = torch.flatten(self.gap(x), 1)                    # [N, 32]
        return self.dequant(self.fc(x))                      # [N, 10]

    def fuse(self):
        fuse_modules(self, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"], ["conv3", "bn3", "relu3"],
                            ["conv4", "bn4"]], inplace=True)


# The float activations to export next to the logits, one per quantized tensor of digits.onnx that has a float
# counterpart: (int8 tensor name, as tools/export_torch.py names it by module path; float module path; whether
# the value is that module's output or its input). Fused modules end where their last float module ends: a fused
# Conv+BN+ReLU's int8 output is the float activation after its ReLU, Conv+BN's is after the BN, and
# FloatFunctional.add_relu's is after its relu (the value it passes through its activation_post_process).
# torch.flatten is no module: its value is fc's input. digits.onnx's skip/pre_relu (the add before the relu,
# quantized with the relu's qparams) has no float tensor, and output (DeQuantStub) is the logits themselves.
FLOAT_TAPS = [
    ("quant", "quant", "output"),                          # QuantStub: the float input itself
    ("conv1", "relu1", "output"),                          # conv1 + bn1 + relu1
    ("conv2", "relu2", "output"),                          # conv2 + bn2 + relu2
    ("pool", "pool", "output"),
    ("conv3", "relu3", "output"),                          # conv3 + bn3 + relu3
    ("conv4", "bn4", "output"),                            # conv4 + bn4
    ("skip", "skip.activation_post_process", "output"),    # add_relu
    ("gap", "gap", "output"),
    ("flatten", "fc", "input"),
    ("fc", "fc", "output"),
]


class FloatTaps(nn.Module):
    """The float model returning (logits, *the FLOAT_TAPS activations), collected by forward (pre-)hooks."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.values = {}
        for name, path, where in FLOAT_TAPS:
            mod = model.get_submodule(path)
            if where == "input":
                mod.register_forward_pre_hook(lambda m, args, name=name: self.values.__setitem__(name, args[0]))
            else:
                mod.register_forward_hook(lambda m, args, out, name=name: self.values.__setitem__(name, out))

    def forward(self, x):
        self.values = {}
        out = self.model(x)
        return (out,) + tuple(self.values[name] for name, _, _ in FLOAT_TAPS)


def load_split():
    d = load_digits()
    x = (d.images.astype(np.float32) / np.float32(16.0))[:, None, :, :]  # exact: k / 16
    idx = np.arange(len(x))
    tr, te = train_test_split(idx, test_size=0.2, stratify=d.target, random_state=SEED)
    return x, d.target.astype(np.int64), tr, te


def accuracy(model, x, y):
    with torch.no_grad():
        return float((model(torch.from_numpy(x)).argmax(1).numpy() == y).mean())


def train(x, y):
    torch.manual_seed(SEED)
    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, EPOCHS)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    g = torch.Generator().manual_seed(SEED)
    for _ in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(xt), generator=g)
        for i in range(0, len(xt), 32):
            b = perm[i:i + 32]
            # light augmentation: shift by up to one pixel
            dx, dy = torch.randint(-1, 2, (2,), generator=g).tolist()
            xb = torch.roll(xt[b], shifts=(dy, dx), dims=(2, 3))
            loss = nn.functional.cross_entropy(model(xb), yt[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    return model.eval()


def quantize(model, x_calib):
    torch.backends.quantized.engine = ENGINE
    model.fuse()
    model.qconfig = get_default_qconfig(ENGINE)
    prepare(model, inplace=True)
    with torch.no_grad():
        for i in range(0, len(x_calib), 256):
            model(torch.from_numpy(x_calib[i:i + 256]))
    convert(model, inplace=True)
    return model


def main():
    t0 = time.time()
    torch.set_num_threads(1)
    x, y, tr, te = load_split()
    model = train(x[tr], y[tr])
    float_acc = accuracy(model, x[te], y[te])
    fmodel = copy.deepcopy(model)  # quantize() fuses and converts in place; keep the float model
    qmodel = quantize(model, x[tr])
    int8_acc = accuracy(qmodel, x[te], y[te])
    print("float accuracy %.4f, int8 accuracy %.4f on %d held-out images (%d parameters, %.0f s)"
          % (float_acc, int8_acc, len(te), sum(p.numel() for p in DigitsNet().parameters()), time.time() - t0))
    if float_acc < 0.95:
        sys.exit("float accuracy below 0.95")

    os.makedirs(MODELS, exist_ok=True)
    onnx_path = os.path.join(MODELS, "digits.onnx")
    exp = export(qmodel, torch.zeros(1, 1, 8, 8), onnx_path, engine=ENGINE)
    out_q = exp.tensor_names[next(n.args[0].name for n in exp.graph_module.graph.nodes
                                  if n.op == "call_module" and n.target == "dequant")]

    # every held-out image through the file's reference semantics: bit-exact with torch, one image at a time
    samples = []
    for k, i in enumerate(te):
        xi = torch.from_numpy(x[i:i + 1])
        cap = verify(exp, (xi,), "held-out image %d" % i)
        if k < N_SAMPLES:
            q, logits = cap[out_q], cap["output"]
            samples.append({"index": int(i), "label": int(y[i]),
                            "image": [float(v) for v in x[i].ravel()],
                            "logits": [float(v) for v in logits.numpy().ravel()],
                            "q": [int(v) for v in q.int_repr().numpy().ravel()],
                            "scale": q.q_scale(), "zero_point": q.q_zero_point(),
                            "prediction": int(logits.argmax())})
    with torch.no_grad():
        for s in samples:
            xi = torch.tensor(s["image"], dtype=torch.float32).reshape(1, 1, 8, 8)
            s["float_logits"] = [float(v) for v in fmodel(xi).numpy().ravel()]
    float_path = os.path.join(MODELS, "digits-float.onnx")
    missing = [name for name, _, _ in FLOAT_TAPS if name not in {o for n in exp.model.graph.node for o in n.output}]
    if missing:
        sys.exit("FLOAT_TAPS names %s are not tensors of digits.onnx" % missing)
    taps = FloatTaps(copy.deepcopy(fmodel)).eval()  # hooks on a copy: fmodel stays as it was
    with torch.no_grad():  # each float activation against its int8 tensor (torch's own, dequantized): a sanity check
        xi = torch.tensor(samples[0]["image"], dtype=torch.float32).reshape(1, 1, 8, 8)
        fouts, cap = taps(xi), exp.capture(xi)
        report = []
        for (name, _, _), f in zip(FLOAT_TAPS, fouts[1:]):
            q = cap[name].dequantize()
            if q.shape != f.shape:
                sys.exit("float activation %s has shape %s, the int8 tensor %s" % (name, list(f.shape), list(q.shape)))
            db = 10 * np.log10(float((f ** 2).sum()) / float(((f - q) ** 2).sum()))
            if not db > 10:
                sys.exit("float activation %s is no counterpart of the int8 tensor (SQNR %.1f dB)" % (name, db))
            report.append("%s %.1f" % (name, db))
        print("SQNR int8 vs float on test image 0 (dB): " + ", ".join(report))
    torch.onnx.export(taps, torch.zeros(1, 1, 8, 8), float_path, opset_version=13, input_names=["input"],
                      output_names=["output"] + [name for name, _, _ in FLOAT_TAPS], do_constant_folding=True)
    doc = {"generator": "tools/train_digits.py", "torch": torch.__version__, "engine": ENGINE,
           "model": "digits.onnx", "float_model": "digits-float.onnx",
           "input": {"name": "input", "shape": [1, 1, 8, 8], "dtype": "float32", "range": "pixel / 16, in [0, 1]"},
           "output": {"name": "output", "shape": [1, 10], "dtype": "float32", "quantized_name": out_q},
           "float_activations": [name for name, _, _ in FLOAT_TAPS],
           "classes": 10, "float_accuracy": float_acc, "int8_accuracy": int8_acc,
           "split": {"dataset": "sklearn.datasets.load_digits", "test_size": 0.2, "stratify": True,
                     "random_state": SEED, "train": len(tr), "test": len(te)},
           "test_images": samples}
    lines = ["{"]
    keys = [k for k in doc if k != "test_images"]
    for k in keys:
        lines.append(" %s: %s," % (json.dumps(k), json.dumps(doc[k])))
    lines.append(' "test_images": [')
    lines += ["  " + json.dumps(s) + ("," if j + 1 < len(samples) else "") for j, s in enumerate(samples)]
    lines += [" ]", "}"]
    text = "\n".join(lines) + "\n"
    json.loads(text)
    with open(os.path.join(MODELS, "digits.json"), "w") as fh:
        fh.write(text)
    print("wrote %s (%d bytes, %d nodes), %s (%d bytes) and models/digits.json; all %d held-out images bit-exact"
          " (%.0f s)" % (os.path.relpath(onnx_path, REPO), os.path.getsize(onnx_path), len(exp.model.graph.node),
                         os.path.relpath(float_path, REPO), os.path.getsize(float_path), len(te), time.time() - t0))


if __name__ == "__main__":
    main()
