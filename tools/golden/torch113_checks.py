#!/usr/bin/python3
"""Two behaviours of Debian's torch 1.13 (/usr/bin/python3) that qwasm once got wrong, as golden data:

  HistogramObserver(bins=1000) over batches of growing range: torch.histc bins a value with
  (int64)((x - lo) / (hi - lo) * bins), dividing first; a value on a bin edge (8.03 of [0, 10]) lands one
  bin higher than with the multiplication first.
  torch.mean(x, (2, 3)) of qint8 (any engine) and of quint8 outside the qnnpack engine: ATen's
  qmean_inner_dim_kernel, y = nearbyint((float)sum(q) / N), the zero point never subtracted, the input
  qparams kept. QNNPACK's global average pool (quint8, qnnpack engine) computes
  zp + nearbyint((float)sum(q - zp) * (s / (s * N))) instead, which differs on exact .5 ties when the zero
  point is odd.

Writes tests/fixtures/torch/checks113.json (float arrays as base64 of little-endian float32, *_b64).
Deterministic; run: /usr/bin/python3 tools/golden/torch113_checks.py
"""
import base64
import os
import sys
import warnings

import numpy as np
import torch
from torch.ao.quantization.observer import HistogramObserver

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import FIXTURES, write_fixture  # noqa: E402

warnings.filterwarnings("ignore")
F32 = np.float32


def b64(a):
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def histogram_cases(rng):
    cases = []
    for kind in range(4):
        obs = HistogramObserver(bins=1000)
        batches, states = [], []
        for i in range(6):
            n = 400
            if kind == 0:
                x = rng.standard_normal(n) * (1.7 ** i)
            elif kind == 1:
                x = rng.uniform(0, 1 + i * 3.3, n)
            elif kind == 2:
                x = rng.exponential(1 + i, n) - 0.01 * i
            else:
                x = rng.standard_normal(n) * (i + 1) + rng.uniform(-3, 3)
            x = x.astype(F32)
            obs(torch.from_numpy(x))
            batches.append(b64(x))
            states.append({"min": float(obs.min_val), "max": float(obs.max_val)})
        scale, zp = obs.calculate_qparams()
        cases.append({"bins": 1000, "batches_b64": batches, "states": states,
                      "histogram_b64": b64(obs.histogram.numpy()), "scale": float(scale), "zero_point": int(zp)})
    return cases


def mean_cases(rng):
    cases = []
    shapes = [(1, 3, 2, 2), (2, 4, 2, 3), (1, 5, 4, 4), (1, 2, 1, 6), (1, 16, 3, 3)]
    for dtype, engine in (("qint8", "qnnpack"), ("qint8", "onednn"), ("quint8", "onednn")):
        torch.backends.quantized.engine = engine
        lo, hi = (-128, 127) if dtype == "qint8" else (0, 255)
        for j, shape in enumerate(shapes):
            n = shape[2] * shape[3]
            # sums on exact .5 steps of N (N even), around both parities of the zero point
            base = rng.integers(lo + 20, hi - 20, shape)
            flat = base.reshape(-1, n)
            flat[:, 0] += (n // 2 - flat.sum(1) % n) % n if n % 2 == 0 else 0
            q = np.clip(flat.reshape(shape), lo, hi)
            zp = [3, -7, 0, 11, -1][j] + (128 if dtype == "quint8" else 0)
            x = torch._make_per_tensor_quantized_tensor(
                torch.tensor(q, dtype=torch.int8 if dtype == "qint8" else torch.uint8), 0.05, zp)
            y = torch.mean(x, (2, 3), keepdim=True)
            cases.append({"engine": engine, "dtype": dtype, "shape": list(shape), "scale": 0.05, "zero_point": zp,
                          "q": q.ravel().tolist(), "output": {"shape": list(y.shape), "scale": float(y.q_scale()),
                                                             "zero_point": int(y.q_zero_point()),
                                                             "q": y.int_repr().ravel().tolist()}})
    return cases


def main():
    rng = np.random.default_rng(113)
    header = {"generator": "tools/golden/torch113_checks.py", "torch": torch.__version__,
              "note": "float arrays in *_b64 keys: base64 of little-endian float32"}
    size = write_fixture(os.path.join(FIXTURES, "torch", "checks113.json"), header,
                         {"histogram": histogram_cases(rng), "mean": mean_cases(rng)})
    print("checks113.json: %d bytes" % size)


if __name__ == "__main__":
    main()
