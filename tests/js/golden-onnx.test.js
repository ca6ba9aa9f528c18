// The ONNX backend conformance data (Debian libonnx-testdata, converted to JSON by
// tools/golden/onnx_node_tests.py) through qwasm in rounding mode 'onnx'.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { assertBitEqual, fixture, qwasm, setup } from './helpers.js';

before(setup);

const ONNX_DTYPE = { uint8: 'quint8', int8: 'qint8', int32: 'qint32' };

/** Runs one QuantizeLinear / DequantizeLinear node (opset 13 semantics) with qwasm. */
function runNode(c) {
  const [x, scale, zp] = c.inputs;
  const axis = c.node.attributes.axis ?? 1;
  const perAxis = scale?.dims.length === 1;
  const zeroPoints = zp ? zp.data : new Array(scale?.data.length).fill(0);
  if (c.node.op_type === 'QuantizeLinear') {
    const dtype = ONNX_DTYPE[zp?.dtype ?? 'uint8'];
    const options = { rounding: 'onnx' };
    const t = perAxis
      ? qwasm.quantizePerChannel(x.data, x.dims, scale.data, zeroPoints, axis, dtype, options)
      : qwasm.quantizePerTensor(x.data, x.dims, scale.data[0], zeroPoints[0], dtype, options);
    try {
      return Array.from(t.intRepr());
    } finally {
      t.dispose();
    }
  }
  if (c.node.op_type === 'DequantizeLinear') {
    const dtype = ONNX_DTYPE[x.dtype];
    const t = perAxis
      ? qwasm.fromIntReprPerChannel(x.data, x.dims, scale.data, zeroPoints, axis, dtype)
      : qwasm.fromIntRepr(x.data, x.dims, scale.data[0], zeroPoints[0], dtype);
    try {
      return Array.from(t.dequantize());
    } finally {
      t.dispose();
    }
  }
  if (c.node.op_type === 'QLinearMatMul') {
    const [a, aS, aZ, b, bS, bZ, yS, yZ] = c.inputs;
    const qa = qwasm.fromIntRepr(a.data, a.dims, aS.data[0], aZ.data[0], ONNX_DTYPE[a.dtype]);
    const qb = bS.data.length > 1
      ? qwasm.fromIntReprPerChannel(b.data, b.dims, bS.data, bZ.data, b.dims.length - 1, ONNX_DTYPE[b.dtype])
      : qwasm.fromIntRepr(b.data, b.dims, bS.data[0], bZ.data[0], ONNX_DTYPE[b.dtype]);
    const y = qwasm.matmul(qa, qb, { scale: yS.data[0], zeroPoint: yZ.data[0], dtype: ONNX_DTYPE[yZ.dtype], mode: 'onnx' });
    try {
      return Array.from(y.intRepr());
    } finally {
      for (const t of [qa, qb, y]) t.dispose();
    }
  }
  if (c.node.op_type === 'QLinearConv') {
    const [x, xS, xZ, w, wS, wZ, yS, yZ, bias] = c.inputs;
    const at = c.node.attributes;
    const qx = qwasm.fromIntRepr(x.data, x.dims, xS.data[0], xZ.data[0], ONNX_DTYPE[x.dtype]);
    const qw = wS.data.length > 1
      ? qwasm.fromIntReprPerChannel(w.data, w.dims, wS.data, wZ.data, 0, ONNX_DTYPE[w.dtype])
      : qwasm.fromIntRepr(w.data, w.dims, wS.data[0], wZ.data[0], ONNX_DTYPE[w.dtype]);
    const pads = at.pads ?? [0, 0, 0, 0];
    const packed = qwasm.packConv2d(qw, bias ? Int32Array.from(bias.data) : null, {
      stride: at.strides ?? 1, dilation: at.dilations ?? 1, groups: at.group ?? 1,
      padding: [pads[0], pads[1], pads[2], pads[3]], mode: 'onnx',
    });
    const y = qwasm.conv2d(qx, packed, { scale: yS.data[0], zeroPoint: yZ.data[0], dtype: ONNX_DTYPE[yZ.dtype] });
    try {
      return Array.from(y.intRepr());
    } finally {
      for (const t of [qx, qw, y, packed]) t.dispose();
    }
  }
  if (c.node.op_type === 'DynamicQuantizeLinear') {
    const [x] = c.inputs;
    const { y, scale, zeroPoint } = qwasm.dynamicQuantizeLinear(x.data, x.dims);
    try {
      return [Array.from(y.intRepr()), [scale], [zeroPoint]];
    } finally {
      y.dispose();
    }
  }
  if (c.node.op_type === 'MatMulInteger') {
    const [a, b, aZ, bZ] = c.inputs;
    const qa = qwasm.fromIntRepr(a.data, a.dims, 1, aZ ? aZ.data[0] : 0, ONNX_DTYPE[a.dtype]);
    const qb = bZ && bZ.data.length > 1
      ? qwasm.fromIntReprPerChannel(b.data, b.dims, bZ.data.map(() => 1), bZ.data, b.dims.length - 1, ONNX_DTYPE[b.dtype])
      : qwasm.fromIntRepr(b.data, b.dims, 1, bZ ? bZ.data[0] : 0, ONNX_DTYPE[b.dtype]);
    const y = qwasm.matmulInteger(qa, qb);
    try {
      return Array.from(y.intRepr());
    } finally {
      for (const t of [qa, qb, y]) t.dispose();
    }
  }
  if (c.node.op_type === 'ConvInteger') {
    const [x, w, xZ, wZ] = c.inputs;
    const at = c.node.attributes;
    const qx = qwasm.fromIntRepr(x.data, x.dims, 1, xZ ? xZ.data[0] : 0, ONNX_DTYPE[x.dtype]);
    const qw = qwasm.fromIntRepr(w.data, w.dims, 1, wZ ? wZ.data[0] : 0, ONNX_DTYPE[w.dtype]);
    const pads = at.pads ?? [0, 0, 0, 0];
    const packed = qwasm.packConv2d(qw, null, {
      stride: at.strides ?? 1, dilation: at.dilations ?? 1, groups: at.group ?? 1, padding: pads, mode: 'none',
    });
    const y = qwasm.convInteger(qx, packed);
    try {
      return Array.from(y.intRepr());
    } finally {
      for (const t of [qx, qw, y, packed]) t.dispose();
    }
  }
  throw new Error(`no runner for ${c.node.op_type}`);
}

for (const name of ['test_quantizelinear', 'test_quantizelinear_axis', 'test_dequantizelinear', 'test_dequantizelinear_axis',
  'test_qlinearmatmul_2D', 'test_qlinearmatmul_3D', 'test_qlinearconv', 'test_matmulinteger', 'test_convinteger_with_padding',
  'test_convinteger_without_padding', 'test_basic_convinteger']) {
  test(`ONNX conformance: ${name}`, () => {
    const c = fixture(`onnx/${name}.json`);
    assertBitEqual(assert, runNode(c), c.outputs[0].data, name);
  });
}

for (const name of ['test_dynamicquantizelinear', 'test_dynamicquantizelinear_max_adjusted', 'test_dynamicquantizelinear_min_adjusted']) {
  test(`ONNX conformance: ${name} (y, y_scale, y_zero_point)`, () => {
    const c = fixture(`onnx/${name}.json`);
    const [y, scale, zp] = runNode(c);
    assertBitEqual(assert, y, c.outputs[0].data, `${name} y`);
    assertBitEqual(assert, scale, c.outputs[1].data, `${name} y_scale`);
    assertBitEqual(assert, zp, c.outputs[2].data, `${name} y_zero_point`);
  });
}

test("the two rounding rules differ where PyTorch and ONNX differ (scale 0.00214854861, x 0.273939937)", () => {
  const torchQ = qwasm.quantizePerTensor([0.273939937], [1], 0.00214854861, 0, 'qint32');
  const onnxQ = qwasm.quantizePerTensor([0.273939937], [1], 0.00214854861, 0, 'qint32', { rounding: 'onnx' });
  assert.equal(torchQ.intRepr()[0], 128); // x * (1/s) = 127.5 -> 128 (ties to even)
  assert.equal(onnxQ.intRepr()[0], 127); // x / s = 127.49999 -> 127
  torchQ.dispose();
  onnxQ.dispose();
});
