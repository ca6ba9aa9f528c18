// The float operators of CNNs, with ONNX Runtime's arithmetic where it decides the bits (MLAS's summation orders
// and formulas, checked against onnxruntime-web in tests/js/model-float.test.js): Conv (in wasm), pooling,
// BatchNormalization and the activations. Elementwise arithmetic is in elementwise.js, MatMul, Gemm and Softmax
// in transformer.js.
// MaxPool, Clip and Relu also take 8-bit data (a QDQ graph's integer Clip / ReLU, a MaxPool between Q/DQ pairs).
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { clamp } from '../../ops/elementwise.js';
import { maxPool2d } from '../../ops/pooling.js';
import { conv2dFloat, packConv2dFloat } from '../../ops/conv-float.js';
import { mlasLogistic } from '../../ops/mlas.js';
import { checkBytes } from '../../tensor/check.js';
import { ARRAY, dimsOf, dtypeOf, floatData, host, numel, qvalue, scalar, toHost, toQ } from '../values.js';
import { A } from './attributes.js';

const f = Math.fround;
const where = (node) => `${node.opType} node "${node.name}"`;

// ---- window geometry (Conv, MaxPool, AveragePool) -------------------------------------------------

const WINDOW_ATTRIBUTES = {
  auto_pad: A.string('NOTSET', ['NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID']),
  dilations: A.ints([1, 1], (v) => v.every((d) => d >= 1)),
  kernel_shape: A.ints(undefined, (v) => v.every((k) => k >= 1)),
  pads: A.ints([0, 0, 0, 0], (v) => v.every((p) => p >= 0)),
  strides: A.ints([1, 1], (v) => v.every((s) => s >= 1)),
};

/** The 2-D window attributes checked once: two strides and dilations, four pads. */
function window2d(attrs, label) {
  for (const [name, n] of [['strides', 2], ['dilations', 2], ['pads', 4], ['kernel_shape', 2]]) {
    if (attrs[name] !== undefined && attrs[name].length !== n) {
      throw new UnsupportedError(`${label}: only 2-D windows are supported (${name} [${attrs[name]}])`);
    }
  }
  return attrs;
}

/**
 * The [top, left, bottom, right] pads of a 2-D window op over an input of spatial size [h, w], from
 * explicit pads or auto_pad (ONNX: SAME_* gives ceil(in / stride) outputs, the odd pad at the end for
 * SAME_UPPER, at the beginning for SAME_LOWER; VALID none).
 */
function windowPads(attrs, kernel, [h, w]) {
  const { auto_pad: autoPad, strides: stride, dilations: dilation } = attrs;
  if (autoPad === 'VALID') return [0, 0, 0, 0];
  if (autoPad === 'NOTSET') return attrs.pads.slice();
  const begin = [];
  const end = [];
  [h, w].forEach((size, i) => {
    const out = Math.ceil(size / stride[i]);
    const total = Math.max(0, (out - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - size);
    const small = Math.floor(total / 2);
    begin.push(autoPad === 'SAME_UPPER' ? small : total - small);
    end.push(autoPad === 'SAME_UPPER' ? total - small : small);
  });
  return [begin[0], begin[1], end[0], end[1]];
}

/**
 * The geometry of a float pooling over NCHW x: kernel, strides, dilations, pads and output size
 * (ONNX: floor, or ceil with ceil_mode, of (in + pads - dilated kernel) / stride + 1, a last window
 * that would start in the end padding dropped).
 */
function poolGeometry(x, attrs, w) {
  const dims = dimsOf(x);
  if (dims.length !== 4) throw new UnsupportedError(`${w}: only 2-D pooling of [N, C, H, W] is supported, got shape [${dims}]`);
  const { kernel_shape: kernel, strides: stride, dilations: dilation } = attrs;
  const pads = windowPads(attrs, kernel, dims.slice(2));
  const out = [0, 1].map((i) => {
    const size = dims[2 + i];
    const span = size + pads[i] + pads[i + 2] - ((kernel[i] - 1) * dilation[i] + 1);
    if (span < 0) throw new ModelFormatError(`${w}: the window (kernel ${kernel[i]}, dilation ${dilation[i]}) does not fit the padded input size ${size} along axis ${2 + i}`);
    let o = (attrs.ceil_mode ? Math.ceil(span / stride[i]) : Math.floor(span / stride[i])) + 1;
    if (attrs.ceil_mode && (o - 1) * stride[i] >= size + pads[i]) o--;
    return o;
  });
  checkBytes(dims[0] * dims[1] * out[0] * out[1], 4, w, `the output of shape [${[dims[0], dims[1], ...out]}]`);
  return { dims, kernel, stride, dilation, pads, out };
}

/** Float pooling: reduce(window values) per output, over NCHW data. */
function poolFloat(x, g, init, step, finish) {
  const [n, c, h, wd] = g.dims;
  const [oh, ow] = g.out;
  const d = toHost(x).data;
  const y = new Float32Array(n * c * oh * ow);
  let o = 0;
  for (let plane = 0; plane < n * c; plane++) {
    const base = plane * h * wd;
    for (let oy = 0; oy < oh; oy++) {
      const y0 = oy * g.stride[0] - g.pads[0];
      for (let ox = 0; ox < ow; ox++) {
        const x0 = ox * g.stride[1] - g.pads[1];
        let acc = init;
        let valid = 0;
        for (let ky = 0; ky < g.kernel[0]; ky++) {
          const iy = y0 + ky * g.dilation[0];
          if (iy < 0 || iy >= h) continue;
          for (let kx = 0; kx < g.kernel[1]; kx++) {
            const ix = x0 + kx * g.dilation[1];
            if (ix < 0 || ix >= wd) continue;
            acc = step(acc, d[base + iy * wd + ix]);
            valid++;
          }
        }
        y[o++] = finish(acc, valid, oy, ox);
      }
    }
  }
  return [host('float32', [n, c, oh, ow], y)];
}

function outputSize(inSize, k, stride, padHead, padTail) {
  return Math.floor((inSize + padHead + padTail - k) / stride + 1);
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
 */
function mlasAveragePool(hx, kernel, strides, p, includePad) {
  const [kh, kw] = kernel;
  const [sh, sw] = strides;
  const [nb, c, h, w] = hx.dims;
  const x32 = hx.data;
  const oh = outputSize(h, kh, sh, p[0], p[2]);
  const ow = outputSize(w, kw, sw, p[1], p[3]);
  const out = new Float32Array(nb * c * oh * ow);
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

// ---- elementwise -------------------------------------------------------------------------------------

/** A float unary op, element by element. */
function unary(fn, attributes = {}) {
  return {
    inputs: ['X: float32'],
    attributes,
    run(ctx, [x], attrs) {
      const d = floatData(x, where(ctx.node));
      const out = new Float32Array(d.length);
      for (let i = 0; i < d.length; i++) out[i] = fn(d[i], attrs);
      return [host('float32', dimsOf(x), out)];
    },
  };
}

/** Transposes host data by perm (the reverse of the dimensions without one). */
export function transposeHost(h, perm) {
  const rank = h.dims.length;
  const dims = perm.map((p) => h.dims[p]);
  const inStrides = new Array(rank);
  let acc = 1;
  for (let k = rank - 1; k >= 0; k--) {
    inStrides[k] = acc;
    acc *= h.dims[k];
  }
  const out = new ARRAY[h.dtype](h.data.length);
  const pos = new Array(rank).fill(0);
  for (let i = 0; i < out.length; i++) {
    let off = 0;
    for (let k = 0; k < rank; k++) off += pos[k] * inStrides[perm[k]];
    out[i] = h.data[off];
    for (let k = rank - 1; k >= 0; k--) {
      if (++pos[k] < dims[k]) break;
      pos[k] = 0;
    }
  }
  return host(h.dtype, dims, out);
}

export const FLOAT_OPERATORS = {
  /** Float Conv (NCHW, 2-D): weights packed once into wasm memory (src/operators/conv2d-f32.c). */
  Conv: {
    inputs: ['X: float32 ~8bit', 'W: float32 ~8bit', 'B?: float32 rank 1'],
    attributes: { ...WINDOW_ATTRIBUTES, group: A.int(1, (g) => g >= 1), qwasm_relu: A.flag(0) },
    prepare: (attrs, node, opset, label) => window2d(attrs, label),
    run(ctx, [x, wv, b], attrs) {
      const w = where(ctx.node);
      const xDims = dimsOf(x);
      const wh = toHost(wv);
      if (wh.dtype !== 'float32' || dtypeOf(x) !== 'float32') throw new UnsupportedError(`${w}: Conv on ${dtypeOf(x)} input with ${wh.dtype} weights is not supported (float32 only; quantized convolutions come as QLinearConv or QDQ)`);
      if (wh.dims.length !== 4) {
        if (wh.dims.length === 3 || wh.dims.length === 5) throw new UnsupportedError(`${w}: only 2-D convolutions are supported (weight rank ${wh.dims.length})`);
        throw new ModelFormatError(`${w}: weight must have rank 4 [M, C / group, kH, kW], got shape [${wh.dims}]`);
      }
      if (xDims.length !== 4) throw new ModelFormatError(`${w}: input must have rank 4 [N, C, H, W] for a 2-D convolution, got shape [${xDims}]`);
      const group = attrs.group;
      const [m, cg, kh, kw] = wh.dims;
      const c = xDims[1];
      if (c % group !== 0 || m % group !== 0) {
        throw new ModelFormatError(`${w}: input channels ${c} and output channels ${m} must be divisible by group ${group}`);
      }
      if (c / group !== cg) throw new ModelFormatError(`${w}: weight shape [${wh.dims}] needs ${cg * group} input channels (group ${group}), the input has ${c}`);
      if (attrs.kernel_shape && (attrs.kernel_shape[0] !== kh || attrs.kernel_shape[1] !== kw)) throw new ModelFormatError(`${w}: kernel_shape [${attrs.kernel_shape}] differs from the weight's [${kh}, ${kw}]`);
      const bias = b ? toHost(b) : null;
      if (bias && (bias.dtype !== 'float32' || bias.data.length !== m)) throw new ModelFormatError(`${w}: bias must be ${m} float32 values, got ${bias.dtype} shape [${bias.dims}]`);
      const padding = windowPads(attrs, [kh, kw], xDims.slice(2));
      const constant = ctx.isConstant(ctx.node.inputs[1]) && (!b || ctx.isConstant(ctx.node.inputs[2]));
      const make = () => {
        try {
          return packConv2dFloat(wh.data, wh.dims, bias ? bias.data : null, { stride: attrs.strides, dilation: attrs.dilations, padding, groups: group });
        } catch (error) {
          throw new ModelFormatError(`${w}: ${error.message}`);
        }
      };
      const packed = constant ? ctx.prepare(make, padding.join(',')) : make();
      try {
        // a Relu fused at load (passes/float-conv-relu.js) runs in wasm on the output
        const y = conv2dFloat(floatData(x, w), xDims, packed, { relu: attrs.qwasm_relu === 1 });
        return [host('float32', y.dims, y.data)];
      } catch (error) {
        if (error instanceof RangeError) throw new ModelFormatError(`${w}: ${error.message}`);
        throw error;
      } finally {
        if (!constant) packed.dispose();
      }
    },
  },

  MaxPool: {
    inputs: ['X: float32|8bit'],
    outputs: ['Y', 'Indices?'],
    attributes: { ...WINDOW_ATTRIBUTES, ceil_mode: A.flag(0), storage_order: A.int(0) },
    prepare(attrs, node, opset, label) {
      if (!attrs.kernel_shape) throw new ModelFormatError(`${label}: kernel_shape is required`);
      if (node.outputs.length > 1 && node.outputs[1]) throw new UnsupportedError(`${label}: the Indices output is not supported`);
      if (attrs.storage_order !== 0) throw new UnsupportedError(`${label}: storage_order ${attrs.storage_order} is not supported`);
      return window2d(attrs, label);
    },
    run(ctx, [x], attrs) {
      const w = where(ctx.node);
      if (dtypeOf(x) === 'float32') {
        const g = poolGeometry(x, attrs, w);
        return poolFloat(x, g, -Infinity, (a, v) => (v > a || Number.isNaN(v) ? v : a), (a) => a);
      }
      // 8-bit data between Q/DQ pairs: the integers' max, in the model's pooling form
      if (attrs.auto_pad !== 'NOTSET') throw new UnsupportedError(`${w}: auto_pad ${attrs.auto_pad} on 8-bit data is not supported; use explicit pads`);
      const pads = attrs.pads;
      if (pads[0] !== pads[2] || pads[1] !== pads[3]) throw new UnsupportedError(`${w}: asymmetric pads are not supported`);
      const xq = toQ(x, 1, 0, w);
      try {
        return [qvalue(maxPool2d(xq, { kernelSize: attrs.kernel_shape, stride: attrs.strides, padding: [pads[0], pads[1]], dilation: attrs.dilations, ceilMode: !!attrs.ceil_mode, semantics: ctx.semantics }))];
      } finally {
        xq.dispose();
      }
    },
  },

  /**
   * Float AveragePool: ONNX Runtime's MLAS summation orders where MLAS runs it (bit-exact with onnxruntime-web),
   * a plain windowed sum for what MLAS does not take (ceil_mode, dilations, auto_pad). count_include_pad divides by
   * the window clipped to the padded input (ONNX Runtime's rule: the part of a ceil_mode window past the end
   * padding never counts).
   */
  AveragePool: {
    inputs: ['X: float32'],
    attributes: { ...WINDOW_ATTRIBUTES, ceil_mode: A.flag(0), count_include_pad: A.flag(0) },
    prepare(attrs, node, opset, label) {
      if (!attrs.kernel_shape) throw new ModelFormatError(`${label}: kernel_shape is required`);
      return window2d(attrs, label);
    },
    run(ctx, [x], attrs) {
      const w = where(ctx.node);
      const hx = toHost(x);
      floatData(hx, w);
      if (hx.dims.length !== 4) throw new UnsupportedError(`${w}: only 2-D pooling (a 4-D input) is supported`);
      const g = poolGeometry(x, attrs, w); // checks that the window fits and the output size
      const mlas = !attrs.ceil_mode && attrs.dilations.every((d) => d === 1) && attrs.auto_pad === 'NOTSET';
      if (mlas) return mlasAveragePool(hx, attrs.kernel_shape, attrs.strides, attrs.pads, !!attrs.count_include_pad);
      const [h, wd] = g.dims.slice(2);
      const extent = (start, k, d, size, padEnd) => {
        let count = 0; // window taps inside [-padBegin, size + padEnd)
        for (let t = 0; t < k; t++) if (start + t * d < size + padEnd) count++;
        return count;
      };
      return poolFloat(x, g, 0, (a, v) => a + v, (a, valid, oy, ox) => {
        if (!attrs.count_include_pad) return valid === 0 ? NaN : a / valid;
        const cy = extent(oy * g.stride[0] - g.pads[0], g.kernel[0], g.dilation[0], h, g.pads[2]);
        const cx = extent(ox * g.stride[1] - g.pads[1], g.kernel[1], g.dilation[1], wd, g.pads[3]);
        return a / (cy * cx);
      });
    },
  },

  GlobalAveragePool: {
    inputs: ['X: float32 rank>=2'],
    run(ctx, [x]) {
      const h = toHost(x);
      const d = floatData(h, where(ctx.node));
      // ORT runs a 2-D GlobalAveragePool through MLAS's global pooling kernel.
      if (h.dims.length === 4) return mlasAveragePool(h, h.dims.slice(2), [1, 1], [0, 0, 0, 0], false);
      const [nb, c] = h.dims;
      const hw = numel(h.dims.slice(2));
      const out = new Float32Array(nb * c);
      for (let i = 0; i < nb * c; i++) {
        let s = 0;
        for (let p = 0; p < hw; p++) s += d[i * hw + p];
        out[i] = s / hw;
      }
      return [host('float32', [nb, c, ...h.dims.slice(2).map(() => 1)], out)];
    },
  },

  /** BatchNormalization (inference): y = (x - mean) / sqrt(var + epsilon) * scale + B per channel (axis 1). */
  BatchNormalization: {
    inputs: ['X: float32 rank>=2', 'scale: float32 rank 1', 'B: float32 rank 1', 'input_mean: float32 rank 1', 'input_var: float32 rank 1'],
    outputs: ['Y', 'running_mean?', 'running_var?', 'saved_mean?', 'saved_var?'],
    attributes: { epsilon: A.float(1e-5), momentum: A.float(0.9), training_mode: A.flag(0) },
    prepare(attrs, node, opset, label) {
      if (attrs.training_mode) throw new UnsupportedError(`${label}: training_mode = 1 is not supported`);
      if (node.outputs.slice(1).some((o) => o)) throw new UnsupportedError(`${label}: the running mean / variance outputs (training) are not supported`);
      return attrs;
    },
    run(ctx, [x, scale, bias, mu, variance], attrs) {
      const w = where(ctx.node);
      const d = floatData(x, w);
      const dims = dimsOf(x);
      if (dims.length < 2) throw new ModelFormatError(`${w}: input must be [N, C, ...], got shape [${dims}]`);
      const c = dims[1];
      const [s, bb, m, v] = [scale, bias, mu, variance].map((p, i) => {
        const hv = toHost(p);
        if (hv.dtype !== 'float32' || hv.data.length !== c) throw new ModelFormatError(`${w}: input ${i + 1} must be ${c} float32 values (one per channel), got ${hv.dtype} shape [${hv.dims}]`);
        return hv.data;
      });
      const eps = f(attrs.epsilon);
      // As ONNX Runtime: a per-channel multiplier and offset, in float32.
      const mul = Float32Array.from(s, (si, i) => si / f(Math.sqrt(f(v[i] + eps))));
      const add = Float32Array.from(bb, (bi, i) => bi - f(m[i] * mul[i]));
      const inner = numel(dims.slice(2));
      const out = new Float32Array(d.length);
      for (let i = 0; i < d.length; i++) {
        const ch = Math.floor(i / inner) % c;
        out[i] = f(d[i] * mul[ch]) + add[ch];
      }
      return [host('float32', dims.slice(), out)];
    },
  },

  Relu: {
    inputs: ['X: float32'],
    run(ctx, [x]) {
      const d = floatData(x, where(ctx.node));
      const out = new Float32Array(d.length); // zeros: only the positive values are written (NaN gives 0)
      for (let i = 0, n = d.length; i < n; i++) {
        const v = d[i];
        if (v > 0) out[i] = v;
      }
      return [host('float32', dimsOf(x), out)];
    },
  },

  /** Clip: on 8-bit data the bounds are integers of the same type (a fused ReLU / ReLU6). */
  Clip: {
    inputs: ['input: float32|8bit', 'min?: =input scalar', 'max?: =input scalar'],
    attributes: { min: A.float(undefined), max: A.float(undefined) },
    run(ctx, [x, lo, hi], attrs) {
      const w = where(ctx.node);
      const min = lo ? scalar(lo, w) : attrs.min ?? -Infinity;
      const max = hi ? scalar(hi, w) : attrs.max ?? Infinity;
      if (dtypeOf(x) === 'float32') {
        const d = floatData(x, w);
        return [host('float32', dimsOf(x), d.map((v) => Math.min(Math.max(v, min), max)))];
      }
      // integer bounds: clamp the integers (a view with scale 1, zero point 0 makes real = integer)
      const xq = toQ(x, 1, 0, w);
      try {
        return [qvalue(clamp(xq, min, max))];
      } finally {
        xq.dispose();
      }
    },
  },

  LeakyRelu: unary((v, attrs) => (v >= 0 ? v : f(f(attrs.alpha) * v)), { alpha: A.float(0.01) }),
  Sigmoid: unary(mlasLogistic), // ORT's float Sigmoid is MlasComputeLogistic, as its QLinearSigmoid table
  HardSigmoid: unary((v, attrs) => Math.max(0, Math.min(1, attrs.alpha * v + attrs.beta)), { alpha: A.float(0.2), beta: A.float(0.5) }),
  HardSwish: unary((v) => v * Math.max(0, Math.min(1, v / 6 + 0.5))),
};
