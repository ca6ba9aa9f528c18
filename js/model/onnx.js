// Reading ONNX files: protobufjs (the maintained protobuf library) over a schema with the official
// onnx.proto field numbers, then a validated plain-object graph. Every size is checked against the
// bytes that are actually there before anything is allocated, so truncated, malformed or hostile
// files end in an Error naming the problem, never in a crash or a giant allocation.
// protobufjs is a static import, so that every bundler resolves it and converts its CommonJS (Vite pre-bundles
// it, webpack and Rollup wrap it, Node imports it). A page without a bundler maps the specifier with an import map
// (web_demo/index.html does: protobufjs's browser build, then a one-line module exporting globalThis.protobuf).
import protobuf from 'protobufjs/light.js';
import { ModelFormatError, UnsupportedError } from '../errors.js';
import { QW_MAX_RANK as MAX_RANK } from '../runtime/abi.js';

let modelProto = null;
/** The protobufjs type of onnx.ModelProto over the schema below (also what tools/fuzz mutates files with). */
export function modelProtoType() {
  modelProto ??= protobuf.Root.fromJSON(SCHEMA).lookupType('onnx.ModelProto');
  return modelProto;
}

const f = (type, id, rule) => (rule ? { type, id, rule } : { type, id });

// The part of onnx.proto (https://github.com/onnx/onnx/blob/main/onnx/onnx.proto) qwasm reads; the
// field numbers are the official ones.
const SCHEMA = {
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            irVersion: f('int64', 1), opsetImport: f('OperatorSetIdProto', 8, 'repeated'), producerName: f('string', 2),
            producerVersion: f('string', 3), domain: f('string', 4), modelVersion: f('int64', 5), docString: f('string', 6),
            graph: f('GraphProto', 7), metadataProps: f('StringStringEntryProto', 14, 'repeated'),
          },
        },
        OperatorSetIdProto: { fields: { domain: f('string', 1), version: f('int64', 2) } },
        StringStringEntryProto: { fields: { key: f('string', 1), value: f('string', 2) } },
        GraphProto: {
          fields: {
            node: f('NodeProto', 1, 'repeated'), name: f('string', 2), initializer: f('TensorProto', 5, 'repeated'),
            docString: f('string', 10), input: f('ValueInfoProto', 11, 'repeated'), output: f('ValueInfoProto', 12, 'repeated'),
            valueInfo: f('ValueInfoProto', 13, 'repeated'),
          },
        },
        NodeProto: {
          fields: {
            input: f('string', 1, 'repeated'), output: f('string', 2, 'repeated'), name: f('string', 3), opType: f('string', 4),
            domain: f('string', 7), attribute: f('AttributeProto', 5, 'repeated'), docString: f('string', 6),
          },
        },
        AttributeProto: {
          fields: {
            name: f('string', 1), refAttrName: f('string', 21), docString: f('string', 13), type: f('int32', 20), f: f('float', 2),
            i: f('int64', 3), s: f('bytes', 4), t: f('TensorProto', 5), g: f('GraphProto', 6), floats: f('float', 7, 'repeated'),
            ints: f('int64', 8, 'repeated'), strings: f('bytes', 9, 'repeated'), tensors: f('TensorProto', 10, 'repeated'),
          },
        },
        TensorProto: {
          fields: {
            dims: f('int64', 1, 'repeated'), dataType: f('int32', 2), floatData: f('float', 4, 'repeated'),
            int32Data: f('int32', 5, 'repeated'), stringData: f('bytes', 6, 'repeated'), int64Data: f('int64', 7, 'repeated'),
            name: f('string', 8), docString: f('string', 12), rawData: f('bytes', 9), dataLocation: f('int32', 14),
            doubleData: f('double', 10, 'repeated'), uint64Data: f('uint64', 11, 'repeated'),
          },
        },
        ValueInfoProto: { fields: { name: f('string', 1), type: f('TypeProto', 2), docString: f('string', 3) } },
        TypeProto: {
          fields: { tensorType: f('TypeProtoTensor', 1) },
        },
        TypeProtoTensor: { fields: { elemType: f('int32', 1), shape: f('TensorShapeProto', 2) } },
        TensorShapeProto: { fields: { dim: f('Dimension', 1, 'repeated') } },
        Dimension: { fields: { dimValue: f('int64', 1), dimParam: f('string', 2) } },
      },
    },
  },
};


/** ONNX TensorProto.DataType codes qwasm handles, with their element types. */
export const ONNX_DTYPES = Object.freeze({
  1: { name: 'float32', Array: Float32Array, bytes: 4 },
  2: { name: 'uint8', Array: Uint8Array, bytes: 1 },
  3: { name: 'int8', Array: Int8Array, bytes: 1 },
  6: { name: 'int32', Array: Int32Array, bytes: 4 },
  7: { name: 'int64', Array: BigInt64Array, bytes: 8 },
  9: { name: 'bool', Array: Uint8Array, bytes: 1 },
});

/** Largest tensor qwasm accepts from a file: 2^28 elements. */
const MAX_ELEMENTS = 2 ** 28;
/** Largest dimension: the C core takes sizes as int32. */
const MAX_DIM = 2 ** 31 - 1;


/** A protobuf int64 (number or Long) as a safe JS number, or an error naming where it came from. */
function int64(v, where) {
  const n = typeof v === 'number' ? v : v == null ? 0 : Number(v.toString());
  if (!Number.isSafeInteger(n)) throw new ModelFormatError(`${where}: integer ${v} is out of range`);
  return n;
}

function checkDims(dims, where) {
  if (dims.length > MAX_RANK) throw new ModelFormatError(`${where}: ${dims.length} dimensions; at most ${MAX_RANK} are supported`);
  let numel = 1;
  const out = dims.map((d, i) => {
    const n = int64(d, `${where} dims[${i}]`);
    if (n < 0) throw new ModelFormatError(`${where}: dimension ${i} is negative (${n})`);
    if (n > MAX_DIM) throw new ModelFormatError(`${where}: dimension ${i} (${n}) exceeds the limit of ${MAX_DIM}`);
    numel *= n;
    return n;
  });
  if (numel > MAX_ELEMENTS) throw new ModelFormatError(`${where}: ${numel} elements (dims [${out}]) exceed the limit of ${MAX_ELEMENTS}`);
  return { dims: out, numel };
}

/** ONNX TensorProto.DataType names, for error messages. */
const TYPE_NAMES = ['UNDEFINED', 'FLOAT', 'UINT8', 'INT8', 'UINT16', 'INT16', 'INT32', 'INT64', 'STRING', 'BOOL', 'FLOAT16', 'DOUBLE', 'UINT32', 'UINT64', 'COMPLEX64', 'COMPLEX128', 'BFLOAT16'];
const typeName = (t) => `${t}${TYPE_NAMES[t] ? ` (${TYPE_NAMES[t]})` : ''}`;

/** The values of a TensorProto as a typed array, checked against its dims. */
export function tensorValues(t, where) {
  const dtype = ONNX_DTYPES[t.dataType];
  if (dtype === undefined) throw new ModelFormatError(`${where}: tensor data type ${typeName(t.dataType)} is not supported`);
  if (t.dataLocation === 1) throw new ModelFormatError(`${where}: external tensor data is not supported; embed the weights in the file`);
  const { dims, numel } = checkDims(t.dims ?? [], where);
  let data;
  if (t.rawData && t.rawData.length > 0) {
    if (t.rawData.length !== numel * dtype.bytes) {
      throw new ModelFormatError(`${where}: raw_data holds ${t.rawData.length} bytes, dims [${dims}] of ${dtype.name} need ${numel * dtype.bytes}`);
    }
    const copy = new Uint8Array(t.rawData); // aligned copy
    data = new dtype.Array(copy.buffer, 0, numel);
  } else {
    const source =
      t.dataType === 1 ? t.floatData : t.dataType === 7 ? t.int64Data : [2, 3, 6, 9].includes(t.dataType) ? t.int32Data : [];
    if ((source?.length ?? 0) !== numel) {
      throw new ModelFormatError(`${where}: holds ${source?.length ?? 0} values, dims [${dims}] need ${numel}`);
    }
    data = new dtype.Array(numel);
    for (let i = 0; i < numel; i++) data[i] = t.dataType === 7 ? BigInt(source[i].toString()) : source[i];
  }
  return { dtype: dtype.name, dims, data };
}

/** ONNX AttributeProto types qwasm's operators never take (valid ONNX: an UnsupportedError, not a format error). */
const UNSUPPORTED_ATTRIBUTE_TYPES = { 5: 'GRAPH', 9: 'TENSORS', 10: 'GRAPHS', 11: 'SPARSE_TENSOR', 12: 'SPARSE_TENSORS', 13: 'TYPE_PROTO', 14: 'TYPE_PROTOS' };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A bytes field as text: the file's bytes must be UTF-8. */
function text(bytes, where) {
  if (!(bytes instanceof Uint8Array)) return '';
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ModelFormatError(`${where}: the string is not valid UTF-8`);
  }
}

/** The value of an attribute, read from the field its declared type names (the others are ignored, as in ONNX). */
function attributeValue(a, where) {
  switch (a.type) {
    case 1: return a.f ?? 0;
    case 2: return int64(a.i, where);
    case 3: return text(a.s, where);
    case 4:
      if (!a.t) throw new ModelFormatError(`${where}: a TENSOR attribute without a tensor`);
      return tensorValues(a.t, where);
    case 6: return Array.from(a.floats ?? []);
    case 7: return (a.ints ?? []).map((v, i) => int64(v, `${where}[${i}]`));
    case 8: return (a.strings ?? []).map((s, i) => text(s, `${where}[${i}]`));
    default:
      if (UNSUPPORTED_ATTRIBUTE_TYPES[a.type]) throw new UnsupportedError(`${where}: attributes of type ${UNSUPPORTED_ATTRIBUTE_TYPES[a.type]} are not supported`);
      throw new ModelFormatError(`${where}: attribute type ${a.type} is not an ONNX attribute type`);
  }
}

function valueInfo(v, where) {
  const tt = v.type?.tensorType;
  if (!tt) throw new ModelFormatError(`${where} "${v.name}": only tensor inputs and outputs are supported`);
  const dtype = ONNX_DTYPES[tt.elemType]?.name;
  if (dtype === undefined) throw new ModelFormatError(`${where} "${v.name}": element type ${typeName(tt.elemType)} is not supported`);
  if (!v.name) throw new ModelFormatError(`${where}: a value without a name`);
  const dims = (tt.shape?.dim ?? []).map((d, i) => {
    if (d.dimParam) return d.dimParam;
    const n = int64(d.dimValue, `${where} "${v.name}" dim ${i}`);
    if (n < 0 || n > MAX_DIM) throw new ModelFormatError(`${where} "${v.name}": dimension ${i} (${n}) is not in [0, ${MAX_DIM}]`);
    return n;
  });
  if (dims.length > MAX_RANK) throw new ModelFormatError(`${where} "${v.name}": ${dims.length} dimensions; at most ${MAX_RANK} are supported`);
  return { name: v.name, dtype, dims };
}

/**
 * Decodes and validates an ONNX ModelProto. Returns { irVersion, opsets: Map(domain -> version),
 * metadata: Map, inputs, outputs, initializers: Map(name -> {dtype, dims, data}), nodes }.
 */
export async function decodeOnnx(bytes) {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('loadModel: the model must be a Uint8Array, an ArrayBuffer or a URL');
  const ModelProto = modelProtoType();
  let m;
  try {
    m = ModelProto.decode(bytes);
  } catch (error) {
    throw new ModelFormatError(`malformed ONNX file: ${error.message}`);
  }
  const g = m.graph;
  if (!g || !g.node) throw new ModelFormatError('malformed ONNX file: no graph');
  const opsets = new Map();
  for (const o of m.opsetImport ?? []) opsets.set(o.domain || '', int64(o.version, 'opset_import'));
  if (!opsets.has('')) throw new ModelFormatError('malformed ONNX file: no opset for the default ONNX domain');
  const initializers = new Map();
  for (const t of g.initializer ?? []) {
    if (!t.name) throw new ModelFormatError('malformed ONNX file: an initializer has no name');
    if (initializers.has(t.name)) throw new ModelFormatError(`malformed ONNX file: two initializers are named "${t.name}"`);
    initializers.set(t.name, tensorValues(t, `initializer "${t.name}"`));
  }
  const nodes = (g.node ?? []).map((n, index) => {
    if (!n.opType) throw new ModelFormatError(`malformed ONNX file: node ${index}${n.name ? ` "${n.name}"` : ''} has no op_type`);
    const name = n.name || `${n.opType}_${index}`;
    const attributes = {};
    const attributeTypes = {}; // kept so that encodeOnnx writes 1.0 back as a float, not an int
    for (const a of n.attribute ?? []) {
      if (!a.name) throw new ModelFormatError(`node "${name}": an attribute has no name`);
      if (Object.hasOwn(attributes, a.name)) throw new ModelFormatError(`node "${name}": attribute ${a.name} is given twice`);
      attributes[a.name] = attributeValue(a, `node "${name}" attribute ${a.name}`);
      attributeTypes[a.name] = a.type;
    }
    return { name, opType: n.opType, domain: n.domain || '', inputs: n.input.slice(), outputs: n.output.slice(), attributes, attributeTypes };
  });
  const metadata = new Map((m.metadataProps ?? []).map((p) => [p.key, p.value]));
  const inputs = (g.input ?? []).filter((v) => !initializers.has(v.name)).map((v) => valueInfo(v, 'graph input'));
  const outputs = (g.output ?? []).map((v) => valueInfo(v, 'graph output'));
  // The shapes the file declares for intermediate values (exporters and shape inference write them): what
  // onnxruntime's fusions see where their conditions depend on shapes. Unknown dimensions are null.
  const shapes = new Map();
  for (const v of [...(g.valueInfo ?? []), ...(g.input ?? []), ...(g.output ?? [])]) {
    const dims = v.type?.tensorType?.shape?.dim;
    if (!v.name || !dims) continue;
    shapes.set(v.name, dims.map((d) => (d.dimParam ? d.dimParam : Object.hasOwn(d, 'dimValue') ? Number(d.dimValue.toString()) : null)));
  }
  const graph = { irVersion: int64(m.irVersion, 'ir_version'), opsets, metadata, inputs, outputs, initializers, nodes, shapes };
  checkGraphNames(graph);
  decoded.add(graph);
  return graph;
}

/** The graphs decodeOnnx made (what a Model may be built from). */
const decoded = new WeakSet();

/** True for a graph that decodeOnnx returned. */
export function isDecodedGraph(graph) {
  return decoded.has(graph);
}

/**
 * ONNX graphs are in single static assignment form: every value has one source (a graph input, an initializer
 * or one node output), graph inputs and outputs are listed once. A second source would overwrite the first
 * value in the middle of a run (and leak what it held); checked at load and again after the graph passes.
 */
export function checkGraphNames(graph, when = '') {
  const at = `malformed ONNX file${when ? ` (${when})` : ''}`;
  const source = new Map(); // value name -> what produces it
  for (const name of graph.initializers.keys()) source.set(name, 'an initializer');
  for (const v of graph.inputs) {
    if (source.has(v.name)) throw new ModelFormatError(`${at}: graph input "${v.name}" is listed twice`);
    source.set(v.name, 'a graph input');
  }
  for (const node of graph.nodes) {
    for (const name of node.outputs) {
      if (name === '') continue;
      const first = source.get(name);
      if (first) throw new ModelFormatError(`${at}: "${name}" is an output of node "${node.name}" (${node.opType}) and also of ${first}`);
      source.set(name, `node "${node.name}" (${node.opType})`);
    }
  }
  const outputs = new Set();
  for (const v of graph.outputs) {
    if (outputs.has(v.name)) throw new ModelFormatError(`${at}: graph output "${v.name}" is listed twice`);
    outputs.add(v.name);
  }
}

const DTYPE_CODE = Object.fromEntries(Object.entries(ONNX_DTYPES).map(([code, d]) => [d.name, Number(code)]));

function tensorProto(name, { dtype, dims, data }) {
  const code = DTYPE_CODE[dtype];
  if (code === undefined) throw new TypeError(`encodeOnnx: tensor "${name}" has unsupported dtype ${dtype}`);
  // raw_data is little-endian, as typed arrays are on every engine qwasm runs on (wasm is little-endian too)
  const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  return { name, dims: dims.slice(), dataType: code, rawData: raw };
}

function attributeProto(name, value, type) {
  if (type === undefined) {
    if (typeof value === 'string') type = 3;
    else if (typeof value === 'number') type = Number.isInteger(value) ? 2 : 1;
    else if (value instanceof Float32Array) type = 6;
    else if (Array.isArray(value)) type = value.every(Number.isInteger) ? 7 : 6;
    else if (value && value.dtype && value.dims) type = 4;
    else throw new TypeError(`encodeOnnx: attribute ${name} has an unsupported value ${value}`);
  }
  switch (type) {
    case 1: return { name, type, f: value };
    case 2: return { name, type, i: value };
    case 3: return { name, type, s: new TextEncoder().encode(value) };
    case 4: return { name, type, t: tensorProto('', value) };
    case 6: return { name, type, floats: Array.from(value) };
    case 7: return { name, type, ints: Array.from(value) };
    case 8: return { name, type, strings: value.map((v) => new TextEncoder().encode(v)) };
    default: throw new TypeError(`encodeOnnx: attribute ${name} has unsupported type ${type}`);
  }
}

function valueInfoProto({ name, dtype, dims }) {
  const dim = dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: String(d) }));
  return { name, type: { tensorType: { elemType: DTYPE_CODE[dtype], shape: { dim } } } };
}

/**
 * Writes a graph in decodeOnnx's form ({ irVersion, opsets, metadata, inputs, outputs, initializers,
 * nodes }) as ONNX ModelProto bytes. Attribute types come from the decoded file where known (a float
 * 1.0 stays a float), otherwise from the value.
 */
export async function encodeOnnx(graph, { producerName = 'qwasm', producerVersion = '' } = {}) {
  const ModelProto = modelProtoType();
  const message = {
    irVersion: graph.irVersion,
    producerName,
    producerVersion,
    opsetImport: [...graph.opsets].map(([domain, version]) => ({ domain, version })),
    metadataProps: [...graph.metadata].map(([key, value]) => ({ key, value })),
    graph: {
      name: graph.name ?? 'qwasm',
      node: graph.nodes.map((n) => ({
        name: n.name, opType: n.opType, domain: n.domain, input: n.inputs, output: n.outputs,
        attribute: Object.entries(n.attributes).map(([k, v]) => attributeProto(k, v, n.attributeTypes?.[k])),
      })),
      initializer: [...graph.initializers].map(([name, t]) => tensorProto(name, t)),
      input: graph.inputs.map(valueInfoProto),
      output: graph.outputs.map(valueInfoProto),
    },
  };
  return ModelProto.encode(ModelProto.fromObject(message)).finish();
}
