// The model view's explainer: one output element of a QLinearConv / QGemm / QLinearMatMul layer recomputed step by
// step in integers (accumulator, bias, multiplier and its fixed-point form, rounding, clamp) from the run's
// intermediates, and checked against what the kernel produced. The arithmetic is qwasm/reference's, through
// model-analysis.js's explainElement.
import { h, scrollable } from './dom.js';
import { LINEAR_OPS, explainElement } from './model-analysis.js';
import { SEMANTICS } from './qwasm/js/index.js';

/** Builds the explainer panel. Returns { panel, explainLayer(index) }. */
export function mountExplainer(state) {
  const explainer = h('div', { class: 'mv-explainer' });
  const panel = h('section', { class: 'panel mv-explain-panel' }, h('h2', { text: 'One output, step by step in integers' }), explainer);

  function explainLayer(index) {
    state.explain = { layer: index, element: -1, compare: state.explain.compare };
    renderExplainer();
    explainer.scrollIntoView({ behavior: 'smooth', block: 'start' });
  }

  function renderExplainer() {
    const candidates = state.model.layers.filter((l) => LINEAR_OPS.has(l.layer.opType) && l.weight && l.input && l.output);
    if (!state.result || candidates.length === 0) {
      explainer.replaceChildren(h('p', { class: 'mv-note', text: candidates.length ? 'Run the model first.' : 'This model has no QLinearConv, QGemm or QLinearMatMul layer with constant weights to take apart.' }));
      return;
    }
    let info = candidates.find((l) => l.index === state.explain.layer);
    if (!info) info = candidates[candidates.length - 1];
    const x = state.result.intermediates[info.layer.inputs[0]];
    const y = state.result.intermediates[info.layer.outputs[0]];
    if (!x || !y) {
      explainer.replaceChildren(h('p', { class: 'mv-note', text: `The input of ${info.layer.name} is not an intermediate of the run.` }));
      return;
    }
    let element = state.explain.element;
    if (!(element >= 0 && element < y.data.length)) {
      // default: the layer's largest output (for the classifier: the predicted class)
      element = 0;
      for (let i = 1; i < y.data.length; i++) if (Number(y.data[i]) > Number(y.data[element])) element = i;
    }
    state.explain = { layer: info.index, element, compare: state.explain.compare };
    const e = explainElement(info, x, y, element, state.model.semantics, state.explain.compare ?? null);

    const layerSelect = h('select', { class: 'mv-ex-layer', 'aria-label': 'layer', onchange: (ev) => { state.explain = { layer: Number(ev.target.value), element: -1, compare: state.explain.compare }; renderExplainer(); } },
      ...candidates.map((l) => h('option', { value: String(l.index), selected: l.index === info.index, text: `${l.layer.name} (${l.layer.opType})` })));
    const coordInputs = y.dims.map((d, k) => h('input', { type: 'number', min: 0, max: d - 1, value: String(e ? e.coords[k] : 0), class: 'mv-ex-coord', 'aria-label': `index ${k}` }));
    const go = () => {
      let flat = 0;
      y.dims.forEach((d, k) => { flat = flat * d + Math.min(d - 1, Math.max(0, Math.trunc(Number(coordInputs[k].value) || 0))); });
      state.explain.element = flat;
      renderExplainer();
    };
    for (const c of coordInputs) c.addEventListener('change', go);
    const randomButton = h('button', { type: 'button', text: 'random element', onclick: () => { state.explain.element = Math.floor(Math.random() * y.data.length); renderExplainer(); } });
    // Another engine's arithmetic on the same integers: what PyTorch's x86 / fbgemm engine (or ONNX, or TFLite's
    // fixed point) would make of this accumulator.
    const compareSelect = h('select', { class: 'mv-ex-compare', 'aria-label': 'compare with the semantics of', onchange: (ev) => { state.explain.compare = ev.target.value || null; renderExplainer(); } },
      h('option', { value: '', text: 'nothing else', selected: !state.explain.compare }),
      ...Object.keys(SEMANTICS).filter((n) => n !== state.model.semantics && SEMANTICS[n].requantization !== 'fixedpoint')
        .map((n) => h('option', { value: n, text: n, selected: state.explain.compare === n })));
    const controls = h('div', { class: 'mv-ex-controls' },
      h('label', {}, 'layer ', layerSelect),
      h('label', {}, `output element [${y.dims.join(', ')}] `, h('span', { class: 'mv-ex-coords' }, ...coordInputs)),
      randomButton,
      h('label', {}, 'compare with ', compareSelect));
    if (!e) {
      explainer.replaceChildren(controls, h('p', { class: 'mv-note', text: 'This layer\'s weights have batch dimensions; the explainer takes 2-D ones only.' }));
      return;
    }
    explainer.replaceChildren(controls, renderSteps(e, info, x));
  }

  function renderSteps(e, info, x) {
    const xd = x.dtype;
    const wd = info.weight.dtype;
    const outD = info.output.dtype;
    const qnn = e.form === 'qnnpack';
    const shown = 12;
    const terms = h('table', { class: 'mv-terms' },
      h('thead', {}, h('tr', {}, ...['where', 'x', 'w', '(x − zₓ)(w − z_w)'].map((t) => h('th', { text: t })))),
      h('tbody', {}, ...e.terms.slice(0, shown).map((t) => h('tr', {},
        h('td', { text: t.where }), h('td', { class: 'num', text: String(t.x) }), h('td', { class: 'num', text: String(t.w) }), h('td', { class: 'num', text: String(t.product) })))));
    const more = e.terms.length > shown ? h('p', { class: 'mv-note', text: `… and ${e.terms.length - shown} more terms (${e.terms.length} in all; ${e.terms.filter((t) => t.product !== 0).length} non-zero).` }) : null;
    const step = (n, title, formula, value, note) => h('li', { class: 'mv-step' },
      h('div', { class: 'mv-step-title' }, h('span', { class: 'mv-step-n', text: String(n) }), title),
      h('div', { class: 'mv-step-body' }, h('code', { class: 'mv-formula' }, formula), value !== null ? h('span', { class: 'mv-eq' }, ' = ', h('strong', { class: 'num', text: String(value) })) : null),
      note ? h('div', { class: 'mv-step-note', text: note }) : null);
    const multForm = qnn ? `float32(float32(s_w · sₓ) · float32(1 / s_y))` : `float32(float32(sₓ · s_w) / s_y)`;
    const fixedSame = e.fixedResult === e.result;
    return h('div', { class: 'mv-ex-body' },
      h('div', { class: 'mv-ex-left' },
        h('p', {}, `Output `, h('code', { text: `${info.layer.outputs[0]}[${e.coords.join(', ')}]` }), ` of `, h('code', { text: info.layer.name }),
          ` (${e.opType}, output channel ${e.channel}). Inputs: x = ${xd} with sₓ = ${e.xScale.toPrecision(8)}, zₓ = ${e.xZero}; weights w = ${wd} with s_w = ${e.wScale.toPrecision(8)}, z_w = ${e.wZero}; output ${outD} with s_y = ${e.yScale.toPrecision(8)}, z_y = ${e.yZero}.`),
        scrollable(h('div', { class: 'mv-table-wrap' }, terms)), more),
      h('ol', { class: 'mv-steps' },
        step(1, 'int32 accumulator', `acc = Σ (x − ${e.xZero})·(w − ${e.wZero})`, e.acc, `${e.terms.length} products of integers, summed exactly in int32 (padding reads zₓ, so it adds 0).`),
        step(2, 'bias', `acc + b = ${e.acc} + ${e.bias}`, e.sum, e.biasDtype
          ? `b is the ${e.biasDtype} bias stored in the file, at scale sₓ·s_w${qnn ? ' (PyTorch rounded its float bias to int32 with that scale; qnnpack adds it in int32)' : ' (ONNX QLinearConv / QGemm: int32 bias given)'}.`
          : 'This layer has no bias.'),
        step(3, 'multiplier M = sₓ·s_w / s_y, in float32 as the kernel forms it', multForm, e.multiplier.toPrecision(9),
          `exactly ${e.exact.toPrecision(12)} in float64. Fixed-point form (gemmlowp / TFLite): M0 = ${e.m0} (a Q31 integer in [2³⁰, 2³¹)), ${e.left ? `left shift ${e.left}: M ≈ M0 · 2⁻³¹ · 2^${e.left}` : `shift = ${e.right}: M ≈ M0 · 2⁻³¹ · 2^−${e.right}`} = ${(e.m0 * 2 ** (e.shift - 31)).toPrecision(12)}.`),
        step(4, 'scale', `float32(${e.sum}) · ${e.multiplier.toPrecision(9)}`, e.scaled.toPrecision(9), 'one float32 multiply (the int32 sum converted to float32 first).'),
        step(5, 'round half to even', `nearbyint(${e.scaled.toPrecision(9)})`, e.rounded, Math.abs(e.scaled - Math.trunc(e.scaled)) === 0.5 ? 'a tie: rounded to the even neighbour.' : null),
        step(6, 'add the output zero point', `${e.rounded} + ${e.yZero}`, e.shifted, null),
        step(7, `clamp to [${e.qmin}, ${e.qmax}]`, `clamp(${e.shifted})`, e.result,
          `${e.fused ? `${outD}'s range narrowed by the Clip (ReLU / ReLU6) the loader fused into this layer, [${e.fused[0]}, ${e.fused[1]}]` : `${outD}'s range`}${e.result !== e.shifted ? ': saturated.' : '.'}`),
        h('li', { class: `mv-step mv-check ${e.matches ? 'ok' : 'bad'}`, 'data-match': String(e.matches) },
          h('div', { class: 'mv-step-title' }, h('span', { class: 'mv-step-n', text: e.matches ? '✓' : '✗' }), 'the kernel produced'),
          h('div', { class: 'mv-step-body' }, h('strong', { class: 'num', text: String(e.kernel) }),
            e.matches ? ` — equal to the step-by-step result (real value s_y·(q − z_y) = ${e.real.toPrecision(6)}).` : ` — differs from ${e.result}.`)),
        h('li', { class: 'mv-step mv-fixed' },
          h('div', { class: 'mv-step-title' }, h('span', { class: 'mv-step-n', text: '∗' }), 'integer only, for comparison (requantization mode \'fixedpoint\')'),
          h('div', { class: 'mv-step-body' }, h('code', { class: 'mv-formula', text: `RoundingDivideByPOT(SRDHM(${e.sum}${e.left ? ` · 2^${e.left}` : ''}, ${e.m0}), ${e.right}) = ${e.fixedScaled}; + ${e.yZero}, clamp` }),
            h('span', { class: 'mv-eq' }, ' = ', h('strong', { class: 'num', text: String(e.fixedResult) }))),
          h('div', { class: 'mv-step-note', text: fixedSame ? `the same integer here. This model runs the ${e.form} rule above (${e.semantics}), which can differ from the fixed-point one by a step on rare values.` : `differs by ${e.fixedResult - e.result}: the model follows ${e.semantics}'s ${e.form} rule, not the fixed-point one.` })),
        e.other ? h('li', { class: `mv-step mv-other ${e.other.result === e.result ? 'same' : 'differs'}`, 'data-other': e.other.semantics },
          h('div', { class: 'mv-step-title' }, h('span', { class: 'mv-step-n', text: '≈' }), `the same accumulator under ${e.other.semantics} (requantization '${e.other.form}')`),
          h('div', { class: 'mv-step-body' },
            h('code', { class: 'mv-formula', text: e.other.form === 'fbgemm' || e.other.form === 'onednn'
              ? `(float32(${e.acc}) + ${e.other.biasFloat.toPrecision(9)}) · ${e.other.multiplier.toPrecision(9)} = ${e.other.scaled.toPrecision(9)}`
              : `float32(${e.acc} + ${e.other.biasInt}) · ${e.other.multiplier.toPrecision(9)} = ${e.other.scaled.toPrecision(9)}` }),
            h('span', { class: 'mv-eq' }, ' → ', h('strong', { class: 'num', text: String(e.other.result) }))),
          h('div', { class: 'mv-step-note', text: e.other.result === e.result
            ? `the same integer as ${e.semantics}.`
            : `differs by ${e.other.result - e.result} from ${e.semantics}: ${e.other.form === 'fbgemm' ? 'FBGEMM keeps the bias in float and adds it to the float accumulator' : e.other.form === 'onednn' ? 'oneDNN adds the zero point before rounding' : 'another multiplier or bias rule'}.` })) : null));
  }

  state.on('model', () => renderExplainer());
  state.on('result', () => renderExplainer());
  return { panel, explainLayer };
}
