// The machinery of the fusion passes (qdq.js, transformer.js): a view of the graph as the rules see it, and one
// sweep applying a table of rules. A rule says which op types it looks at (`ops`), what it must find around a node
// (`match(node, g)` -> what the rewrite needs, with `consumed`: the other nodes the group replaces; or null) and
// the nodes that take the group's place (`rewrite(m, node, g)`), put where the matched node was: its inputs exist
// there, and every reader of the group's outputs comes later.

/** Producers, consumers and constants of a graph as it is before a sweep (ORT's selectors also see the original graph). */
export function graphView(graph) {
  const inits = graph.initializers;
  const producer = new Map();
  const consumers = new Map();
  for (const n of graph.nodes) {
    for (const o of n.outputs) producer.set(o, n);
    for (const i of n.inputs) if (i !== '') consumers.set(i, [...(consumers.get(i) ?? []), n]);
  }
  const graphOutputs = new Set(graph.outputs.map((o) => o.name));
  for (const o of graphOutputs) consumers.set(o, [...(consumers.get(o) ?? []), { opType: '__output__' }]);
  return {
    graph,
    inits,
    producer: (name) => producer.get(name) ?? null,
    consumers: (name) => consumers.get(name) ?? [],
    /** The node reading `name` when it is the only reader (and no graph output), else null. */
    onlyConsumer: (name) => {
      const cs = consumers.get(name) ?? [];
      return cs.length === 1 && cs[0].opType !== '__output__' ? cs[0] : null;
    },
    isGraphOutput: (name) => graphOutputs.has(name),
    isConstant: (name) => inits.has(name),
    /** The one value of a constant scalar (any rank, one element), or undefined. */
    scalar: (name) => {
      const t = inits.get(name);
      return t && t.data.length === 1 ? Number(t.data[0]) : undefined;
    },
  };
}

/**
 * One sweep of `rules` over the graph (each node at most once, a node already replaced never matches again).
 * Returns the number of groups rewritten.
 */
export function applyRules(graph, rules, view = graphView(graph)) {
  const ruleOf = new Map(rules.flatMap((rule) => rule.ops.map((op) => [op, rule])));
  const removed = new Set();
  const added = new Map(); // replaced node -> new nodes
  for (const node of graph.nodes) {
    if (removed.has(node)) continue;
    const rule = ruleOf.get(node.domain && node.domain !== 'ai.onnx' ? `${node.domain}:${node.opType}` : node.opType);
    const m = rule?.match(node, view);
    if (!m || m.consumed.some((n) => removed.has(n))) continue;
    removed.add(node);
    for (const n of m.consumed) removed.add(n);
    added.set(node, rule.rewrite(m, node, view));
  }
  if (added.size === 0) return 0;
  graph.nodes = graph.nodes.flatMap((n) => added.get(n) ?? (removed.has(n) ? [] : [n]));
  return added.size;
}
