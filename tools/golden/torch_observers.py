#!/usr/bin/python3
"""Golden observer and fake-quantization data from real PyTorch (Debian torch 1.13, /usr/bin/python3).

Writes
  tests/fixtures/torch/observers.json  observed sequences -> running min/max (per channel), histogram,
                                       scale / zero point; rejected options -> torch's exception text;
                                       the default qconfigs' observer arguments
  tests/fixtures/torch/fakequant.json  fake_quantize_per_tensor_affine / per_channel_affine

Float arrays are stored as base64 of little-endian float32 bytes (key suffix _b64) to stay small.
Deterministic (fixed seeds); runs in a few seconds (HistogramObserver's search is slow in torch).
With --bench it also times HistogramObserver observe + calculate_qparams on 1M normal floats.
"""
import base64
import os
import sys
import time
import warnings

import numpy as np
import torch
from torch.ao.quantization import observer as O

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import FIXTURES, write_fixture  # noqa: E402

warnings.filterwarnings("ignore")
GENERATOR = "tools/golden/torch_observers.py"
F32 = np.float32
DT = {"quint8": torch.quint8, "qint8": torch.qint8, "qint32": torch.qint32, "float32": torch.float32}
QS = {
    "per_tensor_affine": torch.per_tensor_affine,
    "per_tensor_symmetric": torch.per_tensor_symmetric,
    "per_channel_affine": torch.per_channel_affine,
    "per_channel_symmetric": torch.per_channel_symmetric,
    "per_channel_affine_float_qparams": torch.per_channel_affine_float_qparams,
}
rng = np.random.default_rng(20240406)


def b64(a):
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def kwargs_of(options):
    kw = {}
    for k, v in options.items():
        if k == "dtype":
            kw[k] = DT[v]
        elif k == "qscheme":
            kw[k] = QS[v]
        else:
            kw[k] = v
    return kw


def data(kind, shape):
    n = int(np.prod(shape))
    if kind == "normal":
        a = rng.standard_normal(n) * 1.3 + 0.2
    elif kind == "uniform":
        a = rng.uniform(-0.7, 2.9, n)
    elif kind == "heavy":
        a = rng.standard_t(2, n)
        idx = rng.choice(n, max(1, n // 100), replace=False)
        a[idx] *= 40
    elif kind == "constant":
        a = np.full(n, 0.37)
    elif kind == "negative":
        a = -rng.uniform(0.5, 6.0, n)
    elif kind == "tiny":
        a = 0.3 + rng.uniform(-1, 1, n) * 1e-6
    elif kind == "wide":
        a = rng.standard_normal(n) * 25.0
    elif kind == "positive":
        a = rng.exponential(1.5, n)
    elif kind == "narrow":
        a = rng.uniform(-0.2, 0.3, n)
    elif kind == "zeros":
        a = np.zeros(n)
    else:
        raise ValueError(kind)
    return a.astype(F32).reshape(shape)


def _hash(i):
    # lowbias32 of a uint32 counter; tests/js/observers.test.js computes the same with Math.imul.
    x = i.astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


def synthetic(seed, n, scale, offset):
    """Large inputs stored as a recipe: u_k = (hash(4i + k + seed * 2^20) >> 8) / 2^24 exactly,
    x = ((u0 + u1) + (u2 + u3) - 2) * scale + offset, every step in float32 (Irwin-Hall, nearly normal)."""
    i = np.arange(n, dtype=np.uint64)
    u = [((_hash((4 * i + k + seed * 2 ** 20) % 2 ** 32) >> np.uint32(8)).astype(F32) / F32(2 ** 24)) for k in range(4)]
    x = ((u[0] + u[1]) + (u[2] + u[3]) - F32(2)) * F32(scale) + F32(offset)
    return x.astype(F32)


def synthetic_case(options, recipe):
    obs = O.HistogramObserver(**kwargs_of(options))
    states = []
    for r in recipe:
        obs(torch.from_numpy(synthetic(*r)))
        states.append(state_of(obs))
    nmin, nmax = obs._non_linear_param_search()
    scale, zp = obs.calculate_qparams()
    return {"observer": "HistogramObserver", "options": options, "recipe": [list(r) for r in recipe], "states": states,
            "histogram_b64": b64(obs.histogram.numpy()), "search": [float(nmin), float(nmax)],
            "scales": [float(v) for v in scale.tolist()], "zero_points": [int(v) for v in zp.tolist()]}


def synthetic_cases():
    return [
        synthetic_case({}, [(1, 200000, 1.7, 0.3)]),
        synthetic_case({"reduce_range": True}, [(2, 150000, 2.5, 0.0), (3, 150000, 9.0, -1.0), (4, 50000, 0.2, 0.1)]),
        synthetic_case({"dtype": "qint8", "qscheme": "per_tensor_symmetric"}, [(5, 100000, 0.9, 4.0), (6, 100000, 3.0, -6.0)]),
        synthetic_case({"bins": 512}, [(7, 80000, 40.0, 10.0), (8, 80000, 1.0, 0.0)]),
    ]


def state_of(obs):
    s = {}
    if hasattr(obs, "min_val"):
        s["min"] = obs.min_val.tolist()
        s["max"] = obs.max_val.tolist()
    return s


SEQUENCES = []  # [{kind, shape, data_b64}, ...]: each observed sequence stored once, cases refer to it
_seq_index = {}


def sequence(seq):
    key = tuple((kind, tuple(shape)) for kind, shape in seq)
    if key not in _seq_index:
        arrays = [data(kind, shape) for kind, shape in seq]
        _seq_index[key] = (len(SEQUENCES), arrays)
        SEQUENCES.append({"inputs": [{"kind": k, "shape": list(sh), "data_b64": b64(a)}
                                     for (k, sh), a in zip(seq, arrays)]})
    return _seq_index[key]


def run_case(cls, options, seq, extra=None):
    obs = getattr(O, cls)(**kwargs_of(options))
    index, arrays = sequence(seq)
    states = []
    for x in arrays:
        obs(torch.from_numpy(x))
        states.append(state_of(obs))
    case = {"observer": cls, "options": options, "sequence": index, "states": states}
    if cls == "HistogramObserver":
        case["histogram_b64"] = b64(obs.histogram.numpy())
        if not (obs.min_val == float("inf") and obs.max_val == float("-inf")):
            nmin, nmax = obs._non_linear_param_search()
            case["search"] = [float(nmin), float(nmax)]
    scale, zp = obs.calculate_qparams()
    case["scales"] = [float(v) for v in scale.tolist()]
    case["zero_points"] = [int(v) for v in zp.tolist()]
    if extra:
        case.update(extra)
    return case


def observer_cases():
    cases = []
    pt_opts = [
        {},
        {"dtype": "qint8", "qscheme": "per_tensor_symmetric"},
        {"reduce_range": True},
        {"dtype": "qint8", "reduce_range": True},
        {"dtype": "quint8", "qscheme": "per_tensor_symmetric"},
        {"dtype": "qint8", "quant_min": -8, "quant_max": 7},
        {"quant_min": 0, "quant_max": 15, "eps": 1e-4},
        {"dtype": "quint8", "qscheme": "per_tensor_symmetric", "quant_min": 0, "quant_max": 100},
        {"dtype": "qint32", "qscheme": "per_tensor_symmetric"},
    ]
    seqs = [
        [("normal", (3, 40))],
        [("uniform", (100,))],
        [("heavy", (200,))],
        [("constant", (17,))],
        [("negative", (5, 9))],
        [("tiny", (33,))],
        [("zeros", (8,))],
        [("narrow", (30,)), ("wide", (2, 25)), ("negative", (40,)), ("tiny", (7,))],
    ]
    for cls in ("MinMaxObserver", "MovingAverageMinMaxObserver"):
        for o in pt_opts:
            for s in seqs:
                cases.append(run_case(cls, o, s))
    for c in (0.5, 0.01, 1.0):
        cases.append(run_case("MovingAverageMinMaxObserver", {"averaging_constant": c, "dtype": "qint8"},
                              [("normal", (50,)), ("wide", (50,)), ("positive", (50,)), ("normal", (50,))]))
    pc_opts = [
        {},
        {"dtype": "qint8", "qscheme": "per_channel_symmetric"},
        {"ch_axis": 1},
        {"ch_axis": -1, "dtype": "qint8", "qscheme": "per_channel_symmetric", "reduce_range": True},
        {"ch_axis": 2, "reduce_range": True},
        {"ch_axis": 1, "dtype": "qint8", "quant_min": -15, "quant_max": 15, "qscheme": "per_channel_symmetric"},
        {"ch_axis": 0, "eps": 0.01},
    ]
    pc_seqs = [
        [("normal", (4, 3, 5))],
        [("heavy", (3, 6, 4)), ("negative", (3, 6, 4))],
        [("constant", (2, 3, 3))],
        [("narrow", (5, 4, 3)), ("wide", (5, 4, 3)), ("tiny", (5, 4, 3))],
    ]
    for cls in ("PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver"):
        for o in pc_opts:
            for s in pc_seqs:
                cases.append(run_case(cls, o, s))
    cases.append(run_case("MovingAveragePerChannelMinMaxObserver", {"averaging_constant": 0.3, "ch_axis": 1},
                          [("normal", (6, 4)), ("wide", (6, 4)), ("positive", (6, 4))]))
    # HistogramObserver: the default 2048 bins, merging across calls with different ranges.
    h_opts = [
        {},
        {"reduce_range": True},
        {"dtype": "qint8", "qscheme": "per_tensor_symmetric"},
        {"dtype": "quint8", "qscheme": "per_tensor_symmetric", "reduce_range": True},
        {"dtype": "qint8", "quant_min": -8, "quant_max": 7},
    ]
    h_seqs = [
        [("normal", (600,))],
        [("wide", (400,)), ("narrow", (300,))],
        [("narrow", (300,)), ("wide", (400,)), ("normal", (300,))],
        [("heavy", (500,))],
        [("constant", (20,)), ("normal", (200,))],
        [("negative", (300,)), ("positive", (300,))],
        [("tiny", (50,))],
        [("uniform", (300,)), ("uniform", (300,))],
    ]
    for i, o in enumerate(h_opts):
        for j, s in enumerate(h_seqs):
            if i > 0 and j not in (0, 2, 3):
                continue
            cases.append(run_case("HistogramObserver", o, s))
    # Fewer bins / another upsample rate keep the fixture small while exercising the same code.
    for o in ({"bins": 256}, {"bins": 128, "upsample_rate": 16, "dtype": "qint8", "qscheme": "per_tensor_symmetric"},
              {"bins": 64, "upsample_rate": 8}):
        for s in ([("normal", (500,)), ("wide", (300,)), ("narrow", (200,)), ("heavy", (300,))],
                  [("positive", (300,)), ("uniform", (300,)), ("constant", (20,))],
                  [("zeros", (10,)), ("negative", (100,))]):
            cases.append(run_case("HistogramObserver", o, s))
    return cases


def error_cases():
    errs = []

    def attempt(cls, options, observe=None):
        try:
            obs = getattr(O, cls)(**kwargs_of(options))
            if observe is not None:
                kind, shape, values = observe
                x = data(kind, shape) if values is None else np.array(values, dtype=F32).reshape(shape)
                obs(torch.from_numpy(x))
                obs.calculate_qparams()
        except Exception as e:  # noqa: BLE001
            errs.append({"observer": cls, "options": options,
                         "observe": None if observe is None else {"shape": list(observe[1]), "values": observe[2]},
                         "type": type(e).__name__, "error": str(e)})
            return
        raise SystemExit("expected an error: %s %s" % (cls, options))

    for cls in ("MinMaxObserver", "MovingAverageMinMaxObserver", "HistogramObserver"):
        attempt(cls, {"qscheme": "per_channel_affine"})
        attempt(cls, {"qscheme": "per_channel_symmetric", "dtype": "qint8"})
        attempt(cls, {"quant_min": 1, "quant_max": 10})
        attempt(cls, {"quant_min": 5, "quant_max": 5 - 5})
        attempt(cls, {"quant_min": 0, "quant_max": 0})
        attempt(cls, {"dtype": "float32"})
        attempt(cls, {"dtype": "qint8", "quant_min": -200, "quant_max": 100})
    for cls in ("MinMaxObserver", "MovingAverageMinMaxObserver"):
        attempt(cls, {"qscheme": "per_tensor_symmetric", "reduce_range": True})
    for cls in ("PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver"):
        attempt(cls, {"qscheme": "per_tensor_affine"})
        attempt(cls, {"qscheme": "per_channel_symmetric", "reduce_range": True})
        attempt(cls, {"quant_min": -3, "quant_max": -1})
        attempt(cls, {"ch_axis": 2}, ("normal", (3, 4), None))
        attempt(cls, {"ch_axis": -3}, ("normal", (3, 4), None))
    attempt("HistogramObserver", {}, ("normal", (3,), [1.0, float("nan"), 2.0]))
    attempt("HistogramObserver", {}, ("normal", (3,), [1.0, float("inf"), 2.0]))
    return errs


def qconfigs():
    from torch.ao.quantization import get_default_qconfig
    out = {}
    for name in ("x86", "fbgemm", "qnnpack"):
        qc = get_default_qconfig(name)
        entry = {}
        for role in ("activation", "weight"):
            obs = getattr(qc, role)()
            o = {"observer": type(obs).__name__, "dtype": str(obs.dtype).replace("torch.", ""),
                 "qscheme": str(obs.qscheme).replace("torch.", ""), "reduce_range": bool(obs.reduce_range),
                 "quant_min": int(obs.quant_min), "quant_max": int(obs.quant_max), "eps": float(obs.eps)}
            if hasattr(obs, "ch_axis"):
                o["ch_axis"] = obs.ch_axis
            if hasattr(obs, "bins"):
                o["bins"] = obs.bins
                o["upsample_rate"] = obs.upsample_rate
            entry[role] = o
        out[name] = entry
    return out


def fakequant():
    cases = []
    per_tensor_params = [
        (0.1, 0, -128, 127), (0.0173, 128, 0, 255), (0.05, 3, 0, 15), (1e-3, -5, -64, 63),
        (0.25, 0, -2 ** 31, 2 ** 31 - 1), (3.1e-5, 7, 0, 255), (0.5, 100, 100, 100), (2.0, 0, -8, 7),
    ]
    for i, (s, z, lo, hi) in enumerate(per_tensor_params):
        x = np.concatenate([
            rng.standard_normal(150) * (s * (hi - lo) / 3 if hi - lo < 2 ** 20 else 1e4),
            (np.arange(-40, 40) + 0.5) * np.float32(s),  # exact ties
            np.array([0.0, -0.0, 1e-30, -1e-30, 3e4, -3e4], dtype=np.float64),
        ]).astype(F32)
        y = torch.fake_quantize_per_tensor_affine(torch.from_numpy(x), s, z, lo, hi)
        cases.append({"kind": "per_tensor", "scale": s, "zero_point": z, "quant_min": lo, "quant_max": hi,
                      "x_b64": b64(x), "y_b64": b64(y.numpy())})
    for shape, axis, lo, hi in (((4, 3, 5), 0, -128, 127), ((2, 6, 7), 1, 0, 255), ((3, 5), 1, 0, 15),
                                ((2, 3, 2, 4), 3, -64, 63)):
        c = shape[axis]
        scales = (rng.uniform(0.005, 0.2, c)).astype(F32)
        zps = rng.integers(lo, hi + 1, c).astype(np.int32)
        x = (rng.standard_normal(int(np.prod(shape))) * 2.0).astype(F32).reshape(shape)
        y = torch.fake_quantize_per_channel_affine(torch.from_numpy(x), torch.from_numpy(scales),
                                                   torch.from_numpy(zps), axis, lo, hi)
        cases.append({"kind": "per_channel", "shape": list(shape), "axis": axis, "scales": scales.tolist(),
                      "zero_points": zps.tolist(), "quant_min": lo, "quant_max": hi, "x_b64": b64(x),
                      "y_b64": b64(y.numpy())})
    errors = []
    x = torch.zeros(2, 3)
    for args in ((0.1, 0, 10, 5), (0.1, 20, 0, 15), (0.1, -1, 0, 255)):
        try:
            torch.fake_quantize_per_tensor_affine(x, *args)
            raise SystemExit("expected an error")
        except RuntimeError as e:
            errors.append({"kind": "per_tensor", "args": list(args), "error": str(e).split("\n")[0]})
    for axis, sc, zp, lo, hi in ((2, [0.1] * 3, [0] * 3, 0, 255), (1, [0.1] * 2, [0] * 2, 0, 255),
                                 (1, [0.1] * 3, [0, 300, 0], 0, 255)):
        try:
            torch.fake_quantize_per_channel_affine(x, torch.tensor(sc), torch.tensor(zp, dtype=torch.int32),
                                                   axis, lo, hi)
            raise SystemExit("expected an error")
        except (RuntimeError, IndexError) as e:
            errors.append({"kind": "per_channel", "shape": [2, 3], "axis": axis, "scales": sc, "zero_points": zp,
                           "quant_min": lo, "quant_max": hi, "error": str(e).split("\n")[0]})
    return cases, errors


def bench():
    g = np.random.default_rng(1)
    x = torch.from_numpy(g.standard_normal(1_000_000).astype(F32))
    times = []
    for _ in range(3):
        obs = O.HistogramObserver()
        t0 = time.perf_counter()
        obs(x)
        s, z = obs.calculate_qparams()
        times.append(time.perf_counter() - t0)
    print("torch %s HistogramObserver observe+calculate_qparams on 1M normal floats: best %.1f ms (runs %s), "
          "scale %r zero_point %d" % (torch.__version__, min(times) * 1e3, ["%.1f" % (t * 1e3) for t in times],
                                      float(s), int(z)))


def main():
    if "--bench" in sys.argv:
        bench()
        return
    torch.manual_seed(0)
    header = {"generator": GENERATOR, "torch_version": torch.__version__,
              "note": "float arrays in *_b64 keys: base64 of little-endian float32"}
    cases = observer_cases()
    n = write_fixture(os.path.join(FIXTURES, "torch", "observers.json"), dict(header, qconfigs=qconfigs()),
                      {"cases": cases, "synthetic": synthetic_cases(), "sequences": SEQUENCES, "errors": error_cases()})
    print("observers.json: %d bytes" % n)
    fq, fq_err = fakequant()
    n = write_fixture(os.path.join(FIXTURES, "torch", "fakequant.json"), header, {"cases": fq, "errors": fq_err})
    print("fakequant.json: %d bytes" % n)


if __name__ == "__main__":
    main()
