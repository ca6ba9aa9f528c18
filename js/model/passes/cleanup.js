// Graph cleanup before fusion, as ONNX Runtime's graph optimizer does it: constants folded into initializers
// (Constant, ConstantOfShape, Cast of a constant, QuantizeLinear of a float weight), Casts to the type their input
// already has removed, and repeated QuantizeLinear / DequantizeLinear nodes merged.
import { ModelFormatError } from '../../errors.js';
import { quantizeOnnx } from '../../reference.js';
import { checkShapeDims } from '../operators/shape.js';
import { toInt64 } from '../values.js';

const ONNX_TYPE = { float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7 };
const ARRAY = { 1: Float32Array, 2: Uint8Array, 3: Int8Array, 6: Int32Array, 7: BigInt64Array };
const NAME_OF = { 1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64' };

/** Folds Constant, ConstantOfShape and Cast-of-constant nodes into initializers. */
export function foldConstants(graph) {
  const inits = graph.initializers;
  const kept = [];
  for (const node of graph.nodes) {
    if (node.opType === 'Constant' && node.attributes.value && node.outputs.length === 1 && node.outputs[0]) {
      inits.set(node.outputs[0], node.attributes.value);
      continue;
    }
    if (node.opType === 'ConstantOfShape' && inits.has(node.inputs[0]) && node.outputs[0]) {
      inits.set(node.outputs[0], constantOfShape(node, inits.get(node.inputs[0])));
      continue;
    }
    if (node.opType === 'Cast' && inits.has(node.inputs[0]) && ARRAY[node.attributes.to] && node.outputs[0]) {
      const src = inits.get(node.inputs[0]);
      const Arr = ARRAY[node.attributes.to];
      const data = node.attributes.to === 7 ? BigInt64Array.from(src.data, toInt64) : Arr.from(src.data, (v) => Number(v));
      inits.set(node.outputs[0], { dtype: NAME_OF[node.attributes.to], dims: src.dims.slice(), data });
      continue;
    }
    if (node.opType === 'QuantizeLinear' && node.domain === '' && node.inputs.slice(0, 3).every((n) => !n || inits.has(n)) && inits.get(node.inputs[0])?.dtype === 'float32') {
      // A float weight behind its own Q/DQ pair (quantize_static's AddQDQPairToWeight): ONNX Runtime's constant
      // folding turns it into the integer initializer that quantize_static writes by default.
      const folded = quantizeConstant(node, inits);
      if (folded) {
        inits.set(node.outputs[0], folded);
        continue;
      }
    }
    kept.push(node);
  }
  graph.nodes = kept;
}

/** Most elements a folded ConstantOfShape may have. */
const MAX_FOLDED = 2 ** 24;

/** ConstantOfShape of a constant shape: its `value` (one element; float 0 by default) repeated. */
function constantOfShape(node, shape) {
  const label = `ConstantOfShape node "${node.name}"`;
  const value = node.attributes.value ?? { dtype: 'float32', dims: [1], data: Float32Array.of(0) };
  const Arr = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array }[value.dtype];
  if (!Arr || !ArrayBuffer.isView(value.data) || value.data.length !== 1) {
    throw new ModelFormatError(`${label}: attribute value must be a one-element tensor of a supported type`);
  }
  if (shape.dtype !== 'int64' || shape.dims.length !== 1) throw new ModelFormatError(`${label}: the shape must be a 1-D int64 tensor`);
  const dims = checkShapeDims(shape.data, label);
  const n = dims.reduce((a, b) => a * b, 1);
  if (n > MAX_FOLDED) throw new ModelFormatError(`${label}: shape [${dims}] has ${n} elements; at most ${MAX_FOLDED} are folded`);
  return { dtype: value.dtype, dims, data: new Arr(n).fill(value.data[0]) };
}

/** QuantizeLinear of a constant (per tensor or per axis) with QuantizeLinear's rounding; null if not 8-bit. */
function quantizeConstant(node, inits) {
  const x = inits.get(node.inputs[0]);
  const s = inits.get(node.inputs[1]);
  const z = node.inputs[2] ? inits.get(node.inputs[2]) : { dtype: 'uint8', dims: [], data: Uint8Array.of(0) };
  if (s.dtype !== 'float32' || (z.dtype !== 'uint8' && z.dtype !== 'int8') || s.data.length !== z.data.length) return null;
  const [qmin, qmax, Arr] = z.dtype === 'int8' ? [-128, 127, Int8Array] : [0, 255, Uint8Array];
  if (!s.data.every((v) => v > 0 && Number.isFinite(v) && Number.isFinite(Math.fround(1 / Math.fround(v))))) {
    throw new ModelFormatError(`QuantizeLinear node "${node.name}": y_scale must be finite and > 0, got [${Array.from(s.data).slice(0, 8)}]`);
  }
  const out = new Arr(x.data.length);
  if (s.data.length === 1) {
    for (let i = 0; i < out.length; i++) out[i] = quantizeOnnx(x.data[i], s.data[0], Number(z.data[0]), qmin, qmax);
  } else {
    const axis = (node.attributes.axis ?? 1) < 0 ? node.attributes.axis + x.dims.length : node.attributes.axis ?? 1;
    if (x.dims[axis] !== s.data.length) throw new ModelFormatError(`QuantizeLinear node "${node.name}": ${s.data.length} scales for axis ${axis} of size ${x.dims[axis]}`);
    const inner = x.dims.slice(axis + 1).reduce((a, b) => a * b, 1);
    for (let i = 0; i < out.length; i++) {
      const c = Math.floor(i / inner) % s.data.length;
      out[i] = quantizeOnnx(x.data[i], s.data[c], Number(z.data[c]), qmin, qmax);
    }
  }
  return { dtype: z.dtype, dims: x.dims.slice(), data: out };
}

/** Removes Casts to the type their input already has (torch.onnx.export puts one after each QuantizeLinear). */
export function dropIdentityCasts(graph) {
  const typeOf = new Map();
  for (const [name, t] of graph.initializers) typeOf.set(name, ONNX_TYPE[t.dtype]);
  for (const i of graph.inputs) typeOf.set(i.name, ONNX_TYPE[i.dtype]);
  const rename = new Map();
  const kept = [];
  for (const node of graph.nodes) {
    node.inputs = node.inputs.map((n) => rename.get(n) ?? n);
    if (node.opType === 'QuantizeLinear') {
      const zp = graph.initializers.get(node.inputs[2]);
      typeOf.set(node.outputs[0], zp ? ONNX_TYPE[zp.dtype] : 2);
    }
    if (node.opType === 'Cast' && typeOf.get(node.inputs[0]) === node.attributes.to) {
      rename.set(node.outputs[0], node.inputs[0]);
      continue;
    }
    kept.push(node);
  }
  graph.nodes = kept;
  for (const o of graph.outputs) {
    if (rename.has(o.name)) throw new ModelFormatError(`graph output "${o.name}" is an identity Cast; not supported`);
  }
}

/** A node's attributes as text, for comparing nodes (tensor attributes by content; int64 data as text). */
function attributesKey(attributes) {
  return JSON.stringify(attributes, (k, v) => (typeof v === 'bigint' ? `${v}n` : ArrayBuffer.isView(v) ? Array.from(v, String) : v));
}

/**
 * Merges QuantizeLinear / DequantizeLinear nodes that repeat another one (same inputs, same attributes), as
 * ONNX Runtime's common subexpression elimination does: quantize_static's DedicatedQDQPair writes one Q/DQ
 * pair per consumer of a tensor, all reading the same tensor and qparams.
 */
export function mergeDuplicateQdq(graph) {
  const outputs = new Set(graph.outputs.map((o) => o.name));
  const seen = new Map();
  const rename = new Map();
  graph.nodes = graph.nodes.filter((node) => {
    node.inputs = node.inputs.map((n) => rename.get(n) ?? n);
    if (node.opType !== 'QuantizeLinear' && node.opType !== 'DequantizeLinear') return true;
    const key = `${node.domain}|${node.opType}|${node.inputs.join('|')}|${attributesKey(node.attributes)}`;
    const first = seen.get(key);
    if (!first) {
      seen.set(key, node);
      return true;
    }
    if (outputs.has(node.outputs[0])) return true;
    rename.set(node.outputs[0], first.outputs[0]);
    return false;
  });
}
