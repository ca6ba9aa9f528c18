// The operator registry: op type -> { inputs, attributes, uses, prepare, run }, from the family files.
//
// An entry describes one ONNX operator:
//   inputs      the input names in order, each with its element types and shape ('name?' optional, a trailing
//               '...' variadic; the spec syntax is described at parseSpec below), checked at load and at each run
//   outputs     optional: the output names ('name?' optional, '...' variadic); without it, exactly one output
//   attributes  name -> schema (A.int, A.ints, A.float, A.string, A.tensor; A.required), checked and defaulted at
//               load, before the graph passes read them (checkNodesBeforePasses)
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

/** The outputs of an entry without an `outputs` list: ONNX's single-output operators. */
const ONE_OUTPUT = ['y'];

/** Words of an input spec that name several element types. */
const DTYPE_WORDS = { '8bit': ['uint8', 'int8'] };

const REGISTRY = new Map();
for (const [domain, family] of FAMILIES) {
  for (const [opType, entry] of Object.entries(family)) {
    const key = domain ? `${domain}:${opType}` : opType;
    if (REGISTRY.has(key)) throw new Error(`qwasm internal error: operator ${key} is registered twice`);
    const inputSpecs = entry.inputs ? parseSpecs(entry.inputs) : null;
    const outputSpecs = parseSpecs(entry.outputs ?? ONE_OUTPUT);
    REGISTRY.set(key, Object.freeze({ ...entry, opType, domain, key, inputSpecs, outputSpecs }));
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
 * kernels, required inputs are there and the count fits, constant inputs have the types and ranks the entry
 * declares, every known attribute has its type and a valid value. Returns { operator, attrs } (attrs: defaults
 * filled in, `prepare` applied).
 */
export function prepareNode(node, graph, semantics) {
  const operator = operatorFor(node);
  const opset = graph.opsets.get(node.domain || '') ?? graph.opsets.get('');
  const label = nodeLabel(node);
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
  const attrs = checkNode(node, operator, label);
  checkStaticInputs(node, operator.inputSpecs, graph, label);
  return { operator, attrs: Object.freeze(operator.prepare ? operator.prepare(attrs, node, opset, label) : attrs) };
}

/** 'OpType node "name"': how every error about a node names it. */
export function nodeLabel(node) {
  return `${node.opType} node "${node.name}"`;
}

/**
 * The checks the graph passes rely on, made before they run: every node whose operator is registered has an
 * input and output count that fits, its required inputs, and attributes of the declared types with valid values.
 * (Nodes of other operators are left to the passes, which must read them defensively, and to prepareNode.)
 */
export function checkNodesBeforePasses(graph) {
  for (const node of graph.nodes) {
    const operator = operatorFor(node);
    if (operator) checkNode(node, operator, nodeLabel(node));
  }
}

/** Input / output counts and the attributes (defaults filled in) of a node of a registered operator. */
function checkNode(node, operator, label) {
  checkInputs(node, operator.inputSpecs, label);
  checkOutputs(node, operator.outputSpecs, label);
  const attrs = {};
  for (const [name, schema] of Object.entries(operator.attributes ?? {})) {
    const has = Object.hasOwn(node.attributes, name);
    if (!has) {
      if (schema.required) throw new ModelFormatError(`${label}: attribute ${name} is required`);
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
  return attrs;
}

// ---- input and output specs ------------------------------------------------------------------------------------
//
// An entry's inputs are names with an optional spec after a colon, checked at load for constants (initializers)
// and graph inputs, and at every run for the values the node actually receives:
//   'x'                       any element type and shape;  'x?' optional (may be absent or '')
//   'x: float32|int32'        the element types qwasm computes with; '8bit' is uint8|int8
//   'x: =w'                   the element type of input w (the nearest input named w before it)
//   'x: float32 ~int32'       ~: a type ONNX allows there but qwasm does not implement (UnsupportedError)
//   'x: scalar'               one element;  'rank 4', 'rank<=1', 'rank>=2' the number of dimensions
//   'x: const'                must be an initializer (weights packed once, at the first run)
//   '...' / '...3'            the last spec / the last three specs repeat (variadic inputs)
// Outputs: names ('y?' optional, a trailing '...' variadic); entries without `outputs` give exactly one.

function parseSpec(text) {
  const [head, rest = ''] = text.split(':');
  const name = head.trim();
  const spec = { name: name.replace(/\?$/, ''), optional: name.endsWith('?'), dtypes: null, same: null, unsupported: [], scalar: false, rank: null, constant: false };
  for (const word of rest.trim().split(/\s+(?=[^\d<>=]|=[A-Za-z])/).filter(Boolean)) {
    const rank = /^rank\s*(<=|>=)?\s*(\d+)$/.exec(word);
    if (rank) spec.rank = { op: rank[1] ?? '==', n: Number(rank[2]) };
    else if (word === 'scalar') spec.scalar = true;
    else if (word === 'const') spec.constant = true;
    else if (word.startsWith('=')) spec.same = word.slice(1);
    else if (word.startsWith('~')) spec.unsupported.push(...word.slice(1).split('|').flatMap((t) => DTYPE_WORDS[t] ?? [t]));
    else spec.dtypes = word.split('|').flatMap((t) => DTYPE_WORDS[t] ?? [t]);
  }
  return Object.freeze(spec);
}

/** { fixed: [spec], repeat: n (0: not variadic) } of an entry's inputs or outputs list. */
function parseSpecs(list) {
  const last = list[list.length - 1];
  const variadic = /^\.\.\.(\d*)$/.exec(last ?? '');
  const fixed = (variadic ? list.slice(0, -1) : list).map(parseSpec);
  return Object.freeze({ fixed, repeat: variadic ? Number(variadic[1] || 1) : 0 });
}

/** The spec of input (or output) i, or undefined past the end. */
function specAt(specs, i) {
  const { fixed, repeat } = specs;
  if (i < fixed.length) return fixed[i];
  if (!repeat) return undefined;
  return fixed[fixed.length - repeat + ((i - fixed.length) % repeat)];
}

/** The fewest inputs (or outputs) a node may have: through the last required one, optional ones before it included
 * (an absent optional input in the middle is an empty name, not a shorter list). */
function requiredCount(specs) {
  return specs.fixed.findLastIndex((s) => !s.optional) + 1;
}

function countText(specs, opType) {
  const required = requiredCount(specs);
  if (specs.repeat) return `${opType} takes at least ${required}`;
  return `${opType} takes ${required === specs.fixed.length ? `${required}` : `${required} to ${specs.fixed.length}`}`;
}

function checkInputs(node, specs, label) {
  if (!specs) return;
  const n = node.inputs.length;
  const required = requiredCount(specs);
  const extra = n - specs.fixed.length;
  if (n < required || (!specs.repeat && extra > 0) || (specs.repeat > 1 && extra > 0 && extra % specs.repeat !== 0)) {
    const groups = specs.repeat > 1 ? ` (then groups of ${specs.repeat})` : '';
    throw new ModelFormatError(`${label}: has ${n} inputs, ${countText(specs, node.opType)}${groups}`);
  }
  node.inputs.forEach((name, i) => {
    const spec = specAt(specs, i);
    if (typeof name !== 'string') throw new ModelFormatError(`${label}: input ${i} has no name`);
    if (name === '' && !spec.optional) throw new ModelFormatError(`${label}: required input ${i} (${spec.name}) is empty`);
  });
}

function checkOutputs(node, specs, label) {
  const n = node.outputs.length;
  const required = requiredCount(specs);
  if (n < required || (!specs.repeat && n > specs.fixed.length)) {
    throw new ModelFormatError(`${label}: has ${n} outputs, ${countText(specs, node.opType).replace('takes', 'gives')}`);
  }
  node.outputs.forEach((name, i) => {
    const spec = specAt(specs, i);
    if (name === '' && !spec.optional) throw new ModelFormatError(`${label}: required output ${i} (${spec.name}) has no name`);
  });
}

/** The element type input i must have (its own list, or that of the input it names with '='), or null. */
function expectedDtypes(specs, i, spec, dtypeAt) {
  if (spec.dtypes) return spec.dtypes;
  if (!spec.same) return null;
  for (let j = i - 1; j >= 0; j--) {
    if (specAt(specs, j).name === spec.same) {
      const d = dtypeAt(j);
      return d ? [d] : null;
    }
  }
  return null;
}

function dtypeError(label, i, spec, dtype, expected) {
  const text = `${label}: input ${i} (${spec.name}) must be ${expected.join(' or ')}, got ${dtype}`;
  return spec.unsupported.includes(dtype) ? new UnsupportedError(`${text} (not supported)`) : new ModelFormatError(text);
}

/** Checks input i's element type and shape against its spec; dtypeAt(j) gives the type of input j (for '='). */
function checkInput(specs, i, dtype, dims, dtypeAt, label) {
  const spec = specAt(specs, i);
  const expected = expectedDtypes(specs, i, spec, dtypeAt);
  if (expected && !expected.includes(dtype)) throw dtypeError(label, i, spec, dtype, expected);
  if (!dims) return;
  if (spec.scalar && dims.reduce((a, b) => a * b, 1) !== 1) {
    throw new ModelFormatError(`${label}: input ${i} (${spec.name}) must hold one value, got shape [${dims}]`);
  }
  const r = spec.rank;
  if (r && !(r.op === '==' ? dims.length === r.n : r.op === '<=' ? dims.length <= r.n : dims.length >= r.n)) {
    const want = r.op === '==' ? `${r.n}` : `${r.op === '<=' ? 'at most' : 'at least'} ${r.n}`;
    throw new ModelFormatError(`${label}: input ${i} (${spec.name}) must have ${want} dimensions, got shape [${dims}]`);
  }
}

/** At load: inputs that are initializers have their declared type and shape, graph inputs their type. */
function checkStaticInputs(node, specs, graph, label) {
  if (!specs) return;
  const graphInputs = new Map(graph.inputs.map((v) => [v.name, v]));
  const info = (j) => {
    const name = node.inputs[j];
    return name ? graph.initializers.get(name) ?? graphInputs.get(name) : undefined;
  };
  node.inputs.forEach((name, i) => {
    if (name === '') return;
    const spec = specAt(specs, i);
    const init = graph.initializers.get(name);
    if (spec.constant && !init) throw new UnsupportedError(`${label}: input ${i} (${spec.name}) must be a constant (an initializer); "${name}" is computed`);
    const v = info(i);
    if (v) checkInput(specs, i, v.dtype, init ? init.dims : null, (j) => info(j)?.dtype, label);
  });
}

/**
 * At run time: the values a node receives have the element types and shapes its entry declares (values: the
 * node's inputs in order, undefined where absent; dtypeOf / dimsOf read a value).
 */
export function checkInputValues(operator, node, values, dtypeOf, dimsOf) {
  const specs = operator.inputSpecs;
  if (!specs) return;
  const label = nodeLabel(node);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== undefined) checkInput(specs, i, dtypeOf(v), dimsOf(v), (j) => (values[j] === undefined ? undefined : dtypeOf(values[j])), label);
  }
}

function showValue(v) {
  try {
    const s = JSON.stringify(v, (k, x) => (typeof x === 'bigint' || (typeof x === 'number' && !Number.isFinite(x)) ? String(x) : x));
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
  } catch {
    return String(v);
  }
}
