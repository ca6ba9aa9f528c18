// Structure-aware mutations of ONNX files for the fuzzer (tools/fuzz/fuzz.mjs, tests/js/fuzz.test.js): a file is
// decoded with the loader's own protobuf schema (js/model/onnx.js, the fields qwasm reads), one to three fields are
// changed — tensor dims, raw_data lengths, data types, attribute types and values, node inputs and outputs, graph
// order, op types and domains, opsets, graph inputs and outputs, initializer names, metadata — and it is encoded
// again; or the bytes themselves are truncated, bit-flipped or spliced. Everything is drawn from a seeded generator,
// so (file, seed) reproduces a case exactly.
import { modelProtoType } from '../../js/model/onnx.js';
import { mulberry32 } from '../bench/cases.mjs';

/** A seeded generator (mulberry32) with the draws the mutations make. */
export function rng(seed) {
  const u32 = mulberry32(seed);
  const next = () => u32() / 4294967296;
  const r = {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (arr) => arr[Math.floor(next() * arr.length)],
  };
  return r;
}

/** murmur3's finalizer: a 32-bit mix. */
function mix(x) {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** A 32-bit seed for case `index` of a run seeded `seed` (runs of different seeds share no cases). */
export function caseSeed(seed, index) {
  return mix((mix((seed ^ 0x9e3779b9) >>> 0) + Math.imul(index, 0x9e3779b9)) >>> 0);
}

const INTS = ['0', '1', '-1', '2', '3', '4', '7', '8', '16', '255', '256', '1000', '65535', '1000000000', '2147483647', '2147483648',
  '-2147483648', '4294967296', '9007199254740993', '-9223372036854775808'];
const FLOATS = [0, -0, 1, -1, 0.5, 2, 1e-45, 1e-38, 3.4e38, Infinity, -Infinity, NaN, 6, 255, 1e9];
const STRINGS = ['', 'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID', 'x', '\u0000', 'é'.repeat(3), 'tanh', 'none'];
const ATTRIBUTE_NAMES = ['axis', 'axes', 'perm', 'kernel_shape', 'pads', 'strides', 'dilations', 'group', 'to', 'alpha', 'beta',
  'transA', 'transB', 'auto_pad', 'ceil_mode', 'count_include_pad', 'channels_last', 'value', 'split', 'allowzero', 'epsilon',
  'min', 'max', 'opset', 'saturate', 'storage_order', 'qwasm_output_range', 'qwasm_relu', 'training_mode', 'momentum'];
const OP_TYPES = ['QuantizeLinear', 'DequantizeLinear', 'QLinearConv', 'QLinearMatMul', 'DynamicQuantizeLinear', 'MatMulInteger',
  'ConvInteger', 'Conv', 'MaxPool', 'AveragePool', 'GlobalAveragePool', 'BatchNormalization', 'Relu', 'Clip', 'LeakyRelu',
  'Sigmoid', 'HardSigmoid', 'HardSwish', 'Softmax', 'Add', 'Sub', 'Mul', 'Div', 'MatMul', 'Gemm', 'Reshape', 'Flatten', 'Squeeze',
  'Unsqueeze', 'Transpose', 'Concat', 'Split', 'Gather', 'Cast', 'Shape', 'Constant', 'Identity', 'ConstantOfShape', 'Sqrt',
  'QGemm', 'QLinearAdd', 'QLinearMul', 'QLinearConcat', 'QLinearAveragePool', 'QLinearGlobalAveragePool', 'QLinearSigmoid',
  'QLinearLeakyRelu', 'QLinearSoftmax', 'NoSuchOp'];
const DOMAINS = ['', 'ai.onnx', 'com.microsoft', 'org.example'];

/** A fresh, independent copy of a decoded model (raw bytes shared: mutations replace them, never write into them). */
function copyModel(m) {
  const copy = (v) => {
    if (Array.isArray(v)) return v.map(copy);
    if (v instanceof Uint8Array) return v;
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]));
    return v;
  };
  return copy(m);
}

let proto = null;
async function modelType() {
  proto ??= await modelProtoType();
  return proto;
}

/** Decodes ONNX bytes into the plain object the mutations work on (int64 as strings, repeated fields as arrays). */
export async function decodeModel(bytes) {
  const T = await modelType();
  return T.toObject(T.decode(bytes), { longs: String, arrays: true });
}

/** Encodes a (mutated) plain model object again. */
export async function encodeModel(m) {
  const T = await modelType();
  return T.encode(T.fromObject(m)).finish();
}

function tensorsOf(m) {
  const g = m.graph ?? {};
  const out = (g.initializer ?? []).map((t) => ({ t, where: `initializer ${t.name}` }));
  for (const n of g.node ?? []) {
    for (const a of n.attribute ?? []) if (a.t) out.push({ t: a.t, where: `node ${n.name} attribute ${a.name}` });
  }
  return out;
}

function valueNames(m) {
  const g = m.graph ?? {};
  return [...new Set([
    ...(g.initializer ?? []).map((t) => t.name), ...(g.input ?? []).map((v) => v.name), ...(g.output ?? []).map((v) => v.name),
    ...(g.node ?? []).flatMap((n) => [...(n.input ?? []), ...(n.output ?? [])]),
  ])];
}

function interestingInt(r, old) {
  if (old !== undefined && r.chance(0.3)) {
    const n = Number(old);
    return String(r.pick([n + 1, n - 1, n * 2, -n, 0]));
  }
  return r.pick(INTS);
}

function mutateIntList(r, list) {
  const l = (list ?? []).slice();
  const what = r.int(5);
  if (what === 0 || l.length === 0) l.push(interestingInt(r));
  else if (what === 1) l.splice(r.int(l.length), 1);
  else if (what === 2) l.length = 0;
  else {
    const i = r.int(l.length);
    l[i] = interestingInt(r, l[i]);
  }
  return l;
}

function shrinkOrGrow(r, bytes) {
  const n = bytes.length;
  switch (r.int(4)) {
    case 0: return bytes.subarray(0, r.int(n + 1));
    case 1: return new Uint8Array(0);
    case 2: {
      const out = new Uint8Array(n + 1 + r.int(16));
      out.set(bytes);
      return out;
    }
    default: return bytes.subarray(0, Math.max(0, n - 1 - r.int(4)));
  }
}

const ELEMENT_BYTES = { 1: 4, 2: 1, 3: 1, 6: 4, 7: 8, 9: 1 };

/**
 * Most of the time a tensor whose dims or type changed gets data of the size they need (its old bytes repeated),
 * so the file still decodes and the change reaches the operators; otherwise the mismatch is what is tested.
 */
function refit(t, r) {
  if (r.chance(0.35)) return;
  const bytes = ELEMENT_BYTES[t.dataType];
  const n = (t.dims ?? []).reduce((a, d) => a * Number(d), 1);
  if (!bytes || !(n >= 0 && n <= 1 << 20)) return;
  const old = t.rawData?.length ? t.rawData : new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
  const data = new Uint8Array(n * bytes);
  for (let i = 0; i < data.length; i++) data[i] = old[i % old.length];
  for (const f of ['floatData', 'int32Data', 'int64Data', 'doubleData', 'uint64Data']) delete t[f];
  t.rawData = data;
}

/** A random node, its `field` list (input / output) made present, the value names, a choice of `ways`, a position. */
function pickList(m, r, field, ways) {
  const nodes = m.graph?.node ?? [];
  if (!nodes.length) return null;
  const n = r.pick(nodes);
  n[field] ??= [];
  return { n, names: valueNames(m), what: r.int(ways), i: r.int(Math.max(1, n[field].length)) };
}

/** The mutations: each changes one field of the decoded model in place and returns a description, or null if n/a. */
const MUTATIONS = {
  tensorDims(m, r) {
    const ts = tensorsOf(m);
    if (!ts.length) return null;
    const { t, where } = r.pick(ts);
    t.dims = mutateIntList(r, t.dims);
    refit(t, r);
    return `${where}: dims [${t.dims}]`;
  },
  rawData(m, r) {
    const ts = tensorsOf(m).filter(({ t }) => t.rawData?.length);
    if (!ts.length) return null;
    const { t, where } = r.pick(ts);
    t.rawData = shrinkOrGrow(r, t.rawData);
    return `${where}: raw_data ${t.rawData.length} bytes`;
  },
  tensorData(m, r) {
    const ts = tensorsOf(m);
    if (!ts.length) return null;
    const { t, where } = r.pick(ts);
    const field = r.pick(['floatData', 'int32Data', 'int64Data', 'doubleData']);
    t[field] = field === 'int64Data' ? [interestingInt(r)] : [r.pick(FLOATS)];
    if (r.chance(0.5)) delete t.rawData;
    return `${where}: ${field} set`;
  },
  tensorValue(m, r) {
    const ts = tensorsOf(m).filter(({ t }) => t.rawData?.length && ELEMENT_BYTES[t.dataType]);
    if (!ts.length) return null;
    const { t, where } = r.pick(ts);
    const bytes = ELEMENT_BYTES[t.dataType];
    const data = t.rawData.slice();
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const count = Math.floor(data.length / bytes);
    if (count === 0) return null;
    const i = r.chance(0.5) ? 0 : r.int(count);
    if (t.dataType === 1) view.setFloat32(i * 4, r.pick(FLOATS), true);
    else if (t.dataType === 7) view.setBigInt64(i * 8, BigInt.asIntN(64, BigInt(interestingInt(r))), true);
    else if (t.dataType === 6) view.setInt32(i * 4, Number(BigInt.asIntN(32, BigInt(interestingInt(r)))), true);
    else data[i] = r.pick([0, 1, 127, 128, 255]);
    t.rawData = data;
    return `${where}: element ${i} changed`;
  },
  inputSwap(m, r) {
    const nodes = (m.graph?.node ?? []).filter((n) => (n.input ?? []).length >= 2);
    if (!nodes.length) return null;
    const n = r.pick(nodes);
    const i = r.int(n.input.length);
    const j = r.int(n.input.length);
    [n.input[i], n.input[j]] = [n.input[j], n.input[i]];
    return `node ${n.name}: inputs ${i} and ${j} swapped`;
  },
  dataType(m, r) {
    const ts = tensorsOf(m);
    if (!ts.length) return null;
    const { t, where } = r.pick(ts);
    t.dataType = r.chance(0.7) ? r.pick([1, 2, 3, 6, 7, 9]) : r.int(18);
    refit(t, r);
    return `${where}: data_type ${t.dataType}`;
  },
  attributeType(m, r) {
    const as = (m.graph?.node ?? []).flatMap((n) => (n.attribute ?? []).map((a) => ({ n, a })));
    if (!as.length) return null;
    const { n, a } = r.pick(as);
    a.type = r.chance(0.85) ? r.pick([1, 2, 3, 4, 6, 7, 8]) : r.int(12);
    return `node ${n.name} attribute ${a.name}: type ${a.type} (payload kept)`;
  },
  attributeValue(m, r) {
    const as = (m.graph?.node ?? []).flatMap((n) => (n.attribute ?? []).map((a) => ({ n, a })));
    if (!as.length) return null;
    const { n, a } = r.pick(as);
    switch (a.type) {
      case 1: a.f = r.pick(FLOATS); break;
      case 2: a.i = interestingInt(r, a.i); break;
      case 3: a.s = new TextEncoder().encode(r.pick(STRINGS)); break;
      case 4: if (a.t) a.t.dims = mutateIntList(r, a.t.dims); break;
      case 6: a.floats = r.chance(0.3) ? [] : [...(a.floats ?? []).slice(0, r.int(5)), r.pick(FLOATS)]; break;
      case 7: a.ints = mutateIntList(r, a.ints); break;
      case 8: a.strings = [new TextEncoder().encode(r.pick(STRINGS))]; break;
      default: a.i = interestingInt(r);
    }
    return `node ${n.name} attribute ${a.name}: value changed`;
  },
  attributeSet(m, r) {
    const nodes = m.graph?.node ?? [];
    if (!nodes.length) return null;
    const n = r.pick(nodes);
    n.attribute ??= [];
    const what = r.int(3);
    if (what === 0 && n.attribute.length) {
      const i = r.int(n.attribute.length);
      const [gone] = n.attribute.splice(i, 1);
      return `node ${n.name}: attribute ${gone.name} removed`;
    }
    if (what === 1 && n.attribute.length) {
      const a = r.pick(n.attribute);
      n.attribute.push(copyModel(a));
      return `node ${n.name}: attribute ${a.name} twice`;
    }
    const name = r.pick(ATTRIBUTE_NAMES);
    const type = r.pick([1, 2, 3, 6, 7]);
    const a = { name, type };
    if (type === 1) a.f = r.pick(FLOATS);
    if (type === 2) a.i = interestingInt(r);
    if (type === 3) a.s = new TextEncoder().encode(r.pick(STRINGS));
    if (type === 6) a.floats = [r.pick(FLOATS), r.pick(FLOATS)];
    if (type === 7) a.ints = [interestingInt(r), interestingInt(r)];
    n.attribute.push(a);
    return `node ${n.name}: attribute ${name} (type ${type}) added`;
  },
  nodeInput(m, r) {
    const picked = pickList(m, r, 'input', 5);
    if (!picked) return null;
    const { n, names, what, i } = picked;
    if (what === 0 && n.input.length) n.input[i] = '';
    else if (what === 1 && n.input.length) n.input.splice(i, 1);
    else if (what === 2) n.input.push(r.chance(0.5) ? '' : r.pick(names));
    else if (what === 3 && n.input.length) n.input[i] = r.pick(names);
    else n.input[i] = 'no_such_value';
    return `node ${n.name}: inputs [${n.input}]`;
  },
  nodeOutput(m, r) {
    const picked = pickList(m, r, 'output', 4);
    if (!picked) return null;
    const { n, names, what, i } = picked;
    if (what === 0) n.output[i] = r.pick(names); // often a duplicate
    else if (what === 1 && n.output.length) n.output[i] = '';
    else if (what === 2) n.output.push(r.chance(0.5) ? `${n.output[0] ?? 'y'}_extra` : r.pick(names));
    else n.output.splice(i, 1);
    return `node ${n.name}: outputs [${n.output}]`;
  },
  graphOrder(m, r) {
    const nodes = m.graph?.node ?? [];
    if (nodes.length < 2) return null;
    const what = r.int(4);
    const i = r.int(nodes.length);
    const j = r.int(nodes.length);
    if (what === 0) [nodes[i], nodes[j]] = [nodes[j], nodes[i]];
    else if (what === 1) nodes.reverse();
    else if (what === 2) nodes.splice(i, 1);
    else nodes.splice(j, 0, copyModel(nodes[i]));
    return `graph order: ${['swap', 'reverse', 'remove', 'duplicate'][what]} ${i} ${j}`;
  },
  opType(m, r) {
    const nodes = m.graph?.node ?? [];
    if (!nodes.length) return null;
    const n = r.pick(nodes);
    if (r.chance(0.7)) n.opType = r.pick(OP_TYPES);
    else n.domain = r.pick(DOMAINS);
    return `node ${n.name}: ${n.domain}:${n.opType}`;
  },
  opset(m, r) {
    m.opsetImport ??= [];
    const what = r.int(4);
    if (what === 0 && m.opsetImport.length) m.opsetImport.splice(r.int(m.opsetImport.length), 1);
    else if (what === 1) m.opsetImport.push({ domain: r.pick(DOMAINS), version: interestingInt(r) });
    else if (m.opsetImport.length) r.pick(m.opsetImport).version = r.chance(0.5) ? String(r.pick([1, 6, 7, 10, 11, 12, 13, 17, 19, 21, 22])) : interestingInt(r);
    return `opset_import ${JSON.stringify(m.opsetImport)}`;
  },
  graphInput(m, r) {
    const g = m.graph;
    if (!g) return null;
    g.input ??= [];
    const what = r.int(5);
    if (what === 0 && g.input.length) {
      const v = r.pick(g.input);
      const tt = v.type?.tensorType;
      if (tt) tt.elemType = r.chance(0.7) ? r.pick([1, 2, 3, 6, 7, 9]) : r.int(18);
    } else if (what === 1 && g.input.length) {
      const tt = r.pick(g.input).type?.tensorType;
      if (tt?.shape?.dim?.length) {
        const d = r.pick(tt.shape.dim);
        if (r.chance(0.3)) {
          delete d.dimValue;
          d.dimParam = r.pick(['N', 'batch', '']);
        } else {
          delete d.dimParam;
          d.dimValue = interestingInt(r, d.dimValue);
        }
      } else if (tt) tt.shape = { dim: [{ dimValue: interestingInt(r) }] };
    } else if (what === 2 && g.input.length) g.input.splice(r.int(g.input.length), 1);
    else if (what === 3 && g.input.length) g.input.push(copyModel(r.pick(g.input)));
    else if (g.input.length) r.pick(g.input).name = r.pick(valueNames(m));
    return 'graph inputs changed';
  },
  graphOutput(m, r) {
    const g = m.graph;
    if (!g) return null;
    g.output ??= [];
    const what = r.int(4);
    if (what === 0 && g.output.length) g.output.splice(r.int(g.output.length), 1);
    else if (what === 1 && g.output.length) g.output.push(copyModel(r.pick(g.output)));
    else if (what === 2 && g.output.length) r.pick(g.output).name = r.pick(valueNames(m));
    else if (g.output.length) {
      const tt = r.pick(g.output).type?.tensorType;
      if (tt) tt.elemType = r.pick([1, 2, 3, 6, 7, 9, 0, 11]);
    }
    return 'graph outputs changed';
  },
  initializerName(m, r) {
    const inits = m.graph?.initializer ?? [];
    if (!inits.length) return null;
    const t = r.pick(inits);
    const what = r.int(4);
    if (what === 0) t.name = r.pick(valueNames(m));
    else if (what === 1) inits.push({ ...t });
    else if (what === 2) inits.splice(inits.indexOf(t), 1);
    else t.name = '';
    return `initializer ${t.name}: ${['renamed', 'duplicated', 'removed', 'unnamed'][what]}`;
  },
  metadata(m, r) {
    m.metadataProps ??= [];
    m.metadataProps.push({ key: 'qwasm.semantics', value: r.pick(['onnx', 'pytorch-qnnpack', 'pytorch-fbgemm', 'pytorch-x86', 'tflite', 'bogus', '']) });
    return `metadata ${JSON.stringify(m.metadataProps.at(-1))}`;
  },
};
const MUTATION_NAMES = Object.keys(MUTATIONS);

/** Byte-level damage: truncation, bit flips, a spliced range. */
function mutateBytes(bytes, r) {
  const n = bytes.length;
  switch (r.int(3)) {
    case 0: {
      const at = r.int(n);
      return { bytes: bytes.slice(0, at), description: `truncated to ${at} bytes` };
    }
    case 1: {
      const out = bytes.slice();
      const flips = 1 + r.int(8);
      for (let k = 0; k < flips; k++) out[r.int(n)] ^= 1 << r.int(8);
      return { bytes: out, description: `${flips} bit flips` };
    }
    default: {
      const out = bytes.slice();
      const at = r.int(n);
      const len = Math.min(n - at, 1 + r.int(16));
      for (let k = 0; k < len; k++) out[at + k] = r.int(256);
      return { bytes: out, description: `${len} random bytes at ${at}` };
    }
  }
}

/**
 * One fuzz case from a decoded seed model: { bytes, description }. A tenth of the cases damage the encoded bytes
 * instead of a field.
 */
export async function mutateModel(decoded, original, seed) {
  const r = rng(seed);
  if (r.chance(0.1)) return mutateBytes(original, r);
  const m = copyModel(decoded);
  const done = [];
  const count = r.chance(0.7) ? 1 : 2 + r.int(2);
  for (let tries = 0; done.length < count && tries < 20; tries++) {
    const d = MUTATIONS[r.pick(MUTATION_NAMES)](m, r);
    if (d) done.push(d);
  }
  let bytes;
  try {
    bytes = await encodeModel(m);
  } catch (error) {
    // A value protobuf cannot encode (an int64 beyond its range): the file keeps its old bytes for that field.
    return { bytes: original, description: `unencodable mutation (${error.message}); original file` };
  }
  return { bytes, description: done.join('; ') };
}
