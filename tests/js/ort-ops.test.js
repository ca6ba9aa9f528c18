// Transformers' float operators and the dynamic int8 matmul against onnxruntime-web, byte for byte: every
// single-node case of tests/fixtures/ort_ops (tools/transformer/ort_ops.py builds the models) runs in
// onnxruntime-web (npm, wasm backend, one thread) and through qwasm's model loader on the build under test (the
// operators of js/model/operators/ on the C kernels; tests/c/test_transformer_ops.c replays the same cases on the
// C exports directly). The fixture also records onnxruntime-web's outputs (the C test's expected values) and
// onnxruntime's Python outputs, which differ from onnxruntime-web's in the last bits wherever MLAS's x86 kernels
// (AVX2 / FMA3) run: reported, not required.
import assert from 'node:assert/strict';
import { afterEach, before, test } from 'node:test';
import { compareBytes, loadCases, runWeb } from '../../tools/transformer/ort-ops-cases.mjs';
import { failOnLeaks, runModelCase } from './helpers.js';

failOnLeaks(before, afterEach);

let cases;
before(() => {
  ({ cases } = loadCases());
});

test('the fixture holds onnxruntime-web outputs (node tools/transformer/ort_ops_web.mjs)', () => {
  assert.ok(cases.length >= 140, `${cases.length} cases`);
  assert.ok(cases.every((c) => c.web), 'every case has "web" outputs');
});

test('onnxruntime-web still computes the recorded outputs', async () => {
  for (const c of cases) {
    const web = await runWeb(c);
    web.forEach((o, i) => assert.equal(compareBytes(o.data, c.web[i].data).differ, 0, `${c.name} output ${o.name}`));
  }
});

test('qwasm equals onnxruntime-web byte for byte on every case', async (t) => {
  const ops = new Set();
  for (const c of cases) {
    const ours = await runModelCase(c);
    ops.add(c.domain ? `${c.domain}.${c.op}` : c.op);
    c.web.forEach((o, i) => {
      const { differ, maxAbs } = compareBytes(ours[i], o.data);
      assert.equal(differ, 0, `${c.name} output ${o.name}: ${differ} of ${o.data.length} elements differ (max |d| ${maxAbs})`);
    });
  }
  t.diagnostic(`${cases.length} cases, ${ops.size} operators: ${[...ops].sort().join(' ')}`);
});

test('onnxruntime (Python, x86) against onnxruntime-web: which operators agree byte for byte', (t) => {
  const differing = new Map();
  for (const c of cases) {
    if (c.name === 'cast_float_int32') {
      // float -> int32 beyond the int32 range is undefined behaviour in onnxruntime's C++ (static_cast): x86's
      // cvttss2si gives INT32_MIN, wasm's saturating truncation (which qwasm follows) the nearest bound.
      const x = c.inputs[0].data;
      c.outputs[0].data.forEach((v, i) => {
        const inRange = x[i] >= -2147483648 && x[i] < 2147483648;
        assert.equal(v, inRange ? c.web[0].data[i] : -2147483648, `${c.name} element ${i} (x = ${x[i]})`);
      });
      continue;
    }
    const d = c.outputs.reduce((s, o, i) => s + compareBytes(o.data, c.web[i].data).differ, 0);
    if (d) differing.set(c.op, (differing.get(c.op) ?? 0) + 1);
  }
  // The elementwise IEEE operators, Cast, Where and the integer paths agree; the approximations and sums whose
  // x86 kernels differ (exp, erf, tanh, softmax, GELU, layer norm, float GEMM) do not.
  for (const op of ['Add', 'Sub', 'Mul', 'Div', 'Pow', 'Sqrt', 'Where', 'Cast', 'DynamicQuantizeMatMul', 'MatMulIntegerToFloat']) {
    assert.equal(differing.get(op), undefined, `${op} agrees`);
  }
  t.diagnostic(`cases differing, by operator: ${JSON.stringify(Object.fromEntries(differing))}`);
});
