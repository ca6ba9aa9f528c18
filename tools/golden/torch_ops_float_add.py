"""Quantized add / add_relu as PyTorch 1.13 computes them outside the qnnpack engine (the float
kernel the x86 / fbgemm / onednn engines run): dequantize both, add in float, quantize.

Run with Debian's system python3 (/usr/bin/python3): writes tests/fixtures/torch/ops/add_float.json.
The engine used is 'onednn' (Debian's torch has no fbgemm); both reach the same generic kernel.
"""
import os

import numpy as np
import torch

from common import FIXTURES, write_fixture

SEED = 20261121


def tensor_case(q):
    return {"dtype": str(q.dtype).replace("torch.", ""), "shape": list(q.shape), "scale": float(q.q_scale()),
            "zero_point": int(q.q_zero_point()), "q": q.int_repr().flatten().tolist()}


def main():
    torch.backends.quantized.engine = "onednn"
    rng = np.random.default_rng(SEED)
    cases = []
    shapes = [([1, 3, 4, 5], [1, 3, 4, 5]), ([100], [100]), ([130], [130]), ([2, 3, 5, 7], [2, 3, 5, 7]),
              ([64], [64]), ([4, 5], [5]), ([1, 3, 2, 2], [1, 3, 1, 1]), ([7], [1])]
    qparams = [(0.1, 10, 0.05, 128, 0.12, 60), (0.02, 128, 0.03, 100, 0.04, 128), (0.5, 0, 0.5, 0, 1.0, 0),
               (0.0625, 3, 0.125, 250, 0.1875, 20)]
    for dtype in (torch.quint8, torch.qint8):
        lo, hi = (0, 255) if dtype == torch.quint8 else (-128, 127)
        for i, (sa, sb) in enumerate(shapes):
            for j, (a_s, a_z, b_s, b_z, y_s, y_z) in enumerate(qparams):
                if dtype == torch.qint8:
                    a_z, b_z, y_z = a_z - 128, b_z - 128, y_z - 128
                a = torch._make_per_tensor_quantized_tensor(
                    torch.from_numpy(rng.integers(lo, hi + 1, size=sa).astype(np.int64)).to(
                        torch.uint8 if dtype == torch.quint8 else torch.int8), a_s, a_z)
                b = torch._make_per_tensor_quantized_tensor(
                    torch.from_numpy(rng.integers(lo, hi + 1, size=sb).astype(np.int64)).to(
                        torch.uint8 if dtype == torch.quint8 else torch.int8), b_s, b_z)
                for relu in (False, True):
                    op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
                    y = op(a, b, y_s, y_z)
                    y2 = op(a, b, y_s, y_z)
                    assert torch.equal(y.int_repr(), y2.int_repr())
                    cases.append({"name": "add%s_%s_%d_%d" % ("_relu" if relu else "", str(dtype)[6:], i, j),
                                  "op": "torch.ops.quantized.add" + ("_relu" if relu else ""),
                                  "inputs": [tensor_case(a), tensor_case(b)],
                                  "params": {"scale": y_s, "zero_point": y_z, "relu": relu},
                                  "output": tensor_case(y)})
    header = {"generator": "tools/golden/torch_ops_float_add.py", "torch": torch.__version__, "engine": "onednn",
              "cpu_capability": torch.backends.cpu.get_cpu_capability() if hasattr(torch.backends, "cpu") else "?"}
    write_fixture(os.path.join(FIXTURES, "torch", "ops", "add_float.json"), header, {"cases": cases})
    print("%d cases" % len(cases))


if __name__ == "__main__":
    main()
