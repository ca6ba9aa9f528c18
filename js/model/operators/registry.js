// The operator registry: op type -> { inputs, attributes, uses, prepare, run }, from the family files.
//
// An entry describes one ONNX operator:
//   inputs      the input names in order; 'name?' is optional, a trailing '...' repeats the one before
//   attributes  name -> schema (A.int, A.ints, A.float, A.string, A.tensor), checked and defaulted at load
//   uses        the semantics families it computes in (semantics.js), so an unsupported form fails at load
//   prepare     optional (attrs, node, opset) -> attrs: derived and cross-checked attributes, once at load
//   shapeFrom   optional: the inputs whose VALUES decide the output's shape (Reshape's shape, Slice's starts, ...);
//               readsShapeOnly: true for Shape and Size (js/model/shape-plans.js)
//   pack        optional (ctx, inputs, attrs): packs constant weights when the model loads (inputs: the node's
//               constants, undefined for the others), through ctx.prepare as run does
//   run         (ctx, inputs, attrs) -> outputs: the values of the node's outputs
// Attributes are parsed once when the model loads (prepareNode); a run only reads them.
import { ModelFormatError, UnsupportedError } from '../../errors.js';
import { ONNX_ATTRIBUTE_TYPES } from './attributes.js';
import { CONTRIB_OPERATORS } from './contrib.js';
import { ELEMENTWISE_OPERATORS } from './elementwise.js';
import { FLOAT_OPERATORS } from './float.js';
import { QUANTIZED_OPERATORS } from './quantized.js';
import { REDUCE_OPERATORS } from './reduce.js';
import { SHAPE_OPERATORS } from './shape.js';
import { TRANSFORMER_CONTRIB_OPERATORS, TRANSFORMER_OPERATORS } from './transformer.js';

/** The families: [domain, { opType: entry }]. */
const FAMILIES = [
  ['', QUANTIZED_OPERATORS], ['', FLOAT_OPERATORS], ['', ELEMENTWISE_OPERATORS], ['', REDUCE_OPERATORS], ['', SHAPE_OPERATORS],
  ['', TRANSFORMER_OPERATORS], ['com.microsoft', CONTRIB_OPERATORS], ['com.microsoft', TRANSFORMER_CONTRIB_OPERATORS],
];

const REGISTRY = new Map();
for (const [domain, family] of FAMILIES) {
  for (const [opType, entry] of Object.entries(family)) {
    const key = domain ? `${domain}:${opType}` : opType;
    if (REGISTRY.has(key)) throw new Error(`qwasm internal error: operator ${key} is registered twice`);
    REGISTRY.set(key, Object.freeze({ ...entry, opType, domain, key }));
  }
}

/** A node's registry key: 'OpType' for the default domain, 'domain:OpType' otherwise. */
export function operatorKey(node) {
  return node.domain && node.domain !== 'ai.onnx' ? `${node.domain}:${node.opType}` : node.opType;
}

/** The registry entry of a node, or undefined. */
export function operatorFor(node) {
  return REGISTRY.get(operatorKey(node));
}

/** Every registered key (for docs and tests). */
export function registeredOperators() {
  return [...REGISTRY.keys()];
}

/**
 * Checks a node against its operator's entry once, at load: the operator exists, its semantics forms have
 * kernels, required inputs are there and the count fits, every known attribute has its type and a valid value.
 * Returns { operator, attrs } (attrs: defaults filled in, `prepare` applied).
 */
export function prepareNode(node, opsets, semantics) {
  const operator = operatorFor(node);
  const opset = opsets.get(node.domain || '') ?? opsets.get('');
  const label = `${node.opType} node "${node.name}"`;
  if (!operator) {
    const domain = node.domain || 'ai.onnx';
    throw new UnsupportedError(`unsupported operator ${domain === 'ai.onnx' ? '' : `${domain}.`}${node.opType} (node "${node.name}", opset ${opset})`);
  }
  for (const family of operator.uses ?? []) {
    try {
      semantics.form(family);
    } catch (error) {
      throw new UnsupportedError(`${label}: ${error.message}`, { cause: error });
    }
  }
  checkInputs(node, operator.inputs, label);
  const attrs = {};
  for (const [name, schema] of Object.entries(operator.attributes ?? {})) {
    const has = Object.hasOwn(node.attributes, name);
    if (!has) {
      if (schema.dflt !== undefined) attrs[name] = schema.dflt;
      continue;
    }
    const value = node.attributes[name];
    const declared = node.attributeTypes?.[name];
    if (declared !== undefined && declared !== schema.type) {
      throw new ModelFormatError(`${label}: attribute ${name} must be ${ONNX_ATTRIBUTE_TYPES[schema.type]}, the file says ${ONNX_ATTRIBUTE_TYPES[declared] ?? `type ${declared}`}`);
    }
    if (!schema.ok(value)) {
      const allowed = schema.choices ? ` (one of ${schema.choices.join(', ')})` : '';
      throw new ModelFormatError(`${label}: attribute ${name} has an invalid value ${showValue(value)}${allowed}`);
    }
    attrs[name] = value;
  }
  return { operator, attrs: Object.freeze(operator.prepare ? operator.prepare(attrs, node, opset, label) : attrs) };
}

function checkInputs(node, names, label) {
  if (!names) return;
  const variadic = names[names.length - 1] === '...';
  const fixed = variadic ? names.slice(0, -1) : names;
  const required = fixed.filter((n) => !n.endsWith('?')).length;
  if (node.inputs.length < required || (!variadic && node.inputs.length > fixed.length)) {
    const count = variadic ? `at least ${required}` : required === fixed.length ? `${required}` : `${required} to ${fixed.length}`;
    throw new ModelFormatError(`${label}: has ${node.inputs.length} inputs, ${node.opType} takes ${count}`);
  }
  node.inputs.forEach((name, i) => {
    const spec = fixed[Math.min(i, fixed.length - 1)];
    if (name === '' && !spec.endsWith('?')) throw new ModelFormatError(`${label}: required input ${i} (${spec.replace('?', '')}) is empty`);
  });
}

function showValue(v) {
  try {
    const s = JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? String(x) : x));
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
  } catch {
    return String(v);
  }
}
