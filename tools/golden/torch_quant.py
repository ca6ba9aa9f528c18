#!/usr/bin/python3
"""Golden quantization data from real PyTorch (Debian torch 1.13, run with /usr/bin/python3).

Writes
  tests/fixtures/torch/qparams.json   observer scale / zero_point (MinMaxObserver, PerChannelMinMaxObserver)
  tests/fixtures/torch/quantize.json  quantize_per_tensor / quantize_per_channel / dequantize / requantize / copy_

Everything is deterministic (fixed seeds). After generating, every quantize and dequantize result is
checked against the closed-form formulas in ref_quantize / ref_dequantize_* below and the number of
disagreements is printed; a non-zero count means this torch build behaves differently.
"""
import os
import sys
import warnings

import numpy as np
import torch
from torch.ao.quantization.observer import MinMaxObserver, PerChannelMinMaxObserver

sys.dont_write_bytecode = True  # keep tools/golden free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import FIXTURES, f32, write_fixture  # noqa: E402

warnings.filterwarnings("ignore")
torch.manual_seed(0)

GENERATOR = "tools/golden/torch_quant.py"
F32 = np.float32
DT = {"quint8": torch.quint8, "qint8": torch.qint8, "qint32": torch.qint32}
NPINT = {"quint8": np.uint8, "qint8": np.int8, "qint32": np.int32}
RANGE = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(2 ** 31), 2 ** 31 - 1)}
QS = {
    "per_tensor_affine": torch.per_tensor_affine,
    "per_tensor_symmetric": torch.per_tensor_symmetric,
    "per_channel_affine": torch.per_channel_affine,
    "per_channel_symmetric": torch.per_channel_symmetric,
}


def farr(xs):
    return np.array(xs, dtype=np.float64).astype(F32)


def flist(a):
    return [float(v) for v in np.asarray(a, dtype=F32).ravel()]


# --------------------------------------------------------------------------------------------
# Reference formulas (what the probes established); used only to self-check the recorded data.

def _to_int64(v):
    # C++ static_cast<int64_t>(float) on x86-64 (cvttss2si): NaN and out-of-range give INT64_MIN.
    if np.isnan(v) or abs(float(v)) >= 2.0 ** 63:
        return -(2 ** 63)
    return int(v)


def ref_quantize(x, scale, zp, dtype):
    qmin, qmax = RANGE[dtype]
    with np.errstate(all="ignore"):
        inv = F32(1.0) / F32(scale)
        t = F32(zp) + np.rint(np.asarray(x, dtype=F32) * inv)  # all float32
    return [min(max(_to_int64(v), qmin), qmax) for v in np.ravel(t)]


def ref_dequantize_per_tensor(q, scale, zp):
    d = np.asarray(q, dtype=np.int64) - zp
    d = ((d + 2 ** 31) % 2 ** 32) - 2 ** 31  # int32 subtraction (wraps)
    with np.errstate(all="ignore"):
        return d.astype(F32) * F32(scale)


def ref_dequantize_per_channel(q, scale, zp):
    with np.errstate(all="ignore"):
        diff = np.asarray(q, dtype=np.int64).astype(F32) - F32(zp)  # float32 subtraction
        return (diff.astype(np.float64) * float(scale)).astype(F32)  # double multiply, one rounding to float


def _wrap32(v):
    return ((int(v) + 2 ** 31) % 2 ** 32) - 2 ** 31


def _tmax(a, b):
    # torch.max(a, b) elementwise: NaN propagates; on equality (e.g. -0.0 vs 0.0) a is returned
    if np.isnan(a) or np.isnan(b):
        return F32(np.nan)
    return a if a >= b else b


def _tmin(a, b):
    if np.isnan(a) or np.isnan(b):
        return F32(np.nan)
    return a if a <= b else b


def ref_qparams(mn, mx, dtype, symmetric, qmin, qmax, eps, custom):
    """observer._calculate_qparams for one channel, all arithmetic in float32."""
    mn, mx, eps = F32(mn), F32(mx), F32(eps)
    with np.errstate(all="ignore"):
        mneg = _tmin(mn, F32(0.0))
        mpos = _tmax(mx, F32(0.0))
        if symmetric:
            mpos = _tmax(-mneg, mpos)
            scale = _tmax(F32(mpos / F32((qmax - qmin) / 2)), eps)
            zp = ((qmin + qmax) // 2 if custom else 128) if dtype == "quint8" else 0
        else:
            scale = _tmax(F32(F32(mpos - mneg) / F32(qmax - qmin)), eps)
            r = np.rint(F32(mneg / scale))
            ri = -(2 ** 31) if (np.isnan(r) or abs(float(r)) >= 2.0 ** 31) else int(r)  # float -> int32
            zp = min(max(_wrap32(qmin - ri), qmin), qmax)  # int32 subtraction, then clamp
    return float(scale), zp


CHECK = {"cases": 0, "mismatch": []}


def _same_bits(a, b):
    a = np.asarray(a, dtype=F32).ravel()
    b = np.asarray(b, dtype=F32).ravel()
    return np.array_equal(a.view(np.int32), b.view(np.int32)) or (
        np.array_equal(np.isnan(a), np.isnan(b))
        and np.array_equal(a[~np.isnan(a)].view(np.int32), b[~np.isnan(b)].view(np.int32)))


def check(name, ok):
    CHECK["cases"] += 1
    if not ok:
        CHECK["mismatch"].append(name)


# --------------------------------------------------------------------------------------------
# qparams.json

def make_observer(cls, dtype, qscheme, reduce_range, qmin, qmax, eps, **extra):
    kw = dict(dtype=DT[dtype], qscheme=QS[qscheme], reduce_range=reduce_range, **extra)
    if qmin is not None:
        kw["quant_min"] = qmin
        kw["quant_max"] = qmax
    if eps is not None:
        kw["eps"] = eps
    return cls(**kw)


def opts(dtype, qscheme, rr, qmin, qmax, eps):
    return {"dtype": dtype, "qscheme": qscheme, "reduce_range": rr,
            "quant_min": qmin, "quant_max": qmax, "eps": eps}


def pt_qparams(mn, mx, dtype, qscheme, rr, qmin, qmax, eps):
    mn, mx = f32(mn), f32(mx)
    obs = make_observer(MinMaxObserver, dtype, qscheme, rr, qmin, qmax, eps)
    # Recorded: the observer's own _calculate_qparams on exactly (min, max).
    s, z = obs._calculate_qparams(torch.tensor(mn, dtype=torch.float32), torch.tensor(mx, dtype=torch.float32))
    assert s.dtype == torch.float32
    # Cross-check with the observing path (forward + calculate_qparams) whenever aminmax records the same
    # min/max bit patterns (it may not for signed zeros: observing [-0.0, 0.0] can give other zero signs).
    obs(torch.tensor([mn, mx], dtype=torch.float32))
    if _same_bits(obs.min_val.numpy(), F32(mn)) and _same_bits(obs.max_val.numpy(), F32(mx)):
        s2, z2 = obs.calculate_qparams()
        assert _same_bits(s.numpy(), s2.numpy()) and int(z) == int(z2), (mn, mx, s, s2, z, z2)
    case = {"min": mn, "max": mx}
    case.update(opts(dtype, qscheme, rr, qmin, qmax, eps))
    case.update({"qmin_eff": obs.quant_min, "qmax_eff": obs.quant_max,
                 "scale": float(s.item()), "zero_point": int(z.item())})
    rs, rz = ref_qparams(mn, mx, dtype, "symmetric" in qscheme, obs.quant_min, obs.quant_max,
                         obs.eps.item(), qmin is not None)
    check("qparams:%r" % case, _same_bits(F32(rs), s.numpy()) and rz == case["zero_point"])
    return case


def pc_qparams(mins, maxs, dtype, qscheme, rr, qmin, qmax, eps):
    mins = [f32(v) for v in mins]
    maxs = [f32(v) for v in maxs]
    obs = make_observer(PerChannelMinMaxObserver, dtype, qscheme, rr, qmin, qmax, eps, ch_axis=0)
    s, z = obs._calculate_qparams(torch.tensor(mins, dtype=torch.float32), torch.tensor(maxs, dtype=torch.float32))
    obs(torch.tensor(list(zip(mins, maxs)), dtype=torch.float32))
    if _same_bits(obs.min_val.numpy(), farr(mins)) and _same_bits(obs.max_val.numpy(), farr(maxs)):
        s2, z2 = obs.calculate_qparams()
        assert _same_bits(s.numpy(), s2.numpy()) and z.tolist() == z2.tolist()
    case = {"min": mins, "max": maxs}
    case.update(opts(dtype, qscheme, rr, qmin, qmax, eps))
    case.update({"qmin_eff": obs.quant_min, "qmax_eff": obs.quant_max,
                 "scales": [float(v) for v in s.tolist()], "zero_points": [int(v) for v in z.tolist()]})
    ok = True
    for c in range(len(mins)):
        rs, rz = ref_qparams(mins[c], maxs[c], dtype, "symmetric" in qscheme, obs.quant_min, obs.quant_max,
                             obs.eps.item(), qmin is not None)
        ok = ok and _same_bits(F32(rs), F32(case["scales"][c])) and rz == case["zero_points"][c]
    check("qparams_pc:%r" % case, ok)
    return case


FIXED_MINMAX = [
    (0.0, 0.0), (-0.0, 0.0), (1.0, 1.0), (-1.0, -1.0), (2.5, 2.5), (-2.5, -2.5), (1e30, 1e30),
    (-3.0, 5.0), (-5.0, 3.0), (-1.0, 1.0), (0.0, 1.0), (-1.0, 0.0), (0.5, 2.0), (-2.0, -0.5),
    (-1e-10, 1e-10), (0.0, 1e-10), (-1e-10, 0.0), (1e-10, 2e-10), (-1e-6, 3e-6),
    (-1e30, 1e30), (0.0, 1e30), (-1e30, 0.0), (-3.0e38, 3.0e38), (0.0, 3.4028234663852886e38),
    (-1e-38, 1e-38), (-1e-45, 1e-45), (-300.0, 0.0), (-1000.0, 2.0), (-6.0e4, 1.0),
    (-0.1, 25.5), (-25.5, 0.1), (-127.5, 127.5), (-128.0, 127.0), (-0.0078125, 0.9921875),
]


def random_minmax(rng, n):
    out = []
    for i in range(n):
        mag = float(np.exp(rng.uniform(-12, 12)))
        a, b = (rng.standard_normal(2) * mag).astype(F32)
        kind = i % 4
        if kind == 1:
            a, b = abs(a), abs(b)
        elif kind == 2:
            a, b = -abs(a), -abs(b)
        out.append((float(min(a, b)), float(max(a, b))))
    return out


def tie_minmax(qmin, qmax, rng, want=4):
    """(min, max) on a 1/64 grid where float32(min_neg / scale) is exactly k + 0.5."""
    denom = F32(qmax - qmin)
    mn = -rng.integers(1, 4000, 200000).astype(F32) / F32(64)
    mx = rng.integers(0, 4000, 200000).astype(F32) / F32(64)
    sc = (mx - mn) / denom
    v = mn / sc
    hit = np.nonzero(v == np.floor(v) + F32(0.5))[0]
    found = []
    for i in hit:
        p = (float(mn[i]), float(mx[i]))
        if p not in found:
            found.append(p)
        if len(found) >= want:
            break
    return found


def gen_qparams():
    rng = np.random.default_rng(1234)
    per_tensor, per_channel, errors = [], [], []

    rand_pairs = random_minmax(rng, 16)
    # 1) every dtype x scheme x reduce_range with default ranges
    for dtype in ("quint8", "qint8", "qint32"):
        qmin, qmax = RANGE[dtype]
        ties = tie_minmax(qmin, qmax, rng, 4) if dtype != "qint32" else []
        ties_rr = tie_minmax(qmin // 2, qmax // 2, rng, 2) if dtype != "qint32" else []
        for qscheme in ("per_tensor_affine", "per_tensor_symmetric"):
            for rr in (False, True):
                if qscheme == "per_tensor_symmetric" and rr and dtype == "quint8":
                    continue  # rejected, recorded in errors
                pairs = FIXED_MINMAX + rand_pairs + ties + (ties_rr if rr else [])
                for mn, mx in pairs:
                    per_tensor.append(pt_qparams(mn, mx, dtype, qscheme, rr, None, None, None))

    # 2) custom quant ranges (reduce_range halves them with floor division)
    custom = {
        "quint8": [(0, 15), (0, 127), (0, 255), (-8, 7), (0, 1000)],
        "qint8": [(-8, 7), (-127, 127), (-128, 127), (0, 127), (-64, 63), (-1, 1)],
        "qint32": [(-(2 ** 30), 2 ** 30 - 1), (0, 2 ** 31 - 1), (-(2 ** 31) + 1, 0), (-1000, 1000)],
    }
    sub_pairs = [(0.0, 0.0), (1.0, 1.0), (-3.0, 5.0), (-5.0, 3.0), (0.0, 1.0), (-1.0, 0.0), (0.5, 2.0),
                 (-2.0, -0.5), (-1e-10, 1e-10), (-1e30, 1e30), (-300.0, 0.0), (-0.1, 25.5)]
    for dtype, ranges in custom.items():
        for qmin, qmax in ranges:
            tp = tie_minmax(qmin, qmax, rng, 2) if qmax - qmin < 2 ** 16 else []
            for qscheme in ("per_tensor_affine", "per_tensor_symmetric"):
                for rr in (False, True):
                    if qscheme == "per_tensor_symmetric" and rr and dtype == "quint8":
                        continue
                    for mn, mx in (sub_pairs + tp if not rr else sub_pairs[2:8]):
                        per_tensor.append(pt_qparams(mn, mx, dtype, qscheme, rr, qmin, qmax, None))

    # 3) custom eps (float32 values); eps = 0 lets scale become 0 (or -0.0)
    for eps in (0.0, 2.0 ** -4, f32(1e-3), f32(1e-12)):
        for dtype in ("quint8", "qint8"):
            for qscheme in ("per_tensor_affine", "per_tensor_symmetric"):
                for mn, mx in [(0.0, 0.0), (-0.0, 0.0), (1e-3, 1e-3), (-1e-10, 1e-10), (-3.0, 5.0), (-1e-4, 2e-4)]:
                    per_tensor.append(pt_qparams(mn, mx, dtype, qscheme, False, None, None, eps))

    # 4) per-channel: 8 channels per case
    def pc_groups():
        groups = [
            [(0.0, 0.0), (1.0, 1.0), (-1.0, -1.0), (-3.0, 5.0), (-5.0, 3.0), (-1e-10, 1e-10), (-1e30, 1e30), (0.5, 2.0)],
            [(-0.1, 25.5), (-127.5, 127.5), (-2.0, -0.5), (0.0, 1e-10), (-300.0, 0.0), (-1.0, 0.0), (-0.0, 0.0), (2.5, 2.5)],
        ]
        groups.append(random_minmax(rng, 8))
        return groups
    groups = pc_groups()
    pc_custom = {"quint8": [None, (0, 15)], "qint8": [None, (-8, 7), (-127, 127)], "qint32": [None, (-1000, 1000)]}
    for dtype, ranges in pc_custom.items():
        for rngq in ranges:
            qmin, qmax = rngq if rngq else (None, None)
            for qscheme in ("per_channel_affine", "per_channel_symmetric"):
                for rr in (False, True):
                    if qscheme == "per_channel_symmetric" and rr and dtype == "quint8":
                        continue
                    for g in groups:
                        per_channel.append(pc_qparams([a for a, _ in g], [b for _, b in g], dtype, qscheme, rr, qmin, qmax, None))
    for eps in (0.0, f32(1e-3)):
        per_channel.append(pc_qparams([a for a, _ in groups[0]], [b for _, b in groups[0]], "qint8",
                                      "per_channel_symmetric", False, None, None, eps))

    # 5) rejected option sets
    def err_ctor(observer, dtype, qscheme, rr, qmin, qmax, eps):
        cls = MinMaxObserver if observer == "MinMaxObserver" else PerChannelMinMaxObserver
        kw = dict(dtype=DT.get(dtype, getattr(torch, dtype, None)), qscheme=getattr(torch, qscheme), reduce_range=rr)
        if qmin is not None:
            kw["quant_min"], kw["quant_max"] = qmin, qmax
        if eps is not None:
            kw["eps"] = eps
        case = {"observer": observer, "stage": "constructor"}
        case.update(opts(dtype, qscheme, rr, qmin, qmax, eps))
        try:
            cls(**kw)
            case["error"] = None
        except Exception as e:  # noqa: BLE001
            case["exception"] = type(e).__name__
            case["error"] = " ".join(str(e).split())
        assert case["error"] is not None, case
        errors.append(case)

    for obs_name, sch in (("MinMaxObserver", "per_tensor"), ("PerChannelMinMaxObserver", "per_channel")):
        err_ctor(obs_name, "quint8", sch + "_symmetric", True, None, None, None)
        err_ctor(obs_name, "quint8", sch + "_symmetric", True, 0, 255, None)
        err_ctor(obs_name, "qint8", sch + "_affine", False, 1, 127, None)
        err_ctor(obs_name, "quint8", sch + "_affine", False, 1, 255, None)
        err_ctor(obs_name, "qint8", sch + "_affine", False, -128, -1, None)
        err_ctor(obs_name, "qint8", sch + "_affine", False, 0, 0, None)
        err_ctor(obs_name, "qint8", sch + "_affine", False, -200, 200, None)
        err_ctor(obs_name, "qint8", sch + "_affine", False, -128, 128, None)
        err_ctor(obs_name, "qint32", sch + "_affine", False, -(2 ** 31), 2 ** 31 - 1, None)
        err_ctor(obs_name, "qint32", sch + "_symmetric", False, -(2 ** 31), 2 ** 31 - 1, None)
        err_ctor(obs_name, "float32", sch + "_affine", False, None, None, None)
    err_ctor("MinMaxObserver", "quint8", "per_channel_affine", False, None, None, None)
    err_ctor("PerChannelMinMaxObserver", "qint8", "per_tensor_symmetric", False, None, None, None)

    for mn, mx, how in ((2.0, 1.0, "_calculate_qparams"), (float("nan"), 1.0, "_calculate_qparams"),
                        (float("nan"), 1.0, "observe")):
        case = {"observer": "MinMaxObserver", "stage": how, "min": mn, "max": mx}
        case.update(opts("quint8", "per_tensor_affine", False, None, None, None))
        obs = MinMaxObserver()
        try:
            if how == "observe":
                obs(torch.tensor([mn, mx], dtype=torch.float32))
                obs.calculate_qparams()
            else:
                obs._calculate_qparams(torch.tensor(mn), torch.tensor(mx))
            case["error"] = None
        except Exception as e:  # noqa: BLE001
            case["exception"] = type(e).__name__
            case["error"] = " ".join(str(e).split())
        errors.append(case)
    return per_tensor, per_channel, errors


# --------------------------------------------------------------------------------------------
# quantize.json

def q_pt(name, dtype, scale, zp, xs):
    x = torch.from_numpy(farr(xs))
    qt = torch.quantize_per_tensor(x, scale, zp, DT[dtype])
    q = qt.int_repr().tolist()
    dq = qt.dequantize().numpy()
    check("per_tensor:" + name, q == ref_quantize(x.numpy(), scale, zp, dtype)
          and _same_bits(dq, ref_dequantize_per_tensor(q, scale, zp)))
    return {"name": name, "dtype": dtype, "scale": float(scale), "zero_point": int(zp),
            "input": flist(x.numpy()), "q": q, "dequant": flist(dq)}


def q_pc(name, dtype, shape, axis, scales, zps, xs):
    x = torch.from_numpy(farr(xs).reshape(shape))
    qt = torch.quantize_per_channel(x, torch.tensor(scales, dtype=torch.float64),
                                    torch.tensor(zps, dtype=torch.int64), axis, DT[dtype])
    q = qt.int_repr()
    dq = qt.dequantize()
    ok = True
    for c in range(shape[axis]):
        xc = x.select(axis, c).contiguous().numpy().ravel()
        qc = q.select(axis, c).contiguous().numpy().ravel().tolist()
        dc = dq.select(axis, c).contiguous().numpy().ravel()
        ok = ok and qc == ref_quantize(xc, scales[c], zps[c], dtype) \
            and _same_bits(dc, ref_dequantize_per_channel(qc, scales[c], zps[c]))
    check("per_channel:" + name, ok)
    return {"name": name, "dtype": dtype, "shape": list(shape), "axis": axis,
            "scales": [float(s) for s in scales], "zero_points": [int(z) for z in zps],
            "input": flist(x.numpy()), "q": q.numpy().ravel().tolist(), "dequant": flist(dq.numpy())}


def dq_pt(name, dtype, scale, zp, qs):
    qi = torch.from_numpy(np.array(qs, dtype=np.int64).astype(NPINT[dtype]))
    qt = torch._make_per_tensor_quantized_tensor(qi, scale, zp)
    dq = qt.dequantize().numpy()
    check("dequantize:" + name, _same_bits(dq, ref_dequantize_per_tensor(qs, scale, zp)))
    return {"name": name, "qscheme": "per_tensor_affine", "dtype": dtype, "scale": float(scale),
            "zero_point": int(zp), "q": [int(v) for v in qs], "dequant": flist(dq)}


def dq_pc(name, dtype, shape, axis, scales, zps, qs):
    qi = torch.from_numpy(np.array(qs, dtype=np.int64).astype(NPINT[dtype]).reshape(shape))
    qt = torch._make_per_channel_quantized_tensor(qi, torch.tensor(scales, dtype=torch.float64),
                                                  torch.tensor(zps, dtype=torch.int64), axis)
    dq = qt.dequantize()
    ok = True
    for c in range(shape[axis]):
        qc = qi.select(axis, c).contiguous().numpy().ravel().astype(np.int64)
        ok = ok and _same_bits(dq.select(axis, c).contiguous().numpy().ravel(),
                               ref_dequantize_per_channel(qc, scales[c], zps[c]))
    check("dequantize:" + name, ok)
    return {"name": name, "qscheme": "per_channel_affine", "dtype": dtype, "shape": list(shape), "axis": axis,
            "scales": [float(s) for s in scales], "zero_points": [int(z) for z in zps],
            "q": [int(v) for v in qs], "dequant": flist(dq.numpy())}


def exact_tie(t, scale):
    """A float32 x with float32(x * float32(1/float32(scale))) == t exactly, or None."""
    inv = F32(1.0) / F32(scale)
    x0 = F32(t / float(inv))
    cands = [x0]
    up = dn = x0
    for _ in range(64):
        up = np.nextafter(up, F32(np.inf), dtype=F32)
        dn = np.nextafter(dn, F32(-np.inf), dtype=F32)
        cands += [up, dn]
    for x in cands:
        if F32(x * inv) == F32(t):
            return float(x)
    return None


def tie_inputs(scale, ks, with_neighbours=True):
    xs = []
    for k in ks:
        for t in (k + 0.5, -(k + 0.5)):
            x = exact_tie(t, scale)
            if x is None:
                continue
            xs.append(x)
            if with_neighbours:
                xs.append(float(np.nextafter(F32(x), F32(np.inf), dtype=F32)))
                xs.append(float(np.nextafter(F32(x), F32(-np.inf), dtype=F32)))
    return xs


SPECIALS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e-40, -1e-40, 1e-45, 1e-30, -1e-30,
            1e20, -1e20, 3e9, -3e9, 1e38, -1e38, 3.4028234663852886e38, -3.4028234663852886e38,
            9.2e18, -9.2e18, 2.0 ** 63, -(2.0 ** 63), float(np.nextafter(F32(2.0 ** 63), F32(0))),
            -float(np.nextafter(F32(2.0 ** 63), F32(0))), 9.3e18, 2.0 ** 31, -(2.0 ** 31), 2.0 ** 31 - 128,
            2.0 ** 24 + 2, 1.0, -1.0]


def gen_quantize():
    rng = np.random.default_rng(99)
    pt, pc, dq, rq, cp = [], [], [], [], []

    # random vectors of odd lengths
    base = {"quint8": (0.05, 128), "qint8": (0.02, 0), "qint32": (0.001, 0)}
    for dtype, (s, z) in base.items():
        for n in (1, 3, 17, 33, 257 if dtype == "qint8" else 65):
            pt.append(q_pt("normal_n%d" % n, dtype, s, z, rng.standard_normal(n) * 3.0))
        pt.append(q_pt("uniform_n33", dtype, s, z, rng.uniform(-8, 8, 33)))
    pt.append(q_pt("uniform_wide_n17", "quint8", 0.1, 37, rng.uniform(-10, 30, 17)))
    pt.append(q_pt("uniform_wide_n17", "qint8", 1 / 3, -5, rng.uniform(-60, 60, 17)))

    # exact .5 ties after x * (1/scale) (both signs, even and odd k) and their float32 neighbours
    for dtype in DT:
        lo, hi = RANGE[dtype]
        zp = {"quint8": 128, "qint8": 0, "qint32": 0}[dtype]
        for s in (0.1, 1 / 3, 0.00214854861, 2.0 ** -5, 0.0078125, 1e-4, 0.7, 0.02):
            ks = [0, 1, 2, 3, 10, 11, 62, 63, 126, 127]
            if dtype == "qint32":
                ks += [1000, 1001, 65536, 65537, 2 ** 20 + 6, 2 ** 20 + 7]
            pt.append(q_pt("ties_scale_%r" % s, dtype, s, zp, tie_inputs(s, ks)))
        if dtype != "qint32":
            pt.append(q_pt("ties_zp_edge_lo", dtype, 0.1, lo, tie_inputs(0.1, [0, 1, 2, 3, 254, 255])))
            pt.append(q_pt("ties_zp_edge_hi", dtype, 0.1, hi, tie_inputs(0.1, [0, 1, 2, 3, 254, 255])))
    # the FBGEMM/ONNX disagreement: x*(1/s) = 127.5 exactly in float32, x/s = 127.49999
    for dtype in DT:
        pt.append(q_pt("fbgemm_onnx_127_5", dtype, 0.00214854861, 0, [0.273939937, -0.273939937]))

    # specials: NaN, +-Inf, huge, subnormal, -0.0, int64 overflow boundary
    for dtype in DT:
        lo, hi = RANGE[dtype]
        mid = {"quint8": 128, "qint8": 0, "qint32": 0}[dtype]
        for s, z in ((1.0, mid), (1.0, lo), (1.0, hi), (1e-8, mid), (1e6, mid), (0.1, 3)):
            if not lo <= z <= hi:
                continue
            pt.append(q_pt("specials_s%r_zp%d" % (s, z), dtype, s, z, SPECIALS))

    # clamp edges: exactly at qmin/qmax, one step past, half steps and float32 neighbours
    for dtype in DT:
        lo, hi = RANGE[dtype]
        zps = {"quint8": [0, 255, 128, 3], "qint8": [-128, 127, 0, -7], "qint32": [0, 5, -(2 ** 31), 2 ** 31 - 1]}[dtype]
        for z in zps:
            s = 0.25 if dtype != "qint32" else 1.0
            xs = []
            for k in (hi - z, hi - z + 1, hi - z - 1, lo - z, lo - z - 1, lo - z + 1):
                for d in (0.0, 0.5, -0.5):
                    v = F32((k + d) * s)
                    xs += [float(v), float(np.nextafter(v, F32(np.inf), dtype=F32)),
                           float(np.nextafter(v, F32(-np.inf), dtype=F32))]
            pt.append(q_pt("clamp_edges_zp%d" % z, dtype, s, z, xs))
        if dtype != "qint32":
            for z in zps[:2]:
                s = 0.1
                xs = [(hi - z) * s, (hi - z + 1) * s, (hi - z + 0.5) * s, (lo - z) * s, (lo - z - 1) * s, (lo - z - 0.5) * s]
                pt.append(q_pt("clamp_edges_s0.1_zp%d" % z, dtype, s, z, xs))

    # assorted scales
    for dtype in DT:
        zp = {"quint8": 100, "qint8": -20, "qint32": 7}[dtype]
        for s in (1e-4, 0.1, 1 / 3, 1e-8, 1e6, 3.14159e-5, float(np.exp(rng.uniform(-6, 2)))):
            xs = np.concatenate([rng.standard_normal(9) * s * 60, rng.uniform(-300, 300, 8) * s])
            pt.append(q_pt("scale_%r" % s, dtype, s, zp, xs))

    # qint32: large values, zero point added in float32 (zp and sum rounded to 24 bits)
    big = [2.0 ** 24, 2.0 ** 24 + 2, 2.0 ** 25 + 4, 1e9, -1e9, 2.0 ** 30, -(2.0 ** 30), 2.0 ** 31 - 128,
           -(2.0 ** 31), 2.0 ** 31, 123456789.0, -123456789.0, 5e8, 3.0, -3.0, 0.0]
    for z in (0, 1, 7, 2 ** 30 + 1, -(2 ** 31), 2 ** 31 - 1, 12345677, -12345677, 16777217):
        pt.append(q_pt("qint32_big_zp%d" % z, "qint32", 1.0, z, big))
    pt.append(q_pt("qint32_big_scale0.1_zp2^30+1", "qint32", 0.1, 2 ** 30 + 1,
                   [x * 0.1 for x in big] + list(rng.uniform(-2e8, 2e8, 6))))

    # scales torch 1.13 accepts without complaint (no validation): 0, -0, negative, NaN, Inf, underflowing
    for dtype in DT:
        for s in (0.0, -0.0, -0.5, float("nan"), float("inf"), 1e-45, 1e-300, 1e300):
            pt.append(q_pt("odd_scale_%r" % s, dtype, s, 0 if dtype != "quint8" else 3,
                           [0.0, -0.0, 1.0, -1.0, 2.5, -100.0, float("nan")]))

    # ---------------- per-channel
    def pc_input(n, scales_for_elems):
        base = rng.standard_normal(n) * 40.0
        return [float(F32(b * s)) for b, s in zip(base, scales_for_elems)]

    def elem_scales(shape, axis, scales):
        idx = np.indices(shape)[axis].ravel()
        return [scales[i] for i in idx]

    pc_specs = [
        ((3, 5), 0), ((3, 5), 1), ((2, 3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), 2), ((4, 1, 3, 3), 0),
    ]
    for dtype in DT:
        lo, hi = RANGE[dtype]
        for shape, axis in pc_specs:
            C = shape[axis]
            scales = [0.1, 1 / 3, 0.00214854861, 2.0 ** -5, 3.14159e-5][:C] + [float(np.exp(rng.uniform(-5, 1))) for _ in range(C - 5)]
            if dtype == "qint32":
                zps = [0, 2 ** 30 + 1, -7, 12345677, -(2 ** 31)][:C]
            else:
                zps = [int(v) for v in rng.integers(lo, hi + 1, C)]
                zps[0] = lo
                if C > 1:
                    zps[-1] = hi
            n = int(np.prod(shape))
            xs = pc_input(n, elem_scales(shape, axis, scales))
            if n > 8:
                xs[1], xs[4], xs[7] = float("nan"), float("inf"), -0.0
                xs[-1] = -float("inf")
            pc.append(q_pc("shape%s_axis%d" % ("x".join(map(str, shape)), axis), dtype, shape, axis, scales, zps, xs))
        # ties per channel (x * (1/scale_c) exactly k+0.5)
        scales = [0.1, 1 / 3, 0.0078125]
        zps = [0, 0, 0] if dtype != "quint8" else [128, 3, 250]
        rows = [tie_inputs(s, [0, 1, 2, 3, 10, 11], with_neighbours=False)[:12] for s in scales]
        pc.append(q_pc("ties_3x12_axis0", dtype, (3, 12), 0, scales, zps, sum(rows, [])))
        # specials per channel
        sp = SPECIALS[:24]
        pc.append(q_pc("specials_2x24_axis0", dtype, (2, 24), 0, [1.0, 1e-8], [zps[0], zps[2]], sp + sp))

    # ---------------- dequantize: full integer range, per tensor
    for dtype in ("quint8", "qint8"):
        lo, hi = RANGE[dtype]
        allq = list(range(lo, hi + 1))
        combos = [(0.1, 0), (0.1, 128 if dtype == "quint8" else 127), (1 / 3, 17), (0.0078125, 128 if dtype == "quint8" else -128),
                  (3.14159e-5, 200 if dtype == "quint8" else -3), (0.00214854861, lo), (7.123456789e-3, 77), (1e-8, hi)]
        for s, z in combos:
            dq.append(dq_pt("full_range_s%r_zp%d" % (s, z), dtype, s, z, allq))
        dq.append(dq_pt("odd_scale_negative", dtype, -0.25, 5, allq[::17]))
    qint32_q = [-(2 ** 31), 2 ** 31 - 1, 0, 1, -1, 2 ** 24 + 1, -(2 ** 24 + 1), 2 ** 30 + 3, -(2 ** 30) - 3, 123456789,
                -123456789, 1000, -1000, 2 ** 31 - 2, -(2 ** 31) + 1]
    qint32_q += [int(v) for v in rng.integers(-(2 ** 31), 2 ** 31, 10)]
    for s, z in ((0.1, 0), (1.0, 0), (0.1, 2 ** 30 + 1), (1 / 3, -(2 ** 31)), (1.0, 2 ** 31 - 1), (1e-3, 123456789), (1.0, -5)):
        dq.append(dq_pt("qint32_s%r_zp%d" % (s, z), "qint32", s, z, qint32_q))

    # ---------------- dequantize: per channel (float64 scales, double multiply)
    for dtype in ("quint8", "qint8"):
        lo, hi = RANGE[dtype]
        allq = list(range(lo, hi + 1))
        scales = [0.1, 1 / 3, 3.14159e-5, 0.0078125]
        zps = [lo, hi, 17, 100] if dtype == "quint8" else [lo, hi, 0, -3]
        dq.append(dq_pc("full_range_4x256_axis0", dtype, (4, 256), 0, scales, zps, allq * 4))
        q2 = [int(v) for v in rng.integers(lo, hi + 1, 2 * 3 * 5)]
        dq.append(dq_pc("2x3x5_axis1", dtype, (2, 3, 5), 1, [0.1, 7.123456789e-3, 0.00214854861], zps[:3], q2))
    dq.append(dq_pc("qint32_3x15_axis0", "qint32", (3, 15), 0, [0.1, 1.0, 1 / 3], [0, 2 ** 30 + 1, -(2 ** 31)],
                    qint32_q[:15] * 3))

    # ---------------- requantize: quantize_per_tensor(q.dequantize(), dst...)
    rq_specs = [
        ("quint8", 0.1, 10, "quint8", 0.2, 10), ("quint8", 0.1, 128, "quint8", 0.3, 100), ("quint8", 0.05, 0, "qint8", 0.1, 0),
        ("qint8", 0.1, 0, "quint8", 0.2, 128), ("qint8", 1 / 3, -5, "qint8", 0.5, 3), ("qint8", 0.02, 0, "qint8", 0.02, 1),
        ("qint32", 0.001, 0, "quint8", 0.1, 128), ("qint32", 0.00214854861, 0, "qint8", 0.00429709722, 0),
        ("quint8", 0.0078125, 128, "qint32", 0.00390625, 0),
    ]
    for sd, ss, sz, dd, ds, dz in rq_specs:
        lo, hi = RANGE[sd]
        if sd == "qint32":
            q_in = [int(v) for v in rng.integers(-40000, 40000, 24)] + [lo, hi, 0, 1, -1]
        else:
            q_in = list(range(lo, hi + 1, 3)) + [hi]
        src = torch._make_per_tensor_quantized_tensor(torch.from_numpy(np.array(q_in, dtype=NPINT[sd])), ss, sz)
        out = torch.quantize_per_tensor(src.dequantize(), ds, dz, DT[dd])
        rq.append({"name": "%s_to_%s" % (sd, dd), "src_dtype": sd, "src_scale": ss, "src_zero_point": sz, "q_in": q_in,
                   "dst_dtype": dd, "dst_scale": ds, "dst_zero_point": dz, "q_out": out.int_repr().tolist(),
                   "how": "quantize_per_tensor(q.dequantize(), ...)"})

    cp = gen_copy()
    return pt, pc, dq, rq, cp


def desc(t):
    d = {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape)}
    if t.is_quantized:
        if t.qscheme() == torch.per_tensor_affine:
            d.update({"qscheme": "per_tensor_affine", "scale": t.q_scale(), "zero_point": t.q_zero_point()})
        else:
            d.update({"qscheme": "per_channel_affine", "axis": t.q_per_channel_axis(),
                      "scales": t.q_per_channel_scales().tolist(), "zero_points": t.q_per_channel_zero_points().tolist()})
        d["q"] = t.int_repr().reshape(-1).tolist()
        d["dequant"] = flist(t.dequantize().numpy())
    else:
        d["data"] = flist(t.numpy())
    return d


def gen_copy():
    out = []

    def run(name, make_dst, make_src, op="dst.copy_(src)", view=None):
        dst = make_dst()
        src = make_src()
        case = {"name": name, "op": op, "dst_before": desc(dst), "src": desc(src)}
        try:
            if op == "dst.copy_(src)":
                target = dst if view is None else view(dst)
                target.copy_(src)
                if view is not None:
                    case["view_after"] = desc(target)
                case["dst_after"] = desc(dst)
            elif op == "src.clone()":
                case["result"] = desc(src.clone())
        except Exception as e:  # noqa: BLE001
            case["exception"] = type(e).__name__
            case["error"] = " ".join(str(e).split()).split(" (Could this error")[0]
        out.append(case)

    X = torch.tensor([0.5, -1.25, 3.0, 100.0, 0.27])
    pt = torch.quantize_per_tensor
    run("pt_same_dtype_diff_qparams", lambda: pt(torch.zeros(5), 0.5, 3, torch.quint8), lambda: pt(X, 0.1, 10, torch.quint8))
    run("pt_qint8", lambda: pt(torch.zeros(5), 0.5, 3, torch.qint8), lambda: pt(X, 0.1, -10, torch.qint8))
    run("pt_qint32", lambda: pt(torch.zeros(5), 0.5, 3, torch.qint32), lambda: pt(X, 0.1, -7, torch.qint32))
    run("pt_broadcast_1_to_3", lambda: pt(torch.zeros(3), 0.5, 3, torch.quint8), lambda: pt(torch.tensor([1.0]), 0.1, 10, torch.quint8))
    run("pt_into_view_slice_1_3", lambda: pt(torch.zeros(4), 0.5, 3, torch.quint8),
        lambda: pt(torch.tensor([1.0, 2.0]), 0.1, 10, torch.quint8), view=lambda d: d[1:3])
    run("float_to_quantized", lambda: pt(torch.zeros(5), 0.5, 3, torch.quint8), lambda: X.clone())
    run("float_to_quantized_qint8", lambda: pt(torch.zeros(5), 0.1, -3, torch.qint8), lambda: X.clone())
    pcq = torch.quantize_per_channel
    run("pc_to_pc_diff_qparams_axis",
        lambda: pcq(torch.zeros(2, 2), torch.tensor([0.5, 0.25], dtype=torch.float64), torch.tensor([3, 4]), 1, torch.quint8),
        lambda: pcq(torch.tensor([[1., 2.], [3., 4.]]), torch.tensor([0.1, 0.2], dtype=torch.float64), torch.tensor([0, 1]), 0, torch.quint8))
    run("err_dtype_mismatch", lambda: pt(torch.zeros(5), 0.5, 3, torch.qint8), lambda: pt(X, 0.1, 10, torch.quint8))
    run("err_qscheme_mismatch", lambda: pt(torch.zeros(2, 2), 0.5, 3, torch.quint8),
        lambda: pcq(torch.ones(2, 2), torch.tensor([0.1, 0.2], dtype=torch.float64), torch.tensor([0, 1]), 0, torch.quint8))
    run("err_size_mismatch", lambda: pt(torch.zeros(3), 0.5, 3, torch.quint8), lambda: pt(X, 0.1, 10, torch.quint8))
    run("err_quantized_to_float", lambda: torch.zeros(5), lambda: pt(X, 0.1, 10, torch.quint8))
    run("clone_keeps_qparams", lambda: torch.zeros(1), lambda: pt(X, 0.1, 10, torch.quint8), op="src.clone()")
    return out


def main():
    per_tensor, per_channel, errors = gen_qparams()
    hdr = {"generator": GENERATOR, "torch": torch.__version__}
    n1 = write_fixture(os.path.join(FIXTURES, "torch", "qparams.json"), hdr,
                       {"per_tensor": per_tensor, "per_channel": per_channel, "errors": errors})
    pt, pc, dq, rq, cp = gen_quantize()
    n2 = write_fixture(os.path.join(FIXTURES, "torch", "quantize.json"), hdr,
                       {"per_tensor": pt, "per_channel": pc, "dequantize": dq, "requantize": rq, "copy_": cp})
    print("qparams.json: %d bytes (%d per_tensor, %d per_channel, %d errors)"
          % (n1, len(per_tensor), len(per_channel), len(errors)))
    print("quantize.json: %d bytes (%d per_tensor, %d per_channel, %d dequantize, %d requantize, %d copy_)"
          % (n2, len(pt), len(pc), len(dq), len(rq), len(cp)))
    print("formula self-check: %d cases, %d disagree %s" % (CHECK["cases"], len(CHECK["mismatch"]), CHECK["mismatch"][:10]))
    return 0 if not CHECK["mismatch"] else 1


if __name__ == "__main__":
    sys.exit(main())
