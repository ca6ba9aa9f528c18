"""What qwasm computes for an exported file, in numpy: the reference interpreter of docs/exporter.md.

run_reference(model, feeds) runs a file written by the exporter under the semantics profile its metadata names
(qwasm.semantics) and returns every tensor. export() compares it with PyTorch's own values bit for bit before it
writes a file, so this module is also the executable form of the profiles: every rule here is the one qwasm's
kernels implement (js/semantics.js, docs/quantization.md, docs/pytorch2.md), each checked there against the
PyTorch build it names. All float arithmetic is float32 unless stated; rint rounds half to even.
"""
import math

import numpy as np
import onnx
from onnx import numpy_helper

F32 = np.float32
INT32_FLOAT_MAX = F32(2147483520.0)  # the largest float32 below 2^31

# Per profile, the form of each family of operations (js/semantics.js PROFILES).
PROFILES = {
    # Debian's torch 1.13 (no FBGEMM): QNNPACK, quantize x * (1 / s) rounded then the zero point added
    "pytorch-qnnpack": dict(rounding="torch", requant="qnnpack", add="qnnpack", pool="qnnpack", tail="torch"),
    # torch 2.x's qnnpack engine in an x86 build with FBGEMM: QNNPACK, but FBGEMM's quantize and scalar tails
    "pytorch2-qnnpack": dict(rounding="fbgemm", requant="qnnpack", add="qnnpack", pool="qnnpack", tail="fbgemm"),
    # torch 2.x's fbgemm and x86 engines: FBGEMM (and oneDNN for the x86 engine's symmetric convolutions)
    "pytorch-fbgemm": dict(rounding="fbgemm", requant="fbgemm", add="float", pool="generic", tail="fbgemm"),
    "pytorch-x86": dict(rounding="fbgemm", requant="x86", add="float", pool="generic", tail="fbgemm"),
}

# ATen's vector width (channels) of the channels-last pooling loops, by CPU dispatch level.
VECTOR_WIDTH = {"AVX512": 16, "AVX2": 8, "DEFAULT": 0}

# Elements of PyTorch's generic kernels' vector blocks (cpu_kernel_vec: two AVX2 vectors of 32 bytes).
VECTOR_BLOCK = 64


def rint(x):
    return np.rint(x)


def fma32(a, b, c):
    """float32 fma(a, b, c), elementwise: a * b is exact in double, the double sum is rounded to odd where it is
    inexact (TwoSum gives the error), then to float32: one correct rounding."""
    a, b, c = (np.asarray(v, dtype=F32).astype(np.float64) for v in (a, b, c))
    a, b, c = np.broadcast_arrays(a, b, c)
    p = a * b
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)
    bits = s.view(np.uint64).copy()
    fix = (e != 0) & ((bits & np.uint64(1)) == 0) & np.isfinite(s)
    away = (e > 0) == (s > 0)  # the exact value lies further from zero than s
    bits[fix & away] += np.uint64(1)
    bits[fix & ~away] -= np.uint64(1)
    return bits.view(np.float64).astype(F32)


def quantize(x, s, z, rounding, lo=0, hi=255):
    """QuantizeLinear under the profile's rounding: 'torch' clamp(zp + rint(x * (1.0f / s))) (zero point added in
    float32); 'fbgemm' (FBGEMM's 8-bit per-tensor quantize) clamp(rint(fma(x, 1.0f / s, zp))), NaN and +Inf to the
    top, -Inf to the bottom."""
    x = np.asarray(x, dtype=F32)
    inv = F32(1.0) / F32(s)
    if rounding == "torch":
        with np.errstate(invalid="ignore", over="ignore"):
            y = F32(z) + rint((x * inv).astype(F32))
        y = np.where(np.isnan(y), z, y)
        return np.clip(y, lo, hi).astype(np.int64)
    t = fma32(x, inv, z)
    t = np.where(np.isnan(t) | (t > INT32_FLOAT_MAX), INT32_FLOAT_MAX, t)
    return np.clip(rint(t), lo, hi).astype(np.int64)


def quantize_scalar_fbgemm(x, s, z, lo=0, hi=255):
    """FBGEMM's scalar Quantize (PyTorch 2.x's quantize_val on x86): clamp(rint((float)zp + (float)(x * (1/s))))."""
    inv = F32(1.0) / F32(s)
    t = (F32(z) + (np.asarray(x, dtype=F32) * inv).astype(F32)).astype(F32)
    return np.clip(rint(t), lo, hi).astype(np.int64)


def dequantize(q, s, z):
    """(float)(q - zp) * scale."""
    return (np.asarray(q, dtype=np.int64) - int(z)).astype(F32) * F32(s)


# ---------------------------------------------------------------------------------------------------------
# Convolution and linear

def _cols(xc, kh, kw, sh, sw, pads, dh, dw, oh, ow):
    n, c = xc.shape[:2]
    pt, pl, pb, pr = pads
    xp = np.pad(xc, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
    return cols


def conv_acc(xc, wc, strides, pads, dil, group):
    """Exact integer convolution sums of zero-point-free inputs and weights (float64 holds them exactly)."""
    n, c, h, w = xc.shape
    o, cg, kh, kw = wc.shape
    (sh, sw), (dh, dw) = strides, dil
    oh = (h + pads[0] + pads[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (w + pads[1] + pads[3] - dw * (kw - 1) - 1) // sw + 1
    cols = _cols(xc.astype(np.float64), kh, kw, sh, sw, pads, dh, dw, oh, ow)
    og = o // group
    acc = np.empty((n, o, oh * ow), dtype=np.float64)
    for g in range(group):
        cg_cols = cols[:, g * cg:(g + 1) * cg].reshape(n, cg * kh * kw, oh * ow)
        wg = wc[g * og:(g + 1) * og].reshape(og, cg * kh * kw).astype(np.float64)
        acc[:, g * og:(g + 1) * og] = np.einsum("ok,nkp->nop", wg, cg_cols, optimize=True)
    return acc.reshape(n, o, oh, ow).astype(np.int64)


def fbgemm_depthwise(x_shape, w_shape, strides, pads, dil, group):
    """FBGEMM's depthwise fast path (FbgemmConv.cc takeDepthWiseFastPath)."""
    cin, cout, (kh, kw) = x_shape[1], w_shape[0], w_shape[2:]
    return (group == cin and cout in (group, 2 * group) and group % 8 == 0 and kh == kw and kh in (3, 5, 7)
            and strides[0] in (1, 2) and strides[1] in (1, 2) and list(dil) == [1, 1]
            and pads[0] == pads[2] == (kh - 1) // 2 and pads[1] == pads[3] == (kw - 1) // 2)


def depthwise_acc_fbgemm(xq, xz, wq, wz, strides, pads):
    """The depthwise fast path's sums: raw uint8 inputs times raw int8 weights, the taps of each output taken in
    row-major pairs (0, 1), (2, 3), ... (the last alone) and each pair added in saturating int16 (vpmaddubsw),
    padding reading the input zero point; then - x_zp * (sum w - w_zp * taps) - w_zp * sum x."""
    n, cin, h, w = xq.shape
    cout, _, kh, kw = wq.shape
    (sh, sw), (ph, pw) = strides, pads[:2]
    xp = np.pad(xq.astype(np.int64), ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=int(xz))
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    acc = np.zeros((n, cout, oh, ow), dtype=np.int64)
    rowsum = np.zeros_like(acc)
    wz = np.broadcast_to(np.asarray(wz, dtype=np.int64), (cout,))
    for co in range(cout):
        ci = co // (cout // cin)
        prods = []
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, ci, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
                prods.append(patch * int(wq[co, 0, i, j]))
                rowsum[:, co] += patch
        for t in range(0, len(prods), 2):
            pair = prods[t] + (prods[t + 1] if t + 1 < len(prods) else 0)
            acc[:, co] += np.clip(pair, -32768, 32767)
    wsum = wq.reshape(cout, -1).astype(np.int64).sum(1)
    return acc - (int(xz) * (wsum - wz * kh * kw)).reshape(1, -1, 1, 1) - rowsum * wz.reshape(1, -1, 1, 1)


def requant_qnnpack(acc, ws, xs, ys, yz, axis):
    """QNNPACK: rint((float)acc * ((float)w_scale * (float)x_scale * (1.0f / y_scale))) + yz (the int32 bias is in
    acc), clamped to 0..255."""
    mult = (np.atleast_1d(np.asarray(ws, dtype=F32)) * F32(xs)) * (F32(1.0) / F32(ys))
    shape = [1] * acc.ndim
    shape[axis] = -1
    mult = np.broadcast_to(mult, (acc.shape[axis],)).astype(F32)
    y = rint(acc.astype(F32) * mult.reshape(shape)).astype(np.int64) + int(yz)
    return np.clip(y, 0, 255).astype(np.uint8)


def fbgemm_bias(bias, ws, xs, per_channel):
    """FBGEMM's float bias in accumulator units: bias * (float)(1.0 / (double)(x_s * w_s)) per tensor (one weight
    scale), bias / (x_s * w_s) per channel."""
    atws = (F32(xs) * np.atleast_1d(np.asarray(ws, dtype=F32))).astype(F32)
    b = np.asarray(bias, dtype=F32)
    if not per_channel:
        return (b * F32(1.0 / np.float64(atws[0]))).astype(F32)
    return (b / np.broadcast_to(atws, b.shape)).astype(F32)


def requant_fbgemm(acc, ws, xs, bias, ys, yz, axis):
    """FBGEMM's requantization (QuantUtilsAvx2.cc requantizeOutputProcessingAvx2): v = ((float)acc + bias') *
    ((x_s * w_s) / y_s); rint + yz, clamped; |v| >= 2^31 or NaN gives the lowest output."""
    n = acc.shape[axis]
    shape = [1] * acc.ndim
    shape[axis] = -1
    wsf = np.broadcast_to(np.atleast_1d(np.asarray(ws, dtype=F32)), (n,))
    mult = ((F32(xs) * wsf).astype(F32) / F32(ys)).astype(F32)
    v = acc.astype(F32)
    if bias is not None:
        v = (v + fbgemm_bias(bias, ws, xs, np.size(ws) > 1).reshape(shape)).astype(F32)
    v = (v * mult.reshape(shape)).astype(F32)
    overflow = ~(np.abs(v) < 2.0 ** 31)
    y = np.clip(rint(np.where(overflow, 0, v)).astype(np.int64) + int(yz), 0, 255)
    y[overflow] = 0
    return y.astype(np.uint8)


def requant_onednn(acc, ws, xs, bias, ys, yz):
    """oneDNN's int8 convolution as PyTorch's x86 engine calls it: S = 1 / (float)(1 / x_s), D likewise for y_s;
    v = ((float)acc * S) * w_s[c] + bias[c]; y = clamp(rint(v * (1 / D) + zp))."""
    n = acc.shape[1]
    shp = [1, -1] + [1] * (acc.ndim - 2)
    s = F32(1) / F32(1.0 / np.float64(xs))
    w = np.broadcast_to(np.atleast_1d(np.asarray(ws, dtype=F32)), (n,))
    v = ((acc.astype(F32) * s).astype(F32) * w.reshape(shp)).astype(F32)
    if bias is not None:
        v = (v + np.asarray(bias, dtype=F32).reshape(shp)).astype(F32)
    d = F32(1) / F32(1.0 / np.float64(ys))
    v = (v * (F32(1) / d)).astype(F32)
    return np.clip(rint((v + F32(yz)).astype(F32)), 0, 255).astype(np.uint8)


def x86_conv_onednn(wz, group):
    """PyTorch's x86 engine sends a convolution to oneDNN when every weight zero point is 0 and groups <= 100 (on
    AVX512-VNNI hosts); FBGEMM otherwise."""
    return bool(np.all(np.asarray(wz) == 0)) and group <= 100


# ---------------------------------------------------------------------------------------------------------
# Elementwise

def add_qnnpack(a, az, as_, b, bz, bs, ys, yz):
    """QNNPACK's fixed-point add (quint8, same shapes)."""
    a_os = F32(F32(as_) / F32(ys))
    b_os = F32(F32(bs) / F32(ys))
    exp = ((int(np.array(max(a_os, b_os), dtype=F32).view(np.uint32)) >> 23) & 0xFF) - 127
    shift = 21 - exp
    mult = np.array((shift + 127) << 23, dtype=np.uint32).view(F32)
    am, bm = int(rint(a_os * mult)), int(rint(b_os * mult))
    acc = a.astype(np.int64) * am + b.astype(np.int64) * bm - (am * int(az) + bm * int(bz))
    acc = ((acc + 2 ** 31) % 2 ** 32) - 2 ** 31
    mask = (1 << shift) - 1
    rem = (acc & mask) - (acc < 0)
    y = (acc >> shift) + (rem > (mask >> 1)) + int(yz)
    return np.clip(y, 0, 255).astype(np.uint8)


def innermost_run(shape, a_shape, b_shape):
    """Length of the innermost dimension PyTorch's TensorIterator loops over for a broadcast of a and b to `shape`
    (row-major operands): size-1 dimensions dropped, neighbours merged while every operand stays contiguous."""
    rank = len(shape)

    def strides_of(src):
        s = [1] * (rank - len(src)) + list(src)
        st, acc = [0] * rank, 1
        for k in range(rank - 1, -1, -1):
            st[k] = 0 if s[k] == 1 else acc
            acc *= s[k]
        return st
    full, acc = [0] * rank, 1
    for k in range(rank - 1, -1, -1):
        full[k] = acc
        acc *= shape[k]
    ops = [full, strides_of(a_shape), strides_of(b_shape)]
    dims = []
    for k in range(rank):
        if shape[k] == 1:
            continue
        if dims and all(st[dims[-1][0]] == st[k] * shape[k] for st in ops):
            dims[-1] = [k, dims[-1][1] * shape[k]]
        else:
            dims.append([k, shape[k]])
    return dims[-1][1] if dims else 1


def add_float_paths(qa, az, as_, qb, bz, bs, ys, yz, relu, tail):
    """PyTorch's generic quantized add of each pair (qa, qb) by its two code paths: (vector, tail). The vector
    blocks dequantize with fma(s, q, s * -zp) and quantize zp + rint(x * (1/s)); the tail dequantizes (q - zp) * s
    and quantizes by the profile's tail rule ('torch' as the blocks; 'fbgemm': the zero point added first)."""
    qa, qb = np.asarray(qa, dtype=np.int64), np.asarray(qb, dtype=np.int64)
    az, bz, yz = int(az), int(bz), int(yz)
    dv = (fma32(as_, qa, F32(F32(as_) * F32(-az))) + fma32(bs, qb, F32(F32(bs) * F32(-bz)))).astype(F32)
    dt = (dequantize(qa, as_, az) + dequantize(qb, bs, bz)).astype(F32)
    if relu:
        dv, dt = np.maximum(dv, F32(0)), np.maximum(dt, F32(0))
    yv = quantize(dv, ys, yz, "torch")
    yt = quantize(dt, ys, yz, "torch") if tail == "torch" else quantize_scalar_fbgemm(dt, ys, yz)
    return yv, yt


def add_float(a, az, as_, b, bz, bs, ys, yz, relu, tail):
    """PyTorch's generic quantized add with its positions: whole blocks of 64 along the innermost run (row-major
    operands) take the vector path, the rest the tail (add_float_paths)."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    inner = innermost_run(shape, a.shape, b.shape)
    pos = np.arange(int(np.prod(shape))).reshape(shape)
    vec = (pos % inner) < (inner // VECTOR_BLOCK * VECTOR_BLOCK)
    yv, yt = add_float_paths(np.broadcast_to(a, shape), az, as_, np.broadcast_to(b, shape), bz, bs, ys, yz, relu, tail)
    return np.where(vec, yv, yt).astype(np.uint8)


def mul_pytorch(a, az, as_, b, bz, bs, ys, yz):
    """Every PyTorch engine: zp + rint((float)((a - za)(b - zb)) * ((a_s * b_s) * (1 / y_s)))."""
    aq, bq = np.broadcast_arrays(a.astype(np.int64) - int(az), b.astype(np.int64) - int(bz))
    m = (F32(as_) * F32(bs)) * (F32(1.0) / F32(ys))
    return np.clip(rint((aq * bq).astype(F32) * m) + int(yz), 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------------------------------------
# Pooling

def out_size(n, k, s, p, d, ceil):
    eff = d * (k - 1) + 1
    o = (n + 2 * p - eff + ((s - 1) if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def maxpool(q, k, s, pads, dil, ceil, clamp_to_edge):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = k, s, pads[:2], dil
    n, c, h, w = q.shape
    oh, ow = out_size(h, kh, sh, ph, dh, ceil), out_size(w, kw, sw, pw, dw, ceil)
    y = np.full((n, c, oh, ow), -1, dtype=np.int64)
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, t = i * sh - ph + a * dh, j * sw - pw + b * dw
                    if clamp_to_edge:  # QNNPACK clamps window positions to the edge
                        r, t = min(max(r, 0), h - 1), min(max(t, 0), w - 1)
                    if 0 <= r < h and 0 <= t < w:
                        y[:, :, i, j] = np.maximum(y[:, :, i, j], q[:, :, r, t])
    return y.astype(np.uint8)


def pool_formula(form, acc, raw, d, zp, vector, xs=None, ys=None, taps=None):
    """One output of PyTorch's average pooling kernels from the window's sums: acc = sum(q - zp), raw = sum(q)
    (int64 arrays), d the divisor; vector: whether the channel is in a channels-last vector loop. Forms:
      qnnpack         zp + rint((float)acc * (s / (s * taps)))              (QNNPACK; d = taps)
      nchw            rint((float)acc * (1 / d) + zp)                       (generic, NCHW)
      nhwc_113        zp + rint((float)acc * (1 / d))                       (1.13's channels-last kernel)
      nhwc            vector: zp + rint((float)acc * m); scalar: rint(zp + (float)acc * (1 / (1 / m))), m = 1 / d
      adaptive_nchw   rint((float)raw * (1 / d))                            (2.x generic adaptive, NCHW)
      adaptive_nhwc   vector: rint(fma((float)acc, 1 / (1 / m), zp)); scalar as nhwc
      mean            rint((float)raw / d)                                  (qmean_inner_dim)"""
    a = acc.astype(F32)
    m = (F32(1.0) / F32(d)).astype(F32) if np.ndim(d) else F32(F32(1.0) / F32(d))
    if form == "qnnpack":
        mult = F32(F32(xs) / (F32(ys) * F32(taps)))
        return rint(a * mult) + zp
    if form == "nchw":
        return rint((a * m).astype(F32) + F32(zp))
    if form == "nhwc_113":
        return rint((a * m).astype(F32)) + zp
    if form == "adaptive_nchw":
        return rint((raw.astype(F32) * m).astype(F32))
    if form == "mean":
        return rint((raw.astype(F32) / F32(d)).astype(F32))
    inv = (F32(1.0) / (F32(1.0) / m).astype(F32)).astype(F32)
    scalar = rint((F32(zp) + (a * inv).astype(F32)).astype(F32))
    if form == "nhwc":
        vec = rint((a * m).astype(F32)) + zp
    elif form == "adaptive_nhwc":
        vec = rint(fma32(a, inv, zp))
    else:
        raise ValueError(form)
    return np.where(vector, vec, scalar)


def avgpool(q, xz, k, s, pads, ceil, count_include_pad, form, vector_channels, xs=None, ys=None):
    """Average pooling with PyTorch's windows and divisor (count_include_pad; ceil_mode windows must start inside
    the input or the left padding), rounded by pool_formula(form)."""
    (kh, kw), (sh, sw), (ph, pw) = k, s, pads[:2]
    n, c, h, w = q.shape
    oh, ow = out_size(h, kh, sh, ph, 1, ceil), out_size(w, kw, sw, pw, 1, ceil)
    y = np.zeros((n, c, oh, ow), dtype=np.int64)
    qi = q.astype(np.int64)
    vector = (np.arange(c) < vector_channels).reshape(1, c)
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * sh - ph, j * sw - pw
            he, we = min(hs + kh, h + ph), min(ws + kw, w + pw)
            hs0, ws0, he0, we0 = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
            raw = qi[:, :, hs0:he0, ws0:we0].sum(axis=(2, 3))
            valid = (he0 - hs0) * (we0 - ws0)
            acc = raw - valid * int(xz)
            if form == "qnnpack":
                y[:, :, i, j] = pool_formula(form, acc, raw, kh * kw, int(xz), vector, xs, ys, kh * kw)
                continue
            d = (he - hs) * (we - ws) if count_include_pad else valid
            y[:, :, i, j] = pool_formula(form, acc, raw, d, int(xz), vector)
    return np.clip(y, 0, 255).astype(np.uint8)


def global_pool(q, xz, form, vector_channels, xs=None, ys=None):
    n, c, h, w = q.shape
    raw = q.astype(np.int64).sum(axis=(2, 3), keepdims=True)
    acc = raw - h * w * int(xz)
    vector = (np.arange(c) < vector_channels).reshape(1, c, 1, 1)
    y = pool_formula(form, acc, raw, h * w, int(xz), vector, xs, ys, h * w)
    return np.clip(y, 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------------------------------------
# Dynamic linear and the float operators around it

def choose_qparams_dynamic(mn, mx, qmin=0, qmax=255):
    """ATen's ChooseQuantizationParams as PyTorch's dynamic linear calls it (js/reference.js chooseQParamsDynamic)."""
    mn, mx = min(F32(mn), F32(0)), max(F32(mx), F32(0))
    scale = (float(mx) - float(mn)) / (qmax - qmin)
    if F32(scale) == 0 or math.isinf(F32(1) / F32(scale)):
        scale = 0.1
    if scale < 6.1e-5:
        org, scale = scale, 6.1e-5
        if mn == 0:
            mx = F32(6.1e-5 * (qmax - qmin))
        elif mx == 0:
            mn = F32(-6.1e-5 * (qmax - qmin))
        else:
            amp = F32(6.1e-5 / org)
            mn, mx = F32(mn * amp), F32(mx * amp)
    zp_min, zp_max = qmin - float(mn) / scale, qmax - float(mx) / scale
    err_min, err_max = abs(qmin) - abs(float(mn) / scale), abs(qmax) - abs(float(mx) / scale)
    zp = zp_min if err_min < err_max else zp_max
    return float(F32(scale)), (qmin if zp < qmin else qmax if zp > qmax else int(rint(zp)))


def dynamic_matmul(x, b, bs, bz, bias, form, rounding):
    """com.microsoft DynamicQuantizeMatMul (B [K, N]) under PyTorch's dynamic linear forms: 'qnnpack' ([0, 255],
    (float)acc * m + bias) and 'fbgemm' ([0, 127], FBGEMM's quantize, fma((float)acc, m, bias))."""
    x = np.asarray(x, dtype=F32)
    xs, xz = choose_qparams_dynamic(x.min() if x.size else 0, x.max() if x.size else 0, 0,
                                    127 if form == "fbgemm" else 255)
    xq = quantize(x, xs, xz, "fbgemm" if form == "fbgemm" else rounding)
    n = b.shape[1]
    bc = b.astype(np.int64) - np.broadcast_to(np.asarray(bz, dtype=np.int64), (n,))[None, :]
    acc = (xq.reshape(-1, x.shape[-1]) - xz) @ bc
    mult = (F32(xs) * np.broadcast_to(np.asarray(bs, dtype=F32), (n,))).astype(F32)
    if bias is None:
        y = (acc.astype(F32) * mult).astype(F32)
    elif form == "fbgemm":
        y = fma32(acc.astype(F32), mult[None, :], np.asarray(bias, dtype=F32)[None, :])
    else:
        y = ((acc.astype(F32) * mult).astype(F32) + np.asarray(bias, dtype=F32)).astype(F32)
    return y.reshape(list(x.shape[:-1]) + [n])


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)).astype(F32)


def layer_norm(x, scale, bias, axis, eps):
    axes = tuple(range(axis % x.ndim, x.ndim))
    xd = x.astype(np.float64)
    mean = xd.mean(axis=axes, keepdims=True)
    var = ((xd - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (xd - mean) / np.sqrt(var + eps) * scale + (bias if bias is not None else 0)
    return y.astype(F32)


def softmax(x, axis):
    e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(F32)


FLOAT_COMPUTE = {"LayerNormalization", "Erf", "Softmax", "MatMul", "Tanh", "Relu", "Add", "Sub", "Mul", "Div"}


# ---------------------------------------------------------------------------------------------------------
# The interpreter

def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def metadata(model):
    return {p.key: p.value for p in model.metadata_props}


def run_reference(model, feeds):
    """Run an exported model on numpy inputs; return {tensor name: numpy array} for every tensor."""
    meta = metadata(model)
    form = PROFILES[meta.get("qwasm.semantics", "pytorch-qnnpack")]
    vw = VECTOR_WIDTH.get(meta.get("qwasm.torch_cpu_capability", "AVX512").upper(), 16)
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update({k: np.asarray(v) if np.asarray(v).dtype.kind == "i" else np.asarray(v, dtype=F32)
                for k, v in feeds.items()})
    for nd in model.graph.node:
        a = _attrs(nd)
        x = [env[i] if i else None for i in nd.input]
        op = nd.op_type
        if op == "QuantizeLinear":
            y = quantize(x[0], x[1], x[2], form["rounding"]).astype(np.uint8)
        elif op == "DequantizeLinear":
            y = dequantize(x[0], x[1], x[2])
        elif op in ("QLinearConv", "QGemm"):
            if op == "QLinearConv":
                xq, xs, xz, w, ws, wz, ys, yz = x[:8]
                bias = x[8] if len(x) > 8 else None
                pads, strides, dil, group = a["pads"], a["strides"], a["dilations"], a["group"]
            else:
                xq, xs, xz, w, ws, wz, bias, ys, yz = x
                assert a.get("transB") == 1 and a.get("transA", 0) == 0 and a.get("alpha", 1.0) == 1.0
            requant = form["requant"]
            if requant == "x86":
                requant = "onednn" if op == "QLinearConv" and x86_conv_onednn(wz, group) else "fbgemm"
            if op == "QLinearConv":
                if requant == "fbgemm" and fbgemm_depthwise(xq.shape, w.shape, strides, pads, dil, group):
                    acc = depthwise_acc_fbgemm(xq, xz, w, wz, strides, pads)
                else:
                    wc = w.astype(np.int64) - np.asarray(wz, dtype=np.int64).reshape(-1, 1, 1, 1)
                    acc = conv_acc(xq.astype(np.int64) - int(xz), wc, strides, pads, dil, group)
                axis = 1
            else:
                wc = w.astype(np.int64) - np.asarray(wz, dtype=np.int64).reshape(-1, 1)
                acc = (xq.astype(np.int64) - int(xz)) @ wc.T
                axis = acc.ndim - 1
            if requant == "qnnpack":
                if bias is not None:
                    shape = [1] * acc.ndim
                    shape[axis] = -1
                    acc = acc + bias.astype(np.int64).reshape(shape)
                y = requant_qnnpack(acc, ws, xs, ys, yz, axis)
            elif requant == "fbgemm":
                y = requant_fbgemm(acc, ws, xs, bias, ys, yz, axis)
            else:
                y = requant_onednn(acc, ws, xs, bias, ys, yz)
        elif op == "Clip":
            y = np.clip(x[0], x[1], x[2])
        elif op == "QLinearAdd":
            qa, as_, az, qb, bs, bz, ys, yz = x
            if form["add"] == "qnnpack" and qa.shape == qb.shape:
                y = add_qnnpack(qa, az, as_, qb, bz, bs, ys, yz)
            else:
                y = add_float(qa, az, as_, qb, bz, bs, ys, yz, False, form["tail"])
        elif op == "QLinearMul":
            y = mul_pytorch(x[0], x[2], x[1], x[3], x[5], x[4], x[6], x[7])
        elif op == "QLinearConcat":
            ys, yz = x[0], x[1]
            parts = [quantize(dequantize(x[i], x[i + 1], x[i + 2]), ys, yz, form["rounding"]).astype(np.uint8)
                     for i in range(2, len(x), 3)]
            y = np.concatenate(parts, axis=a["axis"])
        elif op == "MaxPool":
            ceil = a.get("ceil_mode", 0)
            y = maxpool(x[0], a["kernel_shape"], a["strides"], a["pads"], a.get("dilations", [1, 1]), ceil,
                        form["pool"] == "qnnpack" and not ceil)
        elif op in ("QLinearAveragePool", "QLinearGlobalAveragePool"):
            cl = a.get("channels_last", 0)
            xq = x[0].transpose(0, 3, 1, 2) if cl else x[0]
            _, c, h, w = xq.shape
            generic = form["pool"] == "generic" or a.get("ceil_mode", 0)
            fb = form["tail"] == "fbgemm"
            nhwc_kernel = cl or c == 1 or h * w == 1
            vch = (c // vw * vw) if (vw and fb) else 0
            if op == "QLinearGlobalAveragePool":
                if not generic:
                    pf = "qnnpack"
                elif cl:
                    pf = "adaptive_nhwc" if fb else "adaptive_nhwc_113"
                else:
                    pf = "mean"
                if pf == "adaptive_nhwc_113":  # 1.13: zp + rint(acc * (1 / n))
                    pf = "nhwc_113"
                y = global_pool(xq, x[2], pf, vch, x[1], x[3])
            else:
                if not generic:
                    pf = "qnnpack"
                elif nhwc_kernel:
                    pf = "nhwc" if fb else "nhwc_113"
                else:
                    pf = "nchw"
                y = avgpool(xq, x[2], a["kernel_shape"], a["strides"], a["pads"], a.get("ceil_mode", 0),
                            a.get("count_include_pad", 0), pf, vch, x[1], x[3])
            y = np.ascontiguousarray(y.transpose(0, 2, 3, 1)) if cl else y
        elif op == "Cast":
            assert a["to"] == onnx.TensorProto.INT32
            y = x[0].astype(np.int32)
        elif op == "Gather":
            y = np.take(x[0], x[1], axis=a.get("axis", 0))
        elif op == "Flatten":
            ax = a.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)
        elif op == "Reshape":
            y = x[0].reshape([int(v) for v in x[1]])
        elif op == "Transpose":
            y = np.ascontiguousarray(x[0].transpose(a["perm"]))
        elif op == "Identity":
            y = x[0]
        elif op == "Concat":
            y = np.concatenate(x, axis=a["axis"])
        elif op == "DynamicQuantizeMatMul":
            dyn = "fbgemm" if form["requant"] in ("fbgemm", "x86") else "qnnpack"
            y = dynamic_matmul(x[0], x[1], x[2], x[3] if len(x) > 3 and x[3] is not None else 0,
                               x[4] if len(x) > 4 else None, dyn, form["rounding"])
        elif op in ("Add", "Sub", "Mul", "Div"):
            f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op]
            y = f(x[0].astype(F32), x[1].astype(F32)).astype(F32)
        elif op == "MatMul":
            y = np.matmul(x[0].astype(np.float64), x[1].astype(np.float64)).astype(F32)
        elif op == "Softmax":
            y = softmax(x[0], a.get("axis", -1))
        elif op == "LayerNormalization":
            y = layer_norm(x[0], x[1], x[2] if len(x) > 2 else None, a.get("axis", -1), a.get("epsilon", 1e-5))
        elif op == "Erf":
            y = _erf(x[0])
        elif op == "Tanh":
            y = np.tanh(x[0].astype(np.float64)).astype(F32)
        elif op == "Relu":
            y = np.maximum(x[0], F32(0))
        elif op == "Split":
            sizes = np.cumsum(x[1])[:-1]
            for name, part in zip(nd.output, np.split(x[0], sizes, axis=a["axis"])):
                env[name] = np.ascontiguousarray(part)
            continue
        else:
            raise NotImplementedError(op)
        env[nd.output[0]] = y
    return env
