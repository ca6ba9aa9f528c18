// onnxruntime's transformer fusions, so that a file that is not pre-fused computes what onnxruntime-web computes:
// its default graph optimizations rewrite these patterns and the rewritten operators round differently
// (docs/transformer-ops.md, "What the model loader has to reproduce"). Each rule follows the onnxruntime 1.30
// graph transformer named beside it (onnxruntime/core/optimizer/), including the conditions that decide whether
// it fires, since a fusion onnxruntime does not make must not be made here either where it changes the bits:
//   - MatMulIntegerToFloat, DynamicQuantizeMatMul: the dynamic int8 chain (numerically the same; one kernel)
//   - LayerNormalization from ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div / Mul / Add (Welford instead)
//   - com.microsoft Gelu from Div(sqrt 2) / Erf / Add(1) / Mul / Mul(0.5) (a multiply by 1/sqrt 2 instead)
//   - BiasGelu / FastGelu from Add(bias) + Gelu (the same arithmetic; one kernel)
//   - SkipLayerNormalization from Add(residual) [+ Add(bias)] + LayerNormalization (the bias added last)
//   - FusedMatMul from MatMul with a scalar Mul / Div before or after it (alpha applied per K block)
//   - FusedGemm from Gemm + Tanh, Transpose chains merged (the same arithmetic)
//   - qwasm's own: Transposes around a float MatMul read / written in place as strided views (no copy)
// Where a condition depends on shapes, the shapes are the ones the file declares (value_info, written by the
// exporters and by quantize_dynamic's shape inference): onnxruntime's fusions see those.
import { isPermutation } from '../../tensor/check.js';
import { applyRules, graphView } from './rules.js';

const MS = 'com.microsoft';
/** A fused node is named after the node it grew from, and what it became ("/layers.0/q/MatMul_quant/MatMulIntegerToFloat"). */
const fusedName = (base, opType) => `${base.replace(/\/(MatMulIntegerToFloat|LayerNormalization|Gelu)$/, '')}/${opType}`;

/** The transformer view: rules.js's plus declared shapes, first parents / children by type, float scalars. */
function view(graph) {
  const g = graphView(graph);
  const shapes = graph.shapes ?? new Map();
  const shapeOf = (name) => {
    const init = g.inits.get(name);
    if (init) return init.dims;
    return shapes.get(name) ?? null;
  };
  return Object.assign(g, {
    shapeOf,
    /** The number of nodes (and graph outputs) reading a node's outputs: onnxruntime's output edges. */
    edges: (node) => node.outputs.reduce((s, o) => s + g.consumers(o).length, 0),
    parent: (node, index) => g.producer(node.inputs[index] ?? ''),
    /** onnxruntime's FirstParentByType: the producer of the first input made by a node of that type. */
    firstParent: (node, opType) => {
      for (const i of node.inputs) {
        const p = g.producer(i);
        if (p && p.opType === opType) return p;
      }
      return null;
    },
    /** The only node reading the node's (first) output. */
    child: (node) => g.onlyConsumer(node.outputs[0]),
    /** A float constant scalar (rank 0 or one element) close to `expected` (onnxruntime: IsInitializerWithExpectedValue). */
    isScalarNear: (name, expected) => {
      const t = g.inits.get(name);
      if (!t || t.dtype !== 'float32' || t.data.length !== 1 || t.dims.length > 1) return false;
      const v = t.data[0];
      return Number.isFinite(v) && Math.abs(v - expected) <= 1e-8 + 1e-5 * Math.abs(expected);
    },
  });
}

const is = (node, opType, domain = '') => node && node.opType === opType && (node.domain || '') === domain;

/** The bias of a MatMulIntegerToFloat: a constant [..., 1, N] with N > 1 (matmul_integer_to_float.cc CheckBiasShape). */
function biasOf(g, add, other) {
  const name = add.inputs[0] === other ? add.inputs[1] : add.inputs[0];
  const t = g.inits.get(name);
  if (!t || t.dtype !== 'float32' || t.dims.length < 1 || t.dims.slice(0, -1).some((d) => d !== 1) || t.dims.at(-1) <= 1) return null;
  return name;
}

const DYNAMIC_QUANT_RULES = [
  {
    // MatMulInteger -> Cast -> Mul(scale product) [-> Add(bias)] => MatMulIntegerToFloat (matmul_integer_to_float.cc)
    ops: ['Mul'],
    match(mul, g) {
      const cast = g.firstParent(mul, 'Cast');
      const scales = g.firstParent(mul, 'Mul');
      const mmi = cast && g.firstParent(cast, 'MatMulInteger');
      if (!cast || !mmi || !scales || cast.attributes.to !== 1) return null;
      if (g.edges(cast) !== 1 || g.edges(mmi) !== 1 || g.edges(scales) !== 1) return null;
      // the scale product's constant factor is B's scale
      const [s0, s1] = scales.inputs;
      const [aScale, bScale] = g.isConstant(s1) ? [s0, s1] : g.isConstant(s0) ? [s1, s0] : [null, null];
      if (!bScale) return null;
      const add = g.edges(mul) === 1 ? g.child(mul) : null;
      const bias = is(add, 'Add') ? biasOf(g, add, mul.outputs[0]) : null;
      return { cast, mmi, scales, aScale, bScale, add: bias ? add : null, bias, consumed: [cast, mmi, scales, ...(bias ? [add] : [])] };
    },
    rewrite({ mmi, aScale, bScale, add, bias }, mul) {
      const [a, b, az = '', bz = ''] = mmi.inputs;
      return [{
        name: fusedName(mmi.name, 'MatMulIntegerToFloat'), opType: 'MatMulIntegerToFloat', domain: MS, attributes: {},
        inputs: [a, b, aScale, bScale, az, bz, ...(bias ? [bias] : [])], outputs: [(add ?? mul).outputs[0]],
      }];
    },
  },
];

const DYNAMIC_QUANTIZE_MATMUL_RULES = [
  {
    // DynamicQuantizeLinear feeding one MatMulIntegerToFloat alone => DynamicQuantizeMatMul (dynamic_quantize_matmul_fusion.cc)
    ops: [`${MS}:MatMulIntegerToFloat`],
    match(node, g) {
      const [a, b, aScale, bScale, aZero, bZero = '', bias = ''] = node.inputs;
      if (!g.isConstant(b) || !g.isConstant(bScale) || (bZero && !g.isConstant(bZero)) || (bias && !g.isConstant(bias))) return null;
      const dql = g.firstParent(node, 'DynamicQuantizeLinear');
      if (!dql || g.edges(dql) !== 3 || dql.outputs[0] !== a || dql.outputs[1] !== aScale || dql.outputs[2] !== aZero) return null;
      return { dql, consumed: [dql] };
    },
    rewrite({ dql }, node) {
      const [, b, , bScale, , bZero = '', bias = ''] = node.inputs;
      return [{ name: fusedName(node.name, 'DynamicQuantizeMatMul'), opType: 'DynamicQuantizeMatMul', domain: MS, attributes: {}, inputs: [dql.inputs[0], b, bScale, bZero, bias], outputs: node.outputs.slice() }];
    },
  },
];

/** The reduced axes of a ReduceMean (attribute, or constant input from opset 18). */
function reduceAxes(g, node) {
  if (node.attributes.axes) return node.attributes.axes.slice();
  const t = node.inputs[1] ? g.inits.get(node.inputs[1]) : null;
  return t ? Array.from(t.data, Number) : [];
}

/** layer_norm_fusion.cc CheckAxesOnReduceMean: consecutive axes ending with the last one. */
function lastAxes(axes, rank) {
  let a = axes.slice().sort((x, y) => x - y);
  if (a.length === 0) return null;
  if (a.at(-1) >= 0) {
    if (rank === undefined) return null;
    a = a.map((v) => (v >= 0 ? v - rank : v)).sort((x, y) => x - y);
  }
  for (let i = 1; i < a.length; i++) if (a[i] !== a[i - 1] + 1) return null;
  return a.at(-1) === -1 ? a : null;
}

const LAYER_NORM_RULES = [
  {
    // ReduceMean -> Sub -> Pow -> ReduceMean -> Add(eps) -> Sqrt -> Div -> Mul(scale) -> Add(bias) => LayerNormalization
    ops: ['ReduceMean'],
    match(rm, g) {
      const x = rm.inputs[0];
      const edges = g.edges(rm);
      if ((edges !== 1 && edges !== 2) || rm.outputs.some((o) => g.isGraphOutput(o))) return null;
      const subs = g.consumers(rm.outputs[0]);
      if (!subs.every((s) => is(s, 'Sub'))) return null;
      const [sub, subDup] = subs;
      const otherInput = (s) => s.inputs.find((i) => i !== rm.outputs[0]);
      if (otherInput(sub) !== x || (subDup && otherInput(subDup) !== x)) return null;
      if (g.edges(sub) !== (subDup ? 1 : 2)) return null;
      const div = [sub, subDup].filter(Boolean).flatMap((s) => g.consumers(s.outputs[0])).find((n) => is(n, 'Div'));
      if (!div || g.edges(div) !== 1) return null;
      const sqrt = g.firstParent(div, 'Sqrt');
      if (!sqrt || g.edges(sqrt) !== 1) return null;
      const add2 = g.parent(sqrt, 0);
      if (!is(add2, 'Add') || g.edges(add2) !== 1) return null;
      const rm2 = g.firstParent(add2, 'ReduceMean');
      if (!rm2 || g.edges(rm2) !== 1) return null;
      const pow = g.parent(rm2, 0);
      if (!is(pow, 'Pow') || g.edges(pow) !== 1) return null;
      const powSub = g.firstParent(pow, 'Sub');
      if (powSub !== sub && powSub !== subDup) return null;
      const mul = g.child(div);
      if (!is(mul, 'Mul') || g.edges(mul) !== 1) return null;
      const last = g.child(mul);
      if (!is(last, 'Add')) return null;
      const rank = g.shapeOf(x)?.length;
      const axes = lastAxes(reduceAxes(g, rm), rank);
      const axes2 = lastAxes(reduceAxes(g, rm2), rank);
      if (!axes || !axes2 || axes.join() !== axes2.join() || axes.length !== 1) return null;
      const oneDim = (n) => n.inputs.find((i) => g.shapeOf(i)?.length === 1);
      const scale = oneDim(mul);
      const bias = oneDim(last);
      if (!scale || !bias || g.shapeOf(scale)[0] !== g.shapeOf(bias)[0]) return null;
      const eps = g.inits.get(add2.inputs[1]);
      const epsilon = eps && eps.dtype === 'float32' ? eps.data[0] : 1e-5;
      return { x, scale, bias, epsilon, axis: axes[0], last, consumed: [sub, subDup, div, sqrt, add2, rm2, pow, mul, last].filter(Boolean) };
    },
    rewrite: ({ x, scale, bias, epsilon, axis, last }, rm) => [{
      name: fusedName(rm.name, 'LayerNormalization'), opType: 'LayerNormalization', domain: '', inputs: [x, scale, bias], outputs: [last.outputs[0]],
      attributes: { axis, epsilon, stash_type: 1 }, attributeTypes: { axis: 2, epsilon: 1, stash_type: 2 },
    }],
  },
  {
    // Div(sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5), either order of the Muls => com.microsoft Gelu (gelu_fusion.cc)
    ops: ['Div'],
    match(div, g) {
      if (g.edges(div) !== 1 || !(g.isScalarNear(div.inputs[1], 1.4142099618911743) || g.isScalarNear(div.inputs[1], Math.SQRT2))) return null;
      const x = div.inputs[0];
      const erf = g.child(div);
      if (!is(erf, 'Erf') || g.edges(erf) !== 1) return null;
      const add = g.child(erf);
      if (!is(add, 'Add') || g.edges(add) !== 1) return null;
      if (!g.isScalarNear(add.inputs[0] === erf.outputs[0] ? add.inputs[1] : add.inputs[0], 1)) return null;
      const mul = g.consumers(add.outputs[0])[0];
      if (!is(mul, 'Mul')) return null;
      const half = (n, other) => g.isScalarNear(n.inputs[0] === other ? n.inputs[1] : n.inputs[0], 0.5);
      const mul2 = g.firstParent(mul, 'Mul');
      if (mul2) { // pattern 1: Mul(x, 0.5) * (erf + 1)
        if (g.edges(mul2) !== 1 || !mul2.inputs.includes(x) || !half(mul2, x)) return null;
        return { x, out: mul.outputs[0], consumed: [erf, add, mul2, mul] };
      }
      if (g.edges(mul) !== 1 || !mul.inputs.includes(x)) return null; // pattern 2: (x * (erf + 1)) * 0.5
      const mul3 = g.child(mul);
      if (!is(mul3, 'Mul') || !half(mul3, mul.outputs[0])) return null;
      return { x, out: mul3.outputs[0], consumed: [erf, add, mul, mul3] };
    },
    rewrite: ({ x, out }, div) => [{ name: fusedName(div.name, 'Gelu'), opType: 'Gelu', domain: MS, inputs: [x], outputs: [out], attributes: {} }],
  },
];

const BIAS_RULES = [
  {
    // Add(x, 1-D constant) -> Gelu => BiasGelu, or FastGelu for the tanh form (bias_gelu_fusion.cc)
    ops: [`${MS}:Gelu`, 'Gelu'],
    match(gelu, g) {
      const add = g.parent(gelu, 0);
      if (!is(add, 'Add') || g.edges(add) !== 1 || add.outputs.some((o) => g.isGraphOutput(o))) return null;
      const biasIndex = [0, 1].find((i) => g.isConstant(add.inputs[i]) && g.shapeOf(add.inputs[i]).length === 1);
      if (biasIndex === undefined || g.isConstant(add.inputs[1 - biasIndex])) return null;
      const shape = g.shapeOf(add.inputs[1 - biasIndex]);
      const cols = g.shapeOf(add.inputs[biasIndex])[0];
      if (shape && typeof shape.at(-1) === 'number' && shape.at(-1) !== cols) return null;
      return { x: add.inputs[1 - biasIndex], bias: add.inputs[biasIndex], consumed: [add] };
    },
    rewrite: ({ x, bias }, gelu) => [{
      name: fusedName(gelu.name, 'BiasGelu'), opType: gelu.attributes.approximate === 'tanh' ? 'FastGelu' : 'BiasGelu', domain: MS,
      inputs: [x, bias], outputs: gelu.outputs.slice(), attributes: {},
    }],
  },
];

/** skip_layer_norm_fusion.cc CheckFirstAdd: both inputs rank 3 with equal dims (values, or the same name). */
function sameRank3(g, add) {
  const [a, b] = add.inputs.map((i) => g.shapeOf(i));
  return !!a && !!b && a.length === 3 && b.length === 3 && a.every((d, k) => d !== null && d === b[k]);
}

/** CheckSecondAdd: a constant 1-D input 1 matching the last dim of a rank-3 input 0. */
function biasAdd(g, add) {
  const x = g.shapeOf(add.inputs[0]);
  const b = g.shapeOf(add.inputs[1]);
  return g.isConstant(add.inputs[1]) && !!x && !!b && x.length === 3 && b.length === 1 && typeof x[2] === 'number' && x[2] === b[0];
}

const SKIP_LAYER_NORM_RULES = [
  {
    // [Add(bias) ->] Add(residual) -> LayerNormalization(last axis) => SkipLayerNormalization (bias added after the skip)
    ops: ['LayerNormalization'],
    match(ln, g) {
      if (ln.outputs.slice(1).some((o) => o)) return null;
      const add1 = g.parent(ln, 0);
      if (!is(add1, 'Add') || g.edges(add1) !== 1 || g.isGraphOutput(add1.outputs[0]) || !sameRank3(g, add1)) return null;
      const axis = ln.attributes.axis ?? -1;
      if (axis !== -1 && axis !== 2) return null;
      for (const [side, slot] of [[0, 0], [1, 1]]) { // format 1: Add2 feeds input 0; format 2: input 1
        const add2 = g.parent(add1, side);
        if (is(add2, 'Add') && g.edges(add2) === 1 && !g.isGraphOutput(add2.outputs[0]) && biasAdd(g, add2)) {
          const inputs = add1.inputs.slice();
          inputs[slot] = add2.inputs[0];
          return { inputs, bias: add2.inputs[1], add1, consumed: [add1, add2] };
        }
      }
      return { inputs: add1.inputs.slice(), bias: null, add1, consumed: [add1] };
    },
    rewrite: ({ inputs, bias }, ln) => [{
      name: fusedName(ln.name, 'SkipLayerNormalization'), opType: 'SkipLayerNormalization', domain: MS,
      inputs: [...inputs, ln.inputs[1], ln.inputs[2] ?? '', ...(bias ? [bias] : [])], outputs: [ln.outputs[0]],
      // onnxruntime gives a LayerNormalization without epsilon SkipLayerNormalization's default, 1e-12
      attributes: { epsilon: ln.attributes.epsilon ?? 1e-12 }, attributeTypes: { epsilon: 1 },
    }],
  },
];

/**
 * The fusable scale of a Mul / Div by a constant scalar (matmul_scale_fusion.cc GetScaleFromNode): { scale, index }
 * of the scale input, the float scale as onnxruntime computes it (a Div gives 1.0f / divisor). The scalar may have
 * no more dimensions than the other input (`rankOf` its declared rank, 0 when unknown).
 */
function scaleOf(g, node, rankOf) {
  const scalar = (name, maxRank) => {
    const t = g.inits.get(name);
    if (!t || t.data.length !== 1 || t.dims.length > maxRank) return undefined;
    if (t.dtype === 'float32') return t.data[0];
    if (t.dtype === 'int32' || t.dtype === 'int64') { // integers exactly representable as float only
      const v = Number(t.data[0]);
      return Math.fround(v) === v ? v : undefined;
    }
    return undefined;
  };
  if (is(node, 'Div')) {
    const d = scalar(node.inputs[1], rankOf(node.inputs[0]));
    return d === undefined ? null : { scale: Math.fround(1 / d), index: 1 };
  }
  if (is(node, 'Mul')) {
    for (const index of [0, 1]) {
      const s = scalar(node.inputs[index], rankOf(node.inputs[1 - index]));
      if (s !== undefined) return { scale: s, index };
    }
  }
  return null;
}

const MATMUL_SCALE_RULES = [
  {
    // scalar Mul / Div before or after a float MatMul => com.microsoft FusedMatMul with alpha (matmul_scale_fusion.cc)
    ops: ['MatMul', `${MS}:FusedMatMul`],
    match(mm, g) {
      const rankOf = (name) => g.shapeOf(name)?.length ?? 0;
      const inputs = mm.inputs.slice();
      const consumed = [];
      let alpha = Math.fround(mm.attributes.alpha ?? 1);
      for (let i = 0; i < mm.inputs.length; i++) {
        const p = g.producer(mm.inputs[i]);
        const s = p && scaleOf(g, p, rankOf);
        // the unscaled input must have a known shape of rank > 0
        if (!s || !(g.shapeOf(p.inputs[1 - s.index])?.length > 0)) continue;
        inputs[i] = p.inputs[1 - s.index];
        alpha = Math.fround(alpha * s.scale);
        if (g.edges(p) === 1 && !g.isGraphOutput(p.outputs[0])) consumed.push(p); // else it stays for its other readers
      }
      let out = mm.outputs[0];
      if (g.edges(mm) === 1 && !g.isGraphOutput(out)) {
        const next = g.child(mm);
        const s = next && scaleOf(g, next, rankOf);
        if (s && next.inputs[1 - s.index] === out) {
          alpha = Math.fround(alpha * s.scale);
          out = next.outputs[0];
          consumed.push(next);
        }
      }
      if (inputs.every((x, i) => x === mm.inputs[i]) && out === mm.outputs[0]) return null;
      return { inputs, out, alpha, consumed };
    },
    rewrite: ({ inputs, out, alpha }, mm) => [{
      name: fusedName(mm.name, 'FusedMatMul'), opType: 'FusedMatMul', domain: MS, inputs, outputs: [out],
      attributes: { ...(mm.opType === 'FusedMatMul' ? mm.attributes : {}), alpha }, attributeTypes: { alpha: 1 },
    }],
  },
];

const NEUTRAL_RULES = [
  {
    // Gemm -> Tanh => com.microsoft FusedGemm (gemm_activation_fusion.cc): the Tanh in place on the Gemm's output
    ops: ['Gemm'],
    match(gemm, g) {
      const tanh = g.edges(gemm) === 1 && !g.isGraphOutput(gemm.outputs[0]) ? g.child(gemm) : null;
      return is(tanh, 'Tanh') ? { tanh, consumed: [tanh] } : null;
    },
    rewrite: ({ tanh }, gemm) => [{
      name: fusedName(gemm.name, 'FusedGemm'), opType: 'FusedGemm', domain: MS, inputs: gemm.inputs.slice(), outputs: tanh.outputs.slice(),
      attributes: { ...gemm.attributes, activation: 'Tanh' }, attributeTypes: { ...gemm.attributeTypes, activation: 3 },
    }],
  },
  {
    // Transpose -> Transpose (read by nothing else) => one Transpose with the composed permutation
    ops: ['Transpose'],
    match(t1, g) {
      const t2 = g.edges(t1) === 1 && !g.isGraphOutput(t1.outputs[0]) ? g.child(t1) : null;
      if (!is(t2, 'Transpose') || !t1.attributes.perm || !t2.attributes.perm) return null;
      return { perm: t2.attributes.perm.map((p) => t1.attributes.perm[p]), t2, consumed: [t2] };
    },
    rewrite: ({ perm, t2 }, t1) => [{ ...t1, outputs: t2.outputs.slice(), attributes: { perm } }],
  },
];


/**
 * qwasm's own layout fusions (no onnxruntime counterpart, the same bits): a Transpose that only feeds a float
 * MatMul becomes that operand's `qwasm_perm_a` / `qwasm_perm_b` (the product reads the strided view: attention's
 * per-head Q, K^T and V), and a Transpose that alone reads a MatMul's output (Shapes beside it read the transposed
 * value with `qwasm_perm`, the inverse permutation) becomes its `qwasm_perm_y` (the product writes the heads back
 * interleaved). operators/transformer.js falls back to a copy where the strides do
 * not allow it, and keeps MLAS's summation order either way.
 */
const LAYOUT_RULES = [
  {
    ops: ['MatMul', `${MS}:FusedMatMul`],
    match(mm, g) {
      const attributes = { ...mm.attributes };
      const inputs = mm.inputs.slice();
      const consumed = [];
      ['a', 'b'].forEach((side, i) => {
        const t = g.producer(mm.inputs[i]);
        // (a perm that is not a permutation stays a Transpose, which names the problem when it runs)
        if (!is(t, 'Transpose') || !isPermutation(t.attributes.perm) || mm.inputs[0] === mm.inputs[1] || attributes[`qwasm_perm_${side}`]) return;
        if (g.edges(t) !== 1 || g.isGraphOutput(t.outputs[0])) return;
        attributes[`qwasm_perm_${side}`] = t.attributes.perm.slice();
        inputs[i] = t.inputs[0];
        consumed.push(t);
      });
      let outputs = mm.outputs;
      // the output's readers: one Transpose, and Shapes (a torch export takes the heads' shape there) that then read
      // the transposed value, its dimensions permuted back (qwasm_perm)
      const readers = g.isGraphOutput(mm.outputs[0]) ? [] : g.consumers(mm.outputs[0]);
      const next = readers.filter((r) => is(r, 'Transpose'));
      const shapes = readers.filter((r) => is(r, 'Shape') && !r.attributes.qwasm_perm);
      let rewrittenShapes = [];
      if (next.length === 1 && next.length + shapes.length === readers.length && isPermutation(next[0].attributes.perm) &&
          !attributes.qwasm_perm_y) {
        const perm = next[0].attributes.perm;
        attributes.qwasm_perm_y = perm.slice();
        outputs = next[0].outputs.slice();
        consumed.push(next[0], ...shapes);
        const inverse = perm.map((_, i) => perm.indexOf(i));
        rewrittenShapes = shapes.map((sh) => ({
          ...sh, inputs: [outputs[0]], attributes: { ...sh.attributes, qwasm_perm: inverse }, attributeTypes: { ...sh.attributeTypes, qwasm_perm: 7 },
        }));
      }
      return consumed.length ? { attributes, inputs, outputs, rewrittenShapes, consumed } : null;
    },
    rewrite: ({ attributes, inputs, outputs, rewrittenShapes }, mm) => [
      { ...mm, inputs, outputs, attributes, attributeTypes: { ...mm.attributeTypes, qwasm_perm_a: 7, qwasm_perm_b: 7, qwasm_perm_y: 7 } },
      ...rewrittenShapes,
    ],
  },
];

/** Rewrites the graph as onnxruntime's default optimizations would (the order matters: theirs). Returns the fusion count. */
export function fuseTransformer(graph) {
  let fused = 0;
  for (const rules of [DYNAMIC_QUANT_RULES, DYNAMIC_QUANTIZE_MATMUL_RULES, LAYER_NORM_RULES, BIAS_RULES, SKIP_LAYER_NORM_RULES, MATMUL_SCALE_RULES, NEUTRAL_RULES, LAYOUT_RULES]) {
    fused += applyRules(graph, rules, view(graph));
  }
  return fused;
}
