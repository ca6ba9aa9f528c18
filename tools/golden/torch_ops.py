#!/usr/bin/python3
"""Golden data for quantized operators from real PyTorch with the qnnpack engine.

Run with Debian's system Python (torch 1.13, x86-64): /usr/bin/python3 tools/golden/torch_ops.py

Writes tests/fixtures/torch/ops/<family>.json for the families linear, conv2d, elementwise, activations and
pooling. Each file is {generator, torch, engine, cpu_capability, cases, unsupported[, quirks]}:
  cases        one operator call each: name, op (the torch module / function / op called), inputs, weight,
               bias, params, output. Tensors are {dtype, shape, scale, zero_point, q} with q the int_repr,
               flattened row-major (NCHW contiguous).
  unsupported  configurations torch rejects on this engine, with the exception text (and what QNNPACK
               logged to stderr, if anything).
  quirks       calls that succeed but whose result is not a meaningful function of the inputs (undefined
               behaviour in the kernel); recorded for reference, not meant to be matched.

Every call is made twice and must give identical integers and qparams. Every recorded output is also checked
against the closed-form reference in the *_ref functions below (numpy, float32 where torch uses float); the
number of disagreements is printed per file. Non-zero means this torch build behaves differently. A few
outputs have no closed-form reference here (sigmoid on qint8, mean over non-trailing dims) and are only
recorded ("unchecked" in the summary). Results depend on ATen's CPU dispatch level (recorded as cpu_capability;
AVX2 here), because generic kernels dequantize differently in their vector and scalar code paths.
"""
import math
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # keep tools/golden free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import FIXTURES, write_fixture  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python"))
from qwasm_export import reference as R  # noqa: E402  (the exporter's numpy reference)

import torch.ao.nn.quantized as nnq  # noqa: E402
import torch.ao.nn.quantized.functional as qF  # noqa: E402
import torch.nn.intrinsic.quantized as nniq  # noqa: E402  (torch 1.13 has no torch.ao.nn.intrinsic.quantized)
from torch.ao.quantization import DeQuantStub, MinMaxObserver, QConfig, QuantStub, convert, prepare  # noqa: E402

torch.backends.quantized.engine = "qnnpack"
GENERATOR = "tools/golden/torch_ops.py"
OUTDIR = os.path.join(FIXTURES, "torch", "ops")
F32 = np.float32
RANGE = {"quint8": (0, 255), "qint8": (-128, 127)}
IDT = {"quint8": torch.uint8, "qint8": torch.int8}
ABSENT = object()


# --------------------------------------------------------------------------------------------
# Tensors and recording

def qt(q, scale, zp, dtype="quint8"):
    """A per-tensor quantized tensor holding exactly the integers q."""
    return torch._make_per_tensor_quantized_tensor(torch.tensor(np.asarray(q), dtype=IDT[dtype]), scale, zp)


def qw(q, scales, zps, per_channel):
    """qint8 weight, per tensor (scales[0], zps[0]) or per channel along axis 0."""
    t = torch.tensor(np.asarray(q), dtype=torch.int8)
    if per_channel:
        return torch._make_per_channel_quantized_tensor(
            t, torch.tensor(np.asarray(scales, dtype=np.float64)), torch.tensor(np.asarray(zps, dtype=np.int64)), 0)
    return torch._make_per_tensor_quantized_tensor(t, float(scales[0]), int(zps[0]))


def dtype_name(t):
    return {torch.quint8: "quint8", torch.qint8: "qint8", torch.qint32: "qint32"}[t.dtype]


def rec(t):
    assert t.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric)
    return {"dtype": dtype_name(t), "shape": list(t.shape), "scale": float(t.q_scale()),
            "zero_point": int(t.q_zero_point()), "q": t.int_repr().flatten().tolist()}


def rec_weight(w):
    d = {"dtype": dtype_name(w), "shape": list(w.shape)}
    if w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
        d.update({"qscheme": "per_channel_affine", "scales": [float(v) for v in w.q_per_channel_scales().tolist()],
                  "zero_points": [int(v) for v in w.q_per_channel_zero_points().tolist()],
                  "axis": int(w.q_per_channel_axis())})
    else:
        d.update({"qscheme": "per_tensor_affine", "scale": float(w.q_scale()), "zero_point": int(w.q_zero_point())})
    d["q"] = w.int_repr().flatten().tolist()
    return d


def rec_meta(t):
    """Shape and qparams of a tensor without its data (for unsupported entries)."""
    d = rec(t)
    del d["q"]
    return d


def ints(t):
    return t.int_repr().numpy().astype(np.int64)


def err_text(e):
    s = " ".join(str(e).split())
    for cut in (" (Could this error", " Exception raised from"):
        s = s.split(cut)[0]
    return s


class Captured:
    """Redirect file descriptor 2 (QNNPACK and glog write there) into a buffer while torch runs."""

    def __enter__(self):
        sys.stderr.flush()
        self.tmp = tempfile.TemporaryFile(mode="w+b")
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode("utf-8", "replace")
        self.tmp.close()
        return False


def qnnp_log(text):
    lines = [ln.strip() for ln in text.splitlines() if "QNNPACK" in ln or "failed" in ln]
    return lines[0] if lines else None


# --------------------------------------------------------------------------------------------
# Reference formulas (established by probing torch; used only to self-check the recorded data)

def rint(x):
    return np.rint(x)  # round half to even, like nearbyint / lrintf / cvtps2dq in the default mode


def quantize_ref(x, scale, zp, dtype):
    """torch quantize_val / Vectorized::quantize: zp + nearbyint(x * (1.0f / (float)scale)), float32."""
    lo, hi = RANGE[dtype]
    inv = F32(1.0) / F32(scale)
    return np.clip(F32(zp) + rint(np.asarray(x, dtype=F32) * inv), lo, hi).astype(np.int64)


def dequant_ref(q, scale, zp):
    """Scalar dequantize_val and Tensor.dequantize(): (float)(q - zp) * (float)scale, one rounding."""
    return (np.asarray(q, dtype=np.int64) - zp).astype(F32) * F32(scale)


VEC_BLOCK = 64  # cpu_kernel_vec handles 2 * Vectorized<quint8/qint8>::size() = 2 * 32 elements per step (AVX2)


def dequant_vec_ref(q, scale, zp):
    """Vectorized<quint8/qint8>::dequantize(scale, zp, premul): fma(scale, (float)q, (float)scale * -(float)zp)."""
    premul = F32(scale) * F32(-zp)
    exact = np.asarray(q, dtype=np.int64).astype(np.longdouble) * np.longdouble(F32(scale)) + np.longdouble(premul)
    return exact.astype(F32)  # the product and sum are exact in the 64-bit x87 mantissa: a single rounding


def vec_mask(shape, *in_shapes):
    """Which output elements PyTorch's generic kernels compute in the vector path (True) or scalar path.

    TensorIterator coalesces adjacent dimensions when every operand's strides allow it; each run of the
    innermost coalesced dimension goes through vectorized_loop: whole blocks of VEC_BLOCK elements in the
    vector lambda, the remainder of the run in the scalar lambda.
    """
    shape = list(shape)
    nd = len(shape)
    strides = []
    for sh in list(in_shapes) + [shape]:
        sh = [1] * (nd - len(sh)) + list(sh)
        st, acc = [0] * nd, 1
        for d in range(nd - 1, -1, -1):
            st[d] = 0 if sh[d] == 1 else acc  # broadcast dimensions have stride 0
            acc *= sh[d]
        strides.append(st)
    extent, gstr = 1, None
    for d in range(nd - 1, -1, -1):
        if shape[d] == 1:
            continue
        if extent == 1:
            extent, gstr = shape[d], [st[d] for st in strides]
        elif all(extent * g == st[d] for g, st in zip(gstr, strides)):
            extent *= shape[d]
        else:
            break
    pos = np.arange(int(np.prod(shape))) % extent
    return (pos < (extent // VEC_BLOCK) * VEC_BLOCK).reshape(shape)


def dequant_pos_ref(q, scale, zp, mask):
    return np.where(mask, dequant_vec_ref(q, scale, zp), dequant_ref(q, scale, zp))


def qbias_ref(b, w_scales, in_scale):
    """Bias to int32: quantize with scale (double)w_scale * (double)in_scale, i.e. float32 reciprocal."""
    bs = (np.asarray(w_scales, dtype=np.float64) * float(in_scale)).astype(F32)
    v = rint(np.asarray(b, dtype=F32) * (F32(1.0) / bs))
    return np.clip(v, -(2 ** 31), 2 ** 31 - 1).astype(np.int64)


def requant_ref(acc, w_scales, in_scale, out_scale, oz, dtype, relu, chan_axis):
    """QNNPACK fp32 requantization: rint((float)acc * ((w_scale * in_scale) * (1 / out_scale))) + oz, clamped."""
    rs = (np.asarray(w_scales, dtype=np.float64).astype(F32) * F32(in_scale)) * (F32(1.0) / F32(out_scale))
    shape = [1] * acc.ndim
    shape[chan_axis] = -1
    y = rint(acc.astype(F32) * rs.reshape(shape)).astype(np.int64) + oz
    lo, hi = RANGE[dtype]
    return np.clip(y, max(lo, oz) if relu else lo, hi)


def linear_ref(c):
    x, w, p = c["inputs"][0], c["weight"], c["params"]
    xq = np.array(x["q"], dtype=np.int64).reshape(x["shape"])
    wq = np.array(w["q"], dtype=np.int64).reshape(w["shape"])
    n = wq.shape[0]
    ws, wz = w_qparams(w, n)
    acc = (xq - x["zero_point"]).reshape(-1, xq.shape[-1]) @ (wq - wz[:, None]).T
    if c.get("bias") is not None:
        acc = acc + qbias_ref(c["bias"], ws, x["scale"])[None, :]
    o = c["output"]
    y = requant_ref(acc, ws, x["scale"], o["scale"], o["zero_point"], o["dtype"], p["relu"], 1)
    return y.reshape(o["shape"])


def w_qparams(w, n):
    if w["qscheme"] == "per_channel_affine":
        return np.array(w["scales"], dtype=np.float64), np.array(w["zero_points"], dtype=np.int64)
    return np.full(n, w["scale"], dtype=np.float64), np.full(n, w["zero_point"], dtype=np.int64)


def conv_acc(c):
    """The exact int32 sums of a conv2d case: sum((x - x_zp) * (w - w_zp)) over each window."""
    x, w, p = c["inputs"][0], c["weight"], c["params"]
    xq = np.array(x["q"], dtype=np.int64).reshape(x["shape"]) - x["zero_point"]
    wq = np.array(w["q"], dtype=np.int64).reshape(w["shape"])
    cout, cg, kh, kw = wq.shape
    _, wz = w_qparams(w, cout)
    wq = wq - wz[:, None, None, None]
    (sh, sw), (ph, pw), (dh, dw), g = p["stride"], p["padding"], p["dilation"], p["groups"]
    n, _, h, wd = xq.shape
    xp = np.pad(xq, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    acc = np.zeros((n, cout, oh, ow), dtype=np.int64)
    per_group = cout // g
    for co in range(cout):
        gi = co // per_group
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dh, j * dw
                patch = xp[:, gi * cg:(gi + 1) * cg, r0:r0 + sh * (oh - 1) + 1:sh, c0:c0 + sw * (ow - 1) + 1:sw]
                acc[:, co] += np.einsum("nchw,c->nhw", patch, wq[co, :, i, j])
    return acc


def conv_ref(c):
    x, w, p = c["inputs"][0], c["weight"], c["params"]
    ws, _ = w_qparams(w, w["shape"][0])
    acc = conv_acc(c)
    if c.get("bias") is not None:
        acc += qbias_ref(c["bias"], ws, x["scale"])[None, :, None, None]
    o = c["output"]
    return requant_ref(acc, ws, x["scale"], o["scale"], o["zero_point"], o["dtype"], p["relu"], 1)


def f32_bits(v):
    return int(np.array(v, dtype=F32).view(np.uint32))


def add_qnnpack_params(a_scale, b_scale, out_scale):
    """pytorch_qnnp_compute_add_quantization_params: multipliers and shift from the larger scale ratio."""
    a_os = F32(F32(a_scale) / F32(out_scale))
    b_os = F32(F32(b_scale) / F32(out_scale))
    exp = ((f32_bits(max(a_os, b_os)) >> 23) & 0xFF) - 127
    shift = 21 - exp
    mult = np.array((shift + 127) << 23, dtype=np.uint32).view(F32)
    return int(rint(a_os * mult)), int(rint(b_os * mult)), shift, a_os, b_os


def add_qnnpack_ref(c):
    """quint8 same-shape add on QNNPACK: fixed point, rounding half away from zero."""
    a, b, o = c["inputs"][0], c["inputs"][1], c["output"]
    am, bm, shift, _, _ = add_qnnpack_params(a["scale"], b["scale"], o["scale"])
    acc = (np.array(a["q"], dtype=np.int64) * am + np.array(b["q"], dtype=np.int64) * bm
           - (am * a["zero_point"] + bm * b["zero_point"]))
    acc = ((acc + 2 ** 31) % 2 ** 32) - 2 ** 31  # int32
    mask = (1 << shift) - 1
    rem = (acc & mask) - (acc < 0)
    y = (acc >> shift) + (rem > (mask >> 1)) + o["zero_point"]
    return np.clip(y, o["zero_point"] if c["params"]["relu"] else 0, 255)


def add_xnnpack_ref(c):
    """qint8 same-shape add (XNNPACK): shift 20 - exponent, rounding half up (toward +infinity)."""
    a, b, o = c["inputs"][0], c["inputs"][1], c["output"]
    a_os = F32(F32(a["scale"]) / F32(o["scale"]))
    b_os = F32(F32(b["scale"]) / F32(o["scale"]))
    exp = ((f32_bits(max(a_os, b_os)) >> 23) & 0xFF) - 127
    shift = 20 - exp
    mult = np.array((shift + 127) << 23, dtype=np.uint32).view(F32)
    am, bm = int(rint(a_os * mult)), int(rint(b_os * mult))
    acc = (np.array(a["q"], dtype=np.int64) * am + np.array(b["q"], dtype=np.int64) * bm
           - (am * a["zero_point"] + bm * b["zero_point"]))
    y = ((acc + (1 << (shift - 1))) >> shift) + o["zero_point"]
    return np.clip(y, max(-128, o["zero_point"]) if c["params"]["relu"] else -128, 127)


def bcast_inputs(c):
    a, b = c["inputs"]
    aq = np.array(a["q"], dtype=np.int64).reshape(a["shape"])
    bq = np.array(b["q"], dtype=np.int64).reshape(b["shape"])
    return np.broadcast_arrays(aq, bq)


def add_float_ref(c):
    """Generic kernel (broadcasting): dequantize both, add in float32, relu, quantize."""
    a, b, o = c["inputs"][0], c["inputs"][1], c["output"]
    aq, bq = bcast_inputs(c)
    m = vec_mask(o["shape"], a["shape"], b["shape"])
    s = dequant_pos_ref(aq, a["scale"], a["zero_point"], m) + dequant_pos_ref(bq, b["scale"], b["zero_point"], m)
    if c["params"]["relu"]:
        s = np.maximum(s, F32(0))
    return quantize_ref(s, o["scale"], o["zero_point"], o["dtype"]).reshape(o["shape"])


def mul_ref(c):
    """(a - za) * (b - zb) as int, times float32 (sa * sb) * (1 / so), rint, + zo; relu clamps at zo."""
    a, b, o = c["inputs"][0], c["inputs"][1], c["output"]
    aq, bq = bcast_inputs(c)
    prod = (aq - a["zero_point"]) * (bq - b["zero_point"])
    m = (F32(a["scale"]) * F32(b["scale"])) * (F32(1.0) / F32(o["scale"]))
    lo, hi = RANGE[o["dtype"]]
    y = np.clip(rint(prod.astype(F32) * m) + o["zero_point"], lo, hi).astype(np.int64)
    if c["params"]["relu"]:
        y = np.maximum(y, o["zero_point"])
    return y.reshape(o["shape"])


def requantize_from_int_ref(v, multiplier, zp, dtype):
    lo, hi = RANGE[dtype]
    return np.clip(zp + rint(np.asarray(v).astype(F32) * F32(multiplier)), lo, hi).astype(np.int64)


def add_scalar_ref(c):
    """quantized::add_scalar: output qparams chosen by the op (s' , z'), see _add_scalar_out."""
    x, p = c["inputs"][0], c["params"]
    dt = x["dtype"]
    lo, hi = RANGE[dt]
    s, z, v = x["scale"], x["zero_point"], float(p["scalar"])
    cq = int(np.rint(v / s))
    q = np.array(x["q"], dtype=np.int64)
    if lo > z - cq:
        sp, zp = ((hi - (z - cq)) / (hi - lo)) * s, lo
    elif hi < z - cq:
        sp, zp = ((z - cq - lo) / (hi - lo)) * s, hi
    else:
        sp, zp = s, z - cq
        y = np.maximum(q, zp) if p["relu"] else q
        return y, (sp, zp)
    y = requantize_from_int_ref(q - z + cq, F32(s) * (F32(1.0) / F32(sp)), zp, dt)
    if p["relu"]:
        y = np.maximum(y, zp)
    return y, (sp, zp)


def mul_scalar_ref(c):
    x, p = c["inputs"][0], c["params"]
    lo, hi = RANGE[x["dtype"]]
    s, z, v = x["scale"], x["zero_point"], float(p["scalar"])
    q = np.array(x["q"], dtype=np.int64)
    if v > 0:
        y, qp = q, (v * s, z)
    elif v == 0:
        y, qp = np.zeros_like(q), (1.0, 0)
    else:
        y, qp = hi + lo - q, (abs(v) * s, hi - (z - lo))
    if p["relu"]:
        y = np.maximum(y, qp[1])
    return y, qp


def cat_ref(c):
    o = c["output"]
    parts = []
    for x in c["inputs"]:
        xq = np.array(x["q"], dtype=np.int64).reshape(x["shape"])
        d = dequant_ref(xq, x["scale"], x["zero_point"])
        parts.append(quantize_ref(d, o["scale"], o["zero_point"], o["dtype"]))
    return np.concatenate(parts, axis=c["params"]["dim"])


def act_in(c):
    x = c["inputs"][0]
    return np.array(x["q"], dtype=np.int64), x["scale"], x["zero_point"], x["dtype"]


def qbound(v, s, z, dt):
    return int(quantize_ref([v], s, z, dt)[0])


def clamp_ref(c):
    """relu / relu6 / hardtanh / clamp: integer clamp to quantize_val(bound); qparams unchanged."""
    q, s, z, dt = act_in(c)
    p = c["params"]
    lo = qbound(p["min_val"], s, z, dt) if p.get("min_val") is not None else RANGE[dt][0]
    hi = qbound(p["max_val"], s, z, dt) if p.get("max_val") is not None else RANGE[dt][1]
    return np.minimum(np.maximum(q, lo), hi)


def relu_ref(c):
    q, s, z, dt = act_in(c)
    return np.maximum(q, z)


def hardswish_ref(c):
    q, s, z, dt = act_in(c)
    o = c["output"]
    x = F32(s) * (q - z).astype(F32)
    h = x * np.minimum(np.maximum(x + F32(3), F32(0)), F32(6)) / F32(6)
    if dt == "quint8":  # QNNPACK lookup table: lrintf(clamp(h * (1/so) + zo, 0, 255))
        v = (F32(1) / F32(o["scale"])) * h + F32(o["zero_point"])
        return rint(np.clip(v, F32(0), F32(255))).astype(np.int64)
    m = vec_mask(c["inputs"][0]["shape"]).ravel()  # generic kernel: vector lambda multiplies by 1/6
    x = dequant_pos_ref(q, s, z, m)
    c6 = x * np.minimum(np.maximum(x + F32(3), F32(0)), F32(6))
    h = np.where(m, c6 * (F32(1) / F32(6)), c6 / F32(6))
    return quantize_ref(h, o["scale"], o["zero_point"], dt)


def expf(x):
    """Correctly rounded float32 exp (what glibc's expf returns for these inputs)."""
    return np.exp(np.asarray(x, dtype=np.float64)).astype(F32)


def sigmoid_ref(c):
    q, s, z, dt = act_in(c)
    x = F32(s) * (q - z).astype(F32)
    v = F32(256) / (F32(1) + expf(-x))  # QNNPACK lookup table, output (1/256, 0)
    return rint(np.clip(v, F32(0), F32(255))).astype(np.int64)


def hardsigmoid_ref(c):
    q, s, z, dt = act_in(c)
    o = c["output"]
    x = dequant_pos_ref(q, s, z, vec_mask(c["inputs"][0]["shape"]).ravel())
    h = np.minimum(np.maximum(x + F32(3), F32(0)), F32(6)) / F32(6)
    return quantize_ref(h, o["scale"], o["zero_point"], dt)


def leaky_ref(c):
    q, s, z, dt = act_in(c)
    o = c["output"]
    x = dequant_pos_ref(q, s, z, vec_mask(c["inputs"][0]["shape"]).ravel())
    y = np.where(x > 0, x, x * F32(c["params"]["negative_slope"]))
    return quantize_ref(y, o["scale"], o["zero_point"], dt)


def elu_ref(c):
    q, s, z, dt = act_in(c)
    o = c["output"]
    x = dequant_pos_ref(q, s, z, vec_mask(c["inputs"][0]["shape"]).ravel())
    y = np.where(x < 0, (expf(x) - F32(1)) * F32(c["params"]["alpha"]), x)
    return quantize_ref(y, o["scale"], o["zero_point"], dt)


out_size = R.out_size  # PyTorch's pooling output size (a window must start inside the input or the left padding)


def pool_in(c):
    x = c["inputs"][0]
    return np.array(x["q"], dtype=np.int64).reshape(x["shape"]), x["scale"], x["zero_point"]


def maxpool_ref(c):
    """Max over the window. QNNPACK (quint8, not ceil_mode) clamps out-of-range window positions to the
    nearest edge pixel instead of skipping them, which changes the result when dilation > 1 meets padding."""
    q, s, z = pool_in(c)
    p = c["params"]
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = p["kernel_size"], p["stride"], p["padding"], p["dilation"]
    n, ch, h, w = q.shape
    oh, ow = out_size(h, kh, sh, ph, dh, p["ceil_mode"]), out_size(w, kw, sw, pw, dw, p["ceil_mode"])
    clamp_edges = c["inputs"][0]["dtype"] == "quint8" and not p["ceil_mode"]
    y = np.full((n, ch, oh, ow), -(2 ** 31), dtype=np.int64)
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, t = i * sh - ph + a * dh, j * sw - pw + b * dw
                    if clamp_edges:
                        r, t = min(max(r, 0), h - 1), min(max(t, 0), w - 1)
                    if 0 <= r < h and 0 <= t < w:
                        y[:, :, i, j] = np.maximum(y[:, :, i, j], q[:, :, r, t])
    return y


def avg_pool_windows(c):
    """An avg_pool2d case's output shape and, per output (i, j): the sum of q - zp over the window's part inside
    the input, and the divisor avg_pool2d's arguments choose (divisor_override, or the window with padding when
    count_include_pad, else its valid part)."""
    q, s, z = pool_in(c)
    p = c["params"]
    (kh, kw), (sh, sw), (ph, pw) = p["kernel_size"], p["stride"], p["padding"]
    n, ch, h, w = q.shape
    ceil = p["ceil_mode"]
    oh, ow = out_size(h, kh, sh, ph, 1, ceil), out_size(w, kw, sw, pw, 1, ceil)
    xc = q - z
    windows = []
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * sh - ph, j * sw - pw
            he, we = min(hs + kh, h + ph), min(ws + kw, w + pw)
            pool = (he - hs) * (we - ws)
            hs0, ws0, he0, we0 = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
            acc = xc[:, :, hs0:he0, ws0:we0].sum(axis=(2, 3))
            d = p["divisor_override"] or (pool if p["count_include_pad"] else (he0 - hs0) * (we0 - ws0))
            windows.append((i, j, acc, d))
    return (n, ch, oh, ow), windows


def avgpool_ref(c):
    """Three code paths (see README): QNNPACK unless ceil_mode; else the generic NCHW or the NHWC kernel."""
    q, s, z = pool_in(c)
    p = c["params"]
    kh, kw = p["kernel_size"]
    shape, windows = avg_pool_windows(c)
    y = np.zeros(shape, dtype=np.int64)
    _, ch, h, w = q.shape
    for i, j, acc, d in windows:
        if not p["ceil_mode"]:  # QNNPACK: padding counts as zero, divisor kh*kw; count_include_pad/divisor_override ignored
            m = F32(F32(s) / (F32(s) * F32(kh * kw)))
            y[:, :, i, j] = rint(acc.astype(F32) * m) + z
        elif ch == 1 or h * w == 1:  # channels-last-contiguous too: NHWC kernel, zp added after rounding
            y[:, :, i, j] = rint(acc.astype(F32) * F32(1.0 / d)) + z
        else:  # NCHW kernel: nearbyint(sum * multiplier + zp) in float32
            y[:, :, i, j] = rint(acc.astype(F32) * F32(1.0 / d) + F32(z))
    return np.clip(y, 0, 255)


def adaptive_windows(c):
    """An adaptive_avg_pool2d case's output shape and, per output (i, j), the window's integers and its size:
    rows [floor(i h / oh), ceil((i + 1) h / oh)), columns likewise."""
    q, s, z = pool_in(c)
    oh, ow = c["params"]["output_size"]
    n, ch, h, w = q.shape
    windows = []
    for i in range(oh):
        hs, he = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            ws, we = (j * w) // ow, -((-(j + 1) * w) // ow)
            windows.append((i, j, q[:, :, hs:he, ws:we], (he - hs) * (we - ws)))
    return (n, ch, oh, ow), windows


def adaptive_ref(c):
    q, s, z = pool_in(c)
    oh, ow = c["params"]["output_size"]
    _, ch, h, w = q.shape
    shape, windows = adaptive_windows(c)
    y = np.zeros(shape, dtype=np.int64)
    qnnp = h % oh == 0 and w % ow == 0
    for i, j, blk, d in windows:
        if qnnp:  # QNNPACK average pooling with kernel = stride = input / output
            m = F32(F32(s) / (F32(s) * F32(d)))
            y[:, :, i, j] = rint((blk - z).sum(axis=(2, 3)).astype(F32) * m) + z
        elif ch == 1 or h * w == 1:  # NHWC kernel
            y[:, :, i, j] = rint((blk - z).sum(axis=(2, 3)).astype(F32) * F32(1.0 / d)) + z
        else:  # NCHW kernel: raw integer sum (zero point never subtracted) times float32 1/size
            y[:, :, i, j] = rint(blk.sum(axis=(2, 3)).astype(F32) * F32(1.0 / d))
    return np.clip(y, 0, 255)


def mean_ref(c):
    """mean over (2, 3) of a 4-d quint8 tensor: QNNPACK global average pooling."""
    q, s, z = pool_in(c)
    n = q.shape[2] * q.shape[3]
    acc = (q - z).sum(axis=(2, 3), keepdims=True)
    m = F32(F32(s) / (F32(s) * F32(n)))
    return np.clip(rint(acc.astype(F32) * m) + z, 0, 255)


def mean_inner_ref(c):
    """mean over trailing dims (not (2, 3)): qmean_inner_dim_kernel, nearbyint((float)sum(q) / N), zp never used."""
    q, s, z = pool_in(c)
    dims = tuple(c["params"]["dim"])
    n = int(np.prod([q.shape[d] for d in dims]))
    return rint(q.sum(axis=dims).astype(F32) / F32(n))


# --------------------------------------------------------------------------------------------
# Case runner

class Family:
    def __init__(self, name):
        self.name = name
        self.cases = []
        self.unsupported = []
        self.quirks = []
        self.checked = 0
        self.mismatch = []
        self.unchecked = 0

    def call(self, fn):
        """Run fn twice; both results must agree. Returns (result, None) or (None, (error, log))."""
        try:
            with Captured() as cap:
                y1 = fn()
                y2 = fn()
        except Exception as e:  # noqa: BLE001
            return None, (err_text(e), qnnp_log(cap.text))
        assert torch.equal(y1.int_repr(), y2.int_repr()), "not reproducible"
        assert y1.q_scale() == y2.q_scale() and y1.q_zero_point() == y2.q_zero_point(), "qparams not reproducible"
        return y1, None

    def add(self, name, op, fn, inputs, params, weight=ABSENT, bias=ABSENT, ref=None, expect_qparams=None,
            quirk=None):
        y, err = self.call(fn)
        if err is not None:
            entry = {"name": name, "op": op, "inputs": [rec_meta(t) for t in inputs]}
            if weight is not ABSENT and weight is not None:
                wm = rec_weight(weight)
                del wm["q"]
                entry["weight"] = wm
            entry["params"] = params
            entry["error"] = err[0]
            if err[1]:
                entry["log"] = err[1]
            self.unsupported.append(entry)
            return None
        case = {"name": name, "op": op, "inputs": [rec(t) for t in inputs]}
        if weight is not ABSENT:
            case["weight"] = rec_weight(weight) if weight is not None else None
        if bias is not ABSENT:
            case["bias"] = None if bias is None else [float(v) for v in bias.detach().numpy().astype(F32).ravel()]
        case["params"] = params
        case["output"] = rec(y)
        if quirk is not None:
            case["note"] = quirk
            self.quirks.append(case)
            return case
        self.cases.append(case)
        if ref is None:
            self.unchecked += 1
            return case
        got = np.array(case["output"]["q"], dtype=np.int64)
        res = ref(case)
        ok = True
        if isinstance(res, tuple):
            res, qp = res
            ok = abs(qp[0] - case["output"]["scale"]) <= 1e-12 * abs(qp[0]) and qp[1] == case["output"]["zero_point"]
        if expect_qparams is not None:
            ok = ok and (case["output"]["scale"], case["output"]["zero_point"]) == expect_qparams
        ok = ok and np.array_equal(np.asarray(res, dtype=np.int64).ravel(), got)
        self.checked += 1
        if not ok:
            self.mismatch.append(name)
        return case

    def write(self):
        hdr = {"generator": GENERATOR, "torch": torch.__version__, "engine": torch.backends.quantized.engine,
               "cpu_capability": cpu_capability()}
        sections = {"cases": self.cases, "unsupported": self.unsupported}
        if self.quirks:
            sections["quirks"] = self.quirks
        return write_fixture(os.path.join(OUTDIR, self.name + ".json"), hdr, sections)


def cpu_capability():
    """ATen's CPU dispatch level (torch 1.13 has no torch.backends.cpu); ATEN_CPU_CAPABILITY can change it."""
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return None


def logu(rng, lo, hi):
    """Log-uniform float in [lo, hi]."""
    return float(np.exp(rng.uniform(math.log(lo), math.log(hi))))


def rand_q(rng, shape, dtype="quint8"):
    lo, hi = RANGE[dtype]
    return rng.integers(lo, hi + 1, size=shape)


def pick_out_qparams(yf, rng, zp=None, levels=None):
    """An output scale that maps the float result range onto ~levels steps (saturating some values)."""
    lo, hi = float(np.min(yf)), float(np.max(yf))
    span = max(hi - lo, 1e-3)
    levels = levels if levels is not None else float(rng.uniform(150, 400))
    s = span / levels
    if zp is None:
        zp = int(np.clip(round(-lo / s + rng.uniform(-40, 40)), 0, 255))
    return s, zp


# --------------------------------------------------------------------------------------------
# linear.json

ZPS = [0, 128, 255, 3, 77, 200, 250, 31]


def gen_linear():
    fam = Family("linear")
    rng = np.random.default_rng(1001)
    Ks = [1, 3, 5, 8, 13, 17, 31, 64, 67, 100]
    Ns = [1, 3, 5, 8, 13, 17, 31, 64, 67, 100]
    Ms = [1, 2, 3, 7, 16, 33]

    def linear_case(name, M, K, N, xs, xz, xq, wq, ws, wz, per_channel, b, out, relu, dtype="quint8"):
        x = qt(xq, xs, xz, dtype)
        w = qw(wq, ws, wz, per_channel)
        bt = None if b is None else torch.tensor(np.asarray(b, dtype=F32))
        if out is None:
            yf = (dequant_ref(xq, xs, xz).astype(np.float64) @ w.dequantize().numpy().astype(np.float64).T
                  + (0 if b is None else np.asarray(b, dtype=np.float64)))
            out = pick_out_qparams(yf, rng)
        os_, oz = out
        cls = nniq.LinearReLU if relu else nnq.Linear
        opname = "torch.nn.intrinsic.quantized.LinearReLU" if relu else "torch.ao.nn.quantized.Linear"

        def fn():
            m = cls(K, N, bt is not None) if relu else cls(K, N, bias_=bt is not None)
            m.set_weight_bias(w, bt)
            m.scale, m.zero_point = float(os_), int(oz)
            return m(x)

        return fam.add(name, opname, fn, [x], {"relu": relu, "in_features": K, "out_features": N,
                                              "output_scale": float(os_), "output_zero_point": int(oz)},
                       weight=w, bias=bt, ref=linear_ref)

    i = 0
    for ki, K in enumerate(Ks):
        for ni, N in enumerate(Ns):
            if (ki + ni) % 2:
                continue
            M = Ms[(3 * ki + ni) % len(Ms)]
            while M > 1 and M * K + K * N > 2600:
                M = Ms[Ms.index(M) - 1]
            if K * N > 2600:
                continue
            per_channel = i % 3 == 1
            has_bias = i % 4 != 3
            relu = i % 5 == 2
            xs = logu(rng, 0.005, 0.5)
            xz = ZPS[i % len(ZPS)]
            wz_nonzero = i % 7 == 5
            if per_channel:
                ws = [logu(rng, 0.002, 0.05) for _ in range(N)]
                wz = list(rng.integers(-8, 9, N)) if wz_nonzero else [0] * N
            else:
                ws = [logu(rng, 0.002, 0.05)]
                wz = [int(rng.integers(-8, 9))] if wz_nonzero else [0]
            xq = rand_q(rng, (M, K))
            wq = rand_q(rng, (N, K), "qint8")
            b = None
            if has_bias:  # comparable to the accumulated products, so it moves the output
                mag = xs * float(np.mean(ws)) * 70.0 * math.sqrt(K)
                b = (rng.standard_normal(N) * mag).astype(F32)
            linear_case("grid_M%d_K%d_N%d%s%s%s" % (M, K, N, "_pc" if per_channel else "", "_bias" if has_bias else "",
                                                      "_relu" if relu else ""),
                        M, K, N, xs, xz, xq, wq, ws, wz, per_channel, b, None, relu)
            i += 1

    # Tall batches (M = 33 and 7) that the size budget of the grid trimmed.
    for j, (M, K, N) in enumerate([(33, 3, 5), (33, 17, 8), (33, 8, 31), (7, 67, 13), (7, 100, 5), (33, 1, 1)]):
        xs, ws = logu(rng, 0.005, 0.5), [logu(rng, 0.002, 0.05) for _ in range(N if j % 2 else 1)]
        b = (rng.standard_normal(N) * xs * ws[0] * 70.0 * math.sqrt(K)).astype(F32) if j != 2 else None
        linear_case("tall_M%d_K%d_N%d" % (M, K, N), M, K, N, xs, ZPS[j], rand_q(rng, (M, K)),
                    rand_q(rng, (N, K), "qint8"), ws, [0] * len(ws), j % 2 == 1, b, None, j == 3)

    # Output qparams that saturate at 0 and at 255, and zero points 0/128/255.
    for j, (oz, levels, relu) in enumerate([(0, 60, False), (255, 60, False), (128, 40, False), (128, 40, True),
                                            (0, 400, True), (255, 300, True), (64, 20, False)]):
        M, K, N = [(2, 13, 5), (3, 17, 8), (7, 8, 3), (1, 31, 17), (16, 5, 13), (3, 64, 1), (2, 3, 67)][j]
        xs, xz = [(0.02, 128), (0.1, 0), (0.003, 255), (0.05, 7), (0.25, 128), (0.01, 200), (0.07, 90)][j]
        xq = rand_q(rng, (M, K))
        wq = rand_q(rng, (N, K), "qint8")
        ws = [logu(rng, 0.003, 0.03)]
        b = (rng.standard_normal(N) * xs * ws[0] * 500).astype(F32)
        yf = dequant_ref(xq, xs, xz).astype(np.float64) @ ((wq * ws[0]).T) + b
        os_, _ = pick_out_qparams(yf, rng, zp=oz, levels=levels)
        linear_case("saturate_oz%d_levels%d%s" % (oz, levels, "_relu" if relu else ""), M, K, N, xs, xz, xq, wq, ws,
                    [0], False, b, (os_, oz), relu)

    # Bias alone decides the output (input all at its zero point); bias on exact .5 steps of in_scale*w_scale.
    for j, (xs, wsc) in enumerate([(0.5, 0.25), (0.1, 0.02), (1 / 3, 0.013), (0.0078125, 0.0625)]):
        N = 8
        bsc = xs * wsc
        k = rng.integers(-300, 300, N)
        b = ((k + 0.5) * bsc).astype(F32)
        xq = np.full((2, 5), 77)
        wq = rand_q(rng, (N, 5), "qint8")
        linear_case("bias_ties_%d" % j, 2, 5, N, xs, 77, xq, wq, [wsc], [0], False, b,
                    (float(F32(F32(wsc) * F32(xs)) * 2), 128), False)
        b2 = (rng.uniform(-2000, 2000, N) * bsc).astype(F32)
        linear_case("bias_only_%d" % j, 1, 5, N, xs, 77, xq[:1], wq, [wsc], [0], False, b2, (bsc * 17, 100), False)

    # Power-of-two scales with requantization scale 1/2 or 1/4: many accumulators land on .5 (half to even).
    for j, (xs, wsc, os_) in enumerate([(0.5, 0.25, 0.25), (0.25, 0.125, 0.125), (0.0625, 0.03125, 0.0078125)]):
        M, K, N = [(3, 5, 8), (2, 13, 3), (7, 3, 5)][j]
        xz = [128, 0, 77][j]
        linear_case("requant_ties_%d" % j, M, K, N, xs, xz, np.clip(xz + rng.integers(-12, 13, (M, K)), 0, 255),
                    rng.integers(-8, 9, (N, K)), [wsc], [0], False,
                    None if j == 1 else (rng.integers(-20, 20, N) * xs * wsc).astype(F32), (os_, [128, 100, 130][j]),
                    False)

    # Big bias (far outside the output range) and a zero bias; K = 1 and N = 1 degenerate shapes.
    linear_case("bias_huge", 3, 4, 3, 0.05, 128, rand_q(rng, (3, 4)), rand_q(rng, (3, 4), "qint8"), [0.01], [0], False,
                np.array([1e3, -1e3, 0.5], dtype=F32), (0.05, 128), False)
    linear_case("bias_zero", 2, 6, 4, 0.05, 60, rand_q(rng, (2, 6)), rand_q(rng, (4, 6), "qint8"), [0.01], [0], False,
                np.zeros(4, dtype=F32), (0.02, 130), False)
    linear_case("K1_N1_M1", 1, 1, 1, 0.1, 10, np.array([[200]]), np.array([[-77]]), [0.02], [0], False,
                np.array([0.3], dtype=F32), (0.05, 20), False)
    linear_case("weights_extreme", 2, 8, 4, 0.02, 0, np.array([[255] * 8, [0] * 8]),
                np.array([[127] * 8, [-128] * 8, [127, -128] * 4, [0] * 8]), [0.01], [0], False, None, (0.05, 128),
                False)

    # qint8 activations (PyTorch routes them to XNNPACK even with the qnnpack engine).
    for j in range(6):
        M, K, N = [(1, 8, 4), (3, 17, 5), (2, 31, 13), (7, 3, 8), (16, 13, 1), (2, 64, 3)][j]
        xs, xz = logu(rng, 0.01, 0.2), int(rng.integers(-100, 100))
        per_channel = j % 2 == 1
        ws = [logu(rng, 0.002, 0.05) for _ in range(N if per_channel else 1)]
        xq = rand_q(rng, (M, K), "qint8")
        wq = rand_q(rng, (N, K), "qint8")
        b = (rng.standard_normal(N) * xs * ws[0] * 300).astype(F32) if j % 3 else None
        yf = dequant_ref(xq, xs, xz).astype(np.float64) @ (wq * np.array(ws)[:, None]).T + (0 if b is None else b)
        os_, oz = pick_out_qparams(yf, rng)
        linear_case("qint8_input_%d%s" % (j, "_pc" if per_channel else ""), M, K, N, xs, xz, xq, wq, ws,
                    [0] * len(ws), per_channel, b, (os_, oz - 128), j == 4, dtype="qint8")
    linear_case("qint8_input_relu", 3, 8, 5, 0.05, -20, rand_q(rng, (3, 8), "qint8"), rand_q(rng, (5, 8), "qint8"),
                [0.01], [0], False, np.linspace(-1, 1, 5).astype(F32), (0.02, -30), True, dtype="qint8")
    # qint8 activations with a non-zero weight zero point (XNNPACK wants symmetric weights).
    linear_case("qint8_input_wzp_nonzero", 2, 4, 3, 0.05, 0, rand_q(rng, (2, 4), "qint8"), rand_q(rng, (3, 4), "qint8"),
                [0.02], [3], False, None, (0.1, 0), False, dtype="qint8")

    # Per-channel weights quantized along axis 1 (the input features): rejected, but QNNPACK reads the scales
    # as if there were one per output feature, past the end of the 3 given, so the message varies between runs
    # (requantization scale 0, inf, garbage, or "length of scales must equal to channel"). Recorded by hand.
    x = qt(rand_q(rng, (2, 3)), 0.1, 5)
    w1 = torch.quantize_per_channel(torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float32),
                                    torch.tensor([0.01, 0.02, 0.03], dtype=torch.float64),
                                    torch.zeros(3, dtype=torch.int64), 1, torch.qint8)
    wm = rec_weight(w1)
    del wm["q"]
    fam.unsupported.append({"name": "per_channel_axis1", "op": "torch.ao.nn.quantized.Linear", "inputs": [rec_meta(x)],
                            "weight": wm, "params": {"relu": False, "in_features": 3, "out_features": 4},
                            "error": "varies between runs (reads uninitialized scales), e.g. 'failed to create op with "
                                     "requantization scale: 0: requantization scale must be finite and positive'"})

    gen_seed002(fam)
    return fam


def gen_seed002(fam):
    """Seed 002: Linear(2, 2, bias=False) quantized with MinMaxObserver (quint8 activations, qint8 weights),
    input torch.randn(1, 2) after torch.manual_seed(0). Both orders of creating the model and the input."""
    qconfig = QConfig(activation=MinMaxObserver.with_args(dtype=torch.quint8),
                      weight=MinMaxObserver.with_args(dtype=torch.qint8))
    for order in ("input_then_model", "model_then_input"):
        torch.manual_seed(0)
        if order == "input_then_model":
            xf = torch.randn(1, 2)
            lin = torch.nn.Linear(2, 2, bias=False)
        else:
            lin = torch.nn.Linear(2, 2, bias=False)
            xf = torch.randn(1, 2)
        model = torch.nn.Sequential(QuantStub(), lin, DeQuantStub())
        model.eval()
        model.qconfig = qconfig
        prepared = prepare(model)
        prepared(xf)
        qmodel = convert(prepared)
        qx = qmodel[0](xf)
        qlin = qmodel[1]
        w = qlin.weight()
        params = {"relu": False, "in_features": 2, "out_features": 2, "output_scale": float(qlin.scale),
                  "output_zero_point": int(qlin.zero_point),
                  "recipe": "torch.manual_seed(0); " + ("x = torch.randn(1, 2); m = nn.Linear(2, 2, bias=False)"
                                                        if order == "input_then_model" else
                                                        "m = nn.Linear(2, 2, bias=False); x = torch.randn(1, 2)")
                  + "; QConfig(MinMaxObserver(quint8), MinMaxObserver(qint8)); prepare, calibrate on x, convert",
                  "float_input": [float(v) for v in xf.flatten().tolist()],
                  "float_weight": [float(v) for v in lin.weight.detach().flatten().tolist()],
                  "float_output": [float(v) for v in lin(xf).detach().flatten().tolist()]}
        fam.add("seed002_" + order, "torch.ao.nn.quantized.Linear", lambda: qlin(qx), [qx], params, weight=w,
                bias=None, ref=linear_ref)


# --------------------------------------------------------------------------------------------
# conv2d.json

def pair(v):
    return list(v) if isinstance(v, (tuple, list)) else [v, v]


def conv_bias_and_output(rng, x, w, xs, ws, bias, out, stride, padding, dilation, groups):
    """A float bias comparable to the accumulated products (so it moves the outputs), or None; and unless given,
    output qparams that put the float result on about 150 to 400 steps (pick_out_qparams)."""
    cout, cg, kh, kw = w.shape
    bt = None
    if bias:
        mag = xs * float(np.mean(ws)) * 70.0 * math.sqrt(cg * kh * kw)
        bt = torch.tensor((rng.standard_normal(cout) * mag).astype(F32))
    if out is None:
        yf = F.conv2d(x.dequantize(), w.dequantize(), bt, stride, padding, dilation, groups).numpy()
        out = pick_out_qparams(yf, rng)
    return bt, out


def gen_conv2d():
    fam = Family("conv2d")
    rng = np.random.default_rng(2002)

    def conv_case(name, n, cin, cout, hw, k, stride=1, padding=0, dilation=1, groups=1, bias=True, relu=False,
                  per_channel=False, wz_nonzero=False, xs=None, xz=None, out=None, dtype="quint8", ws_fixed=None,
                  wmax=None, xr=None):
        k, stride, padding, dilation = pair(k), pair(stride), pair(padding), pair(dilation)
        xs = xs if xs is not None else logu(rng, 0.005, 0.3)
        xz = xz if xz is not None else ZPS[len(fam.cases) % len(ZPS)] - (128 if dtype == "qint8" else 0)
        xq = rand_q(rng, (n, cin) + tuple(hw), dtype)
        if xr is not None:  # inputs within xr of the zero point
            xq = np.clip(xz + rng.integers(-xr, xr + 1, xq.shape), *RANGE[dtype])
        wshape = (cout, cin // groups, k[0], k[1])
        wq = rand_q(rng, wshape, "qint8") if wmax is None else rng.integers(-wmax, wmax + 1, wshape)
        nsc = cout if per_channel else 1
        ws = [logu(rng, 0.002, 0.05) if ws_fixed is None else ws_fixed for _ in range(nsc)]
        wz = [int(v) for v in rng.integers(-6, 7, nsc)] if wz_nonzero else [0] * nsc
        x = qt(xq, xs, xz, dtype)
        w = qw(wq, ws, wz, per_channel)
        bt, (os_, oz) = conv_bias_and_output(rng, x, w, xs, ws, bias, out, stride, padding, dilation, groups)
        if dtype == "qint8":
            oz = int(oz) - 128
        cls = nniq.ConvReLU2d if relu else nnq.Conv2d
        opname = "torch.nn.intrinsic.quantized.ConvReLU2d" if relu else "torch.ao.nn.quantized.Conv2d"

        def fn():
            m = cls(cin, cout, k, stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias)
            m.set_weight_bias(w, bt)
            m.scale, m.zero_point = float(os_), int(oz)
            return m(x)

        params = {"in_channels": cin, "out_channels": cout, "kernel_size": k, "stride": stride, "padding": padding,
                  "dilation": dilation, "groups": groups, "padding_mode": "zeros", "relu": relu,
                  "output_scale": float(os_), "output_zero_point": int(oz)}
        return fam.add(name, opname, fn, [x], params, weight=w, bias=bt, ref=conv_ref)

    chans = [1, 3, 5, 8, 16, 17]
    sizes = [(7, 9), (5, 5), (1, 1), (13, 11), (6, 4), (9, 7)]
    kernels = [(1, 1), (3, 3), (5, 5), (2, 3)]
    strides = [1, 2, (2, 1)]
    pads = [0, 1, 2, (1, 0)]
    dils = [1, 2]
    i = 0
    # A round-robin grid over the options, groups = 1.
    for ci, cin in enumerate(chans):
        for co_i in range(3):
            cout = chans[(ci + 2 * co_i + 1) % len(chans)]
            for rep in range(2):
                k = kernels[(i + rep) % len(kernels)]
                hw = sizes[(i * 5 + rep) % len(sizes)]
                stride = strides[i % len(strides)]
                pad = pads[(i // 2) % len(pads)]
                dil = dils[(i // 3) % len(dils)]
                kk, pp, dd = pair(k), pair(pad), pair(dil)
                hw = (max(hw[0], dd[0] * (kk[0] - 1) + 1 - 2 * pp[0]), max(hw[1], dd[1] * (kk[1] - 1) + 1 - 2 * pp[1]))
                if cin * cout * kk[0] * kk[1] > 2500:
                    k, kk = (1, 1), [1, 1]
                n = 1 + (i % 4 == 3)
                bias = i % 3 != 2
                relu = i % 4 == 1
                pc = i % 3 == 0
                wzn = i % 5 == 4
                conv_case("grid_%d_n%d_c%d_o%d_%dx%d_k%dx%d_s%s_p%s_d%s%s%s%s%s" % (
                    i, n, cin, cout, hw[0], hw[1], kk[0], kk[1], "x".join(map(str, pair(stride))),
                    "x".join(map(str, pp)), "x".join(map(str, dd)), "_bias" if bias else "", "_relu" if relu else "",
                    "_pc" if pc else "", "_wzp" if wzn else ""),
                    n, cin, cout, hw, k, stride, pad, dil, 1, bias, relu, pc, wzn)
                i += 1

    # Grouped and depthwise convolutions (QNNPACK has dedicated depthwise kernels for 3x3 and 5x5).
    dw = [
        # (cin, cout, groups, hw, k, stride, pad, dil)
        (2, 2, 2, (7, 9), 3, 1, 1, 1), (4, 6, 2, (5, 5), 3, 2, 1, 1), (8, 4, 2, (7, 9), (2, 3), 1, 0, 1),
        (16, 16, 2, (6, 4), 1, 1, 0, 1), (6, 10, 2, (9, 7), 3, (2, 1), (1, 0), 2),
        (3, 3, 3, (7, 9), 3, 1, 1, 1), (8, 8, 8, (7, 9), 3, 2, 1, 1), (16, 16, 16, (5, 5), 3, 1, 1, 1),
        (17, 17, 17, (7, 9), 3, 1, 0, 1), (5, 5, 5, (13, 11), 5, 1, 2, 1), (8, 8, 8, (9, 7), 5, 2, 2, 1),
        (17, 17, 17, (6, 6), 5, 1, 2, 1), (16, 16, 16, (9, 7), 3, 1, 2, 2),
        (8, 8, 8, (7, 9), (2, 3), (2, 1), (1, 0), 1),
        (1, 1, 1, (5, 5), 3, 1, 1, 1), (8, 8, 8, (1, 1), 3, 1, 1, 1), (3, 6, 3, (7, 9), 3, 1, 1, 1),
        (8, 16, 8, (5, 5), 3, 2, 1, 1), (5, 10, 5, (13, 11), 5, 1, 2, 1), (17, 34, 17, (5, 5), 3, 1, 1, 1),
        (16, 32, 16, (6, 4), 1, 1, 0, 1), (4, 8, 4, (9, 7), 3, (2, 1), 2, 2),
    ]
    for j, (cin, cout, g, hw, k, s, p, d) in enumerate(dw):
        kind = "dw" if g == cin and cout == cin else ("dwx2" if g == cin else "g%d" % g)
        pc, relu, bias, n = j % 2 == 0, j % 3 == 1, j % 4 != 3, 1 + (j % 5 == 2)
        conv_case("%s_%d_n%d_c%d_o%d_%dx%d_k%s_s%s_p%s_d%s" % (
            kind, j, n, cin, cout, hw[0], hw[1], "x".join(map(str, pair(k))), "x".join(map(str, pair(s))),
            "x".join(map(str, pair(p))), "x".join(map(str, pair(d)))),
            n, cin, cout, hw, k, s, p, d, g, bias, relu, pc, j % 6 == 5)

    conv_case("k2x3_13x11", 1, 3, 5, (13, 11), (2, 3), stride=(2, 1), padding=(1, 0))
    conv_case("k2x3_dil2_pc", 2, 5, 3, (7, 9), (2, 3), dilation=2, padding=1, per_channel=True, relu=True)
    conv_case("k2x3_g_16", 1, 16, 16, (6, 4), (2, 3), groups=2, padding=(1, 0))

    # Saturating outputs, zero points 0 / 255, relu with output zero point 255.
    conv_case("saturate_oz0", 1, 3, 5, (5, 5), 3, padding=1, out=(0.01, 0))
    conv_case("saturate_oz255", 1, 3, 5, (5, 5), 3, padding=1, out=(0.01, 255))
    conv_case("relu_oz255", 1, 3, 5, (5, 5), 3, padding=1, relu=True, out=(0.05, 255))
    conv_case("relu_oz0", 2, 5, 3, (7, 9), (2, 3), stride=(2, 1), relu=True, out=(0.02, 0))
    conv_case("input_zp255", 1, 8, 8, (5, 5), 1, xz=255, xs=0.02)
    # Requantization scale 1/2 (power-of-two scales): many results on .5 exactly.
    conv_case("requant_ties", 1, 3, 4, (5, 5), 3, padding=1, xs=0.5, xz=128, bias=False, out=(2.0 ** -7, 128),
              ws_fixed=2.0 ** -7, wmax=3, xr=6)
    conv_case("requant_ties_dw", 1, 8, 8, (5, 5), 3, padding=1, groups=8, xs=0.25, xz=128, bias=False,
              out=(2.0 ** -8, 128), ws_fixed=2.0 ** -7, wmax=5, xr=8)
    conv_case("input_zp0", 1, 8, 8, (5, 5), 1, xz=0, xs=0.02)
    # qint8 activations (routed to XNNPACK).
    conv_case("qint8_input_3x3", 1, 3, 5, (7, 9), 3, padding=1, dtype="qint8")
    conv_case("qint8_input_pc", 1, 4, 4, (5, 5), 3, groups=4, per_channel=True, dtype="qint8")
    conv_case("qint8_input_wzp", 1, 3, 2, (5, 5), 3, wz_nonzero=True, dtype="qint8")

    # Rejected: 3-d input, reflect padding.
    x3 = qt(rand_q(rng, (3, 5, 5)), 0.1, 3)
    w3 = qw(rand_q(rng, (4, 3, 3, 3), "qint8"), [0.02], [0], False)

    def fn3():
        m = nnq.Conv2d(3, 4, 3)
        m.set_weight_bias(w3, None)
        return m(x3)
    fam.add("input_3d", "torch.ao.nn.quantized.Conv2d", fn3, [x3], {"in_channels": 3, "out_channels": 4,
            "kernel_size": [3, 3], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "groups": 1,
            "padding_mode": "zeros", "relu": False}, weight=w3, bias=None, ref=conv_ref)
    return fam


# --------------------------------------------------------------------------------------------
# elementwise.json

def gen_elementwise():
    fam = Family("elementwise")
    rng = np.random.default_rng(3003)

    def binary(name, opname, op, aq, as_, az, bq, bs, bz, os_, oz, relu, ref, dtype="quint8", quirk=None):
        a, b = qt(aq, as_, az, dtype), qt(bq, bs, bz, dtype)
        return fam.add(name, opname, lambda: op(a, b, float(os_), int(oz)), [a, b],
                       {"scale": float(os_), "zero_point": int(oz), "relu": relu}, ref=ref, quirk=quirk)

    ops = {("add", False): torch.ops.quantized.add, ("add", True): torch.ops.quantized.add_relu,
           ("mul", False): torch.ops.quantized.mul, ("mul", True): torch.ops.quantized.mul_relu}
    shapes = [(1, 3, 4, 5), (2, 17), (1, 70), (100,), (1, 8, 3, 3), (7,), (1, 1), (2, 3, 5, 7)]

    # add / add_relu, same shapes, quint8 (QNNPACK).
    for j in range(28):
        relu = j % 4 == 3
        shape = shapes[j % len(shapes)]
        as_ = logu(rng, 0.005, 0.5)
        bs = as_ * logu(rng, 1 / 8, 8)
        os_ = max(as_, bs) * logu(rng, 0.7, 4)
        az, bz = ZPS[j % len(ZPS)], ZPS[(j * 3 + 1) % len(ZPS)]
        oz = [0, 128, 255, 10, 200, 64, 128][j % 7] if not relu or j % 7 != 2 else 250
        binary("add%s_%d" % ("_relu" if relu else "", j), "torch.ops.quantized.add" + ("_relu" if relu else ""),
               ops[("add", relu)], rand_q(rng, shape), as_, az, rand_q(rng, shape), bs, bz, os_, oz, relu,
               add_qnnpack_ref)
    # Power-of-two scales put results exactly on .5: QNNPACK rounds those away from zero.
    for j in range(6):
        shape = (64,)
        as_ = 2.0 ** -int(rng.integers(2, 7))
        bs = as_ * 2.0 ** int(rng.integers(-2, 3))
        os_ = max(as_, bs) * 2.0 ** int(rng.integers(1, 3))
        binary("add_ties_%d" % j, "torch.ops.quantized.add", ops[("add", False)], rand_q(rng, shape), as_,
               ZPS[j], rand_q(rng, shape), bs, ZPS[j + 1], os_, [128, 0, 255, 77, 128, 1][j], False, add_qnnpack_ref)
    # Saturation and extreme in-range scale ratios (the valid range is [2^-10, 2^8) for the larger ratio).
    ratios = [(0.1, 0.1, 0.002, 128), (0.1, 0.05, 0.0004, 0), (1.0, 0.5, 0.00392, 255), (0.5, 0.001, 480.0, 128),
              (0.0625, 0.0625, 60.0, 3), (0.02, 3e-6, 0.03, 100)]
    for j, (as_, bs, os_, oz) in enumerate(ratios):
        binary("add_scale_ratio_%d" % j, "torch.ops.quantized.add", ops[("add", False)], rand_q(rng, (40,)), as_,
               ZPS[j], rand_q(rng, (40,)), bs, ZPS[j + 2], os_, oz, False, add_qnnpack_ref)
    # Broadcasting (generic float kernel).
    bshapes = [((2, 3, 4), (1, 3, 1)), ((4, 5), (5,)), ((2, 1, 4), (1, 3, 1)), ((1, 3, 2, 2), (1, 3, 1, 1)),
               ((3, 33), (1, 33)), ((5,), (1,))]
    for j, (sa, sb) in enumerate(bshapes):
        relu = j % 2 == 1
        as_, bs = logu(rng, 0.01, 0.2), logu(rng, 0.01, 0.2)
        os_ = max(as_, bs) * logu(rng, 0.8, 3)
        sfx = "_relu" if relu else ""
        binary("add%s_broadcast_%d" % (sfx, j), "torch.ops.quantized.add" + sfx, ops[("add", relu)],
               rand_q(rng, sa), as_, ZPS[j], rand_q(rng, sb), bs, ZPS[j + 2], os_, ZPS[j + 1], relu, add_float_ref)
    # Broadcasting with long rows: each row of the innermost coalesced dimension is split into whole blocks of
    # 64 (vector code, fma dequantize) and a scalar remainder.
    for j, (sa, sb) in enumerate([((2, 100), (1, 100)), ((2, 3, 70), (2, 3, 1)), ((130,), (1,)), ((3, 64), (3, 1))]):
        as_, bs = logu(rng, 0.01, 0.2), logu(rng, 0.01, 0.2)
        os_ = max(as_, bs) * logu(rng, 0.8, 3)
        binary("add_broadcast_long_%d" % j, "torch.ops.quantized.add", ops[("add", False)], rand_q(rng, sa), as_,
               ZPS[j + 3], rand_q(rng, sb), bs, ZPS[j + 1], os_, ZPS[j], False, add_float_ref)
    # qint8 (XNNPACK on this build): rounding half up, shift 20 - exponent.
    for j in range(8):
        relu = j % 3 == 2
        shape = shapes[j % len(shapes)]
        if j < 5:
            as_ = logu(rng, 0.005, 0.5)
            bs = as_ * logu(rng, 1 / 8, 8)
            os_ = max(as_, bs) * logu(rng, 0.7, 4)
        else:
            as_ = 2.0 ** -int(rng.integers(2, 7))
            bs, os_ = as_ * 2.0, as_ * 4.0
        binary("add%s_qint8_%d" % ("_relu" if relu else "", j), "torch.ops.quantized.add" + ("_relu" if relu else ""),
               ops[("add", relu)], rand_q(rng, shape, "qint8"), as_, ZPS[j] - 128, rand_q(rng, shape, "qint8"), bs,
               ZPS[(j + 1) % 8] - 128, os_, [0, -128, 127, 5, -60, 0, 30, -1][j], relu, add_xnnpack_ref, "qint8")

    # Rejected by QNNPACK / XNNPACK.
    rej = [("add_relu_oz255", ("add", True), 0.1, 0.1, 0.2, 255, "quint8"),
           ("add_ratio_2^8", ("add", False), 1.0, 1.0, 1 / 256, 0, "quint8"),
           ("add_ratio_below_2^-14", ("add", False), 1.0, 0.5, 2.0 ** 15, 0, "quint8"),
           ("add_b_ratio_below_2^-14", ("add", False), 1.0, 1e-6, 2.0, 0, "quint8"),
           ("add_relu_qint8_oz127", ("add", True), 0.1, 0.1, 0.2, 127, "qint8"),
           ("add_qint8_ratio_2^-11", ("add", False), 1.0, 1.0, 2.0 ** 11, 0, "qint8"),
           ("add_qint8_ratio_2^8", ("add", False), 1.0, 1.0, 2.0 ** -8, 0, "qint8")]
    for name, key, as_, bs, os_, oz, dt in rej:
        binary(name, "torch.ops.quantized.add" + ("_relu" if key[1] else ""), ops[key], rand_q(rng, (8,), dt), as_,
               0, rand_q(rng, (8,), dt), bs, 0, os_, oz, key[1], add_qnnpack_ref, dt)
    a, b = qt(rand_q(rng, (4,)), 0.1, 3), qt(rand_q(rng, (4,), "qint8"), 0.1, 3, "qint8")
    fam.add("add_mixed_dtypes", "torch.ops.quantized.add", lambda: torch.ops.quantized.add(a, b, 0.1, 0), [a, b],
            {"scale": 0.1, "zero_point": 0, "relu": False})
    # Larger scale ratio in [2^-14, 2^-10): accepted, but the shift is >= 32 (undefined behaviour in C).
    for j, (n, os_) in enumerate([(16, 2.0 ** 12), (7, 2.0 ** 11 * 1.5), (12, 2.0 ** 13)]):
        binary("add_ratio_ub_%d" % j, "torch.ops.quantized.add", ops[("add", False)], rand_q(rng, (n,)), 1.0, 128,
               rand_q(rng, (n,)), 1.0, 128, os_, 128, False, None,
               quirk="larger scale ratio in [2^-14, 2^-10): shift = 21 - exponent >= 32; output depends on position")

    # mul / mul_relu: same shapes and broadcasting, quint8 and qint8, power-of-two ties.
    for j in range(24):
        relu = j % 3 == 1
        dt = "qint8" if j % 4 == 3 else "quint8"
        if j < 16:
            sa = sb = shapes[j % len(shapes)]
        else:
            sa, sb = [((2, 3, 4), (1, 3, 1)), ((4, 5), (5,)), ((1, 3, 2, 2), (1, 3, 1, 1)), ((5,), (1,))][j % 4]
        if j % 5 == 4:
            as_, bs = 2.0 ** -int(rng.integers(2, 6)), 2.0 ** -int(rng.integers(2, 6))
            os_ = as_ * bs * 2.0 ** int(rng.integers(3, 8))
        else:
            as_, bs = logu(rng, 0.005, 0.3), logu(rng, 0.005, 0.3)
            os_ = as_ * bs * logu(rng, 8, 300)
        off = 128 if dt == "qint8" else 0
        binary("mul%s_%s_%d" % ("_relu" if relu else "", dt, j), "torch.ops.quantized.mul" + ("_relu" if relu else ""),
               ops[("mul", relu)], rand_q(rng, sa, dt), as_, ZPS[j % 8] - off, rand_q(rng, sb, dt), bs,
               ZPS[(j + 3) % 8] - off, os_, [128, 0, 255, 30, 200, 128][j % 6] - off, relu, mul_ref, dt)

    # add_scalar / mul_scalar: the op picks the output qparams.
    sops = {("add", False): torch.ops.quantized.add_scalar, ("add", True): torch.ops.quantized.add_scalar_relu,
            ("mul", False): torch.ops.quantized.mul_scalar, ("mul", True): torch.ops.quantized.mul_scalar_relu}
    xq = np.arange(256).reshape(4, 64)
    scal = [("add", 0.5, 0.1, 128), ("add", -0.5, 0.1, 128), ("add", 3.0, 0.1, 50), ("add", -3.0, 0.1, 200),
            ("add", 0.0, 0.05, 10), ("add", 1.234, 0.017, 0), ("add", -1.234, 0.017, 255), ("add", 100.0, 0.2, 128),
            ("mul", 2.0, 0.1, 128), ("mul", 0.37, 0.05, 20), ("mul", -1.5, 0.1, 100), ("mul", 0.0, 0.1, 128),
            ("mul", -0.25, 0.02, 0)]
    for j, (kind, v, s, z) in enumerate(scal):
        for relu in (False, True):
            dt = "qint8" if j in (2, 9) else "quint8"
            x = qt(xq - (128 if dt == "qint8" else 0), s, z - (128 if dt == "qint8" else 0), dt)
            op = sops[(kind, relu)]
            fam.add("%s_scalar%s_%d" % (kind, "_relu" if relu else "", j),
                    "torch.ops.quantized.%s_scalar%s" % (kind, "_relu" if relu else ""),
                    lambda op=op, x=x, v=v: op(x, v), [x], {"scalar": v, "relu": relu},
                    ref=add_scalar_ref if kind == "add" else mul_scalar_ref)

    # cat: dim 0 and 1, inputs with different qparams, output qparams given (or None: first input's).
    cats = [(0, [(2, 3), (1, 3), (3, 3)], True), (1, [(2, 3), (2, 1), (2, 5)], True),
            (0, [(1, 4, 2, 2), (2, 4, 2, 2)], True), (1, [(1, 3, 2, 2), (1, 5, 2, 2)], True),
            (1, [(2, 8), (2, 8)], False), (0, [(4,), (60,)], True),
            (1, [(1, 2, 3, 3), (1, 1, 3, 3), (1, 4, 3, 3)], True)]
    for j, (dim, shs, given) in enumerate(cats):
        xs = [qt(rand_q(rng, sh), logu(rng, 0.01, 0.5), ZPS[(j + t) % 8]) for t, sh in enumerate(shs)]
        if j == 4:  # identical qparams everywhere
            xs = [qt(rand_q(rng, sh), 0.1, 7) for sh in shs]
        os_, oz = (logu(rng, 0.01, 0.5), [0, 128, 255, 40, 0, 128, 99][j]) if given else (None, None)
        fam.add("cat_dim%d_%d" % (dim, j), "torch.ops.quantized.cat",
                lambda xs=xs, dim=dim, os_=os_, oz=oz: torch.ops.quantized.cat(xs, dim, os_, oz), xs,
                {"dim": dim, "scale": os_, "zero_point": oz}, ref=cat_ref)
    xs = [qt(rand_q(rng, (2, 3)), 0.1, 7), qt(rand_q(rng, (1, 3)), 0.3, 100)]
    fam.add("cat_no_qparams", "torch.ops.quantized.cat", lambda: torch.ops.quantized.cat(xs, 0, None, None), xs,
            {"dim": 0, "scale": None, "zero_point": None}, ref=cat_ref)
    xs = [qt(rand_q(rng, (2, 3), "qint8"), 0.1, -7, "qint8"), qt(rand_q(rng, (2, 2), "qint8"), 0.05, 10, "qint8")]
    fam.add("cat_qint8", "torch.ops.quantized.cat", lambda: torch.ops.quantized.cat(xs, 1, 0.07, 3), xs,
            {"dim": 1, "scale": 0.07, "zero_point": 3}, ref=cat_ref)
    xs = [qt(rand_q(rng, (2, 3)), 0.1, 7), qt(rand_q(rng, (1, 3), "qint8"), 0.1, 0, "qint8")]
    fam.add("cat_mixed_dtypes", "torch.ops.quantized.cat", lambda: torch.ops.quantized.cat(xs, 0, 0.1, 0), xs,
            {"dim": 0, "scale": 0.1, "zero_point": 0})
    return fam


# --------------------------------------------------------------------------------------------
# activations.json

def gen_activations():
    fam = Family("activations")
    rng = np.random.default_rng(4004)
    perm = rng.permutation(256).reshape(1, 4, 8, 8)  # every integer once, in NCHW order

    def x_of(s, z, dtype="quint8"):
        return qt(perm - (128 if dtype == "qint8" else 0), s, z, dtype)

    in_qp = [(0.019743409007787704, 0), (0.05, 128), (0.1, 255), (0.013, 77), (0.25, 200), (0.004, 30)]
    out_qp = [(0.05, 10), (0.02, 128), (0.1, 0), (0.0078125, 255), (0.03, 64), (0.2, 200)]

    def act(name, opname, fn, x, params, ref, expect=None):
        return fam.add(name, opname, lambda: fn(x), [x], params, ref=ref, expect_qparams=expect)

    for j, (s, z) in enumerate(in_qp):
        x = x_of(s, z)
        act("relu_%d" % j, "torch.nn.functional.relu", F.relu, x, {}, relu_ref)
        act("torch_relu_%d" % j, "torch.relu", torch.relu, x, {}, relu_ref)
        act("relu6_%d" % j, "torch.nn.functional.relu6", F.relu6, x, {"min_val": 0.0, "max_val": 6.0}, clamp_ref)
        act("ReLU6_module_%d" % j, "torch.ao.nn.quantized.ReLU6", nnq.ReLU6(), x, {"min_val": 0.0, "max_val": 6.0},
            clamp_ref)
    hts = [(0.0, 6.0), (-1.0, 1.0), (-0.5, 2.0), (-3.0, 3.0), (0.37, 0.91), (-10.0, 10.0), (0.0, 0.0), (1.0, 0.5)]
    for j, (lo, hi) in enumerate(hts):
        for t in (0, 1 + j % 5):
            s, z = in_qp[t]
            x = x_of(s, z)
            act("hardtanh_%g_%g_in%d" % (lo, hi, t), "torch.ao.nn.quantized.functional.hardtanh",
                lambda x, lo=lo, hi=hi: qF.hardtanh(x, lo, hi), x, {"min_val": lo, "max_val": hi}, clamp_ref)
    for j, (lo, hi) in enumerate([(-0.5, 2.0), (None, 1.5), (0.3, None), (-100.0, 100.0), (2.0, 1.0)]):
        s, z = in_qp[j + 1]
        x = x_of(s, z)
        act("clamp_%s_%s" % (lo, hi), "torch.clamp", lambda x, lo=lo, hi=hi: torch.clamp(x, lo, hi), x,
            {"min_val": lo, "max_val": hi}, clamp_ref)
    for j, (s, z) in enumerate(in_qp):
        x = x_of(s, z)
        os_, oz = out_qp[j]
        act("hardswish_%d" % j, "torch.ao.nn.quantized.Hardswish", nnq.Hardswish(os_, oz), x,
            {"scale": os_, "zero_point": oz}, hardswish_ref)
        act("sigmoid_%d" % j, "torch.sigmoid", torch.sigmoid, x, {}, sigmoid_ref, expect=(1 / 256, 0))
        act("hardsigmoid_%d" % j, "torch.nn.functional.hardsigmoid", F.hardsigmoid, x, {}, hardsigmoid_ref,
            expect=(1 / 256, 0))
        slope = [0.01, 0.1, 0.2, 0.5, 0.07, 1.5][j]
        m = nnq.LeakyReLU(os_, oz, slope)
        act("LeakyReLU_module_%d" % j, "torch.ao.nn.quantized.LeakyReLU", m, x,
            {"negative_slope": slope, "scale": os_, "zero_point": oz}, leaky_ref)
        act("leaky_relu_qF_%d" % j, "torch.ao.nn.quantized.functional.leaky_relu",
            lambda x, sl=slope, os_=os_, oz=oz: qF.leaky_relu(x, sl, scale=os_, zero_point=oz), x,
            {"negative_slope": slope, "scale": os_, "zero_point": oz}, leaky_ref)
        act("leaky_relu_F_%d" % j, "torch.nn.functional.leaky_relu", lambda x, sl=slope: F.leaky_relu(x, sl), x,
            {"negative_slope": slope}, leaky_ref)
        alpha = [1.0, 0.5, 2.0, 1.0, 0.1, 1.7][j]
        act("ELU_module_%d" % j, "torch.ao.nn.quantized.ELU", nnq.ELU(os_, oz, alpha), x,
            {"alpha": alpha, "scale": os_, "zero_point": oz}, elu_ref)
    # nnq.Sigmoid(output_scale, output_zero_point) calls quantized::sigmoid, which QNNPACK accepts only for (1/256, 0).
    for j, (os_, oz) in enumerate([(1 / 256, 0), (0.1, 3)]):
        x = x_of(0.05, 128)
        act("Sigmoid_module_%d" % j, "torch.ao.nn.quantized.Sigmoid", nnq.Sigmoid(os_, oz), x,
            {"scale": os_, "zero_point": oz}, sigmoid_ref)
    # Fewer than 64 elements: PyTorch's generic kernels run their scalar code on every element (the vector
    # code dequantizes with an fma, the scalar code with (q - zp) * scale). Chunks cover all 256 integers.
    for j, (s, z) in enumerate([(0.013, 77), (0.004, 30)]):
        os_, oz = out_qp[4 + j]
        for t in range(5):
            chunk = perm.ravel()[t * 63:(t + 1) * 63]
            xt = qt(chunk.reshape(1, 1, 7, 9) if chunk.size == 63 else chunk.reshape(1, 1, 1, -1), s, z)
            act("leaky_relu_F_scalar_%d_%d" % (j, t), "torch.nn.functional.leaky_relu",
                lambda x, sl=0.5: F.leaky_relu(x, sl), xt, {"negative_slope": 0.5}, leaky_ref)
            act("LeakyReLU_module_scalar_%d_%d" % (j, t), "torch.ao.nn.quantized.LeakyReLU",
                nnq.LeakyReLU(os_, oz, 1.5), xt, {"negative_slope": 1.5, "scale": os_, "zero_point": oz}, leaky_ref)
            act("ELU_module_scalar_%d_%d" % (j, t), "torch.ao.nn.quantized.ELU", nnq.ELU(os_, oz, 1.7), xt,
                {"alpha": 1.7, "scale": os_, "zero_point": oz}, elu_ref)
            act("hardsigmoid_scalar_%d_%d" % (j, t), "torch.nn.functional.hardsigmoid", F.hardsigmoid, xt, {},
                hardsigmoid_ref, expect=(1 / 256, 0))
    # 100 elements: the first 64 take the vector code, the last 36 the scalar code.
    x100 = qt(perm.ravel()[:100].reshape(1, 1, 10, 10), 0.013, 77)
    act("leaky_relu_F_mixed", "torch.nn.functional.leaky_relu", lambda x: F.leaky_relu(x, 0.5), x100,
        {"negative_slope": 0.5}, leaky_ref)
    act("hardsigmoid_mixed", "torch.nn.functional.hardsigmoid", F.hardsigmoid, x100, {}, hardsigmoid_ref,
        expect=(1 / 256, 0))
    # qint8 inputs take PyTorch's generic kernels (QNNPACK is quint8 only).
    for j, (s, z) in enumerate([(0.05, 0), (0.02, -100), (0.1, 90)]):
        x = x_of(s, z, "qint8")
        os_, oz = out_qp[j]
        act("relu_qint8_%d" % j, "torch.nn.functional.relu", F.relu, x, {}, relu_ref)
        act("hardtanh_qint8_%d" % j, "torch.ao.nn.quantized.functional.hardtanh",
            lambda x: qF.hardtanh(x, -1.0, 2.0), x, {"min_val": -1.0, "max_val": 2.0}, clamp_ref)
        act("hardswish_qint8_%d" % j, "torch.ao.nn.quantized.Hardswish", nnq.Hardswish(os_, oz - 128), x,
            {"scale": os_, "zero_point": oz - 128}, hardswish_ref)
        act("sigmoid_qint8_%d" % j, "torch.sigmoid", torch.sigmoid, x, {}, None)
        act("hardsigmoid_qint8_%d" % j, "torch.nn.functional.hardsigmoid", F.hardsigmoid, x, {}, hardsigmoid_ref,
            expect=(1 / 256, -128))
        act("LeakyReLU_qint8_%d" % j, "torch.ao.nn.quantized.LeakyReLU", nnq.LeakyReLU(os_, oz - 128, 0.1), x,
            {"negative_slope": 0.1, "scale": os_, "zero_point": oz - 128}, leaky_ref)
    return fam


# --------------------------------------------------------------------------------------------
# pooling.json

def gen_pooling():
    fam = Family("pooling")
    rng = np.random.default_rng(5005)

    def pin(shape, s=None, z=None):
        s = s if s is not None else logu(rng, 0.01, 0.5)
        z = z if z is not None else ZPS[len(fam.cases) % 8]
        return qt(rand_q(rng, shape), s, z)

    maxp = [  # (shape, kernel, stride, padding, dilation, ceil)
        ((1, 3, 7, 9), 2, 2, 0, 1, False), ((1, 3, 7, 9), 2, 2, 0, 1, True), ((2, 8, 5, 5), 3, 1, 1, 1, False),
        ((1, 17, 6, 6), 3, 2, 1, 1, False), ((1, 17, 6, 6), 3, 2, 1, 1, True),
        ((1, 1, 13, 11), (2, 3), (2, 1), (1, 0), 1, False),
        ((1, 5, 9, 9), 3, 2, 1, 2, False), ((1, 5, 9, 9), 3, 2, 1, 2, True), ((2, 4, 8, 8), 2, 1, 1, 1, False),
        ((1, 16, 5, 7), (3, 2), (1, 2), (1, 1), (2, 1), True), ((1, 3, 1, 1), 1, 1, 0, 1, False),
        ((1, 2, 4, 4), 4, 4, 2, 1, False),
        ((1, 1, 1, 12), (1, 3), 1, (0, 1), (1, 2), False), ((1, 1, 1, 12), (1, 3), 1, (0, 1), (1, 2), True),
        ((1, 3, 9, 9), 5, 1, 2, 2, False), ((2, 4, 7, 8), (2, 3), (1, 2), (1, 1), (3, 2), False),
    ]
    for j, (shape, k, s, p, d, ceil) in enumerate(maxp):
        x = pin(shape)
        k, s, p, d = pair(k), pair(s), pair(p), pair(d)
        fam.add("max_pool2d_%d" % j, "torch.nn.functional.max_pool2d",
                lambda x=x, k=k, s=s, p=p, d=d, c=ceil: F.max_pool2d(x, k, s, p, d, c), [x],
                {"kernel_size": k, "stride": s, "padding": p, "dilation": d, "ceil_mode": ceil}, ref=maxpool_ref)

    avgp = [  # (shape, kernel, stride, padding, ceil, count_include_pad, divisor_override)
        ((1, 3, 7, 9), 2, 2, 0, False, True, None), ((1, 3, 7, 9), 3, 2, 1, False, True, None),
        ((1, 3, 7, 9), 3, 2, 1, False, False, None), ((1, 3, 7, 9), 3, 2, 1, False, True, 5),
        ((2, 8, 5, 5), 3, 1, 1, False, True, None), ((1, 17, 6, 6), (2, 3), (2, 1), (1, 0), False, True, None),
        ((1, 4, 13, 11), 5, 3, 2, False, False, 7), ((1, 1, 7, 9), 3, 2, 1, False, False, None),
        ((1, 3, 7, 9), 3, 2, 1, True, True, None), ((1, 3, 7, 9), 3, 2, 1, True, False, None),
        ((1, 3, 7, 9), 3, 2, 1, True, True, 4), ((2, 5, 6, 8), 2, 2, 0, True, True, None),
        ((1, 8, 9, 9), 4, 3, 2, True, False, None), ((1, 1, 7, 9), 3, 2, 1, True, False, None),
        ((1, 1, 7, 9), 2, 2, 1, True, True, None), ((1, 16, 5, 7), (3, 2), (1, 2), (1, 1), True, True, None),
        ((1, 3, 7, 9), 1, 1, 0, False, True, None), ((1, 2, 4, 4), 1, 2, 0, True, True, None),
    ]
    for j, (shape, k, s, p, ceil, cip, div) in enumerate(avgp):
        x = pin(shape, z=[128, 0, 255, 77, 31, 3][j % 6])
        k, s, p = pair(k), pair(s), pair(p)
        fam.add("avg_pool2d_%d" % j, "torch.nn.functional.avg_pool2d",
                lambda x=x, k=k, s=s, p=p, c=ceil, i=cip, dv=div: F.avg_pool2d(x, k, s, p, c, i, dv), [x],
                {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil, "count_include_pad": cip,
                 "divisor_override": div}, ref=avgpool_ref)
    # Inputs built to land on .5 exactly, to show the rounding of each path.
    ties = [((1, 4, 4, 4), 2, 2, 0, False, True), ((1, 4, 4, 4), 2, 2, 0, True, True),
            ((1, 1, 4, 4), 2, 2, 0, True, True), ((1, 4, 6, 6), (2, 1), (2, 1), 0, False, True)]
    for j, (shape, k, s, p, ceil, cip) in enumerate(ties):
        base = rng.integers(0, 2, shape) + 2 * rng.integers(40, 80, shape)
        x = qt(base, 0.1, [128, 77, 31, 200][j])
        k, s, p = pair(k), pair(s), pair(p)
        fam.add("avg_pool2d_ties_%d" % j, "torch.nn.functional.avg_pool2d",
                lambda x=x, k=k, s=s, p=p, c=ceil, i=cip: F.avg_pool2d(x, k, s, p, c, i, None), [x],
                {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil, "count_include_pad": cip,
                 "divisor_override": None}, ref=avgpool_ref)

    adap = [((1, 3, 6, 6), (3, 3)), ((1, 3, 6, 6), (1, 1)), ((2, 8, 8, 4), (4, 2)), ((1, 3, 7, 9), (3, 4)),
            ((1, 3, 7, 9), (1, 1)), ((1, 17, 5, 5), (2, 2)), ((1, 1, 7, 9), (3, 4)), ((1, 1, 6, 6), (3, 2)),
            ((2, 4, 13, 11), (5, 3)), ((1, 3, 5, 5), (7, 7)), ((1, 3, 6, 6), (6, 6)), ((1, 5, 1, 1), (1, 1)),
            ((1, 16, 4, 6), (1, 1)), ((1, 3, 10, 10), (4, 4))]
    for j, (shape, osz) in enumerate(adap):
        x = pin(shape, z=[128, 0, 255, 77, 31, 3, 201][j % 7])
        fam.add("adaptive_avg_pool2d_%d" % j, "torch.nn.functional.adaptive_avg_pool2d",
                lambda x=x, o=osz: F.adaptive_avg_pool2d(x, o), [x], {"output_size": list(osz)}, ref=adaptive_ref)

    for j, shape in enumerate([(1, 3, 7, 9), (2, 8, 5, 5), (1, 17, 1, 1), (1, 1, 13, 11), (1, 16, 4, 4), (2, 5, 6, 6),
                               (1, 3, 2, 3)]):
        x = pin(shape, z=[128, 0, 255, 77, 31, 3, 200][j])
        fam.add("mean_hw_keepdim_%d" % j, "torch.mean", lambda x=x: torch.mean(x, (2, 3), keepdim=True), [x],
                {"dim": [2, 3], "keepdim": True}, ref=mean_ref)
    x = pin((2, 3, 4, 5), z=100)
    fam.add("mean_hw_no_keepdim", "torch.mean", lambda: torch.mean(x, (2, 3), keepdim=False), [x],
            {"dim": [2, 3], "keepdim": False}, ref=lambda c: mean_ref(c).reshape(2, 3))
    for j, (shape, dims, kd) in enumerate([((2, 3, 4, 5), (3,), True), ((1, 4, 3, 7), (3,), False),
                                           ((1, 3, 5, 5), (1, 2, 3), True), ((2, 2, 3, 9), (3,), True)]):
        x2 = pin(shape, z=[100, 201, 7, 128][j])
        fam.add("mean_inner_%s_%d" % ("_".join(map(str, dims)), j), "torch.mean",
                lambda x2=x2, dims=dims, kd=kd: torch.mean(x2, dims, keepdim=kd), [x2],
                {"dim": list(dims), "keepdim": kd}, ref=mean_inner_ref)
    for j, (shape, dims) in enumerate([((2, 3, 4, 5), (1,)), ((1, 4, 3, 5), (2,)), ((2, 3, 4, 5), (1, 3))]):
        x2 = pin(shape, z=[100, 30, 250][j])  # generic: dequantize, float mean, quantize (not closed form here)
        fam.add("mean_generic_%s_%d" % ("_".join(map(str, dims)), j), "torch.mean",
                lambda x2=x2, dims=dims: torch.mean(x2, dims, keepdim=True), [x2], {"dim": list(dims), "keepdim": True})

    x3 = qt(rand_q(rng, (3, 6, 6)), 0.1, 3)
    for nm, f in [("max_pool2d", lambda: F.max_pool2d(x3, 2)), ("avg_pool2d", lambda: F.avg_pool2d(x3, 2)),
                  ("adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(x3, (3, 3)))]:
        fam.add(nm + "_input_3d", "torch.nn.functional." + nm, f, [x3],
                {"kernel_size": [2, 2]} if "adaptive" not in nm else {"output_size": [3, 3]})
    x4 = qt(rand_q(rng, (1, 2, 5, 5)), 0.1, 3)
    fam.add("max_pool2d_1x1", "torch.nn.functional.max_pool2d", lambda: F.max_pool2d(x4, 1), [x4],
            {"kernel_size": [1, 1], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "ceil_mode": False},
            ref=maxpool_ref)
    x5 = qt(rand_q(rng, (1, 2, 5, 5), "qint8"), 0.1, 3, "qint8")
    fam.add("max_pool2d_qint8", "torch.nn.functional.max_pool2d", lambda: F.max_pool2d(x5, 2), [x5],
            {"kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1], "ceil_mode": False},
            ref=maxpool_ref)
    return fam


# --------------------------------------------------------------------------------------------

def main():
    rows = []
    total_bad = 0
    for gen in (gen_linear, gen_conv2d, gen_elementwise, gen_activations, gen_pooling):
        fam = gen()
        size = fam.write()
        rows.append((fam.name + ".json", size, len(fam.cases), len(fam.unsupported), len(fam.quirks), fam.checked,
                     len(fam.mismatch), fam.unchecked))
        total_bad += len(fam.mismatch)
        if fam.mismatch:
            print("%s: reference disagrees on %s" % (fam.name, fam.mismatch[:20]))
    print("%-18s %9s %6s %12s %7s %8s %9s %10s" % ("file", "bytes", "cases", "unsupported", "quirks", "checked",
                                                  "mismatch", "unchecked"))
    for r in rows:
        print("%-18s %9d %6d %12d %7d %8d %9d %10d" % r)
    print("every call ran twice with identical results; engine %s, cpu capability %s"
          % (torch.backends.quantized.engine, cpu_capability()))
    return 0 if total_bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
