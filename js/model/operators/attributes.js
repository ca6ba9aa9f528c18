// Attribute schemas for the operator registry (registry.js): each operator entry lists its attributes with the
// ONNX type they must have, a default, and a check of the value. A leaf, so family files can import it.

export const ONNX_ATTRIBUTE_TYPES = { 1: 'FLOAT', 2: 'INT', 3: 'STRING', 4: 'TENSOR', 5: 'GRAPH', 6: 'FLOATS', 7: 'INTS', 8: 'STRINGS' };

/** Attribute schemas: the ONNX type, a default (undefined: none, the attribute is then absent), a value check. */
export const A = Object.freeze({
  int: (dflt, ok = () => true) => ({ type: 2, dflt, ok: (v) => Number.isInteger(v) && ok(v) }),
  /** An INT attribute that is a yes / no switch (transB, keepdims, ceil_mode, ...): 0 or 1 only, so that every reader
   * (kernels taking a C int, passes comparing with 1) sees the same value; onnxruntime reads any non-zero as 1. */
  flag: (dflt) => ({ type: 2, dflt, choices: [0, 1], ok: (v) => v === 0 || v === 1 }),
  float: (dflt, ok = () => true) => ({ type: 1, dflt, ok: (v) => typeof v === 'number' && !Number.isNaN(v) && ok(v) }),
  ints: (dflt, ok = () => true) => ({ type: 7, dflt, ok: (v) => Array.isArray(v) && v.every(Number.isInteger) && ok(v) }),
  floats: (dflt) => ({ type: 6, dflt, ok: (v) => (Array.isArray(v) || v instanceof Float32Array) && Array.from(v).every((e) => typeof e === 'number') }),
  string: (dflt, choices) => ({ type: 3, dflt, choices, ok: (v) => typeof v === 'string' && (!choices || choices.includes(v)) }),
  tensor: () => ({ type: 4, ok: (v) => v !== null && typeof v === 'object' && Array.isArray(v.dims) && ArrayBuffer.isView(v.data) }),
  /** The same schema, the attribute required (a ModelFormatError names it when it is missing). */
  required: (schema) => ({ ...schema, required: true }),
});

