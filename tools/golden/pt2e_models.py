"""torchao's PT2E flow (XNNPACKQuantizer, static, per-channel weights) on a CNN and on a small transformer block,
exported with torch.onnx.export(dynamo=True), run by onnxruntime (Python) and compared with the converted PyTorch
model (reference Q/DQ semantics). Run from the venv (torch 2.13, torchao 0.18, onnx, onnxscript, onnxruntime):

    build/venv/bin/python tools/golden/pt2e_models.py     # -> tests/fixtures/pt2e/*.onnx + .json (~20 s)

Writes cnn.onnx (and cnn-probe.onnx: every QuantizeLinear output and its float input also graph outputs) and
block.onnx, and <name>.json: the inputs, the converted model's outputs ("torch"), onnxruntime's ("ort"), and for
the CNN `layers`: per QuantizeLinear, how many of its int8 outputs differ between PyTorch and onnxruntime and why:
  rounding  the float input is the same bits in both; PyTorch's quantize_per_tensor rounds x * (1 / s) (float32),
            ONNX's QuantizeLinear x / s: they differ where the quotient lies within an ulp of a half step;
  float     the float input already differs: onnxruntime quantizes each Conv / Gemm's float bias to int32 at
            x_scale * w_scale (its WeightBiasQuantization, which qwasm's loader repeats) where PyTorch adds the float
            bias, or an earlier layer already differed.
  explained for each Conv / Gemm layer: the elements where PyTorch's own float op, run on onnxruntime's int8 input
            with the bias onnxruntime rounded, then quantize_per_tensor, still differs from onnxruntime (0: the
            bias rounding and the inherited inputs are the whole difference).
tests/js/model-pt2e.test.js requires qwasm to equal onnxruntime-web on every int8 tensor of cnn-probe.onnx.
"""
import json
import math
import os
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn
from onnx import TensorProto, helper, shape_inference

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.filterwarnings("ignore")
from common import FIXTURES  # noqa: E402

from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config  # noqa: E402

OUT = os.path.join(FIXTURES, "pt2e")
F32 = np.float32


class CNN(nn.Module):
    """Conv + BatchNorm + ReLU, a depthwise conv + ReLU added to its input, a strided conv + ReLU, max pool,
    flatten, Linear."""

    def __init__(self):
        super().__init__()
        self.c1, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.c3 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.c1(x)))
        x = x + torch.relu(self.c2(x))
        x = torch.nn.functional.max_pool2d(torch.relu(self.c3(x)), 2)
        return self.fc(x.flatten(1))

    shape = (1, 3, 16, 16)


class Block(nn.Module):
    """A transformer encoder block: fused QKV Linear, 4-head attention (softmax), output Linear, residual +
    LayerNorm, FFN Linear + ReLU + Linear, residual + LayerNorm (hidden 32)."""

    def __init__(self, h=32, heads=4):
        super().__init__()
        self.heads, self.d = heads, h // heads
        self.qkv, self.o = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.ff1, self.ff2 = nn.Linear(h, 64), nn.Linear(64, h)

    def forward(self, x):
        b, t, h = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, self.d).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.d), dim=-1)
        x = self.ln1(x + self.o((a @ v).transpose(1, 2).reshape(b, t, h)))
        return self.ln2(x + self.ff2(torch.relu(self.ff1(x))))

    shape = (1, 8, 32)


def quantize(cls):
    torch.manual_seed(0)
    m = cls().eval()
    g = torch.Generator().manual_seed(1)
    example = torch.randn(*cls.shape, generator=g)
    exported = torch.export.export(m, (example,)).module()
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(exported, quantizer)
    for _ in range(16):
        prepared(torch.randn(*cls.shape, generator=g))
    return convert_pt2e(prepared), example


def floats(a):
    return [float(v) for v in np.asarray(a, dtype=F32).ravel()]


class Capture(torch.fx.Interpreter):
    def __init__(self, gm):
        super().__init__(gm)
        self.values = {}

    def run_node(self, n):
        v = super().run_node(n)
        self.values[n.name] = v
        return v


def explain(converted, model, got, cap):
    """Per Conv / Gemm: PyTorch's float op on onnxruntime's dequantized input with the bias rounded as onnxruntime
    rounds it, quantized by quantize_per_tensor, against onnxruntime's int8 output; returns {q output: mismatches}."""
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    prod = {o: n for n in model.graph.node for o in n.output}
    out = {}
    for q in [n for n in model.graph.node if n.op_type == "QuantizeLinear"]:
        node, relu = prod.get(q.input[0]), False
        if node is not None and node.op_type == "Relu":
            node, relu = prod.get(node.input[0]), True
        if node is not None and node.op_type in ("Add", "MaxPool"):  # PyTorch's op on onnxruntime's int8 inputs
            ins = []
            for i in node.input:
                d = prod.get(i)
                if d is None or d.op_type != "DequantizeLinear" or d.input[0] not in got:
                    break
                ins.append(torch.from_numpy(((got[d.input[0]].astype(np.int64) - int(inits[d.input[2]])).astype(F32)
                                             * F32(float(inits[d.input[1]]))).astype(F32)))
            else:
                a = {k.name: onnx.helper.get_attribute_value(k) for k in node.attribute}
                y = ins[0] + ins[1] if node.op_type == "Add" else torch.nn.functional.max_pool2d(
                    ins[0], a["kernel_shape"], a.get("strides", a["kernel_shape"]))
                s, z = float(inits[q.input[1]]), int(inits[q.input[2]])
                tq = np.clip(np.rint((y.numpy() * F32(1.0 / s)).astype(F32)) + z, -128, 127)
                out[q.output[0]] = int(np.sum(tq != got[q.output[0]].astype(np.int64)))
            continue
        if node is None or node.op_type not in ("Conv", "Gemm") or len(node.input) < 3:
            continue
        dq_x, dq_w = prod[node.input[0]], prod[node.input[1]]
        xq_name = dq_x.input[0]
        if xq_name not in got:
            continue
        xs, xz = float(inits[dq_x.input[1]]), int(inits[dq_x.input[2]])
        x = torch.from_numpy(((got[xq_name].astype(np.int64) - xz).astype(F32) * F32(xs)).astype(F32))
        w = torch.from_numpy(cap[node.input[1]] if node.input[1] in cap else got[node.input[1]])
        ws = np.atleast_1d(inits[dq_w.input[1]]).astype(F32)
        b = inits[node.input[2]].astype(F32)
        bs = (F32(xs) * ws).astype(F32)
        b_rounded = torch.from_numpy((np.rint((b / bs).astype(F32)) * bs).astype(F32))
        if node.op_type == "Conv":
            a = {k.name: onnx.helper.get_attribute_value(k) for k in node.attribute}
            pads = a.get("pads", [0, 0, 0, 0])
            y = torch.nn.functional.conv2d(x, w, b_rounded, a.get("strides", [1, 1]), pads[:2],
                                           a.get("dilations", [1, 1]), a.get("group", 1))
        else:
            y = torch.nn.functional.linear(x, w, b_rounded)
        if relu:
            y = torch.relu(y)
        s, z = float(inits[q.input[1]]), int(inits[q.input[2]])
        tq = np.clip(np.rint((y.numpy() * F32(1.0 / s)).astype(F32)) + z, -128, 127)
        out[q.output[0]] = int(np.sum(tq != got[q.output[0]].astype(np.int64)))
    return out


def analyse(converted, probe_path, model, inputs):
    """Per QuantizeLinear: int8 outputs PyTorch and onnxruntime disagree on, by cause (see the module doc)."""
    sess = ort.InferenceSession(probe_path)
    names = [o.name for o in sess.get_outputs()]
    qnodes = [n for n in model.graph.node if n.op_type == "QuantizeLinear"]
    inits_proto = {i.name: i for i in model.graph.initializer}
    inits = {k: onnx.numpy_helper.to_array(v) for k, v in inits_proto.items()}
    rows = {n.output[0]: {"tensor": n.input[0], "elements": 0, "rounding": 0, "float": 0, "upstream_equal": True}
            for n in qnodes}
    weights = {n.output[0]: inits[n.input[0]] for n in model.graph.node
               if n.op_type == "DequantizeLinear" and n.input[0] in inits}
    for x in inputs:
        cap = Capture(converted)
        with torch.no_grad():
            cap.run(x)
        got = dict(zip(names, sess.run(None, {sess.get_inputs()[0].name: x.numpy()})))
        deq = {}
        for n in model.graph.node:  # the dequantized weights, as DequantizeLinear gives them
            if n.output[0] in weights:
                w, sc = weights[n.output[0]].astype(np.int64), inits[n.input[1]]
                zp = inits[n.input[2]] if len(n.input) > 2 else 0
                ax = {k.name: onnx.helper.get_attribute_value(k) for k in n.attribute}.get("axis", 1)
                shp = [1] * w.ndim
                shp[ax] = -1
                deq[n.output[0]] = ((w - np.asarray(zp).reshape(shp if np.ndim(zp) else [])).astype(F32)
                                    * np.asarray(sc, F32).reshape(shp if np.ndim(sc) else [])).astype(F32)
        for qname, miss in explain(converted, model, got, deq).items():
            rows[qname]["explained"] = rows[qname].get("explained", 0) + miss
        upstream_differs = False  # an earlier QuantizeLinear (graph order) already differed on this input
        for n in qnodes:
            src = n.input[0]
            if src not in cap.values or src not in got:
                continue
            s, z = float(inits[n.input[1]]), int(inits[n.input[2]])
            tf = cap.values[src].detach().numpy().astype(F32)
            of = got[src].astype(F32)
            tq = np.clip(np.rint((tf * F32(1.0 / s)).astype(F32)) + z, -128, 127)  # quantize_per_tensor
            oq = got[n.output[0]].astype(np.int64)
            row = rows[n.output[0]]
            row["elements"] += tq.size
            differ = tq != oq
            same_float = tf.view(np.uint32) == of.view(np.uint32)
            row["rounding"] += int(np.sum(differ & same_float))
            row["float"] += int(np.sum(differ & ~same_float))
            row["upstream_equal"] &= not upstream_differs
            if differ.any() and "example" not in row:
                k = int(np.argmax(differ.ravel()))
                t, o = tf.ravel()[k], of.ravel()[k]
                row["example"] = {"torch_float": float(t), "ort_float": float(o),
                                  "ulps": int(np.int64(t.view(np.int32)) - np.int64(o.view(np.int32))), "scale": s,
                                  "zero_point": z, "torch_q": int(tq.ravel()[k]), "ort_q": int(oq.ravel()[k]),
                                  "torch_x_over_s": float(t) / s, "ort_x_over_s": float(o) / s}
            upstream_differs |= bool(differ.any())
    return [r for r in rows.values() if r["elements"]]


def write(name, cls):
    converted, example = quantize(cls)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name + ".onnx")
    torch.onnx.export(converted, (example,), dynamo=True, verbose=False).save(path)
    model = onnx.load(path)
    g = torch.Generator().manual_seed(2)
    inputs = [example] + [torch.randn(*cls.shape, generator=g) for _ in range(7)]
    sess = ort.InferenceSession(path)
    cases = []
    for x in inputs:
        with torch.no_grad():
            y = converted(x)
        o = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
        cases.append({"x": floats(x), "torch": floats(y), "ort": floats(o)})
    doc = {"generator": "tools/golden/pt2e_models.py", "torch": torch.__version__, "onnxruntime": ort.__version__,
           "model": name + ".onnx", "description": " ".join(cls.__doc__.split()), "input_dims": list(cls.shape),
           "ops": " ".join(n.op_type for n in model.graph.node), "cases": cases}
    if name == "cnn":
        typed = shape_inference.infer_shapes(model)
        types = {v.name: v.type.tensor_type.elem_type for v in typed.graph.value_info}
        probe = onnx.ModelProto.FromString(model.SerializeToString())
        for n in [n for n in probe.graph.node if n.op_type == "QuantizeLinear"]:
            probe.graph.output.append(helper.make_tensor_value_info(n.output[0], TensorProto.INT8, None))
            if n.input[0] in types and n.input[0] not in {o.name for o in probe.graph.output}:
                probe.graph.output.append(helper.make_tensor_value_info(n.input[0], types[n.input[0]], None))
        probe_path = os.path.join(OUT, name + "-probe.onnx")
        onnx.save(probe, probe_path)
        doc["layers"] = analyse(converted, probe_path, model, inputs)
    with open(os.path.join(OUT, name + ".json"), "w") as fh:
        json.dump(doc, fh)
    differ = sum(int(np.sum(np.array(c["torch"], F32) != np.array(c["ort"], F32))) for c in cases)
    doc["max_abs_difference"] = max(float(np.max(np.abs(np.array(c["torch"], F32) - np.array(c["ort"], F32))))
                                    for c in cases)
    with open(os.path.join(OUT, name + ".json"), "w") as fh:
        json.dump(doc, fh)
    print("%-6s %d nodes; onnxruntime differs from the converted PyTorch model on %d of %d outputs%s"
          % (name, len(model.graph.node), differ, sum(len(c["torch"]) for c in cases),
             "" if name != "cnn" else "; by layer (rounding, float, unexplained): %s"
             % [(r["tensor"], r["rounding"], r["float"], r.get("explained")) for r in doc["layers"]]))


def main():
    torch.set_num_threads(1)
    write("cnn", CNN)
    write("block", Block)


if __name__ == "__main__":
    main()
