"""Dynamic quantized linear (torch.ao.nn.quantized.dynamic.Linear, quantize_dynamic's layer) on PyTorch's
qnnpack engine, from live torch, in the format of tests/fixtures/torch2/dynamic.json (tools/golden/torch2_ops.py,
the fbgemm / x86 engines).

    /usr/bin/python3 tools/golden/torch_dynamic.py        # Debian's torch 1.13 -> tests/fixtures/torch/dynamic.json
    build/venv/bin/python tools/golden/torch_dynamic.py   # torch 2.13 -> tests/fixtures/torch2/dynamic_qnnpack.json

What the qnnpack engine computes (PackedLinearWeightsQnnp::apply_dynamic_impl), checked here by dynamic_ref on
every case: the float input's range widened to 0, ATen's ChooseQuantizationParams over [0, 255] (reduce_range is
ignored on qnnpack: PyTorch warns so), quantize_per_tensor (the build's rule: zp + rint(x * (1/s)) without FBGEMM,
FBGEMM's fma rule with it), exact int32 sums, then QNNPACK's dq kernel: (float)acc * (x_s * w_s[c]) + bias[c]
with two roundings (a multiply, then an add), relu.
"""
import os
import sys
import warnings

import numpy as np
import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.filterwarnings("ignore")
import torch_ops as T  # noqa: E402
from torch_ops import R  # noqa: E402  (python/qwasm_export/reference.py)
from common import FIXTURES, write_fixture  # noqa: E402

F32 = np.float32
FBGEMM_BUILD = "fbgemm" in torch.backends.quantized.supported_engines
GENERATOR = "tools/golden/torch_dynamic.py"


fma32 = R.fma32
choose_qparams = R.choose_qparams_dynamic  # ATen's ChooseQuantizationParams


def quantize(x, s, z):
    inv = F32(1) / F32(s)
    if FBGEMM_BUILD:
        return np.clip(np.rint(fma32(x, inv, z)), 0, 255).astype(np.int64)
    return np.clip(F32(z) + np.rint((x * inv).astype(F32)), 0, 255).astype(np.int64)


def dynamic_ref(c):
    x, w = c["input"], c["weight"]
    xf = np.array(x["values"], dtype=F32).reshape(x["shape"])
    xs, xz = choose_qparams(xf.min(), xf.max())
    xq = quantize(xf, xs, xz).reshape(-1, x["shape"][-1])
    wq = np.array(w["q"], dtype=np.int64).reshape(w["shape"])
    ws, wz = T.w_qparams(w, wq.shape[0])
    acc = (xq - xz) @ (wq - wz[:, None]).T
    mult = (F32(xs) * ws.astype(F32)).astype(F32)
    y = (acc.astype(F32) * mult[None, :]).astype(F32)
    if c.get("bias") is not None:
        y = (y + np.asarray(c["bias"], dtype=F32)[None, :]).astype(F32)
    if c["params"]["relu"]:
        y = np.maximum(y, F32(0))
    return y.ravel()


def floats(a):
    return [float(v) for v in np.asarray(a, dtype=F32).ravel()]


def main():
    torch.backends.quantized.engine = "qnnpack"
    rng = np.random.default_rng(26016)
    cases, bad = [], []
    for j, (m, k, n) in enumerate([(1, 2, 2), (3, 7, 5), (2, 17, 9), (4, 33, 16), (1, 64, 3), (5, 9, 31), (2, 1, 1),
                                   (3, 40, 8), (2, 3, 4)]):
        for variant in range(4):
            per_channel, wzn = variant % 2 == 1, variant >= 2
            relu = (j + variant) % 3 == 0
            xf = (rng.standard_normal((m, k)) * T.logu(rng, 0.05, 5) + rng.uniform(-1, 1)).astype(F32)
            if j == 6:
                xf = np.full((m, k), 0.75, dtype=F32)  # constant input: min = max
            if j == 8:
                xf = (rng.standard_normal((m, k)) * 1e-6).astype(F32)  # a range below the smallest scale
            nsc = n if per_channel else 1
            ws = [T.logu(rng, 0.002, 0.05) for _ in range(nsc)]
            wz = [int(v) for v in rng.integers(-10, 11, nsc)] if wzn else [0] * nsc
            w = T.qw(T.rand_q(rng, (n, k), "qint8"), ws, wz, per_channel)
            b = None if (j + variant) % 4 == 3 else torch.tensor(rng.standard_normal(n).astype(F32))
            x = torch.from_numpy(xf)
            packed = torch.ops.quantized.linear_prepack(w, b)
            op = torch.ops.quantized.linear_relu_dynamic if relu else torch.ops.quantized.linear_dynamic
            y1, y2 = op(x, packed, True), op(x, packed, False)
            assert torch.equal(y1, y2), "the qnnpack engine ignores reduce_range"
            assert torch.equal(y1, op(x, packed, True))
            case = {"name": "dynamic_qnnpack_%d_%d" % (j, variant),
                    "op": "torch.ops.quantized.linear%s_dynamic" % ("_relu" if relu else ""),
                    "input": {"shape": [m, k], "values": floats(xf)}, "weight": T.rec_weight(w),
                    "bias": None if b is None else floats(b.numpy()),
                    "params": {"relu": relu, "reduce_range": True, "in_features": k, "out_features": n},
                    "output": {"shape": list(y1.shape), "values": floats(y1.numpy())}}
            if not np.array_equal(dynamic_ref(case).view(np.uint32), np.asarray(case["output"]["values"], F32).view(np.uint32)):
                bad.append(case["name"])
            cases.append(case)
    # the module quantize_dynamic installs calls linear_dynamic with reduce_range=True
    import torch.ao.nn.quantized.dynamic as nnqd
    mod = nnqd.Linear(7, 5)
    mod.set_weight_bias(T.qw(T.rand_q(rng, (5, 7), "qint8"), [0.01], [0], False), torch.randn(5))
    x = torch.randn(3, 7)
    packed = torch.ops.quantized.linear_prepack(*mod._weight_bias())
    assert torch.equal(mod(x), torch.ops.quantized.linear_dynamic(x, packed, True))
    out = os.path.join(FIXTURES, "torch2" if FBGEMM_BUILD else "torch",
                       "dynamic_qnnpack.json" if FBGEMM_BUILD else "dynamic.json")
    hdr = {"generator": GENERATOR, "torch": torch.__version__, "engine": "qnnpack"}
    size = write_fixture(out, hdr, {"cases": cases})
    print("%s: %d bytes, %d cases, reference disagrees on %d %s" % (out, size, len(cases), len(bad), bad[:8]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
