// Fuses a float Conv with the Relu that alone reads it (see fuseFloatConvRelu).

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
