// ONNX Runtime's com.microsoft quantized operators: QGemm, QLinearAdd, QLinearMul, QLinearConcat,
// QLinearAveragePool, QLinearGlobalAveragePool (what ORT's QDQ transformer makes of DQ -> op -> Q groups, and what
// tools/export_torch.py writes with PyTorch semantics), and QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax
// (ONNX Runtime's own: their arithmetic is ORT's whatever the file's semantics).
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { f32, roundHalfEven } from '../../reference.js';
import { add, cat, leakyRelu, mul, preparedAdd, sigmoid } from '../../ops/elementwise.js';
import { linear, packLinear } from '../../ops/linear.js';
import { adaptiveAvgPool2dChannelsLast, avgPool2d, avgPool2dChannelsLast, mean } from '../../ops/pooling.js';
import { semanticsOf } from '../../semantics.js';
import { borrowQ, dimsOf, giveBackQ, host, outputQParams, qvalue, scalar, toHost, toQ } from '../values.js';
import { biasOf, packedConstantWeights } from './quantized.js';
import { A } from './attributes.js';

const where = (node) => `${node.opType} node "${node.name}"`;
const zeroPointOf = (v, w) => (v ? scalar(v, w) : 0);

/**
 * What a QLinearAdd layer keeps per shape plan when its scales and zero points are constants (absent zero points are
 * 0): the add prepared for its operands (ops/elementwise.js preparedAdd), which the next runs take while their
 * operands match. { fast: null } otherwise.
 */
function addLayer(ctx, a, b, [as, az, bs, bz, ys, yz], w) {
  const inputs = ctx.node.inputs;
  if (![1, 2, 4, 5, 6, 7].every((i) => !inputs[i] || ctx.isConstant(inputs[i]))) return { fast: null };
  const out = outputQParams(ys, yz, w);
  const aq = borrowQ(a, scalar(as, w), zeroPointOf(az, w), w);
  try {
    const bq = borrowQ(b, scalar(bs, w), zeroPointOf(bz, w), w);
    try {
      // an object, not a closure: nothing made here may hold ctx (and through it the Model) from the plans
      return { fast: preparedAdd(aq, bq, { scale: out.scale, zeroPoint: out.zeroPoint, semantics: ctx.semantics }) };
    } finally {
      giveBackQ(bq, b);
    }
  } finally {
    giveBackQ(aq, a);
  }
}

/** com.microsoft QAdd / QMul: both operands viewed with their qparams, the output's from C_scale / C_zero_point. */
function binary(op) {
  return {
    inputs: [
      'A: 8bit', 'A_scale: float32 scalar', 'A_zero_point?: =A scalar', 'B: =A', 'B_scale: float32 scalar', 'B_zero_point?: =A scalar',
      'C_scale: float32 scalar', 'C_zero_point?: =A scalar',
    ],
    uses: [op === add ? 'add' : 'mul'],
    run(ctx, [a, as, az, b, bs, bz, ys, yz]) {
      const w = where(ctx.node);
      if (op === add) {
        const layer = ctx.memo([a, b], () => addLayer(ctx, a, b, [as, az, bs, bz, ys, yz], w));
        if (layer.fast && a.kind === 'q' && b.kind === 'q' && layer.fast.accepts(a.q, b.q)) return [qvalue(layer.fast.run(a.q, b.q))];
      }
      const aq = borrowQ(a, scalar(as, w), zeroPointOf(az, w), w);
      try {
        const bq = borrowQ(b, scalar(bs, w), zeroPointOf(bz, w), w);
        try {
          const out = outputQParams(ys, yz, w);
          return [qvalue(op(aq, bq, { scale: out.scale, zeroPoint: out.zeroPoint, semantics: ctx.semantics }))];
        } finally {
          giveBackQ(bq, b);
        }
      } finally {
        giveBackQ(aq, a);
      }
    },
  };
}

/** com.microsoft QLinearSigmoid / QLinearLeakyRelu: ONNX Runtime's 256-entry tables. */
function lookup(fn) {
  return {
    inputs: ['X: 8bit', 'X_scale: float32 scalar', 'X_zero_point?: =X scalar', 'Y_scale: float32 scalar', 'Y_zero_point?: =X scalar'],
    run(ctx, [x, xs, xz, ys, yz], attrs) {
      const w = where(ctx.node);
      const xq = toQ(x, scalar(xs, w), zeroPointOf(xz, w), w);
      try {
        return [qvalue(fn(xq, { scale: scalar(ys, w), zeroPoint: zeroPointOf(yz, w), semantics: 'onnx' }, attrs))];
      } finally {
        xq.dispose();
      }
    },
  };
}

const POOL_ATTRIBUTES = {
  auto_pad: A.string('NOTSET', ['NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID']),
  ceil_mode: A.flag(0),
  channels_last: A.flag(0),
  count_include_pad: A.flag(0),
  dilations: A.ints(undefined),
  kernel_shape: A.ints(undefined, (v) => v.every((k) => k >= 1)),
  pads: A.ints([0, 0, 0, 0], (v) => v.every((p) => p >= 0)),
  strides: A.ints([1, 1], (v) => v.every((s) => s >= 1)),
};

/**
 * QLinearAveragePool / QLinearGlobalAveragePool in the pooling form of the semantics: ONNX Runtime's kernels, or
 * PyTorch's (files from tools/export_torch.py; channels_last = 1 says PyTorch pooled a channels_last tensor, which
 * takes its channels-last kernel). The data of a channels_last = 1 node is NHWC; it is pooled through an NCHW view.
 */
function averagePool(global) {
  return {
    inputs: ['X: 8bit rank 4', 'x_scale: float32 scalar', 'x_zero_point?: =X scalar', 'y_scale: float32 scalar', 'y_zero_point?: =X scalar'],
    attributes: global ? { channels_last: A.flag(0) } : POOL_ATTRIBUTES,
    uses: ['pooling'],
    prepare(attrs, node, opset, label) {
      if (global) return attrs;
      if (attrs.auto_pad !== 'NOTSET') throw new UnsupportedError(`${label}: auto_pad ${attrs.auto_pad} is not supported; use explicit pads`);
      if (attrs.dilations && attrs.dilations.some((d) => d !== 1)) throw new UnsupportedError(`${label}: dilations are not supported`);
      if (!attrs.kernel_shape) throw new ModelFormatError(`${label}: kernel_shape is required`);
      if (attrs.kernel_shape.length !== 2 || attrs.pads.length !== 4 || attrs.strides.length !== 2) {
        throw new UnsupportedError(`${label}: only 2-D pooling is supported (kernel_shape [${attrs.kernel_shape}])`);
      }
      return attrs;
    },
    run(ctx, [x, xs, xz, ys, yz], attrs) {
      const w = where(ctx.node);
      const nhwc = attrs.channels_last === 1; // the input is 4-D (its spec)
      const form = semanticsOf(ctx, w).form('pooling');
      const stored = toQ(x, scalar(xs, w), zeroPointOf(xz, w), w);
      const xq = nhwc ? stored.permute([0, 3, 1, 2]) : stored;
      if (nhwc) stored.dispose();
      try {
        const out = { scale: scalar(ys, w), zeroPoint: zeroPointOf(yz, w), semantics: ctx.semantics, cpuCapability: ctx.cpuCapability };
        let pooled;
        if (global) {
          // channels_last = 1 under PyTorch's forms: adaptive_avg_pool2d(1) of a channels-last tensor (its own kernel)
          pooled = nhwc && form !== 'onnx' ? adaptiveAvgPool2dChannelsLast(xq, [1, 1], out) : mean(xq, [2, 3], true, out);
        } else {
          const pads = attrs.pads;
          const options = { ...out, kernelSize: attrs.kernel_shape, stride: attrs.strides, ceilMode: !!attrs.ceil_mode, countIncludePad: !!attrs.count_include_pad };
          if (form === 'onnx') {
            pooled = avgPool2d(xq, { ...options, padding: pads.slice() });
          } else {
            if (pads[0] !== pads[2] || pads[1] !== pads[3]) throw new UnsupportedError(`${w}: asymmetric pads are not supported by PyTorch's pooling`);
            pooled = (nhwc ? avgPool2dChannelsLast : avgPool2d)(xq, { ...options, padding: [pads[0], pads[1]] });
          }
        }
        if (!nhwc) return [qvalue(pooled)];
        const back = pooled.permute([0, 2, 3, 1]);
        pooled.dispose();
        try {
          return [qvalue(back.contiguous())];
        } finally {
          back.dispose();
        }
      } finally {
        xq.dispose();
      }
    },
  };
}

const FLT_MAX = 3.4028234663852886e38;

/** QLinearSoftmax's table: t[i] = exp((i - 255 + shift) * x_scale), shift = max(0, ln(FLT_MAX / D) - 5) / x_scale. */
function softmaxTable(xScale, reduceLen, signed) {
  let shift = Math.log(FLT_MAX / reduceLen);
  shift = Math.max(0, shift - 5) / xScale;
  const table = new Float32Array(256);
  for (let i = 0; i < 256; i++) table[signed ? (i - 128) & 255 : i] = Math.exp((i - 255 + shift) * xScale);
  return table;
}

export const CONTRIB_OPERATORS = {
  /** QGemm: y = A B^T (+ C int32), transB = 1 required; weights packed once. */
  QGemm: {
    inputs: [
      'A: 8bit', 'a_scale: float32 scalar', 'a_zero_point: =A scalar', 'B: 8bit rank 2 const', 'b_scale: float32 rank<=1 const',
      'b_zero_point: =B rank<=1 const', 'C?: int32|float32 rank<=2 const', 'y_scale?: float32 scalar', 'y_zero_point?: 8bit scalar',
    ],
    attributes: {
      alpha: A.float(1), beta: A.float(1), transA: A.flag(0), transB: A.flag(0),
      qwasm_output_range: A.ints(undefined, (v) => v.length === 2 && v[0] <= v[1]),
    },
    uses: ['requantization'],
    prepare(attrs, node, opset, label) {
      if (attrs.transA !== 0 || attrs.transB !== 1 || attrs.alpha !== 1) {
        throw new UnsupportedError(`${label}: only transA = 0, transB = 1, alpha = 1 are supported`);
      }
      if (!node.inputs[7]) throw new UnsupportedError(`${label}: float output (no y_scale) is not supported`);
      return attrs;
    },
    run(ctx, [a, as, az, bv, bs, bz, c, ys, yz], attrs) {
      const w = where(ctx.node);
      const packed = packedConstantWeights(ctx, 3, [bv, bs, bz], (weight) =>
        packLinear(weight, biasOf(ctx, c, w), { semantics: ctx.semantics }));
      const aq = borrowQ(a, scalar(as, w), scalar(az, w), w);
      try {
        const out = outputQParams(ys, yz, w);
        if (attrs.qwasm_output_range) out.outputRange = attrs.qwasm_output_range;
        return [qvalue(linear(aq, packed, out))];
      } finally {
        giveBackQ(aq, a);
      }
    },
  },

  QLinearAdd: binary(add),
  QLinearMul: binary(mul),

  QLinearConcat: {
    inputs: ['Y_scale: float32 scalar', 'Y_zero_point: 8bit scalar', 'X: =Y_zero_point', 'X_scale: float32 scalar', 'X_zero_point: =X scalar', '...3'],
    attributes: { axis: A.int(undefined) },
    prepare(attrs, node, opset, label) {
      if (attrs.axis === undefined) throw new ModelFormatError(`${label}: attribute axis is required`);
      if ((node.inputs.length - 2) % 3 !== 0) throw new ModelFormatError(`${label}: inputs must be (Y_scale, Y_zero_point, then X, X_scale, X_zero_point triples)`);
      return attrs;
    },
    uses: ['rounding'],
    run(ctx, [ys, yz, ...rest], attrs) {
      const w = where(ctx.node);
      const parts = [];
      try {
        for (let i = 0; i < rest.length; i += 3) parts.push(toQ(rest[i], scalar(rest[i + 1], w), scalar(rest[i + 2], w), w));
        const out = outputQParams(ys, yz, w);
        return [qvalue(cat(parts, attrs.axis, { scale: out.scale, zeroPoint: out.zeroPoint, semantics: ctx.semantics }))];
      } finally {
        for (const p of parts) p.dispose();
      }
    },
  },

  QLinearSigmoid: lookup((xq, out) => sigmoid(xq, out)),
  QLinearLeakyRelu: { ...lookup((xq, out, attrs) => leakyRelu(xq, attrs.alpha, out)), attributes: { alpha: A.float(0.01) } },
  QLinearAveragePool: averagePool(false),
  QLinearGlobalAveragePool: averagePool(true),

  /**
   * QLinearSoftmax (contrib_ops/cpu/quantization/qlinear_softmax.cc): a float32 table of exp indexed by
   * x - max(x) + 255, summed in float32 in order; y = nearbyint(t * floor(1 / y_scale) / sum) + y_zero_point,
   * saturated (the source clamps only above 255, so int8 would wrap; onnxruntime-web 1.30 saturates).
   * opset < 13 flattens from the axis; 13 reduces along it alone.
   */
  QLinearSoftmax: {
    inputs: ['X: 8bit', 'X_scale: float32 scalar', 'x_zero_point?: =X scalar', 'y_scale: float32 scalar', 'y_zero_point?: =X scalar'],
    attributes: { axis: A.int(undefined), opset: A.int(13) },
    run(ctx, [x, xs, , ys, yz], attrs) {
      const w = where(ctx.node);
      const hx = toHost(x);
      const signed = hx.dtype === 'int8';
      if (!signed && hx.dtype !== 'uint8') throw new ModelFormatError(`${w}: expected uint8 or int8 data, got ${hx.dtype}`);
      const dims = hx.dims;
      const rank = dims.length;
      const opset = attrs.opset;
      const axis0 = attrs.axis ?? (opset < 13 ? 1 : -1);
      const axis = axis0 < 0 ? axis0 + rank : axis0;
      if (!(axis >= 0 && axis < rank)) throw new ModelFormatError(`${w}: axis ${axis0} is out of range for a ${rank}-dimensional input`);
      const numel = (d) => d.reduce((p, q) => p * q, 1);
      const [D, inner] = opset < 13 ? [numel(dims.slice(axis)), 1] : [dims[axis], numel(dims.slice(axis + 1))];
      const table = softmaxTable(scalar(xs, w), D, signed);
      const yScale = f32(Math.floor(f32(1 / f32(scalar(ys, w)))));
      const yzp = zeroPointOf(yz, w);
      const out = signed ? new Int8Array(hx.data.length) : new Uint8Array(hx.data.length);
      const [qmin, qmax] = signed ? [-128, 127] : [0, 255];
      const rows = hx.data.length / D;
      for (let r = 0; r < rows; r++) {
        const base = Math.floor(r / inner) * D * inner + (r % inner);
        let xmax = -Infinity;
        for (let j = 0; j < D; j++) xmax = Math.max(xmax, hx.data[base + j * inner]);
        const index = (v) => (signed ? (127 - xmax + v) & 255 : 255 - xmax + v);
        let sum = 0;
        for (let j = 0; j < D; j++) sum = f32(sum + table[index(hx.data[base + j * inner])]);
        if (sum === 0) continue; // ORT returns early, leaving the output as it was
        for (let j = 0; j < D; j++) {
          const q = roundHalfEven(f32(f32(table[index(hx.data[base + j * inner])] * yScale) / sum)) + yzp;
          out[base + j * inner] = Math.min(qmax, Math.max(qmin, q));
        }
      }
      return [host(hx.dtype, dims.slice(), out)];
    },
  },
};
