// qwasm: int8 quantized inference for the browser and Node, PyTorch- and ONNX-exact.
// This file is the package's public face and nothing else: no module inside js/ imports it. The layers below
// it depend one way: model -> ops -> tensor -> runtime, with errors.js, semantics.js and reference.js as leaves.
export { init, backendInfo, memoryStats } from './runtime/runtime.js';
export { simdSupported } from './runtime/wasm.js';
export { ModelFormatError, UnsupportedError, NotImplementedError } from './errors.js';
export { PROFILES as SEMANTICS, FORMS as SEMANTICS_FORMS } from './semantics.js';
export { DTYPES } from './tensor/dtype.js';
export { chooseQParams, quantRange, QSCHEMES, FLOAT32_EPS } from './tensor/qparams.js';
export {
  QTensor,
  quantizePerTensor,
  quantizePerChannel,
  fromIntRepr,
  fromIntReprPerChannel,
  empty,
  keep,
} from './tensor/qtensor.js';
export { tidy } from './tensor/scope.js';
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
  dynamicLinear,
  matmulInteger,
  convInteger,
} from './ops/linear.js';
export { add, mul, cat, clamp, hardtanh, relu, relu6, hardswish, sigmoid, leakyRelu } from './ops/elementwise.js';
export { maxPool2d, avgPool2d, adaptiveAvgPool2d, mean } from './ops/pooling.js';
export {
  MinMaxObserver,
  MovingAverageMinMaxObserver,
  PerChannelMinMaxObserver,
  MovingAveragePerChannelMinMaxObserver,
  HistogramObserver,
  FixedQParamsObserver,
  PlaceholderObserver,
  defaultQConfig,
} from './ops/observers.js';
export { fakeQuantize, fakeQuantizePerChannel } from './ops/fakequant.js';
export { loadModel, Model } from './model/model.js';
export { quantizeStatic } from './model/ptq.js';
