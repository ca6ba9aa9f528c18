// QDQ graphs (torch.onnx.export, onnxruntime's quantize_static) into integer operators, the way ONNX Runtime's
// QDQ transformer does: DequantizeLinear -> op -> QuantizeLinear groups replaced by the op's integer form
// (QLinearConv, QGemm, QLinearMatMul, QLinearAdd, QLinearAveragePool, QLinearSoftmax, ...), Q/DQ pairs around
// layout ops (MaxPool, Reshape, Flatten, Transpose) removed. Everything else is left as it is and runs in float.
// The fusions are a table of rules (RULES below): which op types a rule looks at, what it must find around the
// node (match), and the nodes that replace the group (rewrite). docs/quantize-static.md: what quantize_static's
// files need.
import { quantizeOnnx, roundHalfEven } from '../../reference.js';
import { applyRules, graphView } from './rules.js';

/**
 * The graph as the rules see it (rules.js's view) plus the Q/DQ questions the selectors ask, on the graph as it
 * is before any rewrite (ORT's selectors also look at the original graph).
 */
function view(graph) {
  const g = graphView(graph);
  const { inits } = g;
  // The element type of a DequantizeLinear's input or a QuantizeLinear's output: its zero point's.
  const qtype = (n) => inits.get(n.inputs[2])?.dtype ?? ((n.opType === 'DequantizeLinear' && inits.get(n.inputs[0])?.dtype) || 'uint8');
  /** A constant of one of `dtypes` with one value (or any number when `perAxis`), or undefined. */
  const constant = (name, dtypes, perAxis = false) => {
    const t = name ? inits.get(name) : undefined;
    return t && dtypes.includes(t.dtype) && (perAxis ? t.dims.length <= 1 && t.data.length >= 1 : t.data.length === 1) ? t : undefined;
  };
  const madeZeroPoints = new Map(); // node -> the zero point made for it
  const zeroPointOf = (n) => {
    if (n.inputs[2]) return n.inputs[2];
    if (madeZeroPoints.has(n)) return madeZeroPoints.get(n);
    const dtype = qtype(n);
    let name = `${n.name}/zero_point`;
    while (inits.has(name) || g.producer(name)) name += '_';
    inits.set(name, { dtype, dims: [], data: dtype === 'int8' ? Int8Array.of(0) : Uint8Array.of(0) });
    madeZeroPoints.set(n, name);
    return name;
  };
  return Object.assign(g, {
    /** The DequantizeLinear producing `name`, or null. */
    dq: (name) => {
      const n = g.producer(name);
      return n && n.opType === 'DequantizeLinear' ? n : null;
    },
    /** The QuantizeLinear that alone consumes `name`, or null. */
    singleQ: (name) => {
      const cs = g.consumers(name);
      return cs.length === 1 && cs[0].opType === 'QuantizeLinear' ? cs[0] : null;
    },
    onlyConsumer: (name, node) => g.consumers(name).length === 1 && g.consumers(name)[0] === node,
    qtype,
    sameTypes: (...ns) => ns.every((n) => qtype(n) === qtype(ns[0])),
    /**
     * A Q / DQ with constant quantization parameters: a float32 scale and an 8-bit zero point (or none), scalars
     * (per axis with `perAxis`: a weight's). ONNX Runtime's selectors fuse only these; anything else stays as it is.
     */
    constQParams: (n, perAxis = false) => !!constant(n.inputs[1], ['float32'], perAxis) &&
      (!n.inputs[2] || !!constant(n.inputs[2], ['uint8', 'int8', 'int32'], perAxis)),
    /** The (dequantized input, scale, zero point) triple of a DequantizeLinear, its default zero point made explicit. */
    triple: (d) => [d.inputs[0], d.inputs[1], zeroPointOf(d)],
    /** A Q's zero point input, or a new constant 0 of its type (ONNX's default) when it has none. */
    zeroPoint: (q) => zeroPointOf(q),
    sameQParams: (a, b) => {
      const eq = (x, y) => x === y || (inits.get(x) && inits.get(y) && inits.get(x).data.length === 1 && Number(inits.get(x).data[0]) === Number(inits.get(y).data[0]));
      return eq(a.inputs[1], b.inputs[1]) && eq(a.inputs[2], b.inputs[2]);
    },
  });
}

/**
 * ONNX Runtime's QDQS8ToU8Transformer (optimizer/qdq_transformer/qdq_s8_to_u8.cc) runs before its QDQ fusion
 * wherever int8 QDQ is not "allowed", i.e. everywhere but ARM, onnxruntime-web included, and qwasm does the same
 * here, on the graph, once: the fusions then see ORT's types and their kernels get ORT's uint8 data.
 * - An int8 QuantizeLinear -> DequantizeLinear pair becomes uint8 (both zero points + 128) when the Q feeds that one
 *   DQ alone and is no graph output, and both zero points are equal scalar initializers. EnsureUniqueDQForNodeUnit
 *   runs before it and gives a DQ with several consumers (or a consumer and a graph output) one copy per consumer,
 *   so then the Q feeds several DQs and stays int8.
 * The DequantizeLinear of an int8 constant stays int8 in onnxruntime-web 1.30 (the transformer's lone-DQ branch,
 * which would convert constants with values outside [-64, 64], does not run there: measured,
 * docs/quantize-static.md). Each fusion then requires the types ORT's selector requires (qdq_selectors.cc): equal
 * types on all sides, and no int8 activation for Conv / MatMul. Where they differ the group stays
 * DQ -> float op -> Q, as in ORT.
 */
export function convertS8ToU8(graph) {
  const { inits, consumers } = view(graph);
  const int8Zp = (name) => {
    const t = name && inits.get(name);
    return t && t.dtype === 'int8' && t.data.length === 1 ? Number(t.data[0]) : undefined;
  };
  for (const q of graph.nodes) {
    if (q.opType !== 'QuantizeLinear' || q.domain !== '') continue;
    const cs = consumers(q.outputs[0]);
    const d = cs[0];
    if (cs.length !== 1 || d.opType !== 'DequantizeLinear' || d.domain !== '' || d.inputs[0] !== q.outputs[0]) continue;
    const zq = int8Zp(q.inputs[2]);
    if (zq === undefined || zq !== int8Zp(d.inputs[2])) continue;
    const uses = consumers(d.outputs[0]);
    const nodes = uses.filter((u) => u.opType !== '__output__').length;
    if (!(nodes === 0 || (nodes === 1 && uses.length === 1))) continue;
    const zp = `${q.inputs[2]}/s8_to_u8`;
    inits.set(zp, { dtype: 'uint8', dims: [], data: Uint8Array.of(zq + 128) });
    q.inputs[2] = d.inputs[2] = zp;
  }
}

/** Integer bounds of a Relu / Clip fused behind a layer, quantized with QuantizeLinear's rule at the output's qparams. */
function activationBounds(g, act, q) {
  const lo = act.opType === 'Clip' ? Number(g.inits.get(act.inputs[1])?.data[0] ?? act.attributes.min ?? -Infinity) : 0;
  const hi = act.opType === 'Clip' ? Number(g.inits.get(act.inputs[2])?.data[0] ?? act.attributes.max ?? Infinity) : Infinity;
  const scale = Number(g.inits.get(q.inputs[1]).data[0]);
  const zp = g.inits.get(g.zeroPoint(q));
  const [qmin, qmax] = zp.dtype === 'int8' ? [-128, 127] : [0, 255];
  // Quantizing is monotonic, so Q(clip(x, lo, hi)) = clamp(Q(x), Q(lo), Q(hi)).
  const round = (v) => quantizeOnnx(v, scale, Number(zp.data[0]), qmin, qmax);
  const Arr = zp.dtype === 'int8' ? Int8Array : Uint8Array;
  return [
    { dtype: zp.dtype, dims: [], data: Arr.of(lo === -Infinity ? qmin : round(lo)) },
    { dtype: zp.dtype, dims: [], data: Arr.of(hi === Infinity ? qmax : round(hi)) },
  ];
}

/** A Clip whose bounds (inputs or attributes) are constants: it can become the fused layer's integer range. */
function isConstantClip(n, g) {
  return n.opType === 'Clip' && n.inputs.slice(1, 3).every((name) => !name || (g.inits.get(name)?.data.length === 1 && g.inits.get(name).dtype === 'float32'));
}

const LINEAR_FORMS = {
  Conv: { opType: 'QLinearConv', domain: '' },
  Gemm: { opType: 'QGemm', domain: 'com.microsoft' },
  MatMul: { opType: 'QLinearMatMul', domain: '' },
};

/** The unary ops fused into com.microsoft QLinear<op>, with the fused node's attributes. */
const UNARY_QLINEAR = {
  Softmax: (a, opset) => ({ axis: a.axis ?? (opset < 13 ? 1 : -1), opset }),
  Sigmoid: () => ({}),
  LeakyRelu: (a) => ({ alpha: a.alpha ?? 0.01 }),
  AveragePool: (a) => ({ ...a, channels_last: 0 }),
  GlobalAveragePool: (a) => ({ ...a, channels_last: 0 }),
};

/**
 * The fusion rules. match(node, g) returns what the rewrite needs (and `consumed`: the nodes the group replaces
 * besides the node itself), or null; rewrite(m, node, g) returns the nodes that take the group's place.
 */
const RULES = [
  {
    // DQ(x), DQ(w const)[, DQ(bias const)] -> Conv / Gemm / MatMul [-> Relu | Clip] -> Q: the integer layer, and the
    // activation as an integer Clip at the output zero point (as ORT does).
    ops: ['Conv', 'Gemm', 'MatMul'],
    match(node, g) {
      const op = node.opType;
      const dx = g.dq(node.inputs[0]);
      const dw = g.dq(node.inputs[1]);
      const db = node.inputs[2] ? g.dq(node.inputs[2]) : null;
      if (!dx || !dw || !g.isConstant(dw.inputs[0]) || (node.inputs[2] && (!db || !g.isConstant(db.inputs[0])))) return null;
      const a = node.attributes;
      if (op === 'Gemm' && ((a.transA ?? 0) !== 0 || (a.transB ?? 0) !== 1 || (a.alpha ?? 1) !== 1 || (a.beta ?? 1) !== 1)) return null;
      const next = g.consumers(node.outputs[0]);
      const act = next.length === 1 && (next[0].opType === 'Relu' || isConstantClip(next[0], g)) ? next[0] : null;
      const q = g.singleQ((act ?? node).outputs[0]);
      if (!q || (act && !g.onlyConsumer(node.outputs[0], act))) return null;
      if (!g.constQParams(dx) || !g.constQParams(q) || !g.constQParams(dw, true) || (db && !g.constQParams(db, true))) return null;
      // ConvSelector / MatMulSelector: no int8 activation where int8 is not allowed; GemmSelector: int8 A with int8 B.
      if (!g.sameTypes(dx, q) || (op !== 'Gemm' ? g.qtype(dx) === 'int8' : g.qtype(dx) === 'int8' && g.qtype(dw) !== 'int8')) return null;
      return { dx, dw, db, act, q, consumed: [act, q].filter(Boolean) };
    },
    rewrite({ dx, dw, db, act, q }, node, g) {
      const out = q.outputs[0];
      const name = `${node.name}/quantized`;
      const bias = db ? db.inputs[0] : '';
      const { opType, domain } = LINEAR_FORMS[node.opType];
      const yq = [q.inputs[1], g.zeroPoint(q)];
      const inputs = node.opType === 'Conv' ? [...g.triple(dx), ...g.triple(dw), ...yq, bias]
        : node.opType === 'Gemm' ? [...g.triple(dx), ...g.triple(dw), bias, ...yq]
          : [...g.triple(dx), ...g.triple(dw), ...yq];
      const nodes = [{ name, opType, domain, inputs, outputs: [act ? `${out}/pre_activation` : out], attributes: { ...node.attributes } }];
      if (act) {
        const [lo, hi] = activationBounds(g, act, q);
        g.inits.set(`${name}/relu_min`, lo);
        g.inits.set(`${name}/relu_min/max`, hi);
        nodes.push({ name: `${name}/activation`, opType: 'Clip', domain: '', inputs: [`${out}/pre_activation`, `${name}/relu_min`, `${name}/relu_min/max`], outputs: [out], attributes: {} });
      }
      return nodes;
    },
  },
  {
    // DQ -> layout op -> Q with the same qparams: the op runs on the integers.
    ops: ['MaxPool', 'Reshape', 'Flatten', 'Transpose', 'Squeeze', 'Unsqueeze'],
    match(node, g) {
      const dx = g.dq(node.inputs[0]);
      const q = g.singleQ(node.outputs[0]);
      return dx && q && g.constQParams(dx) && g.constQParams(q) && g.sameTypes(dx, q) && g.sameQParams(dx, q) ? { dx, q, consumed: [q] } : null;
    },
    rewrite: ({ dx, q }, node) => [{ ...node, inputs: [dx.inputs[0], ...node.inputs.slice(1)], outputs: [q.outputs[0]] }],
  },
  {
    ops: ['Add', 'Mul'],
    match(node, g) {
      const da = g.dq(node.inputs[0]);
      const db = g.dq(node.inputs[1]);
      const q = g.singleQ(node.outputs[0]);
      return da && db && q && [da, db, q].every((n) => g.constQParams(n)) && g.sameTypes(da, db, q) ? { da, db, q, consumed: [q] } : null;
    },
    rewrite: ({ da, db, q }, node, g) => [{
      name: `${node.name}/quantized`, opType: node.opType === 'Add' ? 'QLinearAdd' : 'QLinearMul', domain: 'com.microsoft',
      inputs: [...g.triple(da), ...g.triple(db), q.inputs[1], g.zeroPoint(q)], outputs: [q.outputs[0]], attributes: {},
    }],
  },
  {
    ops: ['Concat'],
    match(node, g) {
      const ds = node.inputs.map(g.dq);
      const q = g.singleQ(node.outputs[0]);
      return !ds.some((d) => !d) && q && [...ds, q].every((n) => g.constQParams(n)) && g.sameTypes(...ds, q) ? { ds, q, consumed: [q] } : null;
    },
    rewrite: ({ ds, q }, node, g) => [{
      name: `${node.name}/quantized`, opType: 'QLinearConcat', domain: 'com.microsoft',
      inputs: [q.inputs[1], g.zeroPoint(q), ...ds.flatMap(g.triple)], outputs: [q.outputs[0]], attributes: { axis: node.attributes.axis ?? 0 },
    }],
  },
  {
    // Unary groups become ONNX Runtime's com.microsoft QLinear<op> when the types agree (its UnaryNodeGroupSelector):
    // Softmax (a table of exp), Sigmoid and LeakyRelu (tables that reproduce its float path exactly), AveragePool and
    // GlobalAveragePool (whatever the output qparams; quantize_static gives GlobalAveragePool its own).
    ops: Object.keys(UNARY_QLINEAR),
    match(node, g) {
      const dx = g.dq(node.inputs[0]);
      const q = g.singleQ(node.outputs[0]);
      return dx && q && g.constQParams(dx) && g.constQParams(q) && g.sameTypes(dx, q) ? { dx, q, consumed: [q] } : null;
    },
    rewrite: ({ dx, q }, node, g) => [{
      name: `${node.name}/quantized`, opType: `QLinear${node.opType}`, domain: 'com.microsoft',
      inputs: [...g.triple(dx), q.inputs[1], g.zeroPoint(q)], outputs: [q.outputs[0]],
      attributes: UNARY_QLINEAR[node.opType](node.attributes, g.graph.opsets?.get('') ?? 13),
    }],
  },
];

/**
 * ONNX Runtime's WeightBiasQuantization (optimizer/qdq_transformer/weight_bias_quantization.cc), which runs before
 * its QDQ fusions: a Conv / Gemm reading a DequantizeLinear with a scalar scale and a DequantizeLinear'd weight, whose
 * output leads to a QuantizeLinear without branching (through a Relu / Clip at most), gets its float constant bias b
 * replaced by DequantizeLinear(Cast<int32>(Round(b / s)), s) with s = x_scale * w_scale (float32; per output channel
 * for per-channel weights on their output axis). torch.onnx.export of PT2E models writes such float biases. The
 * fusion then sees an int32 bias; a group that does not fuse runs its float op on the rounded bias, as ORT does.
 */
function quantizeFloatBiases(graph) {
  const g = graphView(graph);
  const inits = g.inits;
  // nodes reading a value (graph outputs do not count, as in ORT's GetConsumerNodes)
  const readers = (name) => g.consumers(name).filter((c) => c.opType !== '__output__');
  const leadsToQ = (node) => {
    for (let cur = node; ;) {
      const next = readers(cur.outputs[0]);
      if (cur.outputs.length !== 1 || next.length !== 1) return false;
      if (next[0].opType === 'QuantizeLinear') return true;
      if (next[0].opType !== 'Relu' && next[0].opType !== 'Clip') return false;
      cur = next[0];
    }
  };
  const added = new Map();
  for (const node of graph.nodes) {
    if ((node.opType !== 'Conv' && node.opType !== 'Gemm') || (node.domain && node.domain !== 'ai.onnx')) continue;
    const [dx, dw] = [g.producer(node.inputs[0]), g.producer(node.inputs[1])];
    const b = node.inputs[2] ? inits.get(node.inputs[2]) : undefined;
    if (dx?.opType !== 'DequantizeLinear' || dw?.opType !== 'DequantizeLinear' || b?.dtype !== 'float32' || b.dims.length !== 1) continue;
    const xs = inits.get(dx.inputs[1]);
    const ws = inits.get(dw.inputs[1]);
    // (scales of another type are left for DequantizeLinear's checks to name)
    if (xs?.dtype !== 'float32' || xs.data.length !== 1 || ws?.dtype !== 'float32' || !leadsToQ(node)) continue;
    if (ws.dims.length === 1) { // per channel: on the output axis, one scale per bias element
      const w = inits.get(dw.inputs[0]);
      const axis = (dw.attributes.axis ?? 1) < 0 && w ? dw.attributes.axis + w.dims.length : dw.attributes.axis ?? 1;
      const expected = node.opType === 'Gemm' && (node.attributes.transB ?? 0) === 0 ? 1 : 0;
      if (ws.data.length !== b.data.length || axis !== expected || (dw.attributes.block_size ?? 0) !== 0) continue;
    }
    const scale = Float32Array.from(ws.data, (w) => Math.fround(Number(xs.data[0]) * w));
    const data = Int32Array.from(b.data, (v, c) => roundHalfEven(Math.fround(v / scale[scale.length === 1 ? 0 : c])));
    const base = `${node.name}_bias`;
    inits.set(`${base}_int32`, { dtype: 'int32', dims: b.dims.slice(), data });
    inits.set(`${base}_scale`, { dtype: 'float32', dims: ws.dims.slice(), data: scale });
    const dq = { name: `${base}_dq`, opType: 'DequantizeLinear', domain: '', inputs: [`${base}_int32`, `${base}_scale`], outputs: [`${base}_dq`], attributes: ws.dims.length === 1 ? { axis: 0 } : {} };
    node.inputs[2] = `${base}_dq`;
    added.set(node, dq);
  }
  if (added.size) graph.nodes = graph.nodes.flatMap((n) => (added.has(n) ? [added.get(n), n] : [n]));
}

/** Rewrites QDQ groups into integer operators (quantizeFloatBiases and convertS8ToU8 first). Returns the number of groups fused. */
export function fuseQdq(graph) {
  quantizeFloatBiases(graph);
  convertS8ToU8(graph);
  const fused = applyRules(graph, RULES, view(graph));
  if (fused === 0) return 0;
  // DequantizeLinear nodes nobody reads any more (those of weights and biases) go too.
  const read = new Set([...graph.nodes.flatMap((n) => n.inputs), ...graph.outputs.map((o) => o.name)]);
  graph.nodes = graph.nodes.filter((n) => n.opType !== 'DequantizeLinear' || n.outputs.some((o) => read.has(o)));
  return fused;
}
