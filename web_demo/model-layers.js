// The model view's layer table: each layer's op, input and output scale / zero point, weight scheme and range, and,
// once the float reference runs, the SQNR of its output against the float activation of the same name; buttons send
// a layer's weights or output to the explorer or ask the explainer to take one of its outputs apart.
import { h, scrollable } from './dom.js';
import { LINEAR_OPS, dequantizeValue, dequantizeWeight } from './model-analysis.js';

const fmtScale = (s) => (s === undefined ? '–' : Number(s).toPrecision(4));
const fmtQ = (q) => (q ? `${fmtScale(q.scale)} / ${q.zeroPoint}` : 'float');

/** Builds the layers panel. context: the page's (sendToExplorer); onExplain(index) asks the explainer for a layer. */
export function mountLayers(state, context, onExplain) {
  const table = h('table', { class: 'mv-layers' });
  const note = h('p', { class: 'mv-note' });
  const wrap = h('div', { class: 'mv-table-wrap' }, table);
  const panel = h('section', { class: 'panel mv-layers-panel' }, h('h2', { text: 'Layers' }), wrap, note);
  scrollable(wrap);

  function render() {
    const withSqnr = state.model.isDefault; // only the bundled digits model has a float reference
    table.replaceChildren(
      h('thead', {}, h('tr', {},
        ...['#', 'layer', 'op', 'input scale / zp', 'output scale / zp'].map((t) => h('th', { text: t })),
        withSqnr ? h('th', { class: 'mv-sqnr-head', title: 'The layer\'s output, dequantized (dq), against the float model\'s activation at the same point (f), for the current input: 10·log₁₀(Σf² / Σ(f − dq)²)' }, 'SQNR int8 vs float') : null,
        ...['weights', 'weight scale min … max', 'explorer'].map((t) => h('th', { text: t })))),
      h('tbody', {}, ...state.model.layers.map((info) => {
        const { layer, input, output, weight } = info;
        const wText = weight
          ? `${weight.dtype} [${weight.dims.join('×')}] ${weight.perChannel ? 'per-channel' : 'per-tensor'} ${weight.symmetric ? 'symmetric' : 'affine'}, ints ${weight.intMin}…${weight.intMax}`
          : '–';
        const range = weight ? (weight.perChannel ? `${fmtScale(weight.scaleMin)} … ${fmtScale(weight.scaleMax)}` : fmtScale(weight.scaleMin)) : '–';
        const fused = layer.attributes.qwasm_output_range;
        const op = fused ? `${layer.opType} + Clip [${fused[0]}, ${fused[1]}]` : layer.opType;
        return h('tr', { 'data-layer': String(info.index) },
          h('td', { class: 'num', text: String(info.index) }),
          h('td', { class: 'mv-lname' }, h('code', { text: layer.name || layer.outputs[0] })),
          h('td', { class: 'mv-op', text: op, title: layer.domain || 'ai.onnx' }),
          h('td', { class: 'num', text: layer.opType === 'QuantizeLinear' ? 'float' : fmtQ(input) }),
          h('td', { class: 'num', text: layer.opType === 'DequantizeLinear' ? 'float' : fmtQ(output) }),
          withSqnr ? h('td', { class: 'num mv-layer-sqnr', 'data-tensor': layer.outputs[0], text: '…' }) : null,
          h('td', { class: 'mv-w', text: wText }),
          h('td', { class: 'num', text: range }),
          h('td', { class: 'mv-actions' },
            weight ? h('button', { type: 'button', class: 'mv-send-weights', title: 'Show the dequantized weights in the explorer', onclick: () => sendWeights(info), text: 'weights' }) : null,
            h('button', { type: 'button', class: 'mv-send-output', title: 'Show this layer\'s output for the current input (dequantized) in the explorer', onclick: () => sendOutput(info), text: 'output', disabled: !state.result }),
            LINEAR_OPS.has(layer.opType) && weight ? h('button', { type: 'button', class: 'mv-explain-this', title: 'Explain one of its outputs below', onclick: () => onExplain(info.index), text: 'explain' }) : null));
      })));
    note.textContent = 'Scale / zp: the scale and zero point of the layer\'s (first) input and its output, real = scale · (q − zp). '
      + (state.model.isDefault
        ? 'SQNR int8 vs float: the layer\'s output for the current input, dequantized (dq), against the float model\'s activation at the same point (f), 10·log₁₀(Σf² / Σ(f − dq)²), once the float reference is loaded (above). '
          + 'The float export returns these activations next to its logits, named like the int8 tensors (a fused Conv + BN + ReLU is compared after the float ReLU); each value carries the error of every layer before it, and fc\'s (and dequant\'s) is the logits\' SQNR above. '
          + 'skip\'s add before its ReLU has no float tensor of its own (–). '
        : 'No float reference for this model: SQNR against float is shown for the bundled digits model only. ')
      + '"weights" and "output" open the dequantized tensor in the quantization explorer; outputs are those of the current input.';
  }

  /** Fills the SQNR column from state.result.layerSqnr, or says why it is empty. */
  function renderSqnr() {
    const values = state.result?.layerSqnr;
    const f = state.float.status;
    const status = state.result?.float ? 'ready' : f === 'failed' ? 'failed' : f === 'off' ? 'off' : 'loading';
    for (const td of table.querySelectorAll('.mv-layer-sqnr')) {
      const index = Number(td.closest('tr').dataset.layer);
      const v = values?.[index] ?? null;
      const tensor = td.dataset.tensor;
      td.dataset.sqnr = v === null ? '' : String(v);
      if (status !== 'ready') {
        td.textContent = status === 'loading' ? '…' : '–';
        td.title = { failed: 'The float reference is unavailable (see above).', off: 'Load the float reference (above) to compare.', loading: 'Waiting for the float reference.' }[status];
      } else if (v === null) {
        td.textContent = '–';
        td.title = `The float model has no activation for "${tensor}".`;
      } else {
        td.textContent = Number.isFinite(v) ? `${v.toFixed(1)} dB` : '∞ dB';
        td.title = `"${tensor}": SQNR ${v} dB against the float activation of the same name`;
      }
    }
  }

  function sendWeights(info) {
    context.sendToExplorer(`${state.model.name} · ${info.layer.name} weights`, dequantizeWeight(info.weight), info.weight.dims.slice());
    window.scrollTo(0, 0);
  }

  function sendOutput(info) {
    const name = info.layer.outputs[0];
    const t = state.result?.intermediates[name];
    if (!t) return;
    context.sendToExplorer(`${state.model.name} · ${info.layer.name} output`, dequantizeValue(t, t.dtype === 'float32' ? null : info.output), t.dims.slice());
    window.scrollTo(0, 0);
  }

  state.on('model', () => {
    render();
    renderSqnr();
  });
  state.on('result', () => {
    for (const b of table.querySelectorAll('.mv-send-output')) b.disabled = !state.result;
    renderSqnr();
  });
  state.on('float', renderSqnr);
  return { panel };
}
