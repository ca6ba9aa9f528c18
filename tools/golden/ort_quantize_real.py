"""QDQ and dynamic files from onnxruntime's real quantization tools (onnxruntime.quantization from PyPI, in the venv):
tests/fixtures/ort_static/*.onnx + .json, for tests/js/model-quantize-static.test.js (qwasm byte for byte equal to
onnxruntime-web on each file).

    build/venv/bin/python tools/golden/ort_quantize_real.py        # (~10 s)

The float models, calibration sets, test inputs and option sets are tools/golden/ort_quantize_static.py's (the
reimplementation of quantize_static's output these fixtures came from before); for each variant this script runs
the real `quantize_static(..., quant_format=QuantFormat.QDQ, calibrate_method=CalibrationMethod.MinMax)` and,
per model, `quantize_dynamic` (variant 'dynamic': DynamicQuantizeLinear / MatMulInteger / ConvInteger), and prints
how each real file differs from the reimplementation's (docs/quantize-static.md lists what that showed).
"""
import json
import os
import sys
import tempfile
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.filterwarnings("ignore")
import ort_quantize_static as R  # noqa: E402

import onnxruntime  # noqa: E402
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,  # noqa: E402
                                      quantize_dynamic, quantize_static)

GENERATOR = "tools/golden/ort_quantize_real.py"
DYNAMIC_PROBES = {("cnn", "dynamic")}
QTYPE = {TensorProto.UINT8: QuantType.QUInt8, TensorProto.INT8: QuantType.QInt8, TensorProto.UINT16: QuantType.QUInt16}


class Feeds(CalibrationDataReader):
    def __init__(self, feeds):
        self.it = iter(feeds)

    def get_next(self):
        return next(self.it, None)


def real_static(fm, feeds, tmp, per_channel=False, reduce_range=False, activation_type=TensorProto.UINT8,
                weight_type=TensorProto.INT8, extra_options=None):
    src, dst = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "q.onnx")
    onnx.save(fm, src)
    quantize_static(src, dst, Feeds(feeds), quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    reduce_range=reduce_range, activation_type=QTYPE[activation_type], weight_type=QTYPE[weight_type],
                    calibrate_method=CalibrationMethod.MinMax, extra_options=extra_options or {})
    return onnx.load(dst)


def real_dynamic(fm, tmp):
    src, dst = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "d.onnx")
    onnx.save(fm, src)
    quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
    return onnx.load(dst)


def differences(ours, theirs):
    """What sets the real file apart from the reimplementation's: node sequence (as multisets of op types and in
    order) and initializer values (by name)."""
    out = []
    if sorted(n.op_type for n in ours.graph.node) != sorted(n.op_type for n in theirs.graph.node):
        out.append("different nodes")
    elif [n.op_type for n in ours.graph.node] != [n.op_type for n in theirs.graph.node]:
        out.append("the same nodes in another order")
    oi = {i.name: numpy_helper.to_array(i) for i in ours.graph.initializer}
    ti = {i.name: numpy_helper.to_array(i) for i in theirs.graph.initializer}
    names = sorted(set(oi) ^ set(ti))
    if names:
        out.append("initializers only in one: %s" % names[:6])
    changed = [k for k in sorted(set(oi) & set(ti)) if oi[k].dtype != ti[k].dtype or not np.array_equal(oi[k], ti[k])]
    if changed:
        out.append("initializers with other values: %s" % changed[:6])
    return "; ".join(out) or "identical"


def main():
    os.makedirs(R.OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, build, calib, tests, variants in R.FIXTURES:
            fm = build()
            cal, cases = calib(), tests()
            inp, out = fm.graph.input[0].name, fm.graph.output[0].name
            feeds = [{inp: c} for c in cal]
            doc = {"generator": GENERATOR, "onnxruntime": onnxruntime.__version__, "onnx": onnx.__version__,
                   "model": name, "input": inp, "input_dims": list(cases[0].shape), "output": out, "variants": {},
                   "cases": []}
            for x in cases:
                y = R.run_float(fm, {inp: x})[out]
                doc["cases"].append({"x": [float(v) for v in x.ravel()], "float_y": [float(v) for v in y.ravel()]})
            for v in variants + ["dynamic"]:
                if v == "dynamic":
                    qm, options = real_dynamic(fm, tmp), {"quantize_dynamic": True, "weight_type": "INT8"}
                else:
                    qm = real_static(fm, feeds, tmp, **R.VARIANTS[v])
                    options = {k: (TensorProto.DataType.Name(val) if k.endswith("_type") else val)
                               for k, val in R.VARIANTS[v].items()}
                    print("%s-%s: vs the reimplementation: %s" % (name, v, differences(
                        R.quantize_static(fm, feeds, **R.VARIANTS[v]), qm)))
                path = os.path.join(R.OUT, "%s-%s.onnx" % (name, v))
                onnx.save(qm, path)
                doc["variants"][v] = {"options": options, "ops": " ".join(n.op_type for n in qm.graph.node)}
                if (name, v) in R.PROBES:  # every QuantizeLinear output also a graph output, to compare layers
                    for n in qm.graph.node:
                        if n.op_type == "QuantizeLinear":
                            qm.graph.output.append(helper.make_tensor_value_info(n.output[0], TensorProto.UINT8, None))
                    onnx.save(qm, os.path.join(R.OUT, "%s-%s-probe.onnx" % (name, v)))
                if (name, v) in DYNAMIC_PROBES:  # every float tensor a graph output (the last op is float Softmax)
                    known = {o.name for o in qm.graph.output}
                    for n in qm.graph.node:
                        for o in n.output:
                            if o not in known and n.op_type in ("Add", "Relu", "Clip", "MaxPool", "AveragePool", "Sigmoid",
                                                                "Mul", "Concat", "GlobalAveragePool", "Flatten"):
                                qm.graph.output.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, None))
                    onnx.save(qm, os.path.join(R.OUT, "%s-%s-probe.onnx" % (name, v)))
            with open(os.path.join(R.OUT, "%s.json" % name), "w") as f:
                json.dump(doc, f, indent=None, separators=(",", ":"))
                f.write("\n")


if __name__ == "__main__":
    main()
