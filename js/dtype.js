// Quantized dtypes and rounding rules, with the codes the C API uses (src/include/qwasm.h).

export const DTYPES = Object.freeze({
  quint8: Object.freeze({ name: 'quint8', code: 0, bytes: 1, min: 0, max: 255, IntArray: Uint8Array }),
  qint8: Object.freeze({ name: 'qint8', code: 1, bytes: 1, min: -128, max: 127, IntArray: Int8Array }),
  qint32: Object.freeze({ name: 'qint32', code: 2, bytes: 4, min: -2147483648, max: 2147483647, IntArray: Int32Array }),
});

export const DTYPE_BY_CODE = [DTYPES.quint8, DTYPES.qint8, DTYPES.qint32];

/** 'torch': x * (1/scale), PyTorch; 'onnx': x / scale, ONNX QuantizeLinear. Both ties-to-even. */
export const ROUNDINGS = Object.freeze({ torch: 0, onnx: 1, fbgemm: 2 });

export function dtypeInfo(dtype, where) {
  const info = typeof dtype === 'string' ? DTYPES[dtype] : undefined;
  if (info === undefined || !Object.hasOwn(DTYPES, dtype)) {
    throw new TypeError(`${where}: unknown dtype ${JSON.stringify(dtype)}; expected 'quint8', 'qint8' or 'qint32'`);
  }
  return info;
}

export function roundingCode(rounding, where) {
  if (rounding === undefined) return ROUNDINGS.torch;
  if (typeof rounding !== 'string' || !Object.hasOwn(ROUNDINGS, rounding)) {
    throw new TypeError(`${where}: unknown rounding ${JSON.stringify(rounding)}; expected 'torch', 'onnx' or 'fbgemm'`);
  }
  return ROUNDINGS[rounding];
}
