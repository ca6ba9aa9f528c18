// Folds an integer Clip into the integer layer that alone feeds it (see fuseClips).

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
