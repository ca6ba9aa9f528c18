// ONNX Runtime's com.microsoft QLinearAveragePool, QLinearGlobalAveragePool and QLinearSoftmax (CPU kernels,
// NCHW), for files with ONNX semantics: the operators ORT's QDQ transformer makes of DequantizeLinear ->
// (Global)AveragePool / Softmax -> QuantizeLinear, which quantize_static writes (docs/quantize-static.md).
// They run on the host; they are small.
//
// - QLinearAveragePool (contrib_ops/cpu/quantization/qlinear_pool.cc): every input dequantized to float32
//   (x_scale * (x - x_zero_point)), summed in window order in float32, divided by the window size
//   (the clipped window unless count_include_pad), then y = saturate(nearbyint(sum / y_scale + y_zero_point)).
//   The zero point is added in float32 before rounding, so an int8 group and the same group converted to
//   uint8 (zero points + 128, as ORT's QDQS8ToU8Transformer does; qdq.js does it too) can round differently.
//   A kernel covering the whole unpadded image is the global pool below.
// - QLinearGlobalAveragePool (mlas/lib/qlgavgpool.cpp): integer sum minus x_zero_point * N, times
//   scale = x_scale / (y_scale * N) (float32), rounded half to even, + y_zero_point, saturated. ORT rejects a
//   scale outside [2^-32, 256).
// - QLinearSoftmax (contrib_ops/cpu/quantization/qlinear_softmax.cc): a float32 table
//   t[i] = exp((i - 255 + shift) * x_scale), shift = max(0, ln(FLT_MAX / D) - 5) / x_scale, indexed by
//   x - max(x) + 255; sum in float32 in order; y = nearbyint(t * floor(1 / y_scale) / sum) + y_zero_point,
//   saturated (the source read clamps only above 255, so int8 would wrap; onnxruntime-web 1.30 saturates).
import { UnsupportedError, host, toHost } from './kernels.js';
import { ModelFormatError } from './onnx.js';
import { roundHalfEven } from './ort-tables.js';

const f = Math.fround;

function range(data) {
  return data instanceof Int8Array ? [-128, 127, Int8Array] : [0, 255, Uint8Array];
}

function globalPool(data, dims, xs, xz, ys, yz, where) {
  const [qmin, qmax, Arr] = range(data);
  const n = dims.slice(2).reduce((a, b) => a * b, 1);
  const scale = f(f(xs) / f(f(ys) * n));
  if (!(scale >= 2 ** -32 && scale < 256)) throw new UnsupportedError(`${where}: x_scale / (y_scale * ${n}) = ${scale} is outside ONNX Runtime's range [2^-32, 256)`);
  const planes = data.length / n;
  const out = new Arr(planes);
  for (let p = 0; p < planes; p++) {
    let acc = -xz * n;
    for (let i = p * n; i < (p + 1) * n; i++) acc += data[i];
    out[p] = Math.min(qmax, Math.max(qmin, roundHalfEven(f(acc * scale)) + yz));
  }
  return { dims: [...dims.slice(0, 2), ...dims.slice(2).map(() => 1)], data: out };
}

function outputSize(inSize, k, stride, padHead, padTail, ceil) {
  const span = (inSize + padHead + padTail - k) / stride + 1;
  if (!ceil) return Math.floor(span);
  let out = Math.ceil(span);
  if ((out - 1) * stride >= inSize + padHead) out--; // the last window may not start in the tail padding
  return out;
}

/** QLinearGlobalAveragePool on host data { data: Uint8Array | Int8Array, dims } (NCHW). */
export function ortGlobalAveragePool(x, xs, xz, ys, yz, where) {
  return globalPool(x.data, x.dims, xs, xz, ys, yz, where);
}

/** QLinearAveragePool (2-D, NCHW) on host data. */
export function ortAveragePool(x, xs, xz, ys, yz, attrs, where) {
  const { data, dims } = x;
  if (dims.length !== 4) throw new UnsupportedError(`${where}: only 2-D pooling (a 4-D input) is supported`);
  if (attrs.auto_pad && attrs.auto_pad !== 'NOTSET') throw new UnsupportedError(`${where}: auto_pad ${attrs.auto_pad} is not supported; use explicit pads`);
  if ((attrs.dilations ?? [1, 1]).some((d) => d !== 1)) throw new UnsupportedError(`${where}: dilations are not supported`);
  const k = attrs.kernel_shape;
  if (!k || k.length !== 2) throw new ModelFormatError(`${where}: kernel_shape must have two values`);
  const strides = attrs.strides ?? [1, 1];
  const pads = attrs.pads ?? [0, 0, 0, 0];
  const [nb, c, h, w] = dims;
  if (k[0] === h && k[1] === w && pads.every((p) => p === 0)) return globalPool(data, dims, xs, xz, ys, yz, where); // as ORT does
  const ceil = !!attrs.ceil_mode;
  const includePad = !!attrs.count_include_pad;
  const oh = outputSize(h, k[0], strides[0], pads[0], pads[2], ceil);
  const ow = outputSize(w, k[1], strides[1], pads[1], pads[3], ceil);
  const [qmin, qmax, Arr] = range(data);
  const sx = f(xs), sy = f(ys);
  const deq = new Float32Array(256);
  const off = data instanceof Int8Array ? 128 : 0;
  for (let b = 0; b < 256; b++) deq[b] = f(sx * (b - off - xz));
  const out = new Arr(nb * c * oh * ow);
  for (let p = 0; p < nb * c; p++) {
    const base = p * h * w;
    for (let ph = 0; ph < oh; ph++) {
      let hs = ph * strides[0] - pads[0];
      const he = Math.min(hs + k[0], h);
      hs = Math.max(hs, 0);
      for (let pw = 0; pw < ow; pw++) {
        let ws = pw * strides[1] - pads[1];
        const we = Math.min(ws + k[1], w);
        ws = Math.max(ws, 0);
        let sum = 0;
        for (let y = hs; y < he; y++) for (let xx = ws; xx < we; xx++) sum = f(sum + deq[data[base + y * w + xx] + off]);
        const count = includePad ? k[0] * k[1] : (he - hs) * (we - ws);
        const avg = f(sum / count);
        out[(p * oh + ph) * ow + pw] = Math.min(qmax, Math.max(qmin, roundHalfEven(f(f(avg / sy) + yz))));
      }
    }
  }
  return { dims: [nb, c, oh, ow], data: out };
}

const FLT_MAX = 3.4028234663852886e38;

function softmaxTable(xScale, reduceLen, signed) {
  let shift = Math.log(FLT_MAX / reduceLen);
  shift = Math.max(0, shift - 5) / xScale;
  const table = new Float32Array(256);
  for (let i = 0; i < 256; i++) table[signed ? (i - 128) & 255 : i] = Math.exp((i - 255 + shift) * xScale);
  return table;
}

/** QLinearSoftmax kernel: inputs [x, x_scale, x_zero_point, y_scale, y_zero_point], attributes axis, opset. */
export function qlinearSoftmax(ctx, [x, xs, , ys, yz], attrs) {
  const hx = toHost(x);
  const signed = hx.dtype === 'int8';
  if (!signed && hx.dtype !== 'uint8') throw new ModelFormatError(`QLinearSoftmax node "${ctx.node.name}": expected uint8 or int8 data, got ${hx.dtype}`);
  const dims = hx.dims;
  const rank = dims.length;
  const opset = attrs.opset ?? 13;
  const axis0 = attrs.axis ?? (opset < 13 ? 1 : -1);
  const axis = axis0 < 0 ? axis0 + rank : axis0;
  const numel = (d) => d.reduce((a, b) => a * b, 1);
  // rows of D elements, `inner` apart: opset < 13 flattens from the axis; opset 13 reduces along it alone
  const [D, inner] = opset < 13 ? [numel(dims.slice(axis)), 1] : [dims[axis], numel(dims.slice(axis + 1))];
  const table = softmaxTable(Number(toHost(xs).data[0]), D, signed);
  const yScale = f(Math.floor(f(1 / f(Number(toHost(ys).data[0])))));
  const yzp = yz ? Number(toHost(yz).data[0]) : 0;
  const out = signed ? new Int8Array(hx.data.length) : new Uint8Array(hx.data.length);
  const [qmin, qmax] = signed ? [-128, 127] : [0, 255];
  const rows = hx.data.length / D;
  for (let r = 0; r < rows; r++) {
    const base = Math.floor(r / inner) * D * inner + (r % inner);
    let xmax = -Infinity;
    for (let j = 0; j < D; j++) xmax = Math.max(xmax, hx.data[base + j * inner]);
    const index = (v) => (signed ? (127 - xmax + v) & 255 : 255 - xmax + v);
    let sum = 0;
    for (let j = 0; j < D; j++) sum = f(sum + table[index(hx.data[base + j * inner])]);
    if (sum === 0) continue; // ORT returns early, leaving the output as it was
    for (let j = 0; j < D; j++) {
      const q = roundHalfEven(f(f(table[index(hx.data[base + j * inner])] * yScale) / sum)) + yzp;
      out[base + j * inner] = Math.min(qmax, Math.max(qmin, q));
    }
  }
  return [host(hx.dtype, dims.slice(), out)];
}

/**
 * Float AveragePool (2-D, NCHW) as ONNX Runtime's CPU kernel computes it (mlas/lib/pooling.cpp, MlasPool): the
 * summation order is the kernel's, so the float results are bit-identical. Kernel choice as in MlasPool:
 * - global (kernel = image, stride 1, no pads): four running lane sums (lane k takes x[k], x[k+4], ...), reduced
 *   as (l0 + l2) + (l1 + l3), then the remaining elements in order, divided by the image size;
 * - vector (stride along the width <= 2, kernel dims <= 32): per output row, column sums top to bottom over the
 *   rows in the image, then per output the kernel-width columns left to right (padding columns are zeros);
 * - otherwise generic: rows then columns of the clipped window.
 * The divisor is the clipped window size, or the kernel size with count_include_pad.
 * An int8 DQ -> AveragePool -> Q group that onnxruntime-web leaves unfused runs here (qdq.js: its int8 -> uint8
 * pair rewrite changed one side of the group only).
 */
export function floatAveragePool(ctx, [x], attrs) {
  const where = `AveragePool node "${ctx.node.name}"`;
  const hx = toHost(x);
  if (hx.dtype !== 'float32') throw new ModelFormatError(`${where}: expected float32 data, got ${hx.dtype}`);
  if (hx.dims.length !== 4) throw new UnsupportedError(`${where}: only 2-D pooling (a 4-D input) is supported`);
  if (attrs.auto_pad && attrs.auto_pad !== 'NOTSET') throw new UnsupportedError(`${where}: auto_pad ${attrs.auto_pad} is not supported; use explicit pads`);
  if ((attrs.dilations ?? [1, 1]).some((d) => d !== 1)) throw new UnsupportedError(`${where}: dilations are not supported`);
  if (attrs.ceil_mode) throw new UnsupportedError(`${where}: ceil_mode is not supported for float AveragePool`);
  const [kh, kw] = attrs.kernel_shape;
  const [sh, sw] = attrs.strides ?? [1, 1];
  const p = attrs.pads ?? [0, 0, 0, 0];
  const [nb, c, h, w] = hx.dims;
  const x32 = hx.data;
  const oh = outputSize(h, kh, sh, p[0], p[2], false);
  const ow = outputSize(w, kw, sw, p[1], p[3], false);
  const out = new Float32Array(nb * c * oh * ow);
  const includePad = !!attrs.count_include_pad;
  const plane = h * w;
  if (kh === h && kw === w && sh === 1 && sw === 1 && p.every((v) => v === 0)) {
    for (let q = 0; q < nb * c; q++) {
      const lanes = [0, 0, 0, 0];
      let i = q * plane;
      const end = i + plane;
      for (; i + 4 <= end; i += 4) for (let k = 0; k < 4; k++) lanes[k] = f(lanes[k] + x32[i + k]);
      let sum = f(f(lanes[0] + lanes[2]) + f(lanes[1] + lanes[3]));
      for (; i < end; i++) sum = f(sum + x32[i]);
      out[q] = f(sum / plane);
    }
  } else if (sw <= 2 && kh <= 32 && kw <= 32) {
    const cols = new Float32Array(p[1] + w + p[3] + kw + 4); // padding columns stay 0
    for (let q = 0; q < nb * c; q++) {
      for (let i = 0; i < oh; i++) {
        const h0 = Math.max(i * sh - p[0], 0);
        const h1 = Math.min(i * sh - p[0] + kh, h);
        for (let col = 0; col < w; col++) {
          let m = x32[q * plane + h0 * w + col];
          for (let r = h0 + 1; r < h1; r++) m = f(m + x32[q * plane + r * w + col]);
          cols[p[1] + col] = m;
        }
        for (let j = 0; j < ow; j++) {
          const s = j * sw;
          let m = cols[s];
          for (let t = 1; t < kw; t++) m = f(m + cols[s + t]);
          const d = includePad ? kh * kw : Math.max((Math.min(s + kw, p[1] + w) - Math.max(s, p[1])) * (h1 - h0), 1);
          out[(q * oh + i) * ow + j] = f(m / d);
        }
      }
    }
  } else {
    for (let q = 0; q < nb * c; q++) {
      for (let i = 0; i < oh; i++) {
        const h0 = Math.max(i * sh - p[0], 0);
        const h1 = Math.min(i * sh - p[0] + kh, h);
        for (let j = 0; j < ow; j++) {
          const w0 = Math.max(j * sw - p[1], 0);
          const w1 = Math.min(j * sw - p[1] + kw, w);
          let m = 0;
          for (let r = h0; r < h1; r++) for (let col = w0; col < w1; col++) m = f(m + x32[q * plane + r * w + col]);
          out[(q * oh + i) * ow + j] = f(m / (includePad ? kh * kw : (h1 - h0) * (w1 - w0)));
        }
      }
    }
  }
  return [host('float32', [nb, c, oh, ow], out)];
}
