"""Golden data from live PyTorch 2.13 (the PyPI CPU build: FBGEMM and oneDNN inside) on its x86 and fbgemm
engines. Run with the venv's python (bash tools/setup-python.sh prints it):

    build/venv/bin/python tools/golden/torch2_ops.py            # all families (~20 s)
    build/venv/bin/python tools/golden/torch2_ops.py linear     # one family

Writes tests/fixtures/torch2/<family>.json: linear, conv2d, elementwise, activations, pooling, dynamic, seed002
and replay (1.13's committed quantize / qparams / observer / fake-quantize inputs run through 2.13: the cases
whose results changed, with 2.13's, and how many did not). Tensors are {dtype, shape, scale, zero_point, q}
(NCHW, q = int_repr flattened), as in tests/fixtures/torch/ops (tools/golden/torch_ops.py). Every call runs on
both engines, twice each, and must reproduce. `output` is the fbgemm engine's result; a case where the x86 engine
computes differently carries `x86: {path, q}` (its convolutions with symmetric weights go to oneDNN on hosts with
AVX512-VNNI); otherwise both engines gave the same integers (asserted here).

Every quantized output is also checked against the closed-form rules in the *_ref functions below (numpy); the
number of disagreements is printed per family and must be 0. Results depend on the host: `cpu_capability` (ATen's
dispatch level) and `fbgemm_isa` are recorded. On hosts without AVX512-VNNI, FBGEMM's GEMM adds pairs of u8 x s8
products in saturating int16 (vpmaddubsw) and the x86 engine never takes oneDNN; see docs/pytorch2.md.
"""
import math
import os
import sys
import warnings

import numpy as np
import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.filterwarnings("ignore")  # torch.ao.quantization and quantized tensors are deprecated in 2.x

from common import FIXTURES, write_fixture  # noqa: E402
import torch_ops as T  # noqa: E402  (tensor helpers shared with the 1.13 generator)
from torch_ops import R  # noqa: E402  (the exporter's reference: python/qwasm_export/reference.py)

import torch.ao.nn.intrinsic.quantized as nniq  # noqa: E402
import torch.ao.nn.quantized as nnq  # noqa: E402
import torch.ao.nn.quantized.dynamic as nnqd  # noqa: E402
import torch.ao.nn.quantized.functional as qF  # noqa: E402
import torch.nn.functional as F  # noqa: E402

GENERATOR = "tools/golden/torch2_ops.py"
OUTDIR = os.path.join(FIXTURES, "torch2")
ENGINES = ("fbgemm", "x86")
F32 = np.float32
qt, qw, rec, rec_weight, rec_meta = T.qt, T.qw, T.rec, T.rec_weight, T.rec_meta
w_qparams, conv_acc = T.w_qparams, T.conv_acc
logu, rand_q, RANGE = T.logu, T.rand_q, T.RANGE
INT32_FLOAT_MAX = F32(2147483520.0)  # the largest float below 2^31


def cpu_flags():
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


FLAGS = cpu_flags()
VNNI = "avx512_vnni" in FLAGS
FBGEMM_ISA = "avx512_vnni" if VNNI else ("avx512" if "avx512bw" in FLAGS else "avx2")


def fma32(a, b, c):
    """float32 fma(a, b, c): one rounding of the exact a * b + c (exact in double for these magnitudes, then
    corrected for double rounding by rounding to odd)."""
    a, b, c = np.float64(F32(a)), np.float64(F32(b)), np.float64(F32(c))
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return F32(a * b + c)
    p = a * b  # exact: 24 + 24 bits
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)  # TwoSum: s + e == p + c exactly
    if e != 0:
        bits = np.array([s]).view(np.uint64)[0]
        if bits & np.uint64(1) == 0:  # round to odd, then to float32: correct rounding
            s = np.nextafter(s, math.inf if e > 0 else -math.inf)
    return F32(s)


# --------------------------------------------------------------------------------------------
# Reference rules (what the probes established; each family checks its outputs against them)

def quantize_fbgemm_ref(x, scale, zp, dtype):
    """torch.quantize_per_tensor on an FBGEMM build (x86): 8-bit types through FBGEMM's QuantizeAvx2
    (LEGACY): fma(x, 1/s, zp) rounded once, min(., 2147483520) (so NaN and +Inf give qmax), cvtps2dq
    (nearest even; -Inf and below -2^31 give INT32_MIN), clamp. qint32 through the scalar Quantize:
    nearbyint((float)zp + (float)(x * (1/s))), two roundings, NaN giving INT32_MIN."""
    lo, hi = RANGE[dtype] if dtype != "qint32" else (-(2 ** 31), 2 ** 31 - 1)
    inv = F32(F32(1) / F32(scale))
    out = []
    for v in np.asarray(x, dtype=F32).ravel():
        if dtype == "qint32":
            t = F32(F32(zp) + F32(v * inv))
            r = np.rint(np.float64(t)) if math.isfinite(t) else (math.inf if t > 0 else -math.inf)
            out.append(int(min(max(r, lo), hi)) if not math.isnan(t) else lo)  # NaN: INT32_MIN
            continue
        t = fma32(v, inv, zp)
        t = INT32_FLOAT_MAX if (math.isnan(t) or t > INT32_FLOAT_MAX) else t
        r = -(2 ** 31) if t < -(2.0 ** 31) else int(np.rint(np.float64(t)))
        out.append(min(max(r, lo), hi))
    return out


def fbgemm_requant(acc, xs, ws, per_channel, bias, os_, oz, relu, axis=1):
    """FBGEMM's ReQuantizeOutput on x86 (requantizeOutputProcessingAvx2 / Avx512, every column):
    act_times_w_scale = (float)x_s * (float)w_s, multiplier = act_times_w_scale / (float)y_s, a float bias
    enters as bias * (float)(1.0 / (double)act_times_w_scale) per tensor, bias / act_times_w_scale per
    channel; v = ((float)acc + bias') * multiplier; cvtps2dq (|v| >= 2^31 or NaN give INT32_MIN), + zp with
    int16 saturation, clamp to [relu ? zp : 0, 255]."""
    n = acc.shape[axis]
    shp = [1] * acc.ndim
    shp[axis] = -1
    wsf = np.broadcast_to(np.asarray(ws, dtype=np.float64), (n,)).astype(F32)
    atws = (F32(xs) * wsf).astype(F32)
    mult = (atws / F32(os_)).astype(F32)
    v = acc.astype(F32)
    if bias is not None:
        b = np.asarray(bias, dtype=F32)
        bb = (b / atws).astype(F32) if per_channel else (b * F32(1.0 / np.float64(atws[0]))).astype(F32)
        v = (v + bb.reshape(shp)).astype(F32)
    v = (v * mult.reshape(shp)).astype(F32)
    overflow = ~(np.abs(v) < 2.0 ** 31)
    y = np.rint(np.where(overflow, 0, v)).astype(np.int64) + oz
    lo = oz if relu else 0
    y = np.clip(y, lo, 255)
    y[overflow] = lo
    return y


def onednn_requant(acc, xs, ws, bias, os_, oz, relu):
    """oneDNN's int8 convolution as PyTorch's x86 engine calls it (ideep passes reciprocal scales, oneDNN
    inverts them back): S = 1.0f / (float)(1.0 / x_s), D = 1.0f / (float)(1.0 / y_s);
    v = ((float)acc * S) * (float)w_s[c] + bias[c]; relu: max(v, 0); v = v * (1.0f / D);
    y = clamp(nearbyint(v + (float)zp), 0, 255): the zero point is added before rounding. The same in the
    brg_conv_fwd, brdgmm_dw and gemm_s8u8s32 implementations."""
    n = acc.shape[1]
    shp = [1, -1] + [1] * (acc.ndim - 2)
    s = F32(1) / F32(1.0 / np.float64(xs))
    w = np.broadcast_to(np.asarray(ws, dtype=np.float64), (n,)).astype(F32)
    v = ((acc.astype(F32) * s).astype(F32) * w.reshape(shp)).astype(F32)
    if bias is not None:
        v = (v + np.asarray(bias, dtype=F32).reshape(shp)).astype(F32)
    if relu:
        v = np.maximum(v, F32(0))
    d = F32(1) / F32(1.0 / np.float64(os_))
    v = (v * (F32(1) / d)).astype(F32)
    return np.clip(np.rint((v + F32(oz)).astype(F32)), 0, 255).astype(np.int64)


def linear_acc(c):
    x, w = c["inputs"][0], c["weight"]
    xq = np.array(x["q"], dtype=np.int64).reshape(-1, x["shape"][-1])
    wq = np.array(w["q"], dtype=np.int64).reshape(w["shape"])
    _, wz = w_qparams(w, wq.shape[0])
    return (xq - x["zero_point"]) @ (wq - wz[:, None]).T


def linear_ref(c):
    x, w, p, o = c["inputs"][0], c["weight"], c["params"], c["output"]
    ws, _ = w_qparams(w, w["shape"][0])
    y = fbgemm_requant(linear_acc(c), x["scale"], ws, w["qscheme"] == "per_channel_affine", c.get("bias"),
                       o["scale"], o["zero_point"], p["relu"])
    return y.reshape(o["shape"])


def fbgemm_depthwise(p, cin, cout):
    """FBGEMM's depthwise fast path (FbgemmConv.cc takeDepthWiseFastPath)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), g = p["kernel_size"], p["stride"], p["padding"], p["dilation"], p["groups"]
    return (g == cin and cout in (g, 2 * g) and g % 8 == 0 and kh == kw and kh in (3, 5, 7) and sh in (1, 2)
            and sw in (1, 2) and dh == 1 and dw == 1 and ph == (kh - 1) // 2 and pw == (kw - 1) // 2)


def depthwise_acc(c):
    """The depthwise fast path's sums (python/qwasm_export/reference.py depthwise_acc_fbgemm: pairs of taps added in
    saturating int16, as vpmaddubsw does)."""
    x, w, p = c["inputs"][0], c["weight"], c["params"]
    wq = np.array(w["q"], dtype=np.int64).reshape(w["shape"])
    _, wz = w_qparams(w, wq.shape[0])
    xq = np.array(x["q"], dtype=np.int64).reshape(x["shape"])
    return R.depthwise_acc_fbgemm(xq, x["zero_point"], wq, wz, p["stride"], list(p["padding"]) * 2)


def conv_ref(c, path="fbgemm"):
    x, w, p, o = c["inputs"][0], c["weight"], c["params"], c["output"]
    cout = w["shape"][0]
    ws, _ = w_qparams(w, cout)
    if path == "onednn":
        return onednn_requant(conv_acc(c), x["scale"], ws, c.get("bias"), o["scale"], o["zero_point"], p["relu"])
    acc = depthwise_acc(c) if fbgemm_depthwise(p, x["shape"][1], cout) else conv_acc(c)
    return fbgemm_requant(acc, x["scale"], ws, w["qscheme"] == "per_channel_affine", c.get("bias"), o["scale"],
                          o["zero_point"], p["relu"])


# --------------------------------------------------------------------------------------------
# Running both engines

class Family:
    def __init__(self, name):
        self.name = name
        self.cases = []
        self.unsupported = []
        self.checked = 0
        self.mismatch = []
        self.unchecked = 0

    @staticmethod
    def run(fn, engine):
        torch.backends.quantized.engine = engine
        y1, y2 = fn(), fn()
        assert torch.equal(y1.int_repr(), y2.int_repr()) and y1.q_scale() == y2.q_scale(), "not reproducible"
        return y1

    def add(self, name, op, fn, inputs, params, weight=T.ABSENT, bias=T.ABSENT, ref=None, x86_path=None,
            x86_ref=None):
        """x86_path: None when the x86 engine must give the fbgemm engine's result, else the name of the path
        it takes (its output is then recorded separately and checked with x86_ref)."""
        outs = {}
        for engine in ENGINES:
            try:
                outs[engine] = self.run(fn, engine)
            except Exception as e:  # noqa: BLE001
                outs[engine] = T.err_text(e)
        if all(isinstance(v, str) for v in outs.values()):
            entry = {"name": name, "op": op, "inputs": [rec_meta(t) for t in inputs], "params": params,
                     "error": outs["fbgemm"]}
            if outs["x86"] != outs["fbgemm"]:
                entry["error_x86"] = outs["x86"]
            self.unsupported.append(entry)
            return None
        assert not any(isinstance(v, str) for v in outs.values()), (name, outs)
        case = {"name": name, "op": op, "inputs": [rec(t) for t in inputs]}
        if weight is not T.ABSENT:
            case["weight"] = rec_weight(weight)
        if bias is not T.ABSENT:
            case["bias"] = None if bias is None else [float(v) for v in bias.detach().numpy().astype(F32).ravel()]
        case["params"] = params
        case["output"] = rec(outs["fbgemm"])
        x86 = rec(outs["x86"])
        if x86_path is None:
            assert x86 == case["output"], "%s: the x86 engine differs" % name
        else:
            case["x86"] = {"path": x86_path, "q": x86["q"]}
        self.cases.append(case)
        checks = [] if ref is None else [(ref, case["output"]["q"])]
        if x86_path is not None and x86_ref is not None:
            checks.append((x86_ref, x86["q"]))
        if not checks:
            self.unchecked += 1
        for fn_ref, got in checks:
            res = fn_ref(case)
            ok = np.array_equal(np.asarray(res, dtype=np.int64).ravel(), np.asarray(got, dtype=np.int64))
            self.checked += 1
            if not ok:
                self.mismatch.append(name)
        return case

    def write(self, extra=None):
        hdr = {"generator": GENERATOR, "torch": torch.__version__, "engines": list(ENGINES),
               "cpu_capability": torch.backends.cpu.get_cpu_capability(), "fbgemm_isa": FBGEMM_ISA}
        hdr.update(extra or {})
        sections = {"cases": self.cases}
        if self.unsupported:
            sections["unsupported"] = self.unsupported
        return write_fixture(os.path.join(OUTDIR, self.name + ".json"), hdr, sections)


def pick_out(yf, rng, zp=None, levels=None):
    return T.pick_out_qparams(yf, rng, zp, levels)


# --------------------------------------------------------------------------------------------
# linear.json

def gen_linear():
    fam = Family("linear")
    rng = np.random.default_rng(21001)

    def case(name, xq, xs, xz, wq, ws, wz, per_channel, b, out, relu):
        xq, wq = np.asarray(xq), np.asarray(wq)
        k, n = xq.shape[-1], wq.shape[0]
        x = qt(xq, xs, xz)
        w = qw(wq, ws, wz, per_channel)
        bt = None if b is None else torch.tensor(np.asarray(b, dtype=F32))
        if out is None:
            yf = (x.dequantize().numpy().astype(np.float64) @ w.dequantize().numpy().astype(np.float64).T
                  + (0 if b is None else np.asarray(b, dtype=np.float64)))
            out = pick_out(yf, rng)
        os_, oz = out

        def fn():
            m = nniq.LinearReLU(k, n, bt is not None) if relu else nnq.Linear(k, n, bias_=bt is not None)
            m.set_weight_bias(w, bt)
            m.scale, m.zero_point = float(os_), int(oz)
            return m(x)

        op = "torch.ao.nn.intrinsic.quantized.LinearReLU" if relu else "torch.ao.nn.quantized.Linear"
        return fam.add(name, op, fn, [x], {"relu": relu, "in_features": k, "out_features": n,
                                           "output_scale": float(os_), "output_zero_point": int(oz)},
                       weight=w, bias=bt, ref=linear_ref)

    # A grid: K and N not multiples of 8, per tensor / per channel, non-zero weight zero points, bias or not.
    shapes = [(1, 1, 1), (2, 3, 5), (3, 7, 9), (1, 13, 17), (4, 31, 3), (2, 40, 33), (3, 67, 8), (1, 100, 7),
              (3, 17, 40), (2, 9, 65)]
    i = 0
    for m, k, n in shapes:
        for per_channel in (False, True):
            for wzn in (False, True):
                relu = i % 5 == 3
                has_bias = i % 4 != 1
                xs, xz = logu(rng, 0.005, 0.5), T.ZPS[i % len(T.ZPS)]
                nsc = n if per_channel else 1
                ws = [logu(rng, 0.002, 0.05) for _ in range(nsc)]
                wz = [int(v) for v in rng.integers(-20, 21, nsc)] if wzn else [0] * nsc
                b = (rng.standard_normal(n) * xs * float(np.mean(ws)) * 70 * math.sqrt(k)).astype(F32) if has_bias else None
                case("grid_M%d_K%d_N%d%s%s%s%s" % (m, k, n, "_pc" if per_channel else "", "_wzp" if wzn else "",
                                                   "_bias" if has_bias else "", "_relu" if relu else ""),
                     rand_q(rng, (m, k)), xs, xz, rand_q(rng, (n, k), "qint8"), ws, wz, per_channel, b, None, relu)
                i += 1
    # Full-range activations and weights: exact int32 sums here (AVX512-VNNI); AVX2 hosts saturate pairs.
    case("extreme_products", [[255] * 8, [0] * 8, [255, 0] * 4], 0.02, 0,
         [[127] * 8, [-128] * 8, [127, -128] * 4, [-128, -128, 127, 127] * 2], [0.01], [0], False, None, (0.5, 128),
         False)
    # Per-tensor bias on exact .5 steps after the float division: FBGEMM multiplies by the reciprocal of
    # x_s * w_s (taken in double), per channel it divides; the two round apart on these.
    k_ties = []
    while len(k_ties) < 8:
        xs, ws = F32(np.exp(rng.uniform(-5, -1))), F32(np.exp(rng.uniform(-6, -3)))
        a = F32(xs * ws)
        kk = int(rng.integers(-100, 100))
        b = F32((kk + 0.5) * float(a))
        if np.rint(F32(b / a)) != np.rint(F32(b * F32(1.0 / float(a)))):
            k_ties.append((float(xs), float(ws), float(b)))
    for j, (xs, ws, b) in enumerate(k_ties):
        for per_channel in (False, True):
            case("bias_rcp_tie_%d%s" % (j, "_pc" if per_channel else ""), [[100]], xs, 100, [[5]], [ws], [0],
                 per_channel, [b], (float(F32(xs) * F32(ws)), 128), False)
    # Products landing on .5: power-of-two scales, odd output zero points.
    for j, (xs, ws, os_) in enumerate([(0.5, 0.25, 0.25), (0.25, 0.125, 0.125), (0.0625, 0.03125, 0.0078125)]):
        m, k, n = [(3, 5, 8), (2, 13, 3), (7, 3, 5)][j]
        xz = [128, 0, 77][j]
        case("requant_ties_%d" % j, np.clip(xz + rng.integers(-12, 13, (m, k)), 0, 255), xs, xz,
             rng.integers(-8, 9, (n, k)), [ws], [0], False,
             None if j == 1 else (rng.integers(-20, 20, n) * xs * ws).astype(F32), (os_, [129, 101, 131][j]), False)
    # Saturating outputs (zero points 0, 255, relu at 255) and scaled values beyond int32 (|v| >= 2^31 and
    # NaN become INT32_MIN in cvtps2dq: the output is 0, or the zero point with relu).
    for j, (oz, levels, relu) in enumerate([(0, 60, False), (255, 60, False), (255, 300, True), (128, 40, True)]):
        xq, wq = rand_q(rng, (3, 11)), rand_q(rng, (5, 11), "qint8")
        xs, ws = 0.05, 0.01
        b = (rng.standard_normal(5) * xs * ws * 500).astype(F32)
        yf = (xq - 128) * xs @ (wq * ws).T + b
        case("saturate_oz%d%s" % (oz, "_relu" if relu else ""), xq, xs, 128, wq, [ws], [0], False, b,
             pick_out(yf, rng, zp=oz, levels=levels), relu)
    for j, bias in enumerate([1e9, 3e9, -3e9, 1e12, math.inf, -math.inf]):
        for per_channel in (False, True):
            for relu in (False, True):
                case("bias_overflow_%d%s%s" % (j, "_pc" if per_channel else "", "_relu" if relu else ""),
                     [[100, 7]], 0.5, 100, [[5, 1]], [0.25], [0], per_channel, [bias], (1.0, 10), relu)
    return fam


# --------------------------------------------------------------------------------------------
# conv2d.json

def gen_conv2d():
    fam = Family("conv2d")
    rng = np.random.default_rng(22002)

    def case(name, n, cin, cout, hw, k, stride=1, padding=0, dilation=1, groups=1, bias=True, relu=False,
             per_channel=False, wz_nonzero=False, xs=None, xz=None, out=None, xmax=255):
        k, stride, padding, dilation = T.pair(k), T.pair(stride), T.pair(padding), T.pair(dilation)
        xs = xs if xs is not None else logu(rng, 0.005, 0.3)
        xz = xz if xz is not None else int(rng.integers(0, xmax + 1))
        xq = rng.integers(0, xmax + 1, (n, cin) + tuple(hw))
        wq = rand_q(rng, (cout, cin // groups, k[0], k[1]), "qint8")
        nsc = cout if per_channel else 1
        ws = [logu(rng, 0.002, 0.05) for _ in range(nsc)]
        wz = [int(v) for v in rng.integers(-6, 7, nsc)] if wz_nonzero else [0] * nsc
        if wz_nonzero and not any(wz):
            wz[0] = 3
        x = qt(xq, xs, xz)
        w = qw(wq, ws, wz, per_channel)
        bt, (os_, oz) = T.conv_bias_and_output(rng, x, w, xs, ws, bias, out, stride, padding, dilation, groups)

        def fn():
            cls = nniq.ConvReLU2d if relu else nnq.Conv2d
            m = cls(cin, cout, k, stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias)
            m.set_weight_bias(w, bt)
            m.scale, m.zero_point = float(os_), int(oz)
            return m(x)

        params = {"in_channels": cin, "out_channels": cout, "kernel_size": k, "stride": stride, "padding": padding,
                  "dilation": dilation, "groups": groups, "relu": relu, "output_scale": float(os_),
                  "output_zero_point": int(oz)}
        params["fbgemm_path"] = "depthwise" if fbgemm_depthwise(params, cin, cout) else "gemm"
        onednn = VNNI and groups <= 100 and not wz_nonzero
        return fam.add(name, "torch.ao.nn.intrinsic.quantized.ConvReLU2d" if relu else "torch.ao.nn.quantized.Conv2d",
                       fn, [x], params, weight=w, bias=bt, ref=conv_ref,
                       x86_path="onednn" if onednn else None, x86_ref=lambda c: conv_ref(c, "onednn"))

    # groups = 1 over kernel / stride / padding / dilation; odd channel counts.
    grid = [  # (n, cin, cout, hw, k, stride, pad, dil)
        (1, 3, 5, (6, 7), 3, 1, 1, 1), (2, 1, 4, (5, 5), 1, 1, 0, 1), (1, 5, 3, (7, 7), 5, 2, 2, 1),
        (1, 8, 17, (4, 5), 3, 2, 1, 1), (1, 17, 8, (5, 5), 3, 1, 0, 2), (1, 4, 6, (5, 6), (2, 3), (2, 1), (1, 0), 1),
        (1, 16, 16, (3, 4), 1, 1, 0, 1), (1, 3, 8, (9, 7), 3, 2, 1, 2), (1, 6, 5, (4, 5), (3, 1), 1, (1, 0), 1),
        (1, 2, 3, (6, 6), 4, 2, 1, 1),
    ]
    for j, (n, cin, cout, hw, k, s, p, d) in enumerate(grid):
        for variant in range(3):
            pc, wzn = variant == 1, variant == 2
            case("g1_%d_%s" % (j, ["pt", "pc", "wzp"][variant]), n, cin, cout, hw, k, s, p, d, 1,
                 bias=(j + variant) % 3 != 2, relu=(j + variant) % 4 == 1, per_channel=pc or (wzn and j % 2 == 1),
                 wz_nonzero=wzn)
    # Grouped and depthwise; channel counts for FBGEMM's depthwise fast path (groups % 8 == 0, 3x3 / 5x5 /
    # 7x7, stride 1 or 2, same padding) and around it.
    groups_cases = [  # (cin, cout, groups, hw, k, stride, pad, dil)
        (4, 6, 2, (5, 6), 3, 1, 1, 1), (8, 8, 4, (4, 5), 3, 1, 1, 1), (6, 9, 3, (5, 4), 1, 1, 0, 1),
        (16, 16, 2, (4, 5), 3, 2, 1, 1), (8, 8, 8, (6, 6), 3, 1, 1, 1), (16, 16, 16, (5, 5), 5, 2, 2, 1),
        (8, 16, 8, (4, 5), 3, 1, 1, 1), (8, 8, 8, (5, 6), 7, 1, 3, 1), (8, 8, 8, (5, 5), 3, 1, 1, 2),
        (8, 8, 8, (6, 6), 3, 1, 0, 1), (5, 5, 5, (5, 5), 3, 1, 1, 1), (3, 6, 3, (6, 7), 3, 2, 1, 1),
        (32, 32, 32, (3, 3), 3, 2, 1, 1), (8, 8, 8, (7, 7), 5, 1, 2, 1),
    ]
    for j, (cin, cout, g, hw, k, s, p, d) in enumerate(groups_cases):
        for variant in range(2):
            pc, wzn = j % 2 == variant, variant == 1 and j % 3 == 0
            case("grouped_%d_c%d_o%d_g%d_k%d_s%d_%s" % (j, cin, cout, g, k, s, ["a", "b"][variant]), 1 + (j % 4 == 0),
                 cin, cout, hw, k, s, p, d, g, bias=j % 4 != 3, relu=(j + variant) % 3 == 1, per_channel=pc,
                 wz_nonzero=wzn)
    # The same depthwise shapes with 7-bit activations (reduce_range): no int16 pair ever saturates.
    for j, (cin, cout, g, hw, k, s, p, d) in enumerate([groups_cases[4], groups_cases[5], groups_cases[7]]):
        case("depthwise_7bit_%d" % j, 1, cin, cout, hw, k, s, p, d, g, per_channel=True, xmax=127)
    # Saturating outputs and power-of-two scales (results on .5, odd zero points: oneDNN adds the zero point
    # before rounding, FBGEMM after).
    case("saturate_oz0", 1, 3, 5, (5, 5), 3, padding=1, out=(0.01, 0))
    case("saturate_oz255", 1, 3, 5, (5, 5), 3, padding=1, out=(0.01, 255))
    case("relu_oz255", 1, 3, 5, (5, 5), 3, padding=1, relu=True, out=(0.05, 255))
    for j, oz in enumerate([129, 3]):
        case("requant_ties_%d" % j, 1, 3, 4, (5, 5), 3, padding=1, xs=0.5, xz=128, bias=False, out=(2.0 ** -7, oz),
             per_channel=j == 1)
    return fam


# --------------------------------------------------------------------------------------------
# elementwise.json

VEC_BLOCK = 64  # the generic kernels' vector blocks (2 x 32 bytes), as PyTorch 1.13 on AVX2


def quantize_scalar_ref(v, scale, zp, dtype):
    """FBGEMM's scalar Quantize (LEGACY), PyTorch 2.x's quantize_val on x86: nearbyint((float)zp +
    (float)(x * (1/s))), clamp."""
    lo, hi = RANGE[dtype]
    t = (F32(zp) + (np.asarray(v, dtype=F32) * (F32(1) / F32(scale))).astype(F32)).astype(F32)
    return np.clip(np.rint(t), lo, hi).astype(np.int64)


def generic_binary_ref(c, combine):
    """The generic kernels on 2.13 x86: whole blocks of 64 along the innermost coalesced dimension dequantize
    with fma(s, q, s * -zp) and quantize zp + nearbyint(x * (1/s)) (ATen's vectorized quantize); the tail
    dequantizes (q - zp) * s and quantizes with FBGEMM's scalar rule (the zero point added before
    rounding)."""
    a, b, o = c["inputs"][0], c["inputs"][1], c["output"]
    aq, bq = T.bcast_inputs(c)
    m = T.vec_mask(o["shape"], a["shape"], b["shape"])
    y = combine(T.dequant_pos_ref(aq, a["scale"], a["zero_point"], m), T.dequant_pos_ref(bq, b["scale"], b["zero_point"], m))
    if c["params"]["relu"]:
        y = np.maximum(y, F32(0))
    vec = T.quantize_ref(y, o["scale"], o["zero_point"], o["dtype"]).reshape(o["shape"])
    tail = quantize_scalar_ref(y, o["scale"], o["zero_point"], o["dtype"]).reshape(o["shape"])
    return np.where(m, vec, tail)


def add_ref(c):
    return generic_binary_ref(c, lambda x, y: (x + y).astype(F32))


def cat_ref(c):
    """quantize_per_tensor(cat(dequantize(x) for x)) (contiguous NCHW inputs): FBGEMM's 8-bit quantize."""
    o = c["output"]
    parts = [T.dequant_ref(np.array(x["q"]).reshape(x["shape"]), x["scale"], x["zero_point"]) for x in c["inputs"]]
    y = np.concatenate(parts, axis=c["params"]["dim"])
    return quantize_fbgemm_ref(y, o["scale"], o["zero_point"], o["dtype"])


def gen_elementwise():
    fam = Family("elementwise")
    rng = np.random.default_rng(23003)
    ops = {("add", False): torch.ops.quantized.add, ("add", True): torch.ops.quantized.add_relu,
           ("mul", False): torch.ops.quantized.mul, ("mul", True): torch.ops.quantized.mul_relu}

    def binary(name, kind, relu, aq, as_, az, bq, bs, bz, os_, oz, dtype, ref):
        a, b = qt(aq, as_, az, dtype), qt(bq, bs, bz, dtype)
        op = ops[(kind, relu)]
        return fam.add(name, "torch.ops.quantized.%s%s" % (kind, "_relu" if relu else ""),
                       lambda: op(a, b, float(os_), int(oz)), [a, b],
                       {"scale": float(os_), "zero_point": int(oz), "relu": relu}, ref=ref)

    shapes = [((1, 3, 4, 5), (1, 3, 4, 5)), ((100,), (100,)), ((130,), (130,)), ((2, 3, 5, 7), (2, 3, 5, 7)),
              ((64,), (64,)), ((4, 5), (5,)), ((1, 3, 2, 2), (1, 3, 1, 1)), ((7,), (1,)), ((2, 100), (1, 100)),
              ((3, 70), (3, 1))]
    qparams = [(0.1, 10, 0.05, 128, 0.12, 60), (0.02, 128, 0.03, 100, 0.04, 128), (0.5, 0, 0.5, 0, 1.0, 0),
               (0.0625, 3, 0.125, 250, 0.1875, 21)]
    for dtype in ("quint8", "qint8"):
        off = 128 if dtype == "qint8" else 0
        for i, (sa, sb) in enumerate(shapes):
            for j, (as_, az, bs, bz, os_, oz) in enumerate(qparams):
                if (i + j) % 2:
                    continue
                relu = (i + j) % 4 == 0
                binary("add%s_%s_%d_%d" % ("_relu" if relu else "", dtype, i, j), "add", relu, rand_q(rng, sa, dtype),
                       as_, az - off, rand_q(rng, sb, dtype), bs, bz - off, os_, oz - off, dtype, add_ref)
    # Exact .5 results at odd zero points: power-of-two scales.
    for j, n in enumerate([50, 64, 100, 200]):
        binary("add_ties_%d" % j, "add", False, rand_q(rng, (n,)), 0.25, 3, rand_q(rng, (n,)), 0.25, 7, 0.5, 101,
               "quint8", add_ref)
    for j, (sa, sb) in enumerate(shapes[:8]):
        dtype = "quint8" if j % 2 == 0 else "qint8"
        off = 128 if dtype == "qint8" else 0
        as_, bs = logu(rng, 0.01, 0.2), logu(rng, 0.01, 0.2)
        binary("mul%s_%d" % ("_relu" if j % 3 == 1 else "", j), "mul", j % 3 == 1, rand_q(rng, sa, dtype), as_,
               int(rng.integers(0, 256)) - off, rand_q(rng, sb, dtype), bs, int(rng.integers(0, 256)) - off,
               as_ * bs * logu(rng, 20, 200), int(rng.integers(0, 256)) - off, dtype, T.mul_ref)
    for j, (dtype, dim) in enumerate([("quint8", 0), ("quint8", 1), ("qint8", 1), ("quint8", 2)]):
        off = 128 if dtype == "qint8" else 0
        xs = [qt(rand_q(rng, (2, 3, 4) if d == 0 else (2, 3 + d, 4) if dim == 1 else (2, 3, 5 + d), dtype),
                 logu(rng, 0.01, 0.5), int(rng.integers(0, 256)) - off, dtype) for d in range(3)]
        if dim == 0:
            xs = [qt(rand_q(rng, (1 + d, 3, 4), dtype), logu(rng, 0.01, 0.5), int(rng.integers(0, 256)) - off, dtype)
                  for d in range(3)]
        os_, oz = logu(rng, 0.01, 0.5), int(rng.integers(0, 256)) - off
        fam.add("cat_%d" % j, "torch.ops.quantized.cat", lambda xs=xs, d=dim, s=os_, z=oz: torch.ops.quantized.cat(xs, d, s, z),
                xs, {"dim": dim, "scale": os_, "zero_point": oz}, ref=cat_ref)
    # Requantized values on exact .5 steps, odd output zero points: quantize_per_tensor(cat(dequantized)).
    for j, (dtype, oz) in enumerate([("quint8", 3), ("qint8", -5), ("quint8", 128)]):
        off = 128 if dtype == "qint8" else 0
        xs = [qt(rand_q(rng, (1, 2, 3, 4), dtype), s, int(rng.integers(0, 256)) - off, dtype) for s in (0.5, 0.25, 1.0)]
        fam.add("cat_ties_%d" % j, "torch.ops.quantized.cat", lambda xs=xs, z=oz: torch.ops.quantized.cat(xs, 1, 1.0, z),
                xs, {"dim": 1, "scale": 1.0, "zero_point": oz}, ref=cat_ref)
    return fam


# --------------------------------------------------------------------------------------------
# activations.json

def generic_unary_ref(c, fn, out=None):
    """A generic unary kernel on 2.13 x86: blocks of 64 dequantize with the fma and quantize zp + round;
    the tail dequantizes (q - zp) * s and quantizes with FBGEMM's scalar rule. fn(x, vector) -> y."""
    x = c["inputs"][0]
    o = out or c["output"]
    q = np.array(x["q"], dtype=np.int64)
    m = T.vec_mask(x["shape"]).ravel()
    d = T.dequant_pos_ref(q, x["scale"], x["zero_point"], m)
    y = np.where(m, fn(d, True), fn(d, False)).astype(F32)
    vec = T.quantize_ref(y, o["scale"], o["zero_point"], o["dtype"])
    tail = quantize_scalar_ref(y, o["scale"], o["zero_point"], o["dtype"])
    return np.where(m, vec, tail)


def leaky_ref(c):
    slope = F32(c["params"]["negative_slope"])
    return generic_unary_ref(c, lambda d, v: np.where(d > 0, d, (d * slope).astype(F32)))


def hardswish_ref(c):
    def hs(d, vector):
        c6 = (d * np.minimum(np.maximum((d + F32(3)).astype(F32), F32(0)), F32(6))).astype(F32)
        return (c6 * (F32(1) / F32(6))).astype(F32) if vector else (c6 / F32(6)).astype(F32)
    return generic_unary_ref(c, hs)


def sigmoid_ref(c):
    """1 / (1 + exp(-x)) in float32 with exp correctly rounded (what both code paths give on these inputs)."""
    return generic_unary_ref(c, lambda d, v: (F32(1) / (F32(1) + np.exp(-d.astype(np.float64)).astype(F32))).astype(F32))


def clamp_scalar_ref(c):
    """relu6 / hardtanh / clamp: integer clamp to the bounds quantize_val gives (FBGEMM's scalar rule)."""
    x, p = c["inputs"][0], c["params"]
    q = np.array(x["q"], dtype=np.int64)
    lo = quantize_scalar_ref([p["min_val"]], x["scale"], x["zero_point"], x["dtype"])[0] if p.get("min_val") is not None else RANGE[x["dtype"]][0]
    hi = quantize_scalar_ref([p["max_val"]], x["scale"], x["zero_point"], x["dtype"])[0] if p.get("max_val") is not None else RANGE[x["dtype"]][1]
    return np.minimum(np.maximum(q, lo), hi)


def gen_activations():
    fam = Family("activations")
    rng = np.random.default_rng(24004)
    perm = rng.permutation(256).reshape(1, 4, 8, 8)  # every integer once, all in vector blocks

    def x_of(s, z, dtype="quint8", shape=None):
        q = perm - (128 if dtype == "qint8" else 0)
        if shape is not None:
            q = q.ravel()[:int(np.prod(shape))].reshape(shape)
        return qt(q, s, z, dtype)

    def act(name, op, fn, x, params, ref):
        return fam.add(name, op, lambda: fn(x), [x], params, ref=ref)

    in_qp = [(0.019743409007787704, 0), (0.05, 128), (0.1, 255), (0.013, 77), (0.25, 200), (0.004, 31)]
    out_qp = [(0.05, 10), (0.02, 128), (0.1, 0), (0.0078125, 255), (0.03, 65), (0.2, 201)]
    shapes = [None, (1, 1, 7, 9), (1, 1, 10, 10)]  # all blocks, all tail (63), mixed (64 + 36)
    for j, (s, z) in enumerate(in_qp):
        shape = shapes[j % 3]
        for dtype in ("quint8", "qint8"):
            zz = z - (128 if dtype == "qint8" else 0)
            x = x_of(s, zz, dtype, shape)
            tag = "%d_%s" % (j, dtype)
            act("relu_" + tag, "torch.nn.functional.relu", F.relu, x, {}, T.relu_ref)
            act("relu6_" + tag, "torch.nn.functional.relu6", F.relu6, x, {"min_val": 0.0, "max_val": 6.0},
                clamp_scalar_ref)
            lo, hi = [(-1.0, 1.0), (-0.5, 2.0), (0.37, 0.91), (-3.0, 3.0), (0.0, 6.0), (-10.0, 10.0)][j]
            act("hardtanh_" + tag, "torch.ao.nn.quantized.functional.hardtanh",
                lambda x, lo=lo, hi=hi: qF.hardtanh(x, lo, hi), x, {"min_val": lo, "max_val": hi}, clamp_scalar_ref)
            os_, oz = out_qp[j]
            oz -= 128 if dtype == "qint8" else 0
            act("hardswish_" + tag, "torch.ao.nn.quantized.Hardswish", nnq.Hardswish(os_, oz), x,
                {"scale": os_, "zero_point": oz}, hardswish_ref)
            slope = [0.01, 0.1, 0.2, 0.5, 0.07, 1.5][j]
            act("leaky_relu_" + tag, "torch.ao.nn.quantized.LeakyReLU", nnq.LeakyReLU(os_, oz, slope), x,
                {"negative_slope": slope, "scale": os_, "zero_point": oz}, leaky_ref)
            act("sigmoid_" + tag, "torch.sigmoid", torch.sigmoid, x, {}, sigmoid_ref)
    # Bounds on exact .5 steps of the input scale, odd zero points: quantize_val adds the zero point first.
    for j, (lo, hi) in enumerate([(-0.25, 0.75), (0.125, 1.375), (-1.125, 0.375)]):
        x = x_of(0.25, 101 + 2 * j)
        act("hardtanh_ties_%d" % j, "torch.ao.nn.quantized.functional.hardtanh",
            lambda x, lo=lo, hi=hi: qF.hardtanh(x, lo, hi), x, {"min_val": lo, "max_val": hi}, clamp_scalar_ref)
        act("clamp_ties_%d" % j, "torch.clamp", lambda x, lo=lo, hi=hi: torch.clamp(x, lo, hi), x,
            {"min_val": lo, "max_val": hi}, clamp_scalar_ref)
    return fam


# --------------------------------------------------------------------------------------------
# pooling.json

def maxpool_ref(c):
    """Max over the valid window positions (the generic kernel skips positions outside the input)."""
    c2 = dict(c, inputs=[dict(c["inputs"][0], dtype="qint8_generic")])
    return T.maxpool_ref(c2)


def nhwc_scalar_q(acc, d, z):
    """The channels-last kernel's scalar channel loop (every channel when C == 1): multiplier =
    (s / s) / d in float, then quantize_val(1.0f / multiplier, zp, acc): FBGEMM's scalar rule with
    inv_scale = 1.0f / (float)(1.0f / multiplier)."""
    m = F32(F32(1) / F32(d))
    inv = F32(F32(1) / F32(F32(1) / m))
    return np.rint((F32(z) + (acc.astype(F32) * inv).astype(F32)).astype(F32)).astype(np.int64)


def generic_pool_ref(c, shape, windows, nchw):
    """Each window (i, j, sum of q - zp, raw sum, divisor) through the generic kernels: nchw(...) for NCHW
    tensors, the channels-last kernel's scalar loop (nhwc_scalar_q) when C == 1 or H * W == 1."""
    q, s, z = T.pool_in(c)
    _, ch, h, w = q.shape
    y = np.zeros(shape, dtype=np.int64)
    for i, j, acc, raw, d in windows:
        y[:, :, i, j] = nhwc_scalar_q(acc, d, z) if ch == 1 or h * w == 1 else nchw(acc, raw, d, z)
    lo, hi = RANGE[c["inputs"][0]["dtype"]]
    return np.clip(y, lo, hi)


def avgpool_ref(c):
    """avg_pool2d, generic kernels (no QNNPACK outside the qnnpack engine): NCHW rint(sum(q - zp) * (1 / d) + zp),
    d by count_include_pad / divisor_override."""
    shape, windows = T.avg_pool_windows(c)
    return generic_pool_ref(c, shape, [(i, j, acc, None, d) for i, j, acc, d in windows],
                            lambda acc, raw, d, z: np.rint((acc.astype(F32) * F32(1.0 / d)).astype(F32) + F32(z)))


def adaptive_ref(c):
    """adaptive_avg_pool2d, generic kernels: NCHW rint((float)sum(q) * (1 / n)), the zero point never subtracted."""
    z = c["inputs"][0]["zero_point"]
    shape, windows = T.adaptive_windows(c)
    return generic_pool_ref(c, shape, [(i, j, (blk - z).sum(axis=(2, 3)), blk.sum(axis=(2, 3)), d)
                                       for i, j, blk, d in windows],
                            lambda acc, raw, d, z: np.rint(raw.astype(F32) * F32(1.0 / d)))


def mean_ref(c):
    q, s, z = T.pool_in(c)
    n = q.shape[2] * q.shape[3]
    return np.rint(q.sum(axis=(2, 3)).astype(F32) / F32(n)).astype(np.int64)


def gen_pooling():
    fam = Family("pooling")
    rng = np.random.default_rng(25005)

    def pin(shape, dtype="quint8", z=None):
        off = 128 if dtype == "qint8" else 0
        z = z if z is not None else T.ZPS[len(fam.cases) % 8] - off
        return qt(rand_q(rng, shape, dtype), logu(rng, 0.01, 0.5), z, dtype)

    for j, (shape, k, s, p, d, ceil) in enumerate([
            ((1, 3, 7, 9), 2, 2, 0, 1, False), ((2, 8, 5, 5), 3, 1, 1, 1, False), ((1, 5, 9, 9), 3, 2, 1, 2, False),
            ((1, 16, 5, 7), (3, 2), (1, 2), (1, 1), (2, 1), True), ((1, 1, 1, 12), (1, 3), 1, (0, 1), (1, 2), False),
            ((1, 3, 9, 9), 5, 1, 2, 2, False), ((2, 4, 7, 8), (2, 3), (1, 2), (1, 1), (3, 2), False)]):
        for dtype in ("quint8", "qint8"):
            x = pin(shape, dtype)
            k2, s2, p2, d2 = T.pair(k), T.pair(s), T.pair(p), T.pair(d)
            fam.add("max_pool2d_%d_%s" % (j, dtype), "torch.nn.functional.max_pool2d",
                    lambda x=x, k=k2, s=s2, p=p2, d=d2, c=ceil: F.max_pool2d(x, k, s, p, d, c), [x],
                    {"kernel_size": k2, "stride": s2, "padding": p2, "dilation": d2, "ceil_mode": ceil}, ref=maxpool_ref)
    for j, (shape, k, s, p, ceil, cip, div) in enumerate([
            ((1, 3, 7, 9), 2, 2, 0, False, True, None), ((1, 3, 7, 9), 3, 2, 1, False, True, None),
            ((1, 3, 7, 9), 3, 2, 1, False, False, None), ((1, 3, 7, 9), 3, 2, 1, False, True, 5),
            ((1, 1, 7, 9), 3, 2, 1, False, False, None), ((1, 3, 7, 9), 3, 2, 1, True, False, None),
            ((2, 8, 5, 5), 3, 1, 1, False, True, None), ((1, 4, 4, 4), 2, 2, 0, False, True, None)]):
        for dtype in ("quint8", "qint8"):
            x = pin(shape, dtype, z=[129, 77, 31, 3][j % 4] - (128 if dtype == "qint8" else 0))
            if j == 7:  # sums on exact .5 steps
                x = qt(rng.integers(0, 2, shape) + 2 * rng.integers(40, 80, shape) - (128 if dtype == "qint8" else 0),
                       0.1, 77 - (128 if dtype == "qint8" else 0), dtype)
            k2, s2, p2 = T.pair(k), T.pair(s), T.pair(p)
            fam.add("avg_pool2d_%d_%s" % (j, dtype), "torch.nn.functional.avg_pool2d",
                    lambda x=x, k=k2, s=s2, p=p2, c=ceil, i=cip, dv=div: F.avg_pool2d(x, k, s, p, c, i, dv), [x],
                    {"kernel_size": k2, "stride": s2, "padding": p2, "ceil_mode": ceil, "count_include_pad": cip,
                     "divisor_override": div}, ref=avgpool_ref)
    for j, (shape, osz) in enumerate([((1, 3, 6, 6), (3, 3)), ((1, 3, 6, 6), (1, 1)), ((1, 3, 7, 9), (3, 4)),
                                      ((1, 1, 6, 6), (3, 2)), ((2, 4, 8, 4), (4, 2))]):
        for dtype in ("quint8", "qint8"):
            x = pin(shape, dtype)
            fam.add("adaptive_avg_pool2d_%d_%s" % (j, dtype), "torch.nn.functional.adaptive_avg_pool2d",
                    lambda x=x, o=osz: F.adaptive_avg_pool2d(x, o), [x], {"output_size": list(osz)}, ref=adaptive_ref)
    for j, shape in enumerate([(1, 3, 2, 2), (2, 8, 5, 5), (1, 17, 1, 1), (1, 4, 4, 6)]):
        for dtype in ("quint8", "qint8"):
            z = [3, 77, 200, 11][j] - (128 if dtype == "qint8" else 0)
            q = rand_q(rng, shape, dtype)
            if j == 3:  # sums on .5 steps of 24
                flat = q.reshape(-1, 24)
                flat[:, 0] = np.clip(flat[:, 0] + (12 - flat.sum(1) % 24) % 24, *RANGE[dtype])
            x = qt(q, 0.05, z, dtype)
            fam.add("mean_%d_%s" % (j, dtype), "torch.mean", lambda x=x: torch.mean(x, (2, 3), keepdim=True), [x],
                    {"dim": [2, 3], "keepdim": True}, ref=mean_ref)
    return fam


# --------------------------------------------------------------------------------------------
# dynamic.json

SMALL_SCALE_THRESHOLD = 6.1e-5


def choose_qparams_dynamic(mn, mx, qmin=0, qmax=255, reduce_range=True):
    """ATen's quant_utils::ChooseQuantizationParams (QuantUtils.h) as linear_dynamic calls it: double
    arithmetic on float min / max, the scale returned as float."""
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    mn, mx = min(F32(mn), F32(0)), max(F32(mx), F32(0))
    scale = (float(mx) - float(mn)) / (qmax - qmin)
    if F32(scale) == 0 or math.isinf(F32(1) / F32(scale)):
        scale = 0.1
    if scale < SMALL_SCALE_THRESHOLD:
        org = scale
        scale = SMALL_SCALE_THRESHOLD
        if mn == 0:
            mx = F32(SMALL_SCALE_THRESHOLD * (qmax - qmin))
        elif mx == 0:
            mn = F32(-SMALL_SCALE_THRESHOLD * (qmax - qmin))
        else:
            amp = F32(SMALL_SCALE_THRESHOLD / org)
            mn, mx = F32(mn * amp), F32(mx * amp)
    zp_min = qmin - float(mn) / scale
    zp_max = qmax - float(mx) / scale
    zp_min_err = abs(qmin) - abs(float(mn) / scale)
    zp_max_err = abs(qmax) - abs(float(mx) / scale)
    zp = zp_min if zp_min_err < zp_max_err else zp_max
    zp = qmin if zp < qmin else qmax if zp > qmax else int(np.rint(zp))
    return float(F32(scale)), int(zp)


def dynamic_ref(c):
    """linear_dynamic on FBGEMM: x quantized per tensor (ChooseQuantizationParams, reduce_range, FBGEMM's 8-bit
    quantize), the exact int32 sums, then ReQuantizeForFloat: (float)acc * ((float)x_s * (float)w_s[c]), the bias
    added in the same fused multiply-add, fma((float)acc, x_s * w_s[c], bias[c]); relu."""
    x, w, p = c["input"], c["weight"], c["params"]
    xf = np.array(x["values"], dtype=F32).reshape(x["shape"])
    xs, xz = choose_qparams_dynamic(xf.min(), xf.max(), reduce_range=p["reduce_range"])
    xq = np.array(quantize_fbgemm_ref(xf, xs, xz, "quint8"), dtype=np.int64).reshape(-1, x["shape"][-1])
    wq = np.array(w["q"], dtype=np.int64).reshape(w["shape"])
    ws, wz = w_qparams(w, wq.shape[0])
    acc = (xq - xz) @ (wq - wz[:, None]).T
    mult = (F32(xs) * ws.astype(F32)).astype(F32)
    y = (acc.astype(F32) * mult[None, :]).astype(F32)
    if c.get("bias") is not None:
        b = np.asarray(c["bias"], dtype=F32)
        y = np.array([[fma32(F32(acc[i, j]), mult[j], b[j]) for j in range(acc.shape[1])] for i in range(acc.shape[0])],
                     dtype=F32)
    if p["relu"]:
        y = np.maximum(y, F32(0))
    return y.ravel()


def gen_dynamic():
    """torch.ao.nn.quantized.dynamic.Linear (reduce_range=True, as the module calls it) and
    torch.ops.quantized.linear_dynamic / linear_relu_dynamic with reduce_range False: float in, float out."""
    rng = np.random.default_rng(26006)
    cases = []
    bad = []
    for j, (m, k, n) in enumerate([(1, 2, 2), (3, 7, 5), (2, 17, 9), (4, 33, 16), (1, 64, 3), (5, 9, 31), (2, 1, 1),
                                   (3, 40, 8)]):
        for variant in range(4):
            per_channel, wzn = variant % 2 == 1, variant >= 2
            relu = (j + variant) % 3 == 0
            reduce_range = (j + variant) % 4 != 1
            xf = (rng.standard_normal((m, k)) * logu(rng, 0.05, 5) + rng.uniform(-1, 1)).astype(F32)
            if j == 6:
                xf = np.full((m, k), 0.75, dtype=F32)  # constant input: min = max
            nsc = n if per_channel else 1
            ws = [logu(rng, 0.002, 0.05) for _ in range(nsc)]
            wz = [int(v) for v in rng.integers(-10, 11, nsc)] if wzn else [0] * nsc
            w = qw(rand_q(rng, (n, k), "qint8"), ws, wz, per_channel)
            b = None if (j + variant) % 4 == 3 else torch.tensor(rng.standard_normal(n).astype(F32))
            x = torch.from_numpy(xf)

            def fn(w=w, b=b, x=x, relu=relu, reduce_range=reduce_range):
                packed = torch.ops.quantized.linear_prepack(w, b)
                op = torch.ops.quantized.linear_relu_dynamic if relu else torch.ops.quantized.linear_dynamic
                return op(x, packed, reduce_range)

            outs = {}
            for engine in ENGINES:
                torch.backends.quantized.engine = engine
                y1, y2 = fn(), fn()
                assert torch.equal(y1, y2)
                outs[engine] = y1
            assert torch.equal(outs["fbgemm"].view(torch.int32), outs["x86"].view(torch.int32)), "engines differ"
            case = {"name": "dynamic_%d_%d" % (j, variant),
                    "op": "torch.ops.quantized.linear%s_dynamic" % ("_relu" if relu else ""),
                    "input": {"shape": [m, k], "values": floats_json(xf)}, "weight": rec_weight(w),
                    "bias": None if b is None else floats_json(b.numpy()),
                    "params": {"relu": relu, "reduce_range": reduce_range, "in_features": k, "out_features": n},
                    "output": {"shape": list(outs["fbgemm"].shape), "values": floats_json(outs["fbgemm"].numpy())}}
            if not relu and reduce_range and not any(c["op"].endswith("dynamic.Linear") for c in cases):  # the module
                mod = nnqd.Linear(k, n)
                mod.set_weight_bias(w, b)
                torch.backends.quantized.engine = "fbgemm"
                assert torch.equal(mod(x), outs["fbgemm"]), "the module calls linear_dynamic with reduce_range=True"
                case["op"] = "torch.ao.nn.quantized.dynamic.Linear"
            want = np.array(case["output"]["values"], dtype=F32)
            if not np.array_equal(dynamic_ref(case).view(np.uint32), want.view(np.uint32)):
                bad.append(case["name"])
            cases.append(case)
    hdr = {"generator": GENERATOR, "torch": torch.__version__, "engines": list(ENGINES),
           "cpu_capability": torch.backends.cpu.get_cpu_capability(), "fbgemm_isa": FBGEMM_ISA}
    size = write_fixture(os.path.join(OUTDIR, "dynamic.json"), hdr, {"cases": cases})
    print("dynamic.json %d bytes, %d cases, reference disagrees on %d %s" % (size, len(cases), len(bad), bad[:8]))
    return len(bad)


# --------------------------------------------------------------------------------------------
# seed002.json: the forum question's model on the fbgemm engine

def gen_seed002():
    """Seed 002 exactly: np.random.seed(0); torch.manual_seed(0); random.seed(0); M() (QuantStub,
    Linear(2, 2, bias=False), DeQuantStub); QConfig(MinMaxObserver(quint8), MinMaxObserver(qint8)) (affine
    weights: non-zero zero point); prepare; input = torch.randn(1, 2); calibrate; convert. Then the same
    converted model on every pair of input integers (0..255)^2 whose result the question's last formula (in
    double) gets wrong, and on 256 random inputs."""
    import random
    from torch.ao.quantization import DeQuantStub, MinMaxObserver, QConfig, QuantStub, convert, prepare

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = QuantStub()
            self.fc = torch.nn.Linear(2, 2, bias=False)
            self.dequant = DeQuantStub()

        def forward(self, inp):
            return self.dequant(self.fc(self.quant(inp)))

    out = {}
    for engine in ENGINES:
        torch.backends.quantized.engine = engine
        np.random.seed(0)
        torch.manual_seed(0)
        random.seed(0)
        model = M().eval()
        model.qconfig = QConfig(activation=MinMaxObserver.with_args(dtype=torch.quint8),
                                weight=MinMaxObserver.with_args(dtype=torch.qint8))
        prepared = prepare(model)
        x = torch.randn(1, 2)
        prepared(x)
        q = convert(prepared)
        out[engine] = (x, q, model)
    x, q, model = out["fbgemm"]
    qx = q.quant(x)
    w = q.fc.weight()
    xs, xz = float(qx.q_scale()), int(qx.q_zero_point())
    os_, oz = float(q.fc.scale), int(q.fc.zero_point)
    wq = w.int_repr().numpy().astype(np.int64)
    ws, wz = float(w.q_scale()), int(w.q_zero_point())
    # Every input pair: where does rounding acc * (x_s * w_s / y_s) in double differ from FBGEMM's float32?
    grid = np.stack(np.meshgrid(np.arange(256), np.arange(256), indexing="ij"), -1).reshape(-1, 2)
    acc = (grid - xz) @ (wq - wz).T
    mult32 = F32(F32(F32(xs) * F32(ws)) / F32(os_))
    fb = np.clip(np.rint((acc.astype(F32) * mult32).astype(F32)) + oz, 0, 255)
    dbl = np.clip(np.rint(acc * (xs * ws) / os_) + oz, 0, 255)
    differ = grid[np.any(fb != dbl, axis=1)]
    rng = np.random.default_rng(20020)
    batch = np.concatenate([differ, rng.integers(0, 256, (256, 2))]).astype(np.int64)
    xb = qt(batch, xs, xz)
    results = {}
    for engine in ENGINES:
        torch.backends.quantized.engine = engine
        results[engine] = out[engine][1].fc(xb).int_repr()
        assert torch.equal(out[engine][1].fc(out[engine][1].quant(out[engine][0])).int_repr(),
                           q.fc(qx).int_repr()), "engines differ on the seed input"
    assert torch.equal(results["fbgemm"], results["x86"]), "engines differ"
    xr = torch.randn(256, 2, generator=torch.Generator().manual_seed(2))
    qxr = q.quant(xr)
    case = {
        "recipe": "np.random.seed(0); torch.manual_seed(0); random.seed(0); M() = QuantStub, nn.Linear(2, 2, "
                  "bias=False), DeQuantStub; QConfig(MinMaxObserver(quint8), MinMaxObserver(qint8)); prepare; "
                  "x = torch.randn(1, 2); calibrate on x; convert",
        "float_input": floats_json(x.numpy()), "float_weight": floats_json(model.fc.weight.detach().numpy()),
        "input": rec(qx), "weight": rec_weight(w), "output_scale": os_, "output_zero_point": oz,
        "output": rec(q.fc(qx)),
        "grid_differ": len(differ),
        "batch": {"input": rec(xb), "output": rec(qt(results["fbgemm"].numpy(), os_, oz))},
        "random": {"float_input": floats_json(xr.numpy()), "input": rec(qxr), "output": rec(q.fc(qxr))},
    }
    hdr = {"generator": GENERATOR, "torch": torch.__version__, "engines": list(ENGINES),
           "cpu_capability": torch.backends.cpu.get_cpu_capability(), "fbgemm_isa": FBGEMM_ISA}
    size = write_fixture(os.path.join(OUTDIR, "seed002.json"), hdr, {"cases": [case]})
    ref = fbgemm_requant((np.array(qx.int_repr().numpy(), dtype=np.int64) - xz) @ (wq - wz).T, xs, [ws], False, None,
                         os_, oz, False)
    bad = 0 if ref.ravel().tolist() == case["output"]["q"] else 1
    print("seed002.json %d bytes: torch gives %s; %d of 65536 input pairs where the double formula differs"
          % (size, case["output"]["q"], len(differ)))
    return bad


# --------------------------------------------------------------------------------------------
# replay.json: 1.13's committed inputs through 2.13

DT = {"quint8": torch.quint8, "qint8": torch.qint8, "qint32": torch.qint32}
QS = {"per_tensor_affine": torch.per_tensor_affine, "per_tensor_symmetric": torch.per_tensor_symmetric,
      "per_channel_affine": torch.per_channel_affine, "per_channel_symmetric": torch.per_channel_symmetric,
      "per_channel_affine_float_qparams": torch.per_channel_affine_float_qparams}


def fixture113(name):
    import json
    with open(os.path.join(FIXTURES, "torch", name)) as fh:
        return json.load(fh, parse_constant=float)


def floats_json(a):
    return [v if math.isfinite(v) else ("NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity"))
            for v in (float(x) for x in np.asarray(a, dtype=F32).ravel())]


def unjson(v):
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v) if isinstance(v, str) else v


def gen_replay():
    """Each 1.13 case run again; the cases whose results changed are kept with 2.13's values."""
    import base64
    out = {"quantize_per_tensor": [], "quantize_per_channel": [], "requantize": [], "dequantize": [],
           "qparams_per_tensor": [], "qparams_per_channel": [], "observers": [], "fakequant": []}
    same = {k: 0 for k in out}
    bad = []
    q113 = fixture113("quantize.json")
    torch.backends.quantized.engine = "x86"
    for c in q113["per_tensor"]:
        x = torch.tensor([unjson(v) for v in c["input"]], dtype=torch.float32)
        y = torch.quantize_per_tensor(x, unjson(c["scale"]), c["zero_point"], DT[c["dtype"]])
        q = y.int_repr().ravel().tolist()
        if math.isfinite(unjson(c["scale"])) and quantize_fbgemm_ref(x.numpy(), c["scale"], c["zero_point"], c["dtype"]) != q:
            bad.append("quantize_per_tensor " + c["name"])
        if q == c["q"]:
            same["quantize_per_tensor"] += 1
            continue
        changed = [i for i, (a, b) in enumerate(zip(q, c["q"])) if a != b]
        out["quantize_per_tensor"].append({"name": c["name"], "dtype": c["dtype"], "scale": c["scale"],
                                           "zero_point": c["zero_point"], "input": c["input"], "q": q,
                                           "q_113": c["q"], "changed": changed})
    for c in q113["per_channel"]:
        x = torch.tensor([unjson(v) for v in c["input"]], dtype=torch.float32).reshape(c["shape"])
        y = torch.quantize_per_channel(x, torch.tensor(c["scales"], dtype=torch.float64),
                                       torch.tensor(c["zero_points"]), c["axis"], DT[c["dtype"]])
        q = y.int_repr().ravel().tolist()
        if q == c["q"]:
            same["quantize_per_channel"] += 1
            continue
        out["quantize_per_channel"].append({k: c[k] for k in ("name", "dtype", "shape", "axis", "scales", "zero_points",
                                                                "input")} | {"q": q, "q_113": c["q"]})
    for c in q113["dequantize"]:
        t = torch.tensor(c["q"], dtype={"quint8": torch.uint8, "qint8": torch.int8, "qint32": torch.int32}[c["dtype"]])
        if c["qscheme"] == "per_tensor_affine":
            t = torch._make_per_tensor_quantized_tensor(t, c["scale"], c["zero_point"])
        else:
            t = torch._make_per_channel_quantized_tensor(t.reshape(c["shape"]), torch.tensor(c["scales"], dtype=torch.float64),
                                                         torch.tensor(c["zero_points"]), c["axis"])
        d = floats_json(t.dequantize().numpy())
        if d == c["dequant"]:
            same["dequantize"] += 1
        else:
            out["dequantize"].append({"name": c["name"], "dequant": d})
    for c in q113["requantize"]:
        src = torch._make_per_tensor_quantized_tensor(
            torch.tensor(c["q_in"], dtype={"quint8": torch.uint8, "qint8": torch.int8, "qint32": torch.int32}[c["src_dtype"]]),
            c["src_scale"], c["src_zero_point"])
        y = torch.quantize_per_tensor(src.dequantize(), c["dst_scale"], c["dst_zero_point"], DT[c["dst_dtype"]])
        q = y.int_repr().ravel().tolist()
        if q == c["q_out"]:
            same["requantize"] += 1
        else:
            out["requantize"].append({"name": c["name"], "q_out": q})
    import torch.ao.quantization.observer as O
    qp = fixture113("qparams.json")
    for section, cls in (("per_tensor", O.MinMaxObserver), ("per_channel", O.PerChannelMinMaxObserver)):
        for c in qp[section]:
            kw = {"dtype": DT[c["dtype"]], "qscheme": QS[c["qscheme"]], "reduce_range": c["reduce_range"]}
            if c["quant_min"] is not None:
                kw.update(quant_min=c["quant_min"], quant_max=c["quant_max"])
            if c["eps"] is not None:
                kw["eps"] = c["eps"]
            if section == "per_channel":
                kw["ch_axis"] = 0
            obs = cls(**kw)
            mn = torch.tensor([unjson(v) for v in np.atleast_1d(c["min"])], dtype=torch.float32)
            mx = torch.tensor([unjson(v) for v in np.atleast_1d(c["max"])], dtype=torch.float32)
            if section == "per_tensor":
                mn, mx = mn[0], mx[0]
            sc, zp = obs._calculate_qparams(mn, mx)
            got = ([float(v) for v in sc.reshape(-1).tolist()], [int(v) for v in zp.reshape(-1).tolist()])
            want = ((c["scales"], c["zero_points"]) if section == "per_channel" else ([c["scale"]], [c["zero_point"]]))
            want = ([unjson(v) for v in want[0]], want[1])
            if got == want:
                same["qparams_" + section] += 1
            else:
                out["qparams_" + section].append({"index": qp[section].index(c), "scales": got[0], "zero_points": got[1]})
    ob = fixture113("observers.json")
    seqs = [[np.frombuffer(base64.b64decode(i["data_b64"]), dtype="<f4").reshape(i["shape"]) for i in sq["inputs"]]
            for sq in ob["sequences"]]
    for idx, c in enumerate(ob["cases"]):
        kw = {}
        for k, v in c["options"].items():
            kw[k] = DT[v] if k == "dtype" else (QS[v] if k == "qscheme" else v)
        try:
            obs = getattr(O, c["observer"])(**kw)
            for x in seqs[c["sequence"]]:
                obs(torch.from_numpy(x.copy()))
            sc, zp = obs.calculate_qparams()
        except Exception as e:  # noqa: BLE001
            out["observers"].append({"index": idx, "observer": c["observer"], "options": c["options"],
                                     "error": T.err_text(e)})
            continue
        got = ([float(v) for v in sc.reshape(-1).tolist()], [int(v) for v in zp.reshape(-1).tolist()])
        entry = {"index": idx, "observer": c["observer"], "options": c["options"]}
        if got != (c["scales"], c["zero_points"]):
            entry.update(scales=got[0], zero_points=got[1])
        if c["observer"] == "HistogramObserver" and floats_json(obs.histogram.numpy()) != floats_json(
                np.frombuffer(base64.b64decode(c["histogram_b64"]), dtype="<f4")):
            entry["histogram_changed"] = True
        if len(entry) > 3:
            out["observers"].append(entry)
        else:
            same["observers"] += 1
    fq = fixture113("fakequant.json")
    for idx, c in enumerate(fq["cases"]):
        x = torch.from_numpy(np.frombuffer(base64.b64decode(c["x_b64"]), dtype="<f4").copy())
        if c["kind"] == "per_tensor":
            y = torch.fake_quantize_per_tensor_affine(x, c["scale"], c["zero_point"], c["quant_min"], c["quant_max"])
        else:
            x = x.reshape(c["shape"])
            y = torch.fake_quantize_per_channel_affine(x, torch.tensor(c["scales"]), torch.tensor(c["zero_points"],
                                                       dtype=torch.int32), c["axis"], c["quant_min"], c["quant_max"])
        want = np.frombuffer(base64.b64decode(c["y_b64"]), dtype="<f4")
        if np.array_equal(y.numpy().ravel().view(np.uint32), want.view(np.uint32)):
            same["fakequant"] += 1
        else:
            diff = np.nonzero(y.numpy().ravel().view(np.uint32) != want.view(np.uint32))[0]
            out["fakequant"].append({"index": idx, "changed": diff.tolist(), "y": floats_json(y.numpy().ravel()[diff])})
    hdr = {"generator": GENERATOR, "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
           "fbgemm_isa": FBGEMM_ISA, "unchanged": same,
           "note": "1.13's cases (tests/fixtures/torch/{quantize,qparams,observers,fakequant}.json) run on 2.13: "
                   "only those whose results changed are listed, with 2.13's values"}
    size = write_fixture(os.path.join(OUTDIR, "replay.json"), hdr, out)
    print("replay.json %d bytes; unchanged %s; changed %s" % (size, same, {k: len(v) for k, v in out.items()}))
    if bad:
        print("  quantize reference disagrees on", bad[:10])
    return len(bad)


# --------------------------------------------------------------------------------------------
# main

FAMILIES = {"linear": gen_linear, "conv2d": gen_conv2d, "elementwise": gen_elementwise,
            "activations": gen_activations, "pooling": gen_pooling}


def main(argv):
    names = argv or list(FAMILIES) + ["replay", "dynamic", "seed002"]
    bad = 0
    if "replay" in names:
        names.remove("replay")
        bad += gen_replay()
    if "dynamic" in names:
        names.remove("dynamic")
        bad += gen_dynamic()
    if "seed002" in names:
        names.remove("seed002")
        bad += gen_seed002()
    print("%-14s %8s %6s %12s %8s %9s %10s" % ("family", "bytes", "cases", "unsupported", "checked", "mismatch",
                                              "unchecked"))
    for name in names:
        fam = FAMILIES[name]()
        size = fam.write()
        print("%-14s %8d %6d %12d %8d %9d %10d" % (fam.name, size, len(fam.cases), len(fam.unsupported), fam.checked,
                                                  len(fam.mismatch), fam.unchecked))
        if fam.mismatch:
            print("  reference disagrees on", fam.mismatch[:12])
        bad += len(fam.mismatch)
    print("torch %s, cpu capability %s, FBGEMM ISA %s" % (torch.__version__, torch.backends.cpu.get_cpu_capability(),
                                                        FBGEMM_ISA))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
