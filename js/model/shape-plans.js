// What a model computes from its input SHAPES alone, done once per shape and kept: ONNX graphs exported from
// PyTorch carry their shape arithmetic as nodes (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, position ids
// sliced to the sequence length, masks built with ConstantOfShape / Equal / Where). For one set of input shapes
// their results never change, so the first run with those shapes computes them and later runs read them: a run
// then executes only the nodes that touch the data.
//
// staticNodes() decides at load which nodes those are: a node is static when every input is a constant or the
// output of a static node, or when it reads only its input's shape (Shape, Size) and that shape is determined by
// the input shapes. A shape is determined when it comes from a graph input, a constant, or a node whose inputs'
// shapes are determined and whose shape-deciding inputs (`shapeFrom` in its registry entry: Reshape's shape,
// Slice's starts, ...) are static.
//
// ShapePlans keeps, per shape key, the static nodes' outputs (host data) and each node's memo (its kernel
// arguments for these shapes); the least recently used key goes first, as the memory plan's do.
import { MAX_PLANS } from './memory-plan.js';

/** Per node of graph.nodes: true when its outputs depend on constants and the input shapes only. */
export function staticNodes(graph, operators) {
  const known = new Set(graph.initializers.keys()); // values fixed by the constants and the input shapes
  const shaped = new Set([...graph.initializers.keys(), ...graph.inputs.map((i) => i.name)]); // shapes fixed so
  return graph.nodes.map((node, i) => {
    const operator = operators[i];
    const inputs = node.inputs.filter((n) => n !== '');
    const isStatic = operator.readsShapeOnly
      ? inputs.every((n) => shaped.has(n))
      : inputs.length > 0 && inputs.every((n) => known.has(n));
    if (isStatic) for (const o of node.outputs) known.add(o);
    const shapeFixed = isStatic || (inputs.every((n) => shaped.has(n)) &&
      (operator.shapeFrom ?? []).every((k) => !node.inputs[k] || known.has(node.inputs[k])));
    if (shapeFixed) for (const o of node.outputs) shaped.add(o);
    return isStatic;
  });
}

/** The per-shape state of a model: { statics: outputs of static nodes by node index, memos: by node index }. */
export class ShapePlans {
  #plans = new Map(); // key -> plan, least recently used first
  #forget;

  /** forget(plan) is called for every plan dropped (to free what it holds in wasm memory). */
  constructor(forget) {
    this.#forget = forget;
  }

  /** The plan of `key` (a new, empty one for a model of `nodes` nodes when there is none). */
  get(key, nodes) {
    let plan = this.#plans.get(key);
    if (plan) {
      this.#plans.delete(key);
    } else {
      plan = { statics: new Array(nodes), memos: new Array(nodes) };
    }
    this.#plans.set(key, plan);
    while (this.#plans.size > MAX_PLANS) {
      const oldest = this.#plans.keys().next().value;
      this.#forget(this.#plans.get(oldest));
      this.#plans.delete(oldest);
    }
    return plan;
  }

  get size() {
    return this.#plans.size;
  }

  clear() {
    for (const plan of this.#plans.values()) this.#forget(plan);
    this.#plans.clear();
  }
}
