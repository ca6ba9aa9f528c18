// Encode tiny (single-node) ONNX models in plain Node with protobufjs, using a
// subset of the official onnx.proto (tools/bench/onnx.proto, same field
// numbers). Used by the benchmarks to feed onnxruntime-web without Python.
//
//   import { singleNodeModel, ElemType } from './onnx-model.mjs';
//   const bytes = singleNodeModel({
//     opType: 'QLinearMatMul', opset: 13,
//     inputs: [{ name: 'a', elemType: 'UINT8', dims: [1, 1024] }],
//     initializers: [{ name: 'a_scale', elemType: 'FLOAT', dims: [], data: [0.02] }, ...],
//     nodeInputs: ['a', 'a_scale', ...],          // optional; default: inputs then initializers
//     outputs: [{ name: 'y', elemType: 'UINT8', dims: [1, 1024] }],
//     attributes: { group: 64, pads: [1, 1, 1, 1] },
//   });                                           // -> Uint8Array (ModelProto)

import protobuf from 'protobufjs';
import { fileURLToPath } from 'node:url';

const PROTO_PATH = fileURLToPath(new URL('./onnx.proto', import.meta.url));
const root = protobuf.loadSync(PROTO_PATH);
export const ModelProto = root.lookupType('onnx.ModelProto');
const AttrType = root.lookupEnum('onnx.AttributeProto.AttributeType').values;

/** TensorProto.DataType values used here (same numbers as onnx.proto). */
export const ElemType = Object.freeze({ FLOAT: 1, UINT8: 2, INT8: 3, INT16: 5, INT32: 6, INT64: 7, BOOL: 9 });

function elemTypeOf(t) {
  if (typeof t === 'number') return t;
  const v = ElemType[String(t).toUpperCase()];
  if (v === undefined) throw new Error(`unsupported elemType ${t}`);
  return v;
}

/** Serialize tensor values to little-endian raw_data bytes. */
function rawBytes(elemType, data, count) {
  const arr = Array.from(data, (x) => x); // works for arrays and typed arrays (incl. BigInt64Array)
  if (arr.length !== count) throw new Error(`initializer has ${arr.length} values, dims need ${count}`);
  const size = { 1: 4, 2: 1, 3: 1, 5: 2, 6: 4, 7: 8, 9: 1 }[elemType];
  const buf = new Uint8Array(count * size);
  const dv = new DataView(buf.buffer);
  for (let i = 0; i < count; i++) {
    const x = arr[i];
    switch (elemType) {
      case 1: dv.setFloat32(i * 4, x, true); break;
      case 2: dv.setUint8(i, x); break;
      case 3: dv.setInt8(i, x); break;
      case 5: dv.setInt16(i * 2, x, true); break;
      case 6: dv.setInt32(i * 4, x, true); break;
      case 7: dv.setBigInt64(i * 8, BigInt(x), true); break;
      case 9: dv.setUint8(i, x ? 1 : 0); break;
      default: throw new Error(`unsupported elemType ${elemType}`);
    }
  }
  return buf;
}

export function tensorProto({ name, elemType, dims = [], data }) {
  const et = elemTypeOf(elemType);
  const count = dims.reduce((a, b) => a * b, 1);
  return { name, dataType: et, dims, rawData: rawBytes(et, data, count) };
}

export function valueInfo({ name, elemType, dims }) {
  const tensorType = { elemType: elemTypeOf(elemType) };
  if (dims) {
    tensorType.shape = {
      dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })),
    };
  }
  return { name, type: { tensorType } };
}

/**
 * Attribute from a JS value. Plain form infers the type: integer number -> INT,
 * other number -> FLOAT, string -> STRING, array of integers -> INTS, other
 * number array -> FLOATS. Force a type with { type: 'FLOAT'|'INT'|'FLOATS'|'INTS'|'STRING'|'TENSOR', value }
 * (a TENSOR's value: { elemType, dims, data }).
 */
export function attributeProto(name, v) {
  let type, value;
  if (v && typeof v === 'object' && !Array.isArray(v) && 'type' in v) {
    type = String(v.type).toUpperCase();
    value = v.value;
  } else {
    value = v;
    if (typeof v === 'string') type = 'STRING';
    else if (typeof v === 'number') type = Number.isInteger(v) ? 'INT' : 'FLOAT';
    else if (Array.isArray(v)) type = v.every(Number.isInteger) ? 'INTS' : 'FLOATS';
    else throw new Error(`cannot infer attribute type for ${name}`);
  }
  const a = { name, type: AttrType[type] };
  switch (type) {
    case 'FLOAT': a.f = value; break;
    case 'INT': a.i = value; break;
    case 'STRING': a.s = new TextEncoder().encode(value); break;
    case 'FLOATS': a.floats = value; break;
    case 'INTS': a.ints = value; break;
    case 'TENSOR': a.t = tensorProto({ name: '', ...value }); break;
    default: throw new Error(`unsupported attribute type ${type}`);
  }
  return a;
}

/** Build a one-node ModelProto and return its serialized bytes. */
export function singleNodeModel({
  opType,
  domain = '',
  opset = 13,
  irVersion = 8,
  inputs = [],
  initializers = [],
  nodeInputs,
  outputs,
  attributes = {},
  name = opType,
}) {
  const opsets = { '': domain === '' ? opset : 13 };
  if (domain !== '') opsets[domain] = opset;
  return graphModel({
    name,
    irVersion,
    opsets,
    producerName: 'qwasm-bench',
    nodes: [{ inputs: nodeInputs ?? [...inputs.map((i) => i.name), ...initializers.map((i) => i.name)], outputs: outputs.map((o) => o.name),
      name: `${name}_node`, opType, domain, attributes }],
    inputs,
    initializers,
    outputs,
  });
}

/**
 * Build a ModelProto with several nodes and return its serialized bytes. nodes: [{ opType, domain, inputs,
 * outputs, attributes, name }]; the other fields as for singleNodeModel; opsets: { domain: version }.
 */
export function graphModel({ nodes, inputs = [], initializers = [], outputs, opsets = { '': 13 }, irVersion = 8, name = 'graph', producerName = 'qwasm-tests' }) {
  const model = {
    irVersion,
    opsetImport: Object.entries(opsets).map(([domain, version]) => ({ domain, version })),
    producerName,
    producerVersion: '0.1',
    graph: {
      name,
      node: nodes.map((n, i) => ({
        input: n.inputs, output: n.outputs, name: n.name ?? `${n.opType}_${i}`, opType: n.opType, domain: n.domain ?? '',
        attribute: Object.entries(n.attributes ?? {}).map(([k, v]) => attributeProto(k, v)),
      })),
      initializer: initializers.map(tensorProto),
      input: inputs.map(valueInfo),
      output: outputs.map(valueInfo),
    },
  };
  const err = ModelProto.verify(model);
  if (err) throw new Error(`ModelProto.verify: ${err}`);
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
}

/** Decode model bytes back to a plain object (debugging aid). */
export function decodeModel(bytes) {
  return ModelProto.toObject(ModelProto.decode(bytes), { longs: Number, bytes: Array, enums: String });
}
