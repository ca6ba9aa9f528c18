// The ONNX quantization operators: QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul and the dynamic
// ones (DynamicQuantizeLinear, MatMulInteger, ConvInteger), on qwasm's integer kernels in the semantics of the
// model (ctx.semantics: 'onnx', or the PyTorch profile a file from tools/export_torch.py records).
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { conv2d, convInteger, dynamicQuantizeAt, matmul, matmulInteger, packConv2d, packMatMul, preparedConv2d } from '../../ops/linear.js';
import { backend } from '../../runtime/runtime.js';
import { semanticsOf } from '../../semantics.js';
import { checkScale, checkZeroPoint } from '../../tensor/check.js';
import { dtypeInfo } from '../../tensor/dtype.js';
import { fromIntRepr, fromIntReprPerChannel, quantizePerChannel, quantizePerTensor } from '../../tensor/qtensor.js';
import {
  QDTYPE, borrowQ, dimsOf, dtypeOf, floatData, giveBackQ, host, numel, outputQParams, ptrOf, qparamsOf, qvalue, scalar, toHost, toQ,
  weightTensor,
} from '../values.js';
import { produce, withWasm } from './kernel-args.js';
import { A } from './attributes.js';

const where = (node) => `${node.opType} node "${node.name}"`;

/** The attributes of a 2-D convolution (QLinearConv, ConvInteger), checked once. */
export const CONV_ATTRIBUTES = Object.freeze({
  auto_pad: A.string('NOTSET', ['NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID']),
  dilations: A.ints([1, 1], (v) => v.every((d) => d >= 1)),
  group: A.int(1, (g) => g >= 1),
  kernel_shape: A.ints(undefined, (v) => v.every((d) => d >= 1)),
  pads: A.ints([0, 0, 0, 0], (v) => v.every((p) => p >= 0)),
  strides: A.ints([1, 1], (v) => v.every((s) => s >= 1)),
});

/** { stride, dilation, groups, padding } of an integer convolution: 2-D, explicit pads. */
function integerConv(attrs, node, opset, label) {
  if (attrs.auto_pad !== 'NOTSET') throw new UnsupportedError(`${label}: auto_pad ${attrs.auto_pad} is not supported; use explicit pads`);
  if (attrs.pads.length !== 4 || attrs.strides.length !== 2 || attrs.dilations.length !== 2) {
    throw new UnsupportedError(`${label}: only 2-D convolutions are supported (pads [${attrs.pads}], strides [${attrs.strides}], dilations [${attrs.dilations}])`);
  }
  return { ...attrs, conv: { stride: attrs.strides, dilation: attrs.dilations, groups: attrs.group, padding: attrs.pads.slice() } };
}

/**
 * The packed weights of the running node (ctx.node), made on its first run from the constant 8-bit weight input
 * `index` with its qparams [w, w_scale, w_zero_point] (per channel along axis 0), and kept: pack(weight) packs.
 */
export function packedConstantWeights(ctx, index, [wv, ws, wz], pack, key) {
  return ctx.prepare(() => {
    const w = where(ctx.node);
    if (!ctx.isConstant(ctx.node.inputs[index])) throw new UnsupportedError(`${w}: weights that are not constant are not supported`);
    const weight = weightTensor(wv, ws, wz, 0, w);
    try {
      return pack(weight);
    } finally {
      weight.dispose();
    }
  }, key);
}

/**
 * The bias input B of QLinearConv / QGemm: int32 (ONNX), or float32 in a file whose PyTorch semantics keep the bias
 * in float, added after the accumulator is scaled (FBGEMM, oneDNN: tools/export_torch.py writes torch's own float
 * bias there; docs/exporter.md).
 */
export function biasOf(ctx, b, w) {
  if (!b) return null;
  const h = toHost(b);
  if (h.dtype === 'int32') return Int32Array.from(h.data);
  const form = semanticsOf(ctx, w).form('requantization');
  if (h.dtype === 'float32' && (form === 'fbgemm' || form === 'x86')) return Float32Array.from(h.data);
  throw new ModelFormatError(`${w}: bias B must be int32${form === 'fbgemm' || form === 'x86' ? ' or float32' : ''}, got ${h.dtype}`);
}

/** A fused integer Clip (passes/clip.js) narrows a layer's output range. */
const OUTPUT_RANGE = { qwasm_output_range: A.ints(undefined, (v) => v.length === 2 && v[0] <= v[1]) };

function withOutputRange(out, attrs) {
  return attrs.qwasm_output_range ? { ...out, outputRange: attrs.qwasm_output_range } : out;
}

/**
 * What a QLinearConv layer keeps per shape plan when its scales and zero points are constants: its output options
 * (frozen, so the op skips their checks) and the convolution prepared for its input (ops/linear.js preparedConv2d),
 * which the next runs take while their input matches. { options: null } otherwise.
 */
function convLayer(ctx, packed, x, [xs, xz, ys, yz], attrs, w) {
  const inputs = ctx.node.inputs;
  if (!ctx.isConstant(inputs[1]) || !ctx.isConstant(inputs[2]) || !ctx.isConstant(inputs[6]) || !ctx.isConstant(inputs[7])) {
    return keptConvLayer(null, packed, null);
  }
  const options = withOutputRange(outputQParams(ys, yz, w), attrs);
  if (options.outputRange) options.outputRange = Object.freeze(options.outputRange.slice());
  Object.freeze(options);
  const xq = borrowQ(x, scalar(xs, w), scalar(xz, w), w);
  let fast;
  try {
    fast = preparedConv2d(xq, packed, options);
  } finally {
    giveBackQ(xq, x);
  }
  return keptConvLayer(options, packed, fast);
}

/**
 * The kept object, made outside convLayer: a closure there would hold ctx, and through it the Model, alive from the
 * plans that the Model's finalizer releases.
 */
function keptConvLayer(options, packed, fast) {
  return { options, packed, fast, dispose: () => fast?.dispose() };
}

/** MatMulInteger's B with its zero points (per column when there are several) as a QTensor of scale 1. */
function integerWeight(b, bz) {
  const bh = toHost(b);
  const zps = bz ? Array.from(toHost(bz).data, Number) : [0];
  return zps.length > 1
    ? fromIntReprPerChannel(bh.data, bh.dims, zps.map(() => 1), zps, bh.dims.length - 1, QDTYPE[bh.dtype])
    : fromIntRepr(bh.data, bh.dims, 1, zps[0], QDTYPE[bh.dtype]);
}

/** A constant MatMulInteger B packed once for the int32 GEMM (at load, or on the node's first run). */
function packedMatMulInteger(ctx, b, bz) {
  return ctx.prepare(() => {
    const bq = integerWeight(b, bz);
    try {
      return packMatMul(bq, { mode: 'none' });
    } finally {
      bq.dispose();
    }
  });
}

/** The axis of a per-axis Quantize / DequantizeLinear, normalized for a value of `rank` dimensions. */
function quantAxis(axis, rank, label) {
  const a = axis < 0 ? axis + rank : axis;
  if (!(a >= 0 && a < rank)) throw new ModelFormatError(`${label}: axis ${axis} is out of range for a ${rank}-dimensional input`);
  return a;
}

export const QUANTIZED_OPERATORS = {
  QuantizeLinear: {
    inputs: ['x: float32 ~int32', 'y_scale: float32 rank<=1', 'y_zero_point?: 8bit rank<=1 ~int32'],
    attributes: { axis: A.int(1) },
    uses: ['rounding'],
    run(ctx, [x, s, z], attrs) {
      const w = where(ctx.node);
      const { scales, zps, perAxis, dtype } = qparamsOf(s, z, w);
      const qd = QDTYPE[dtype];
      if (!qd || qd === 'qint32') throw new UnsupportedError(`${w}: output type ${dtype} is not supported`);
      const xd = floatData(x, w);
      const options = { semantics: ctx.semantics };
      if (perAxis) return [qvalue(quantizePerChannel(xd, x.dims, scales, zps, quantAxis(attrs.axis, x.dims.length, w), qd, options))];
      return [qvalue(quantizePerTensor(xd, x.dims, scales[0], zps[0], qd, options))];
    },
  },

  DequantizeLinear: {
    inputs: ['x: 8bit|int32', 'x_scale: float32 rank<=1', 'x_zero_point?: =x rank<=1'],
    attributes: { axis: A.int(1) },
    run(ctx, [x, s, z], attrs) {
      const w = where(ctx.node);
      const { scales, zps, perAxis } = qparamsOf(s, z, w);
      if (!perAxis && x.kind !== 'q') {
        // wasm or host integers: the kernel writes the floats straight into wasm memory, where the float operators
        // after it read them (an embedding lookup's rows: no copies out to the host and back in)
        const qd = QDTYPE[x.dtype];
        if (!qd) throw new ModelFormatError(`${w}: expected 8-bit or int32 input, got ${x.dtype}`);
        const info = dtypeInfo(qd, w);
        checkScale(scales[0], w, 'x_scale');
        checkZeroPoint(zps[0], info, w, 'x_zero_point');
        return [produce('float32', x.dims, (py) => withWasm(ctx, [x], (xv) =>
          backend().call(w, 'qw_dequantize', numel(x.dims), ptrOf(xv), py, info.code, scales[0], zps[0])))];
      }
      if (!perAxis) {
        // the same function on a view of the data (no copy out and back in)
        const t = toQ(x, scales[0], zps[0], w);
        try {
          return [host('float32', dimsOf(x), t.dequantize())];
        } finally {
          t.dispose();
        }
      }
      const h = toHost(x);
      const qd = QDTYPE[h.dtype];
      if (!qd) throw new ModelFormatError(`${w}: expected 8-bit or int32 input, got ${h.dtype}`);
      const t = perAxis
        ? fromIntReprPerChannel(h.data, h.dims, scales, zps, quantAxis(attrs.axis, h.dims.length, w), qd)
        : fromIntRepr(h.data, h.dims, scales[0], zps[0], qd);
      try {
        return [host('float32', h.dims.slice(), t.dequantize())];
      } finally {
        t.dispose();
      }
    },
  },

  /** QLinearConv: weights packed once (the first run), reused after. */
  QLinearConv: {
    inputs: [
      'x: 8bit', 'x_scale: float32 scalar', 'x_zero_point: =x scalar', 'w: 8bit rank 4 const', 'w_scale: float32 rank<=1 const',
      'w_zero_point: =w rank<=1 const', 'y_scale: float32 scalar', 'y_zero_point: 8bit scalar', 'B?: int32|float32 rank 1 const',
    ],
    attributes: { ...CONV_ATTRIBUTES, ...OUTPUT_RANGE },
    uses: ['requantization'],
    prepare: integerConv,
    run(ctx, [x, xs, xz, wv, ws, wz, ys, yz, b], attrs) {
      const w = where(ctx.node);
      const packed = packedConstantWeights(ctx, 3, [wv, ws, wz], (weight) =>
        packConv2d(weight, biasOf(ctx, b, w), { ...attrs.conv, semantics: ctx.semantics }));
      const layer = ctx.memo([x], () => convLayer(ctx, packed, x, [xs, xz, ys, yz], attrs, w));
      if (layer.fast && layer.packed === packed && x.kind === 'q' && layer.fast.accepts(x.q)) return [qvalue(layer.fast.run(x.q))];
      const xq = borrowQ(x, scalar(xs, w), scalar(xz, w), w);
      try {
        return [qvalue(conv2d(xq, packed, layer.options ?? withOutputRange(outputQParams(ys, yz, w), attrs)))];
      } finally {
        giveBackQ(xq, x);
      }
    },
  },

  QLinearMatMul: {
    inputs: [
      'a: 8bit rank>=2', 'a_scale: float32 scalar', 'a_zero_point: =a scalar', 'b: 8bit rank>=2', 'b_scale: float32 rank<=1',
      'b_zero_point: =b rank<=1', 'y_scale: float32 scalar', 'y_zero_point: 8bit scalar',
    ],
    attributes: OUTPUT_RANGE,
    uses: ['requantization'],
    run(ctx, [a, as, az, bv, bs, bz, ys, yz], attrs) {
      const w = where(ctx.node);
      const aq = toQ(a, scalar(as, w), scalar(az, w), w);
      try {
        const bq = weightTensor(bv, bs, bz, dimsOf(bv).length - 1, w);
        try {
          return [qvalue(matmul(aq, bq, { ...withOutputRange(outputQParams(ys, yz, w), attrs), semantics: ctx.semantics }))];
        } finally {
          bq.dispose();
        }
      } finally {
        aq.dispose();
      }
    },
  },

  /**
   * DynamicQuantizeLinear as onnxruntime computes it (uint8 from the range widened to include 0, the onnx rounding),
   * on the activations where they are in wasm memory. An all-zero input has scale 1 and a subnormal range its own
   * scale, as in onnxruntime (the ONNX function body has no usable scale there).
   */
  DynamicQuantizeLinear: {
    inputs: ['x: float32'],
    outputs: ['y', 'y_scale?', 'y_zero_point?'],
    run(ctx, [x]) {
      const w = where(ctx.node);
      if (dtypeOf(x) !== 'float32') throw new ModelFormatError(`${w}: expected float32 data, got ${dtypeOf(x)}`);
      const { y, scale, zeroPoint } = withWasm(ctx, [x], (wx) => dynamicQuantizeAt(ptrOf(wx), dimsOf(x), w, { onnxruntime: true }));
      return [qvalue(y), host('float32', [], Float32Array.of(scale)), host('uint8', [], Uint8Array.of(zeroPoint))];
    },
  },

  /** MatMulInteger: the exact int32 sums; a constant B is packed once (the weights of a dynamically quantized model). */
  MatMulInteger: {
    inputs: ['A: 8bit rank>=2', 'B: 8bit rank>=2', 'a_zero_point?: =A scalar', 'b_zero_point?: =B rank<=1'],
    pack(ctx, [, b, , bz]) { // at load, when B (and its zero point) are constants
      if (b !== undefined && dimsOf(b).length === 2 && (!ctx.node.inputs[3] || bz !== undefined)) packedMatMulInteger(ctx, b, bz);
    },
    run(ctx, [a, b, az, bz]) {
      const w = where(ctx.node);
      const bWeight = () => integerWeight(b, bz);
      const constant = dimsOf(b).length === 2 && ctx.isConstant(ctx.node.inputs[1]) && (!bz || ctx.isConstant(ctx.node.inputs[3]));
      const packed = constant ? packedMatMulInteger(ctx, b, bz) : null;
      const aq = toQ(a, 1, az ? scalar(az, w) : 0, w);
      try {
        if (packed) return [qvalue(matmulInteger(aq, packed))];
        const bq = bWeight();
        try {
          return [qvalue(matmulInteger(aq, bq))];
        } finally {
          bq.dispose();
        }
      } finally {
        aq.dispose();
      }
    },
  },

  ConvInteger: {
    inputs: ['x: 8bit', 'w: 8bit rank 4 const', 'x_zero_point?: =x scalar', 'w_zero_point?: =w scalar const'],
    attributes: CONV_ATTRIBUTES,
    prepare: integerConv,
    run(ctx, [x, wv, xz, wz], attrs) {
      const w = where(ctx.node);
      const packed = ctx.prepare(() => {
        if (!ctx.isConstant(ctx.node.inputs[1])) throw new UnsupportedError(`${w}: weights that are not constant are not supported`);
        const wh = toHost(wv);
        const weight = fromIntRepr(wh.data, wh.dims, 1, wz ? scalar(wz, w) : 0, QDTYPE[wh.dtype]);
        try {
          return packConv2d(weight, null, { ...attrs.conv, mode: 'none' });
        } finally {
          weight.dispose();
        }
      });
      const xq = toQ(x, 1, xz ? scalar(xz, w) : 0, w);
      try {
        return [qvalue(convInteger(xq, packed))];
      } finally {
        xq.dispose();
      }
    },
  },
};
