// Int8 TFLite files for the browser benchmark's XNNPACK side (LiteRT.js), written with the flatbuffers npm
// package from TFLite's schema (tensorflow/compiler/mlir/lite/schema/schema.fbs: the table field order below is
// the schema's, the slot of field i is i; a union takes two slots, its type then its value). Two sources:
//   benchCaseTflite(c, d)  a single-op model of a tools/bench/cases.mjs case on the same bytes
//   modelTflite(model)     a qwasm Model loaded from a QDQ file (its fused QLinearConv / QLinearAdd /
//                          QLinearGlobalAveragePool / QGemm layers), e.g. tools/bench/mobilenet_v2.py's MobileNetV2
// ONNX's uint8 activations become TFLite's int8 ones (values and zero points - 128: the same real numbers), NCHW
// becomes NHWC, weights [O, I, kh, kw] become [O, kh, kw, I] (depthwise [1, kh, kw, O]); PyTorch's padding is an
// explicit PAD where TFLite's SAME would pad otherwise (stride 2 on even sizes).
import * as flatbuffers from 'flatbuffers';

const TensorType = { FLOAT32: 0, INT32: 2, INT8: 9 };
const Op = { ADD: 0, CONV_2D: 3, DEPTHWISE_CONV_2D: 4, DEQUANTIZE: 6, FULLY_CONNECTED: 9, RESHAPE: 22, PAD: 34, MEAN: 40, QUANTIZE: 114 };
const Options = { NONE: 0, Conv2DOptions: 1, DepthwiseConv2DOptions: 2, FullyConnectedOptions: 8, AddOptions: 11, ReshapeOptions: 17, PadOptions: 22, ReducerOptions: 27 };
const Padding = { SAME: 0, VALID: 1 };
const Activation = { NONE: 0, RELU: 1, RELU6: 3 };

/** A graph being built: tensors, constant buffers, operators. */
class Graph {
  tensors = [];
  buffers = [new Uint8Array(0)]; // buffer 0: the empty sentinel
  operators = [];
  opcodes = [];
  inputs = [];
  outputs = [];

  /** A tensor; data (bytes) makes it constant; q: { scale: number | number[], zeroPoint: number | number[], axis }. */
  tensor(name, shape, type, q = null, data = null) {
    let buffer = 0;
    if (data) {
      buffer = this.buffers.length;
      this.buffers.push(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    }
    this.tensors.push({ name, shape, type, q, buffer });
    return this.tensors.length - 1;
  }

  op(code, inputs, outputs, optionsType = Options.NONE, options = null, version = 1) {
    let index = this.opcodes.findIndex((o) => o.code === code && o.version === version);
    if (index < 0) index = this.opcodes.push({ code, version }) - 1;
    this.operators.push({ index, inputs, outputs, optionsType, options });
  }

  /** The .tflite bytes. */
  write(description) {
    const b = new flatbuffers.Builder(1 << 20);
    // A vector of `size`-byte elements, written back to front as flatbuffers builds them.
    const vector = (values, size, add) => {
      b.startVector(size, values.length, size);
      for (let i = values.length - 1; i >= 0; i--) add(values[i]);
      return b.endVector();
    };
    const ints = (values) => vector(values, 4, (v) => b.addInt32(v));
    const offsets = (values) => vector(values, 4, (v) => b.addOffset(v));
    const floats = (values) => vector(values, 4, (v) => b.addFloat32(v));
    const longs = (values) => vector(values, 8, (v) => b.addInt64(BigInt(v)));
    const buffers = this.buffers.map((data) => {
      let vector = 0;
      if (data.length) {
        b.startVector(1, data.length, 16);
        for (let i = data.length - 1; i >= 0; i--) b.addInt8(data[i]);
        vector = b.endVector();
      }
      b.startObject(3);
      if (vector) b.addFieldOffset(0, vector, 0);
      return b.endObject();
    });
    const tensors = this.tensors.map((t) => {
      const name = b.createString(t.name);
      const shape = ints(t.shape);
      let quant = 0;
      if (t.q) {
        const scales = floats([t.q.scale].flat());
        const zps = longs([t.q.zeroPoint].flat());
        b.startObject(7); // min, max, scale, zero_point, details_type, details, quantized_dimension
        b.addFieldOffset(2, scales, 0);
        b.addFieldOffset(3, zps, 0);
        b.addFieldInt32(6, t.q.axis ?? 0, 0);
        quant = b.endObject();
      }
      b.startObject(9); // shape, type, buffer, name, quantization, ...
      b.addFieldOffset(0, shape, 0);
      b.addFieldInt8(1, t.type, 0);
      b.addFieldInt32(2, t.buffer, 0);
      b.addFieldOffset(3, name, 0);
      if (quant) b.addFieldOffset(4, quant, 0);
      return b.endObject();
    });
    const operators = this.operators.map((o) => {
      const inputs = ints(o.inputs);
      const outputs = ints(o.outputs);
      const options = o.options ? o.options(b, ints) : 0;
      b.startObject(13);
      b.addFieldInt32(0, o.index, 0);
      b.addFieldOffset(1, inputs, 0);
      b.addFieldOffset(2, outputs, 0);
      if (options) {
        b.addFieldInt8(3, o.optionsType, 0);
        b.addFieldOffset(4, options, 0);
      }
      return b.endObject();
    });
    const opcodes = this.opcodes.map(({ code, version }) => {
      b.startObject(4); // deprecated_builtin_code, custom_code, version, builtin_code
      b.addFieldInt8(0, Math.min(code, 127), 0);
      b.addFieldInt32(2, version, 1);
      b.addFieldInt32(3, code, 0);
      return b.endObject();
    });
    const tensorVector = offsets(tensors);
    const inputVector = ints(this.inputs);
    const outputVector = ints(this.outputs);
    const operatorVector = offsets(operators);
    const subgraphName = b.createString('main');
    b.startObject(5);
    b.addFieldOffset(0, tensorVector, 0);
    b.addFieldOffset(1, inputVector, 0);
    b.addFieldOffset(2, outputVector, 0);
    b.addFieldOffset(3, operatorVector, 0);
    b.addFieldOffset(4, subgraphName, 0);
    const subgraph = b.endObject();
    const opcodeVector = offsets(opcodes);
    const subgraphVector = offsets([subgraph]);
    const desc = b.createString(description);
    const bufferVector = offsets(buffers);
    b.startObject(8);
    b.addFieldInt32(0, 3, 0);
    b.addFieldOffset(1, opcodeVector, 0);
    b.addFieldOffset(2, subgraphVector, 0);
    b.addFieldOffset(3, desc, 0);
    b.addFieldOffset(4, bufferVector, 0);
    b.finish(b.endObject(), 'TFL3');
    return b.asUint8Array().slice();
  }
}

const i8 = (u8) => Int8Array.from(u8, (v) => v - 128); // uint8 with zp z -> int8 with zp z - 128, same reals
const q8 = ({ scale, zeroPoint }) => ({ scale, zeroPoint: zeroPoint - 128 });

function convOptions(depthwise, padding, stride, activation) {
  return (b) => {
    b.startObject(7);
    b.addFieldInt8(0, padding, 0);
    b.addFieldInt32(1, stride[1], 0);
    b.addFieldInt32(2, stride[0], 0);
    if (depthwise) {
      b.addFieldInt32(3, 1, 0); // depth_multiplier
      b.addFieldInt8(4, activation, 0);
    } else {
      b.addFieldInt8(3, activation, 0);
    }
    return b.endObject();
  };
}

/** Weights [O, I/g, kh, kw] (ONNX) as TFLite's filter: [O, kh, kw, I/g], or [1, kh, kw, O] for a depthwise one. */
function filterOf(w, [o, ig, kh, kw], depthwise) {
  const out = new Int8Array(w.length);
  for (let co = 0; co < o; co++) {
    for (let ci = 0; ci < ig; ci++) {
      for (let y = 0; y < kh; y++) {
        for (let x = 0; x < kw; x++) {
          const v = w[((co * ig + ci) * kh + y) * kw + x];
          out[depthwise ? (y * kw + x) * o + co : ((co * kh + y) * kw + x) * ig + ci] = v;
        }
      }
    }
  }
  return out;
}

/**
 * Adds a convolution: SAME when TFLite's SAME pads as PyTorch does, VALID after an explicit PAD otherwise.
 * x: tensor index, shape NHWC; returns the output tensor index.
 */
function addConv(g, name, x, [n, h, w, cin], xq, { weights, dims, bias, wq, stride, pads, group, yq, activation }) {
  const [cout, , kh, kw] = dims;
  const depthwise = group > 1 && group === cin && cout === cin;
  if (group !== 1 && !depthwise) throw new Error(`${name}: grouped convolutions are not written`);
  const [pt, pl, pb, pr] = pads;
  const oh = Math.floor((h + pt + pb - kh) / stride[0]) + 1, ow = Math.floor((w + pl + pr - kw) / stride[1]) + 1;
  const sameTotal = (size, k, s) => Math.max((Math.ceil(size / s) - 1) * s + k - size, 0);
  const sameH = sameTotal(h, kh, stride[0]), sameW = sameTotal(w, kw, stride[1]);
  let padding = Padding.VALID;
  let input = x;
  if (pt + pb + pl + pr > 0) {
    const same = Math.floor(sameH / 2) === pt && sameH - Math.floor(sameH / 2) === pb &&
      Math.floor(sameW / 2) === pl && sameW - Math.floor(sameW / 2) === pr && Math.ceil(h / stride[0]) === oh;
    if (same) {
      padding = Padding.SAME;
    } else {
      const paddings = g.tensor(`${name}/paddings`, [4, 2], TensorType.INT32, null, Int32Array.from([0, 0, pt, pb, pl, pr, 0, 0]));
      input = g.tensor(`${name}/padded`, [n, h + pt + pb, w + pl + pr, cin], TensorType.INT8, xq);
      g.op(Op.PAD, [x, paddings], [input], Options.PadOptions, (b) => (b.startObject(0), b.endObject()), 2);
    }
  }
  const filterShape = depthwise ? [1, kh, kw, cout] : [cout, kh, kw, cin / group];
  const filter = g.tensor(`${name}/filter`, filterShape, TensorType.INT8,
    { ...wq, axis: depthwise ? 3 : 0 }, filterOf(weights, dims, depthwise));
  const scales = [wq.scale].flat().map((s) => Math.fround(xq.scale * s));
  const biasTensor = g.tensor(`${name}/bias`, [cout], TensorType.INT32,
    { scale: scales, zeroPoint: scales.map(() => 0) }, bias ?? new Int32Array(cout));
  const y = g.tensor(`${name}/output`, [n, oh, ow, cout], TensorType.INT8, yq);
  g.op(depthwise ? Op.DEPTHWISE_CONV_2D : Op.CONV_2D, [input, filter, biasTensor], [y],
    depthwise ? Options.DepthwiseConv2DOptions : Options.Conv2DOptions, convOptions(depthwise, padding, stride, activation),
    depthwise ? 3 : 3);
  return { y, shape: [n, oh, ow, cout] };
}

function addFullyConnected(g, name, x, xq, { weights, n, k, bias, wq, yq, m, activation = Activation.NONE }) {
  const filter = g.tensor(`${name}/weights`, [n, k], TensorType.INT8, wq, weights);
  const biasTensor = bias
    ? g.tensor(`${name}/bias`, [n], TensorType.INT32, { scale: Math.fround(xq.scale * wq.scale), zeroPoint: 0 }, bias)
    : -1;
  const y = g.tensor(`${name}/output`, [m, n], TensorType.INT8, yq);
  g.op(Op.FULLY_CONNECTED, [x, filter, biasTensor], [y], Options.FullyConnectedOptions,
    (b) => (b.startObject(5), b.addFieldInt8(0, activation, 0), b.endObject()), 4);
  return y;
}

/** A cases.mjs case (ONNX layouts, uint8 activations) as a single-op int8 TFLite model; input NHWC / [M, K] int8. */
export function benchCaseTflite(c, d, q) {
  const g = new Graph();
  const xq = q8({ scale: q.xScale, zeroPoint: q.xZp });
  const yq = q8({ scale: q.yScale, zeroPoint: q.yZp });
  const wq = { scale: q.wScale, zeroPoint: q.wZp };
  if (c.kind === 'gemm') {
    const x = g.tensor('a', [c.M, c.K], TensorType.INT8, xq);
    const bt = new Int8Array(c.N * c.K); // B [K, N] -> weights [N, K]
    for (let k = 0; k < c.K; k++) for (let n = 0; n < c.N; n++) bt[n * c.K + k] = d.b[k * c.N + n];
    const y = addFullyConnected(g, 'fc', x, xq, { weights: bt, n: c.N, k: c.K, bias: null, wq, yq, m: c.M });
    g.inputs = [x];
    g.outputs = [y];
    return g.write(c.name);
  }
  const x = g.tensor('x', [c.N, c.H, c.W, c.Cin], TensorType.INT8, xq);
  const { y } = addConv(g, 'conv', x, [c.N, c.H, c.W, c.Cin], xq, {
    weights: d.w, dims: [c.Cout, c.Cin / c.group, c.kh, c.kw], bias: d.bias, wq, stride: [c.stride, c.stride],
    pads: [c.pad, c.pad, c.pad, c.pad], group: c.group, yq, activation: Activation.NONE,
  });
  g.inputs = [x];
  g.outputs = [y];
  return g.write(c.name);
}

/** TFLite's fused activation whose int8 range equals a layer's output range [lo, hi] (uint8), or null. */
function activationFor(range, yq) {
  if (!range) return Activation.NONE;
  const [lo, hi] = range.map((v) => v - 128);
  const zp = yq.zeroPoint;
  const six = zp + Math.round(6 / yq.scale);
  const candidates = [
    [Activation.NONE, -128, 127],
    [Activation.RELU, Math.max(-128, zp), 127],
    [Activation.RELU6, Math.max(-128, zp), Math.min(127, six)],
  ];
  const hit = candidates.find(([, a, b]) => a === lo && b === hi);
  if (!hit) throw new Error(`no TFLite activation gives the output range [${range}]`);
  return hit[0];
}

/**
 * A qwasm Model of a QDQ CNN (QuantizeLinear, QLinearConv, QLinearAdd, QLinearGlobalAveragePool, Flatten, QGemm,
 * DequantizeLinear; uint8 activations, per-tensor int8 weights) as an int8 TFLite model with float NHWC input.
 */
export function modelTflite(model) {
  const g = new Graph();
  const values = new Map(); // ONNX value name -> { t, shape (NHWC or [M, K]), q }
  const initializerValue = (name) => model.initializer(name);
  for (const layer of model.layers) {
    const name = layer.name;
    switch (layer.opType) {
      case 'QuantizeLinear': {
        const [input] = model.inputs;
        const [n, c, h, w] = input.dims;
        const x = g.tensor(input.name, [n, h, w, c], TensorType.FLOAT32);
        const q = q8(layer.output);
        const y = g.tensor(`${name}/output`, [n, h, w, c], TensorType.INT8, q);
        g.op(Op.QUANTIZE, [x], [y], Options.NONE, null, 2);
        g.inputs.push(x);
        values.set(layer.outputs[0], { t: y, shape: [n, h, w, c], q });
        break;
      }
      case 'QLinearConv': {
        const x = values.get(layer.inputs[0]);
        const weight = model.weight(name);
        const a = layer.attributes;
        const wq = weight.qscheme === 'per_channel_affine'
          ? { scale: Array.from(weight.qPerChannelScales()), zeroPoint: Array.from(weight.qPerChannelZeroPoints()) }
          : { scale: weight.qScale(), zeroPoint: weight.qZeroPoint() };
        const weights = Int8Array.from(weight.intRepr());
        const bias = layer.bias ? Int32Array.from(initializerValue(layer.bias.name).data) : null;
        weight.dispose();
        const yq = q8(layer.output);
        const { y, shape } = addConv(g, name, x.t, x.shape, x.q, {
          weights, dims: layer.weight.dims, bias, wq, stride: a.strides, pads: [a.pads[0], a.pads[1], a.pads[2], a.pads[3]],
          group: a.group, yq, activation: activationFor(a.qwasm_output_range, layer.output),
        });
        values.set(layer.outputs[0], { t: y, shape, q: yq });
        break;
      }
      case 'QLinearAdd': {
        const [a, , , b] = layer.inputs.map((n) => values.get(n));
        const yq = q8(layer.output);
        const y = g.tensor(`${name}/output`, a.shape, TensorType.INT8, yq);
        g.op(Op.ADD, [a.t, b.t], [y], Options.AddOptions, (bd) => (bd.startObject(2), bd.endObject()), 2);
        values.set(layer.outputs[0], { t: y, shape: a.shape, q: yq });
        break;
      }
      case 'QLinearGlobalAveragePool': {
        const x = values.get(layer.inputs[0]);
        const yq = q8(layer.output);
        const axes = g.tensor(`${name}/axes`, [2], TensorType.INT32, null, Int32Array.from([1, 2]));
        const shape = [x.shape[0], 1, 1, x.shape[3]];
        const y = g.tensor(`${name}/output`, shape, TensorType.INT8, yq);
        g.op(Op.MEAN, [x.t, axes], [y], Options.ReducerOptions, (b) => (b.startObject(1), b.addFieldInt8(0, 1, 0), b.endObject()), 2);
        values.set(layer.outputs[0], { t: y, shape, q: yq });
        break;
      }
      case 'Flatten': {
        const x = values.get(layer.inputs[0]);
        const shape = [x.shape[0], x.shape.slice(1).reduce((p, v) => p * v, 1)];
        const newShape = g.tensor(`${name}/shape`, [2], TensorType.INT32, null, Int32Array.from(shape));
        const y = g.tensor(`${name}/output`, shape, TensorType.INT8, x.q);
        g.op(Op.RESHAPE, [x.t, newShape], [y]);
        values.set(layer.outputs[0], { t: y, shape, q: x.q });
        break;
      }
      case 'QGemm': {
        const x = values.get(layer.inputs[0]);
        if (layer.attributes.transB !== 1) throw new Error(`${name}: only transB = 1 is written`);
        const weight = model.weight(name);
        const wq = { scale: weight.qScale(), zeroPoint: weight.qZeroPoint() };
        const weights = Int8Array.from(weight.intRepr());
        weight.dispose();
        const [n, k] = layer.weight.dims;
        const bias = layer.bias ? Int32Array.from(initializerValue(layer.bias.name).data) : null;
        const yq = q8(layer.output);
        const y = addFullyConnected(g, name, x.t, x.q, { weights, n, k, bias, wq, yq, m: x.shape[0] });
        values.set(layer.outputs[0], { t: y, shape: [x.shape[0], n], q: yq });
        break;
      }
      case 'DequantizeLinear': {
        const x = values.get(layer.inputs[0]);
        const y = g.tensor(layer.outputs[0], x.shape, TensorType.FLOAT32);
        g.op(Op.DEQUANTIZE, [x.t], [y], Options.NONE, null, 2);
        g.outputs.push(y);
        break;
      }
      default:
        throw new Error(`modelTflite: ${layer.opType} (${name}) is not written`);
    }
  }
  return g.write('qwasm tools/bench/tflite.mjs');
}

export { i8 as toInt8 };
