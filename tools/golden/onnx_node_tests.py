#!/usr/bin/python3
"""Convert ONNX backend node tests (Debian package libonnx-testdata) into JSON fixtures.

Usage: /usr/bin/python3 tools/golden/onnx_node_tests.py [test_name ...]
Without arguments converts DEFAULT_TESTS. Writes tests/fixtures/onnx/<test_name>.json:
  {"test", "source", "opset", "node": {"op_type", "domain", "inputs", "outputs", "attributes"},
   "inputs": [{"name", "dtype", "dims", "data"}], "outputs": [...]}
input_<i>.pb / output_<i>.pb are matched to the graph's inputs / outputs in order. Data is flattened
row-major; float32 values are written exactly (NaN/Inf as "NaN"/"Infinity"/"-Infinity").
Attributes the model does not set are not listed (the operator's defaults apply).
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.dont_write_bytecode = True  # keep tools/golden free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import FIXTURES, write_fixture  # noqa: E402

DATA_ROOT = "/usr/share/libonnx-testdata/data/node"
GENERATOR = "tools/golden/onnx_node_tests.py"

DEFAULT_TESTS = [
    "test_quantizelinear", "test_quantizelinear_axis", "test_dequantizelinear", "test_dequantizelinear_axis",
    "test_qlinearmatmul_2D", "test_qlinearmatmul_3D", "test_qlinearconv",
    "test_matmulinteger", "test_convinteger_with_padding", "test_convinteger_without_padding", "test_basic_convinteger",
    "test_dynamicquantizelinear", "test_dynamicquantizelinear_max_adjusted", "test_dynamicquantizelinear_min_adjusted",
]

DTYPES = {np.dtype(np.uint8): "uint8", np.dtype(np.int8): "int8", np.dtype(np.int32): "int32",
          np.dtype(np.float32): "float32", np.dtype(np.int64): "int64"}


def attr_value(a):
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, onnx.TensorProto):
        arr = numpy_helper.to_array(v)
        return {"dtype": DTYPES[arr.dtype], "dims": list(arr.shape), "data": arr.ravel().tolist()}
    if isinstance(v, (list, tuple)):
        return [x.decode("utf-8") if isinstance(x, bytes) else x for x in v]
    return v


def tensor_entry(name, path):
    tp = onnx.TensorProto()
    with open(path, "rb") as fh:
        tp.ParseFromString(fh.read())
    arr = numpy_helper.to_array(tp)
    if arr.dtype not in DTYPES:
        raise SystemExit("%s: unsupported dtype %s" % (path, arr.dtype))
    if tp.name and tp.name != name:
        raise SystemExit("%s: tensor name %r does not match graph name %r" % (path, tp.name, name))
    if arr.dtype == np.float32:
        data = [float(v) for v in arr.ravel()]
    else:
        data = [int(v) for v in arr.ravel()]
    return {"name": name, "dtype": DTYPES[arr.dtype], "dims": [int(d) for d in arr.shape], "data": data}


def convert(test):
    tdir = os.path.join(DATA_ROOT, test)
    model = onnx.load(os.path.join(tdir, "model.onnx"))
    g = model.graph
    if len(g.node) != 1:
        raise SystemExit("%s: expected a single node, found %d" % (test, len(g.node)))
    node = g.node[0]
    opset = [o.version for o in model.opset_import if o.domain == node.domain]
    init = {t.name for t in g.initializer}
    in_names = [i.name for i in g.input if i.name not in init]
    out_names = [o.name for o in g.output]
    ds = os.path.join(tdir, "test_data_set_0")
    in_files = sorted(glob.glob(os.path.join(ds, "input_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
    out_files = sorted(glob.glob(os.path.join(ds, "output_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
    if len(in_files) != len(in_names) or len(out_files) != len(out_names):
        raise SystemExit("%s: %d/%d input and %d/%d output files" % (test, len(in_files), len(in_names),
                                                                      len(out_files), len(out_names)))
    header = {
        "test": test,
        "source": tdir,
        "generator": GENERATOR,
        "onnx": onnx.__version__,
        "opset": opset[0] if opset else None,
        "node": {"op_type": node.op_type, "domain": node.domain, "inputs": list(node.input),
                 "outputs": list(node.output), "attributes": {a.name: attr_value(a) for a in node.attribute}},
    }
    sections = {
        "inputs": [tensor_entry(n, p) for n, p in zip(in_names, in_files)],
        "outputs": [tensor_entry(n, p) for n, p in zip(out_names, out_files)],
    }
    path = os.path.join(FIXTURES, "onnx", test + ".json")
    size = write_fixture(path, header, sections)
    return path, size


def main(argv):
    tests = argv[1:] or DEFAULT_TESTS
    for t in tests:
        path, size = convert(t)
        print("%s  %d bytes" % (os.path.relpath(path), size))


if __name__ == "__main__":
    main(sys.argv)
