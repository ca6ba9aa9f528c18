// Quantized dtypes and quantize rounding rules, with their C codes (runtime/abi.js).
import { QW_DTYPE, QW_ROUNDING } from '../runtime/abi.js';
import { semanticsOf } from '../semantics.js';
import { show } from './check.js';

export const DTYPES = Object.freeze({
  quint8: Object.freeze({ name: 'quint8', code: QW_DTYPE.QW_QUINT8, bytes: 1, min: 0, max: 255, IntArray: Uint8Array }),
  qint8: Object.freeze({ name: 'qint8', code: QW_DTYPE.QW_QINT8, bytes: 1, min: -128, max: 127, IntArray: Int8Array }),
  qint32: Object.freeze({ name: 'qint32', code: QW_DTYPE.QW_QINT32, bytes: 4, min: -2147483648, max: 2147483647, IntArray: Int32Array }),
});

export const DTYPE_BY_CODE = Object.freeze(Object.values(DTYPES).sort((a, b) => a.code - b.code));

/**
 * The C code of each quantize rounding rule (semantics.js `rounding`): 'torch' zp + round(x * (1/scale)), 'onnx'
 * round(x / scale) + zp, 'fbgemm' round(x * (1/scale) + zp) (the C core takes FBGEMM's scalar form per channel and
 * for qint32); all ties to even.
 */
const ROUNDING_CODES = Object.freeze({ torch: QW_ROUNDING.QW_ROUND_TORCH, onnx: QW_ROUNDING.QW_ROUND_ONNX, fbgemm: QW_ROUNDING.QW_ROUND_FBGEMM });

export function dtypeInfo(dtype, where) {
  const info = typeof dtype === 'string' ? DTYPES[dtype] : undefined;
  if (info === undefined || !Object.hasOwn(DTYPES, dtype)) {
    throw new TypeError(`${where}: unknown dtype ${show(dtype)}; expected 'quint8', 'qint8' or 'qint32'`);
  }
  return info;
}

/**
 * The C rounding code of a call's options { rounding, semantics }: `rounding` names the rule, `semantics` a
 * profile whose rule applies (semantics.js); `defaultSemantics` when neither is given.
 */
export function roundingCode(options, where, defaultSemantics = 'pytorch-qnnpack') {
  return ROUNDING_CODES[semanticsOf(options, where, defaultSemantics).form('rounding', options?.rounding)];
}
