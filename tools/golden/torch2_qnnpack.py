"""PyTorch 2.13's qnnpack engine on x86, and 2.x's channels-last pooling kernels, from live torch.

Run from the venv: build/venv/bin/python tools/golden/torch2_qnnpack.py   (~3 s)

Writes tests/fixtures/torch2/qnnpack.json:
  cases     tools/golden/torch_ops.py's elementwise, activation and pooling cases (add, add_relu, cat, leaky_relu,
            max / avg / adaptive pooling, mean), run again on torch 2.13 with engine 'qnnpack': what changes from
            Debian's 1.13 (FBGEMM's quantize and the generic kernels' scalar tails) is what profile pytorch2-qnnpack
            reproduces. Linear and conv2d are left out: all 144 of torch_ops.py's cases equal 1.13's formulas
            (the script prints the check).
  channels_last  avg_pool2d and adaptive_avg_pool2d of channels-last tensors on the fbgemm engine, with channel
            counts that are and are not multiples of ATen's vector widths: their vector loops round differently
            from their scalar loops (cpu_capability, recorded in the header).
The format of a case is torch_ops.py's.
"""
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_ops as T  # noqa: E402
from common import FIXTURES, write_fixture  # noqa: E402

GENERATOR = "tools/golden/torch2_qnnpack.py"


def keep(c):
    op = c["op"]
    if c["inputs"][0]["dtype"] != "quint8":
        return False  # qint8 runs XNNPACK on the qnnpack engine; the exporter writes quint8 activations only
    return (op.endswith(("quantized.add", "quantized.add_relu", "quantized.cat", "leaky_relu", "LeakyReLU",
                         "max_pool2d", ".avg_pool2d", "adaptive_avg_pool2d")) or op == "torch.mean")


def channels_last_cases():
    """avg_pool2d / adaptive_avg_pool2d of channels-last quint8 tensors on the fbgemm engine (ties: even windows,
    odd zero points)."""
    torch.backends.quantized.engine = "fbgemm"
    g = torch.Generator().manual_seed(27007)
    cases = []
    for c, h, w, zp in [(40, 6, 6, 77), (7, 4, 4, 33), (16, 4, 6, 101), (24, 8, 8, 1), (1, 4, 4, 9), (33, 2, 2, 255)]:
        q = torch.randint(0, 256, (1, c, h, w), generator=g, dtype=torch.uint8)
        x = torch._make_per_tensor_quantized_tensor(q, 0.05, zp).contiguous(memory_format=torch.channels_last)
        for name, fn, params in [
            ("avg_pool2d_2x2", lambda t: F.avg_pool2d(t, 2), {"kernel_size": [2, 2], "stride": [2, 2]}),
            ("avg_pool2d_3x3_pad", lambda t: F.avg_pool2d(t, 3, 1, 1, count_include_pad=False),
             {"kernel_size": [3, 3], "stride": [1, 1], "padding": [1, 1], "count_include_pad": False}),
            ("adaptive_1", lambda t: F.adaptive_avg_pool2d(t, 1), {"output_size": [1, 1]}),
            ("adaptive_2", lambda t: F.adaptive_avg_pool2d(t, 2), {"output_size": [2, 2]}),
        ]:
            y = fn(x)
            assert y.is_contiguous(memory_format=torch.channels_last)
            cases.append({"name": "%s_c%d_zp%d" % (name, c, zp), "op": name.split("_")[0], "inputs": [T.rec(x)],
                          "params": params, "output": T.rec(y)})
    return cases


def main():
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    torch.backends.quantized.engine = "qnnpack"
    bad = 0
    for gen in (T.gen_linear, T.gen_conv2d):
        fam = gen()
        bad += len(fam.mismatch)
        print("%s: %d cases, %d differ from 1.13's qnnpack formulas" % (fam.name, len(fam.cases), len(fam.mismatch)))
    cases = []
    for gen in (T.gen_elementwise, T.gen_activations, T.gen_pooling):
        torch.backends.quantized.engine = "qnnpack"
        fam = gen()
        kept = [dict(c, family=fam.name) for c in fam.cases if keep(c)]
        print("%s: %d of %d cases kept; 1.13's formulas disagree on %s" % (fam.name, len(kept), len(fam.cases),
                                                                         [m for m in fam.mismatch][:12]))
        cases += kept
    hdr = {"generator": GENERATOR, "torch": torch.__version__, "engine": "qnnpack",
           "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    size = write_fixture(os.path.join(FIXTURES, "torch2", "qnnpack.json"), hdr,
                         {"cases": cases, "channels_last": channels_last_cases()})
    print("qnnpack.json: %d bytes, %d cases" % (size, len(cases)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
