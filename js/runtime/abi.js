// The JS side of src/include/qwasm.h: its enums and struct layouts, written once. Every other module takes
// codes and layouts from here; tests/js/abi.test.js reads the header and fails when the two disagree.
import { UnsupportedError } from '../errors.js';

/** qw_status. */
export const QW_STATUS = Object.freeze({ QW_OK: 0, QW_INVALID_ARGUMENT: 1, QW_INVALID_QPARAMS: 2, QW_UNSUPPORTED: 3, QW_OUT_OF_MEMORY: 4 });
/** qw_dtype. */
export const QW_DTYPE = Object.freeze({ QW_QUINT8: 0, QW_QINT8: 1, QW_QINT32: 2 });
/** qw_rounding. */
export const QW_ROUNDING = Object.freeze({ QW_ROUND_TORCH: 0, QW_ROUND_ONNX: 1, QW_ROUND_FBGEMM: 2, QW_ROUND_FBGEMM_SCALAR: 3 });
/** qw_qscheme. */
export const QW_QSCHEME = Object.freeze({
  QW_PER_TENSOR_AFFINE: 0, QW_PER_TENSOR_SYMMETRIC: 1, QW_PER_CHANNEL_AFFINE: 2, QW_PER_CHANNEL_SYMMETRIC: 3,
});
/** qw_requant_mode. */
export const QW_REQUANT_MODE = Object.freeze({
  QW_REQUANT_QNNPACK: 0, QW_REQUANT_FBGEMM: 1, QW_REQUANT_ONNX: 2, QW_REQUANT_FIXEDPOINT: 3, QW_REQUANT_NONE: 4, QW_REQUANT_ONEDNN: 5,
});
/** The average-pooling forms of qw_avg_pool2d. */
export const QW_AVG_POOL = Object.freeze({
  QW_AVG_POOL_QNNPACK: 0, QW_AVG_POOL_GENERIC: 1, QW_AVG_POOL_GENERIC_CHANNELS_LAST: 2, QW_AVG_POOL_ADAPTIVE: 3,
  QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST: 4, QW_AVG_POOL_MEAN: 5, QW_AVG_POOL_GENERIC_CHANNELS_LAST_FBGEMM: 6,
  QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST_FBGEMM: 7,
});
/** qw_unary_op. */
export const QW_UNARY_OP = Object.freeze({
  QW_UNARY_HARDSWISH_QNNPACK: 0, QW_UNARY_SIGMOID_QNNPACK: 1, QW_UNARY_LEAKY_RELU: 2, QW_UNARY_LEAKY_RELU_FBGEMM: 3,
  QW_UNARY_HARDSWISH_FBGEMM: 4, QW_UNARY_SIGMOID_FBGEMM: 5,
});
/** qw_f32_unary_op: ONNX Runtime's float functions (MLAS). */
export const QW_F32_UNARY_OP = Object.freeze({ QW_F32_EXP: 0, QW_F32_ERF: 1, QW_F32_TANH: 2, QW_F32_SQRT: 3 });
/** qw_gelu_form. */
export const QW_GELU_FORM = Object.freeze({ QW_GELU_ERF: 0, QW_GELU_TANH: 1 });
/** qw_f32_binary_op. */
export const QW_F32_BINARY_OP = Object.freeze({ QW_F32_ADD: 0, QW_F32_SUB: 1, QW_F32_MUL: 2, QW_F32_DIV: 3, QW_F32_POW: 4 });
/** qw_tensor_type: ONNX's TensorProto.DataType numbers. */
export const QW_TENSOR_TYPE = Object.freeze({ QW_TYPE_FLOAT32: 1, QW_TYPE_UINT8: 2, QW_TYPE_INT8: 3, QW_TYPE_INT32: 6, QW_TYPE_INT64: 7, QW_TYPE_BOOL: 9 });
/** QW_MAX_RANK. */
export const QW_MAX_RANK = 8;
/** QW_MAX_BYTES: the largest buffer (and element count) the C core takes, 2^31 - 1. */
export const QW_MAX_BYTES = 0x7fffffff;

/** struct qw_conv2d_shape: int32 fields in declaration order. */
export const QW_CONV2D_SHAPE = Object.freeze([
  'batch', 'in_h', 'in_w', 'in_c', 'out_c', 'kernel_h', 'kernel_w', 'stride_h', 'stride_w',
  'pad_top', 'pad_left', 'pad_bottom', 'pad_right', 'dilation_h', 'dilation_w', 'groups',
]);
/** struct qw_pool2d_shape: int32 fields in declaration order. */
export const QW_POOL2D_SHAPE = Object.freeze([
  'batch', 'in_h', 'in_w', 'channels', 'out_h', 'out_w',
  'kernel_h', 'kernel_w', 'stride_h', 'stride_w', 'pad_top', 'pad_left', 'dilation_h', 'dilation_w',
]);

/** Bytes of a struct of int32 fields. */
export const structBytes = (layout) => 4 * layout.length;

/** The int32 values of a struct in the layout's order, from an object naming every field. */
export function structValues(layout, fields) {
  return layout.map((name) => {
    const v = fields[name];
    if (!Number.isInteger(v)) throw new Error(`qwasm internal error: struct field ${name} is ${v}`);
    return v;
  });
}

const STATUS_NAMES = Object.fromEntries(Object.entries(QW_STATUS).map(([k, v]) => [v, k]));

/**
 * The error for a non-zero qw_status returned by C function `fn` on behalf of public function `where`:
 * bad arguments and qparams are RangeErrors, an unimplemented request an UnsupportedError, memory a RangeError.
 * `detail` (optional) says what the caller was doing.
 */
export function statusError(status, where, fn, detail) {
  const name = STATUS_NAMES[status] ?? `status ${status}`;
  const what = detail ? `${detail} ` : '';
  switch (status) {
    case QW_STATUS.QW_INVALID_ARGUMENT:
      return new RangeError(`${where}: ${what}was rejected as an invalid argument (${fn} returned ${name})`);
    case QW_STATUS.QW_INVALID_QPARAMS:
      return new RangeError(`${where}: ${what}has invalid quantization parameters (${fn} returned ${name})`);
    case QW_STATUS.QW_UNSUPPORTED:
      return new UnsupportedError(`${where}: ${what}is not supported (${fn} returned ${name})`);
    case QW_STATUS.QW_OUT_OF_MEMORY:
      return new RangeError(`${where}: out of wasm memory (${fn} returned ${name})`);
    default:
      return new Error(`${where}: ${fn} returned ${name}`);
  }
}
