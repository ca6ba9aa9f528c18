// qwasm: int8 quantized inference for the browser and Node, PyTorch- and ONNX-exact.
export { init, backendInfo, memoryStats } from './runtime.js';
export { simdSupported } from './wasm.js';
export { DTYPES } from './dtype.js';
export { chooseQParams, quantRange, QSCHEMES, FLOAT32_EPS } from './qparams.js';
export {
  QTensor,
  quantizePerTensor,
  quantizePerChannel,
  fromIntRepr,
  fromIntReprPerChannel,
  empty,
} from './qtensor.js';
export {
  REQUANT_MODES,
  PackedLinear,
  PackedConv2d,
  PackedMatMul,
  packLinear,
  packConv2d,
  packMatMul,
  linear,
  conv2d,
  matmul,
  dynamicQuantizeLinear,
  matmulInteger,
  convInteger,
} from './ops.js';
export { add, mul, cat, clamp, hardtanh, relu, relu6, hardswish, sigmoid, leakyRelu } from './elementwise.js';
export { maxPool2d, avgPool2d, adaptiveAvgPool2d, mean } from './pooling.js';
export * from './observers.js'; export { fakeQuantize, fakeQuantizePerChannel } from './fakequant.js';
export { loadModel, Model } from './model/model.js';
export { quantizeStatic } from './model/ptq.js';
export { ModelFormatError } from './model/onnx.js';
export { UnsupportedError } from './model/kernels.js';
