// QDQ graphs (torch.onnx.export, onnxruntime's quantize_static) into integer operators, the way
// ONNX Runtime's QDQ transformer does: constants folded, DequantizeLinear -> op -> QuantizeLinear
// groups replaced by the op's integer form (QLinearConv, QGemm, QLinearMatMul, QLinearAdd, QLinearAveragePool,
// QLinearSoftmax, ...), Q/DQ pairs around layout ops (MaxPool, Reshape, Flatten, Transpose) removed. Everything
// else is left as it is and runs in float. docs/quantize-static.md: what quantize_static's files need.
import { ModelFormatError } from './onnx.js';
import { quantizeLinearValue } from './ort-tables.js';

const ONNX_TYPE = { float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7 };
const ARRAY = { 1: Float32Array, 2: Uint8Array, 3: Int8Array, 6: Int32Array, 7: BigInt64Array };
const NAME_OF = { 1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64' };

/** Folds Constant, ConstantOfShape and Cast-of-constant nodes into initializers. */
function foldConstants(graph) {
  const inits = graph.initializers;
  const kept = [];
  for (const node of graph.nodes) {
    if (node.opType === 'Constant' && node.attributes.value && node.outputs.length === 1) {
      inits.set(node.outputs[0], node.attributes.value);
      continue;
    }
    if (node.opType === 'ConstantOfShape' && inits.has(node.inputs[0])) {
      const dims = Array.from(inits.get(node.inputs[0]).data, Number);
      const value = node.attributes.value ?? { dtype: 'float32', data: Float32Array.of(0) };
      const Arr = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array }[value.dtype];
      const n = dims.reduce((a, b) => a * b, 1);
      if (!Arr || n > 2 ** 24) throw new ModelFormatError(`ConstantOfShape node "${node.name}": unsupported value or size`);
      inits.set(node.outputs[0], { dtype: value.dtype, dims, data: new Arr(n).fill(value.data[0]) });
      continue;
    }
    if (node.opType === 'Cast' && inits.has(node.inputs[0]) && ARRAY[node.attributes.to]) {
      const src = inits.get(node.inputs[0]);
      const Arr = ARRAY[node.attributes.to];
      const data = node.attributes.to === 7 ? BigInt64Array.from(src.data, (v) => BigInt(Math.trunc(Number(v)))) : Arr.from(src.data, (v) => Number(v));
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

/** QuantizeLinear of a constant (per tensor or per axis) with QuantizeLinear's rounding; null if not 8-bit. */
function quantizeConstant(node, inits) {
  const x = inits.get(node.inputs[0]);
  const s = inits.get(node.inputs[1]);
  const z = node.inputs[2] ? inits.get(node.inputs[2]) : { dtype: 'uint8', dims: [], data: Uint8Array.of(0) };
  if (s.dtype !== 'float32' || (z.dtype !== 'uint8' && z.dtype !== 'int8') || s.data.length !== z.data.length) return null;
  const [qmin, qmax, Arr] = z.dtype === 'int8' ? [-128, 127, Int8Array] : [0, 255, Uint8Array];
  const out = new Arr(x.data.length);
  if (s.data.length === 1) {
    for (let i = 0; i < out.length; i++) out[i] = quantizeLinearValue(x.data[i], s.data[0], Number(z.data[0]), qmin, qmax);
  } else {
    const axis = (node.attributes.axis ?? 1) < 0 ? node.attributes.axis + x.dims.length : node.attributes.axis ?? 1;
    if (x.dims[axis] !== s.data.length) throw new ModelFormatError(`QuantizeLinear node "${node.name}": ${s.data.length} scales for axis ${axis} of size ${x.dims[axis]}`);
    const inner = x.dims.slice(axis + 1).reduce((a, b) => a * b, 1);
    for (let i = 0; i < out.length; i++) {
      const c = Math.floor(i / inner) % s.data.length;
      out[i] = quantizeLinearValue(x.data[i], s.data[c], Number(z.data[c]), qmin, qmax);
    }
  }
  return { dtype: z.dtype, dims: x.dims.slice(), data: out };
}

/** Removes Casts to the type their input already has (torch.onnx.export puts one after each QuantizeLinear). */
function dropIdentityCasts(graph) {
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

/**
 * Merges QuantizeLinear / DequantizeLinear nodes that repeat another one (same inputs, same attributes), as
 * ONNX Runtime's common subexpression elimination does: quantize_static's DedicatedQDQPair writes one Q/DQ
 * pair per consumer of a tensor, all reading the same tensor and qparams.
 */
function mergeDuplicateQdq(graph) {
  const outputs = new Set(graph.outputs.map((o) => o.name));
  const seen = new Map();
  const rename = new Map();
  graph.nodes = graph.nodes.filter((node) => {
    node.inputs = node.inputs.map((n) => rename.get(n) ?? n);
    if (node.opType !== 'QuantizeLinear' && node.opType !== 'DequantizeLinear') return true;
    const key = `${node.domain}|${node.opType}|${node.inputs.join('|')}|${JSON.stringify(node.attributes)}`;
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

/** The unary ops fused into com.microsoft QLinear<op>, with the fused node's attributes. */
const UNARY_QLINEAR = {
  Softmax: (a, opset) => ({ axis: a.axis ?? (opset < 13 ? 1 : -1), opset }),
  Sigmoid: () => ({}),
  LeakyRelu: (a) => ({ alpha: a.alpha ?? 0.01 }),
  AveragePool: (a) => ({ ...a, channels_last: 0 }),
  GlobalAveragePool: (a) => ({ ...a, channels_last: 0 }),
};

/**
 * Rewrites QDQ groups into integer operators. Returns the number of groups fused.
 */
export function fuseQdq(graph) {
  foldConstants(graph);
  dropIdentityCasts(graph);
  mergeDuplicateQdq(graph);
  const inits = graph.initializers;
  const producer = new Map();
  const consumers = new Map();
  const index = () => {
    producer.clear();
    consumers.clear();
    for (const n of graph.nodes) {
      for (const o of n.outputs) producer.set(o, n);
      for (const i of n.inputs) consumers.set(i, [...(consumers.get(i) ?? []), n]);
    }
    for (const o of graph.outputs) consumers.set(o.name, [...(consumers.get(o.name) ?? []), { opType: '__output__' }]);
  };
  index();
  const dq = (name) => {
    const n = producer.get(name);
    return n && n.opType === 'DequantizeLinear' ? n : null;
  };
  const onlyConsumer = (name, node) => (consumers.get(name) ?? []).length === 1 && consumers.get(name)[0] === node;
  const singleQ = (name) => {
    const cs = consumers.get(name) ?? [];
    return cs.length === 1 && cs[0].opType === 'QuantizeLinear' ? cs[0] : null;
  };
  const constQ = (name) => inits.has(name);
  const removed = new Set();
  const added = new Map(); // replaced node -> new nodes
  let fused = 0;
  // ONNX Runtime's QDQS8ToU8Transformer (optimizer/qdq_transformer/qdq_s8_to_u8.cc) runs before its QDQ fusion
  // wherever int8 QDQ is not "allowed", i.e. everywhere but ARM, onnxruntime-web included, and qwasm does the same
  // here, on the graph, once: the fusions below then see ORT's types and their kernels get ORT's uint8 data.
  // - An int8 QuantizeLinear -> DequantizeLinear pair becomes uint8 (both zero points + 128) when the Q feeds that
  //   one DQ alone and is no graph output, and both zero points are equal scalar initializers. EnsureUniqueDQForNodeUnit
  //   runs before it and gives a DQ with several consumers (or a consumer and a graph output) one copy per consumer,
  //   so then the Q feeds several DQs and stays int8.
  // The DequantizeLinear of an int8 constant stays int8 in onnxruntime-web 1.30 (the transformer's lone-DQ branch,
  // which would convert constants with values outside [-64, 64], does not run there: measured, docs/quantize-static.md).
  // Each fusion then requires the types ORT's selector requires (qdq_selectors.cc): equal types on all sides, and no
  // int8 activation for Conv / MatMul. Where they differ the group stays DQ -> float op -> Q, as in ORT.
  const int8Zp = (name) => {
    const t = name && inits.get(name);
    return t && t.dtype === 'int8' && t.data.length === 1 ? Number(t.data[0]) : undefined;
  };
  const s8ToU8 = (q) => {
    if (!q || q.opType !== 'QuantizeLinear' || q.domain !== '') return false;
    const cs = consumers.get(q.outputs[0]) ?? [];
    const d = cs[0];
    if (cs.length !== 1 || d.opType !== 'DequantizeLinear' || d.domain !== '' || d.inputs[0] !== q.outputs[0]) return false;
    const zq = int8Zp(q.inputs[2]);
    if (zq === undefined || zq !== int8Zp(d.inputs[2])) return false;
    const uses = consumers.get(d.outputs[0]) ?? [];
    const nodes = uses.filter((u) => u.opType !== '__output__').length;
    return nodes === 0 || (nodes === 1 && uses.length === 1);
  };
  for (const q of graph.nodes) {
    if (!s8ToU8(q)) continue;
    const zp = `${q.inputs[2]}/s8_to_u8`;
    inits.set(zp, { dtype: 'uint8', dims: [], data: Uint8Array.of(int8Zp(q.inputs[2]) + 128) });
    q.inputs[2] = consumers.get(q.outputs[0])[0].inputs[2] = zp;
  }
  // The element type of a DequantizeLinear's input or a QuantizeLinear's output: its zero point's.
  const qtype = (n) => inits.get(n.inputs[2])?.dtype ?? (n.opType === 'DequantizeLinear' && inits.get(n.inputs[0])?.dtype || 'uint8');
  const sameTypes = (...ns) => ns.every((n) => qtype(n) === qtype(ns[0]));
  const sameQParams = (a, b) => {
    const eq = (x, y) => x === y || (inits.get(x) && inits.get(y) && inits.get(x).data.length === 1 && Number(inits.get(x).data[0]) === Number(inits.get(y).data[0]));
    return eq(a.inputs[1], b.inputs[1]) && eq(a.inputs[2], b.inputs[2]);
  };

  for (const node of graph.nodes) {
    if (removed.has(node)) continue;
    const op = node.opType;
    if (op === 'Conv' || op === 'Gemm' || op === 'MatMul') {
      const dx = dq(node.inputs[0]);
      const dw = dq(node.inputs[1]);
      const db = node.inputs[2] ? dq(node.inputs[2]) : null;
      if (!dx || !dw || !constQ(dw.inputs[0]) || (node.inputs[2] && (!db || !constQ(db.inputs[0])))) continue;
      if (op === 'Gemm' && ((node.attributes.transA ?? 0) !== 0 || (node.attributes.transB ?? 0) !== 1 || (node.attributes.alpha ?? 1) !== 1 || (node.attributes.beta ?? 1) !== 1)) continue;
      // optional activation between the op and its QuantizeLinear
      let last = node;
      let act = null;
      const next = consumers.get(node.outputs[0]) ?? [];
      if (next.length === 1 && (next[0].opType === 'Relu' || next[0].opType === 'Clip')) {
        act = next[0];
        last = act;
      }
      const q = singleQ(last.outputs[0]);
      if (!q || (act && !onlyConsumer(node.outputs[0], act))) continue;
      // ConvSelector / MatMulSelector: no int8 activation where int8 is not allowed; GemmSelector: int8 A with int8 B.
      if (!sameTypes(dx, q) || (op !== 'Gemm' ? qtype(dx) === 'int8' : qtype(dx) === 'int8' && qtype(dw) !== 'int8')) continue;
      const out = q.outputs[0];
      const integerName = `${node.name}/quantized`;
      const clampLo = `${integerName}/relu_min`;
      const opType = op === 'Conv' ? 'QLinearConv' : op === 'Gemm' ? 'QGemm' : 'QLinearMatMul';
      const domain = op === 'Gemm' ? 'com.microsoft' : '';
      const wq = dw.inputs;
      const inputs =
        op === 'Conv'
          ? [dx.inputs[0], dx.inputs[1], dx.inputs[2], wq[0], wq[1], wq[2], q.inputs[1], q.inputs[2], db ? db.inputs[0] : '']
          : op === 'Gemm'
            ? [dx.inputs[0], dx.inputs[1], dx.inputs[2], wq[0], wq[1], wq[2], db ? db.inputs[0] : '', q.inputs[1], q.inputs[2]]
            : [dx.inputs[0], dx.inputs[1], dx.inputs[2], wq[0], wq[1], wq[2], q.inputs[1], q.inputs[2]];
      const fusedNodes = [{ name: integerName, opType, domain, inputs, outputs: [act ? `${out}/pre_activation` : out], attributes: { ...node.attributes } }];
      if (act) {
        // ReLU (or a Clip from 0) on the quantized output: clamp the integers at the output zero point, as ORT does.
        const lo = act.opType === 'Clip' ? Number(inits.get(act.inputs[1])?.data[0] ?? act.attributes.min ?? -Infinity) : 0;
        const hi = act.opType === 'Clip' ? Number(inits.get(act.inputs[2])?.data[0] ?? act.attributes.max ?? Infinity) : Infinity;
        const scale = Number(inits.get(q.inputs[1]).data[0]);
        const zp = inits.get(q.inputs[2]);
        const zpv = Number(zp.data[0]);
        const [qmin, qmax] = zp.dtype === 'int8' ? [-128, 127] : [0, 255];
        // Quantizing is monotonic, so Q(clip(x, lo, hi)) = clamp(Q(x), Q(lo), Q(hi)): the bounds are quantized with
        // QuantizeLinear's rule (float32 x / scale, ties to even, + zero point, saturate).
        const round = (v) => quantizeLinearValue(v, scale, zpv, qmin, qmax);
        const Arr = zp.dtype === 'int8' ? Int8Array : Uint8Array;
        inits.set(clampLo, { dtype: zp.dtype, dims: [], data: Arr.of(lo === -Infinity ? qmin : round(lo)) });
        inits.set(`${clampLo}/max`, { dtype: zp.dtype, dims: [], data: Arr.of(hi === Infinity ? qmax : round(hi)) });
        fusedNodes.push({ name: `${integerName}/activation`, opType: 'Clip', domain: '', inputs: [`${out}/pre_activation`, clampLo, `${clampLo}/max`], outputs: [out], attributes: {} });
      }
      for (const n of [node, act, q].filter(Boolean)) removed.add(n);
      added.set(node, fusedNodes);
      fused++;
      continue;
    }
    if (['MaxPool', 'Reshape', 'Flatten', 'Transpose', 'Squeeze', 'Unsqueeze'].includes(op)) {
      const dx = dq(node.inputs[0]);
      const q = singleQ(node.outputs[0]);
      if (!dx || !q || !sameTypes(dx, q) || !sameQParams(dx, q)) continue;
      removed.add(node);
      removed.add(q);
      added.set(node, [{ ...node, inputs: [dx.inputs[0], ...node.inputs.slice(1)], outputs: [q.outputs[0]] }]);
      fused++;
      continue;
    }
    if (op === 'Add' || op === 'Mul') {
      const da = dq(node.inputs[0]);
      const db = dq(node.inputs[1]);
      const q = singleQ(node.outputs[0]);
      if (!da || !db || !q || !sameTypes(da, db, q)) continue;
      removed.add(node);
      removed.add(q);
      added.set(node, [{
        name: `${node.name}/quantized`, opType: op === 'Add' ? 'QLinearAdd' : 'QLinearMul', domain: 'com.microsoft',
        inputs: [da.inputs[0], da.inputs[1], da.inputs[2], db.inputs[0], db.inputs[1], db.inputs[2], q.inputs[1], q.inputs[2]],
        outputs: [q.outputs[0]], attributes: {},
      }]);
      fused++;
      continue;
    }
    if (op === 'Concat') {
      const ds = node.inputs.map(dq);
      const q = singleQ(node.outputs[0]);
      if (ds.some((d) => !d) || !q || !sameTypes(...ds, q)) continue;
      removed.add(node);
      removed.add(q);
      added.set(node, [{
        name: `${node.name}/quantized`, opType: 'QLinearConcat', domain: 'com.microsoft',
        inputs: [q.inputs[1], q.inputs[2], ...ds.flatMap((d) => [d.inputs[0], d.inputs[1], d.inputs[2]])], outputs: [q.outputs[0]], attributes: { axis: node.attributes.axis ?? 0 },
      }]);
      fused++;
      continue;
    }
    // Unary groups DQ -> op -> Q become ONNX Runtime's com.microsoft QLinear<op> when the types agree (its
    // UnaryNodeGroupSelector): Softmax (a table of exp), Sigmoid and LeakyRelu (tables that reproduce its float
    // path exactly), AveragePool and GlobalAveragePool (whatever the output qparams; quantize_static gives
    // GlobalAveragePool its own). With ONNX semantics the kernels are ORT's (ort-kernels.js, ort-tables.js).
    const unaryAttributes = UNARY_QLINEAR[op];
    if (unaryAttributes) {
      const dx = dq(node.inputs[0]);
      const q = singleQ(node.outputs[0]);
      if (!dx || !q || !sameTypes(dx, q)) continue;
      removed.add(node);
      removed.add(q);
      added.set(node, [{
        name: `${node.name}/quantized`, opType: `QLinear${op}`, domain: 'com.microsoft',
        inputs: [dx.inputs[0], dx.inputs[1], dx.inputs[2], q.inputs[1], q.inputs[2]], outputs: [q.outputs[0]],
        attributes: unaryAttributes(node.attributes, graph.opsets?.get('') ?? 13),
      }]);
      fused++;
      continue;
    }
  }
  if (fused === 0) return 0;
  graph.nodes = graph.nodes.flatMap((n) => added.get(n) ?? (removed.has(n) ? [] : [n]));
  // DequantizeLinear nodes nobody reads any more (those of weights and biases) go too.
  index();
  graph.nodes = graph.nodes.filter((n) => n.opType !== 'DequantizeLinear' || n.outputs.some((o) => consumers.has(o)));
  return fused;
}

const CLAMPABLE = new Set(['QLinearConv', 'QGemm', 'QLinearMatMul']);

/**
 * Folds an integer Clip (8-bit constant bounds: a fused ReLU / ReLU6) into the QLinearConv, QGemm or
 * QLinearMatMul that alone feeds it, as the layer's output range: one pass over the data instead of
 * two, with identical integers (clamp(clamp(v, qmin, qmax), lo, hi) is still one clamp). The layer
 * takes the Clip's output name; the attribute `qwasm_output_range` records the bounds.
 */
export function fuseClips(graph) {
  const inits = graph.initializers;
  const uses = new Map();
  for (const n of graph.nodes) for (const i of n.inputs) uses.set(i, (uses.get(i) ?? 0) + 1);
  for (const o of graph.outputs) uses.set(o.name, (uses.get(o.name) ?? 0) + 1);
  const producer = new Map();
  for (const n of graph.nodes) for (const o of n.outputs) producer.set(o, n);
  const bound = (name) => {
    const t = inits.get(name);
    return t && (t.dtype === 'uint8' || t.dtype === 'int8') && t.data.length === 1 ? Number(t.data[0]) : undefined;
  };
  let fused = 0;
  graph.nodes = graph.nodes.filter((clip) => {
    if (clip.opType !== 'Clip' || clip.domain !== '' || clip.inputs.length !== 3) return true;
    const layer = producer.get(clip.inputs[0]);
    const lo = bound(clip.inputs[1]), hi = bound(clip.inputs[2]);
    if (!layer || !CLAMPABLE.has(layer.opType) || uses.get(clip.inputs[0]) !== 1 || lo === undefined || hi === undefined || lo > hi) return true;
    const prev = layer.attributes.qwasm_output_range;
    layer.attributes.qwasm_output_range = prev ? [Math.min(Math.max(lo, prev[0]), hi), Math.max(Math.min(hi, prev[1]), lo)] : [lo, hi];
    layer.outputs[0] = clip.outputs[0];
    producer.set(clip.outputs[0], layer);
    fused++;
    return false;
  });
  return fused;
}

/**
 * A float Conv whose output only a Relu reads (and no graph output) takes the Relu over: the kernel applies
 * it in wasm before copying the result out (the same bits as the float Relu), and the Conv node writes the
 * Relu's output. As with the Clips above, the pre-activation tensor is then no longer observable.
 */
export function fuseFloatConvRelu(graph) {
  const readers = new Map();
  for (const node of graph.nodes) for (const name of node.inputs) readers.set(name, [...(readers.get(name) ?? []), node]);
  const outputs = new Set(graph.outputs.map((o) => o.name));
  const removed = new Set();
  for (const conv of graph.nodes) {
    const y = conv.outputs[0];
    if (conv.opType !== 'Conv' || conv.domain !== '' || conv.outputs.length !== 1 || outputs.has(y)) continue;
    const next = readers.get(y) ?? [];
    const relu = next[0];
    if (next.length !== 1 || relu.opType !== 'Relu' || relu.domain !== '' || relu.inputs.length !== 1) continue;
    conv.outputs = [relu.outputs[0]];
    conv.attributes = { ...conv.attributes, qwasm_relu: 1 };
    removed.add(relu);
  }
  graph.nodes = graph.nodes.filter((n) => !removed.has(n));
}
