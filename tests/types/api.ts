// Type-level test of js/index.d.ts. Only type-checked (npx tsc -p tests/types/tsconfig.json), never run.
// Correct usage must compile; every `@ts-expect-error` line is misuse the declarations must reject.
import * as qwasm from '../../js/index.js';
import {
  DTYPES,
  FLOAT32_EPS,
  FixedQParamsObserver,
  HistogramObserver,
  MinMaxObserver,
  MovingAverageMinMaxObserver,
  MovingAveragePerChannelMinMaxObserver,
  NotImplementedError,
  PerChannelMinMaxObserver,
  PlaceholderObserver,
  PackedConv2d,
  PackedLinear,
  PackedMatMul,
  QSCHEMES,
  QTensor,
  REQUANT_MODES,
  adaptiveAvgPool2d,
  add,
  avgPool2d,
  backendInfo,
  cat,
  chooseQParams,
  clamp,
  conv2d,
  convInteger,
  defaultQConfig,
  dynamicQuantizeLinear,
  empty,
  fakeQuantize,
  fakeQuantizePerChannel,
  fromIntRepr,
  fromIntReprPerChannel,
  hardswish,
  hardtanh,
  init,
  leakyRelu,
  linear,
  matmul,
  matmulInteger,
  maxPool2d,
  mean,
  memoryStats,
  mul,
  packConv2d,
  packLinear,
  packMatMul,
  quantRange,
  quantizePerChannel,
  quantizePerTensor,
  relu,
  relu6,
  sigmoid,
  simdSupported,
} from '../../js/index.js';
import type {
  ActivationDtype,
  AvgPool2dOptions,
  BiasFor,
  Conv2dGeometry,
  DynamicQuantizeResult,
  ElementwiseOutputOptions,
  FixedQParamsObserverOptions,
  HistogramObserverOptions,
  HistogramObserverState,
  HistogramSearchRange,
  MinMaxObserverOptions,
  MinMaxObserverState,
  MovingAverageMinMaxObserverOptions,
  MovingAveragePerChannelMinMaxObserverOptions,
  ObserverOptions,
  PerChannelMinMaxObserverOptions,
  PerChannelMinMaxObserverState,
  PlaceholderObserverOptions,
  QConfig,
  QConfigBackend,
  Int32OutputOptions,
  Int8RequantMode,
  IntPair,
  MaxPool2dOptions,
  OutputOptions,
  PackConv2dOptions,
  PackLinearOptions,
  PackMatMulOptions,
  Padding2d,
  QuantizedOutputOptions,
  RequantMode,
  BackendInfo,
  ChooseQParamsOptions,
  ChooseQParamsPerChannelOptions,
  DtypeInfo,
  InitOptions,
  IntArrayOf,
  MemoryStats,
  ObserverQScheme,
  PerChannelQParams,
  QDtype,
  QParams,
  QScheme,
  QuantRange,
  QuantRangeOptions,
  Rounding,
  RoundingOptions,
} from '../../js/index.js';

// Exact type equality, and a helper that only compiles when handed `true`.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_: T): void {}

// ---- runtime ---------------------------------------------------------------------------------

const info: BackendInfo = await init();
await init({ simd: true });
await init({ simd: false, wasmPaths: '/static/qwasm/' });
await init({ wasmPaths: new URL('https://cdn.example/qwasm/') });
await init({ wasmPaths: { simd: '/a/qwasm-simd.wasm', scalar: new URL('file:///b/qwasm-scalar.wasm') } });
await init({ wasmBinary: new ArrayBuffer(8) });
await init({ wasmBinary: new Uint8Array(8) });
await init({ wasmBinary: new WebAssembly.Module(new Uint8Array(8)) });
const initOptions: InitOptions = {};
await init(initOptions);
await init({ numThreads: 2, relaxedSimd: 'auto' });
await init({ numThreads: 0, relaxedSimd: false, wasmPaths: { simdThreads: '/a/t.wasm', relaxedThreads: '/a/r.wasm' } });
// @ts-expect-error relaxedSimd takes true, false or 'auto'
await init({ relaxedSimd: 'yes' });
assertType<Equal<typeof info.isa, 'wasmsimd' | 'wasmrelaxed' | 'scalar'>>(true);
assertType<Equal<typeof info.threads, number>>(true);
assertType<Equal<typeof info.relaxed, 'usdot' | 'sdot' | undefined>>(true);
assertType<Equal<typeof info.threadsFallback, string | undefined>>(true);
assertType<Equal<typeof info.simd, boolean>>(true);
assertType<Equal<typeof info.source, string>>(true);
assertType<Equal<ReturnType<typeof init>, Promise<BackendInfo>>>(true);

const again: BackendInfo = backendInfo();
const stats: MemoryStats = memoryStats();
const liveBytes: number = stats.liveBytes + stats.liveAllocations + stats.wasmMemoryBytes;
const simd: boolean = simdSupported();

// @ts-expect-error simd is a boolean
await init({ simd: 'yes' });
// @ts-expect-error unknown option
await init({ wasmPath: '/static/' });
// @ts-expect-error wasmPaths entries are simd and scalar
await init({ wasmPaths: { sse: '/a.wasm' } });
// @ts-expect-error wasmBinary cannot be a string
await init({ wasmBinary: 'qwasm-simd.wasm' });
// @ts-expect-error isa is 'wasmsimd' | 'scalar'
const badIsa: 'sse4' = info.isa;
// @ts-expect-error memoryStats has no totalBytes
memoryStats().totalBytes;

// ---- dtypes and qparams ----------------------------------------------------------------------

assertType<Equal<typeof DTYPES.quint8.IntArray, Uint8ArrayConstructor>>(true);
assertType<Equal<typeof DTYPES.qint32.bytes, 4>>(true);
const dtypeInfo: DtypeInfo = DTYPES.qint8;
const dtypeCode: 0 | 1 | 2 = dtypeInfo.code;
const dtypeName: QDtype = dtypeInfo.name;
const intRange: number = dtypeInfo.max - dtypeInfo.min;
const schemeCode: number = QSCHEMES.per_channel_symmetric;
const schemeKey: ObserverQScheme = 'per_tensor_symmetric';
const schemeCode2: 0 | 1 | 2 | 3 = QSCHEMES[schemeKey];
const eps: number = FLOAT32_EPS;
// @ts-expect-error DTYPES is read-only
DTYPES.quint8 = DTYPES.qint8;
// @ts-expect-error no such dtype
DTYPES.float32;

const range: QuantRange = quantRange();
quantRange({});
quantRange({ dtype: 'qint8', reduceRange: true });
quantRange({ dtype: 'qint32', quantMin: -1000, quantMax: 1000 });
const rangeOptions: QuantRangeOptions = { dtype: 'quint8', quantMin: 0, quantMax: 15 };
const quantMax: number = quantRange(rangeOptions).quantMax + range.quantMin;
// @ts-expect-error quantMin and quantMax go together
quantRange({ quantMin: 0 });
// @ts-expect-error reduceRange is a boolean
quantRange({ reduceRange: 1 });
// @ts-expect-error unknown dtype
quantRange({ dtype: 'int8' });

const perTensor: QParams = chooseQParams({ min: -1, max: 1 });
const scale: number = perTensor.scale;
const zeroPoint: number = perTensor.zeroPoint;
chooseQParams({ min: Infinity, max: -Infinity, dtype: 'qint8', qscheme: 'per_tensor_symmetric', eps: 1e-6 });
chooseQParams({ min: 0, max: 6, dtype: 'quint8', reduceRange: true, quantMin: 0, quantMax: 127 });
const perChannel = chooseQParams({ min: [-1, -2], max: new Float32Array([1, 2]), qscheme: 'per_channel_affine' });
assertType<Equal<typeof perChannel, PerChannelQParams>>(true);
const channelScales: Float32Array = perChannel.scales;
const channelZeroPoints: Int32Array = perChannel.zeroPoints;
const symmetric = chooseQParams({ min: [-1], max: [1], qscheme: 'per_channel_symmetric', dtype: 'qint8' });
assertType<Equal<typeof symmetric.scales, ReturnType<Float32Array['slice']>>>(true);
const tensorOptions: ChooseQParamsOptions = { min: 0, max: 1 };
const channelOptions: ChooseQParamsPerChannelOptions = { min: [0], max: [1], qscheme: 'per_channel_affine' };
const either = chooseQParams(Math.random() > 0.5 ? tensorOptions : channelOptions);
assertType<Equal<typeof either, QParams | PerChannelQParams>>(true);
// @ts-expect-error per-tensor results have no scales
chooseQParams({ min: -1, max: 1 }).scales;
// @ts-expect-error per-channel results have no scale
chooseQParams({ min: [-1], max: [1], qscheme: 'per_channel_affine' }).scale;
// @ts-expect-error a per-channel scheme needs arrays of min and max
chooseQParams({ min: -1, max: 1, qscheme: 'per_channel_affine' });
// @ts-expect-error a per-tensor scheme needs numbers
chooseQParams({ min: [-1], max: [1] });
// @ts-expect-error unknown qscheme
chooseQParams({ min: -1, max: 1, qscheme: 'per_tensor_affin' });
// @ts-expect-error min and max are required
chooseQParams({ dtype: 'qint8' });
// @ts-expect-error eps is a number
chooseQParams({ min: -1, max: 1, eps: '1e-6' });
// @ts-expect-error the scale is a number
const scaleText: string = perTensor.scale;

// ---- creating tensors ------------------------------------------------------------------------

const a = quantizePerTensor([0, 0.5, 1, 1.5, 2, 2.5], [2, 3], 0.5, 0, 'quint8');
assertType<Equal<typeof a, QTensor<'quint8'>>>(true);
const b = quantizePerTensor(new Float32Array(6), new Int32Array([3, 2]), 0.1, -3, 'qint8', { rounding: 'onnx' });
assertType<Equal<typeof b, QTensor<'qint8'>>>(true);
const roundingOptions: RoundingOptions = { rounding: 'torch' };
const c = quantizePerTensor(new Float64Array(4), [4], 1, 0, 'qint32', roundingOptions);
const d = quantizePerChannel([1, 2, 3, 4], [2, 2], [0.1, 0.2], [0, 1], 0, 'qint8');
const e = quantizePerChannel(new Float32Array(4), [2, 2], new Float64Array([0.1, 0.2]), new Int32Array(2), -1, 'quint8', {
  rounding: 'onnx',
});
const f = fromIntRepr(new Uint8Array([1, 2, 3]), [3], 0.5, 1, 'quint8');
const g = fromIntRepr([-1, 0, 1], [3], 0.5, 0, 'qint8');
const h = fromIntReprPerChannel(new Int32Array(4), [2, 2], [1, 2], [0, 0], 1, 'qint32');
const i = empty([2, 2], { dtype: 'qint8', scale: 0.25, zeroPoint: 3 });
assertType<Equal<typeof i, QTensor<'qint8'>>>(true);
const j = empty([2, 3], { dtype: 'quint8', scales: [0.1, 0.2, 0.3], zeroPoints: [0, 1, 2], axis: 1 });
assertType<Equal<typeof j, QTensor<'quint8'>>>(true);
declare function someDtype(): QDtype;
const k = quantizePerTensor([1], [], 1, 0, someDtype());
assertType<Equal<typeof k, QTensor<QDtype>>>(true);
const rounding: Rounding = 'onnx';
quantizePerTensor([1], [1], 1, 0, 'qint8', { rounding });

// @ts-expect-error unknown dtype string
quantizePerTensor([1], [1], 0.5, 0, 'int8');
// @ts-expect-error wrong rounding string
quantizePerTensor([1], [1], 0.5, 0, 'qint8', { rounding: 'nearest' });
// @ts-expect-error the scale is a number, not a string
quantizePerTensor([1], [1], '0.5', 0, 'qint8');
// @ts-expect-error the dtype is required
quantizePerTensor([1], [1], 0.5, 0);
// @ts-expect-error data must hold numbers
quantizePerTensor(['1'], [1], 0.5, 0, 'qint8');
// @ts-expect-error BigInt arrays are rejected
quantizePerTensor(new BigInt64Array(1), [1], 0.5, 0, 'qint8');
// @ts-expect-error a DataView is not data
quantizePerTensor(new DataView(new ArrayBuffer(4)), [1], 0.5, 0, 'qint8');
// @ts-expect-error the shape is an array of numbers
quantizePerTensor([1], '1', 0.5, 0, 'qint8');
// @ts-expect-error scales is an array
quantizePerChannel([1, 2], [2], 0.5, [0, 0], 0, 'qint8');
// @ts-expect-error the axis is required
quantizePerChannel([1, 2], [2], [1, 1], [0, 0], 'qint8');
// @ts-expect-error fromIntRepr takes no rounding: it does not quantize
fromIntRepr([1], [1], 1, 0, 'qint8', { rounding: 'onnx' });
// @ts-expect-error fromIntReprPerChannel needs zero points
fromIntReprPerChannel([1], [1], [1], 0, 'qint8');
// @ts-expect-error empty needs a dtype
empty([2], { scale: 1, zeroPoint: 0 });
// @ts-expect-error per-channel empty needs an axis
empty([2], { dtype: 'qint8', scales: [1, 1], zeroPoints: [0, 0] });
// @ts-expect-error the constructor is internal
new QTensor();
// @ts-expect-error not even with arguments
new QTensor(Symbol(), null, 0, [], [], DTYPES.qint8, {});
// @ts-expect-error QTensor cannot be subclassed
class MyTensor extends QTensor {}
// @ts-expect-error a plain object is not a QTensor
const fake: QTensor = { shape: [1], dtype: 'qint8' };

// ---- QTensor members -------------------------------------------------------------------------

const shape: readonly number[] = a.shape;
const ndim: number = a.ndim;
assertType<Equal<typeof a.dtype, 'quint8'>>(true);
const scheme: QScheme = a.qscheme;
const strides: readonly number[] = a.strides;
const disposed: boolean = a.disposed;
const numel: number = a.numel();
const contiguous: boolean = a.isContiguous();
const qScale: number = a.qScale();
const qZeroPoint: number = a.qZeroPoint();
const pcScales: Float64Array = d.qPerChannelScales();
assertType<Equal<ReturnType<typeof d.qPerChannelScales>, ReturnType<Float64Array['slice']>>>(true);
const pcZeroPoints: Int32Array = d.qPerChannelZeroPoints();
const pcAxis: number = d.qPerChannelAxis();
// @ts-expect-error qScale() is a number, not a string
const scaleString: string = a.qScale();
// @ts-expect-error qPerChannelScales() is float64, not float32
const pcScales32: Float32Array = d.qPerChannelScales();
// @ts-expect-error shape is read-only
a.shape.push(1);
// @ts-expect-error shape cannot be assigned
a.shape = [6];
// @ts-expect-error dtype cannot be assigned
a.dtype = 'qint8';
// @ts-expect-error the tensor's qscheme is never 'per_tensor_symmetric'
const symmetricScheme: 'per_tensor_symmetric' = a.qscheme;

// intRepr's array type follows the dtype.
assertType<Equal<ReturnType<typeof a.intRepr>, ReturnType<Uint8Array['slice']>>>(true);
assertType<Equal<ReturnType<typeof b.intRepr>, ReturnType<Int8Array['slice']>>>(true);
assertType<Equal<ReturnType<typeof c.intRepr>, ReturnType<Int32Array['slice']>>>(true);
assertType<Equal<IntArrayOf<QDtype>, ReturnType<Uint8Array['slice'] | Int8Array['slice'] | Int32Array['slice']>>>(true);
const ints8: Uint8Array = a.intRepr();
const anyInts: Uint8Array | Int8Array | Int32Array = k.intRepr();
// @ts-expect-error a quint8 tensor's integers are a Uint8Array
const wrongInts: Int8Array = a.intRepr();
// @ts-expect-error an unknown dtype's integers may be any of the three
const narrowInts: Uint8Array = k.intRepr();

const values: Float32Array = a.dequantize();
const value: number = a.select(0, 0).select(0, 0).item();
// @ts-expect-error dequantize() is a Float32Array
const values64: Float64Array = a.dequantize();

// Views and copies keep the dtype.
const views: QTensor<'quint8'>[] = [
  a.transpose(0, 1),
  a.transpose(-1, -2),
  a.permute([1, 0]),
  a.contiguous(),
  a.reshape([3, -1]),
  a.select(1, -1),
  a.slice(1),
  a.slice(1, 1),
  a.slice(1, -2, undefined, 2),
  a.slice(0, null, null),
  a.at(),
  a.at(1, 2),
  a.clone(),
];
const copied: QTensor<'quint8'> = a.copyFrom(b);
a.copyFrom(b, { rounding: 'onnx' });
a.copyFrom(k, {});
// @ts-expect-error transpose needs two dims
a.transpose(0);
// @ts-expect-error permute takes an array, not varargs
a.permute(1, 0);
// @ts-expect-error reshape takes an array
a.reshape(3, 2);
// @ts-expect-error a dimension is a number
a.select('0', 1);
// @ts-expect-error at takes numbers
a.at('1');
// @ts-expect-error copyFrom needs a QTensor
a.copyFrom(a.dequantize());
// @ts-expect-error wrong rounding string
a.copyFrom(b, { rounding: 'floor' });
// @ts-expect-error the result of a qint8 view is not quint8
const wrongView: QTensor<'quint8'> = b.transpose(0, 1);

const same = a.requantize(0.25, 10);
assertType<Equal<typeof same, QTensor<'quint8'>>>(true);
const toQint8 = a.requantize(0.25, 0, 'qint8');
assertType<Equal<typeof toQint8, QTensor<'qint8'>>>(true);
const onnx = a.requantize(0.25, 0, undefined, { rounding: 'onnx' });
assertType<Equal<typeof onnx, QTensor<'quint8'>>>(true);
a.requantize(0.25, 0, 'qint32', { rounding: 'torch' });
// @ts-expect-error the scale is a number, not a string
a.requantize('0.25', 0);
// @ts-expect-error unknown dtype string
a.requantize(0.25, 0, 'uint8');
// @ts-expect-error wrong rounding string
a.requantize(0.25, 0, 'qint8', { rounding: 'half_up' });

// Serialization.
const bytes: Uint8Array = a.toBytes();
const blob = new Blob([a.toBytes()]); // an ArrayBuffer-backed Uint8Array is a BlobPart
const restored: QTensor = QTensor.fromBytes(bytes);
QTensor.fromBytes(a.toBytes().buffer);
const restoredDtype: QDtype = restored.dtype;
// @ts-expect-error fromBytes takes a Uint8Array or an ArrayBuffer
QTensor.fromBytes('QWT1');
// @ts-expect-error fromBytes rejects other typed arrays
QTensor.fromBytes(new Int8Array(8));
// @ts-expect-error fromBytes is static
a.fromBytes(bytes);

// Lifetime and printing.
const text: string = a.toString();
const tag: string = Object.prototype.toString.call(a);
a.dispose();
a[Symbol.dispose]();
{
  using scoped = quantizePerTensor([1, 2], [2], 1, 0, 'qint8');
  const scopedValues: Float32Array = scoped.dequantize();
}
const disposeResult: void = b.dispose();
// @ts-expect-error dispose returns nothing
const disposeValue: boolean = b.dispose();
// @ts-expect-error disposed is read-only
b.disposed = false;

// Every tensor is a QTensor whatever its dtype.
const all: QTensor[] = [a, b, c, d, e, f, g, h, i, j, k];
for (const t of all) {
  const tDtype: QDtype = t.dtype;
  const tInts: Uint8Array | Int8Array | Int32Array = t.intRepr();
  t.dispose();
}

// flatten keeps the dtype.
const flat = quantizePerTensor(new Float32Array(24), [2, 3, 4], 1, 0, 'qint8');
assertType<Equal<ReturnType<typeof flat.flatten>, QTensor<'qint8'>>>(true);
flat.flatten();
flat.flatten(1);
flat.flatten(0, -2);
// @ts-expect-error flatten takes dimension indices
flat.flatten([0, 1]);

// ---- requantization modes and packed weights -------------------------------------------------

assertType<Equal<RequantMode, 'qnnpack' | 'fbgemm' | 'onnx' | 'fixedpoint' | 'none' | 'onednn'>>(true);
assertType<Equal<Int8RequantMode, 'qnnpack' | 'fbgemm' | 'onnx' | 'fixedpoint' | 'onednn'>>(true);
assertType<Equal<typeof REQUANT_MODES.none, 4>>(true);
const modeCode: 0 | 1 | 2 | 3 | 4 = REQUANT_MODES[Math.random() > 0.5 ? 'onnx' : 'qnnpack'];
// @ts-expect-error REQUANT_MODES is read-only
REQUANT_MODES.onnx = 1;
// @ts-expect-error no such mode
REQUANT_MODES.tflite;
assertType<Equal<BiasFor<'qnnpack'>, BiasFor<'fbgemm'>>>(true);
assertType<Equal<BiasFor<'onnx'>, Int32Array>>(true);
assertType<Equal<BiasFor<RequantMode>, Int32Array>>(true); // a mode that may be 'onnx' needs an int32 bias

const x8 = quantizePerTensor(new Float32Array(2 * 4), [2, 4], 0.05, 128, 'quint8');
const xs8 = quantizePerTensor(new Float32Array(2 * 4), [2, 4], 0.05, 0, 'qint8');
const w = quantizePerChannel(new Float32Array(3 * 4), [3, 4], [0.1, 0.1, 0.2], [0, 0, 0], 0, 'qint8');
const wq32 = quantizePerTensor(new Float32Array(3 * 4), [3, 4], 1, 0, 'qint32');
declare const loadedTensor: QTensor; // e.g. QTensor.fromBytes: dtype unknown

const lin = packLinear(w);
assertType<Equal<typeof lin, PackedLinear<'qnnpack'>>>(true);
packLinear(w, [0.1, 0.2, 0.3]);
packLinear(w, new Float32Array(3), {});
packLinear(w, null, { mode: 'fbgemm' });
packLinear(w, undefined, { mode: 'fixedpoint' });
const linOnnx = packLinear(w, new Int32Array(3), { mode: 'onnx' });
assertType<Equal<typeof linOnnx, PackedLinear<'onnx'>>>(true);
const linNone = packLinear(w, null, { mode: 'none' });
assertType<Equal<typeof linNone, PackedLinear<'none'>>>(true);
declare const someMode: RequantMode;
const linSome: PackedLinear = packLinear(w, new Int32Array(3), { mode: someMode });
const linOptions: PackLinearOptions<'fbgemm'> = { mode: 'fbgemm' };
packLinear(w, [1, 2, 3], linOptions);
packLinear(loadedTensor as QTensor<ActivationDtype>);
const linFields: number = lin.outFeatures + lin.inFeatures + lin.n + lin.k;
const linMode: 'qnnpack' = lin.mode;
const linDisposed: boolean = lin.disposed;
lin.dispose();
lin[Symbol.dispose]();
{
  using scopedLinear = packLinear(w);
  const features: number = scopedLinear.outFeatures;
}
// @ts-expect-error wrong mode string
packLinear(w, null, { mode: 'tflite' });
// @ts-expect-error the mode goes in the options object, not as the third argument
packLinear(w, null, 'onnx');
// @ts-expect-error mode 'onnx' takes an Int32Array bias
packLinear(w, [0.1, 0.2, 0.3], { mode: 'onnx' });
// @ts-expect-error so does a mode that may be 'onnx'
packLinear(w, new Float32Array(3), { mode: someMode });
// @ts-expect-error the bias is numbers
packLinear(w, ['0.1']);
// @ts-expect-error qint32 weights are rejected
packLinear(wq32);
// @ts-expect-error a tensor of unknown dtype needs narrowing first
packLinear(loadedTensor);
// @ts-expect-error the weight must be a QTensor
packLinear(new Int8Array(12));
// @ts-expect-error the constructor is internal
new PackedLinear(w, null, 'qnnpack');
// @ts-expect-error the fields are read-only
lin.outFeatures = 4;
// @ts-expect-error disposed is read-only
lin.disposed = true;
// @ts-expect-error a plain object is not packed weights
const fakeLinear: PackedLinear = { mode: 'qnnpack', outFeatures: 3, inFeatures: 4, n: 3, k: 4, disposed: false, dispose() {} };
// @ts-expect-error PackedLinear has no geometry
lin.geometry;

const cw = quantizePerTensor(new Float32Array(8 * 3 * 3 * 3), [8, 3, 3, 3], 0.02, 0, 'qint8');
const conv = packConv2d(cw);
assertType<Equal<typeof conv, PackedConv2d<'qnnpack'>>>(true);
packConv2d(cw, new Float32Array(8), { stride: 2, padding: 1 });
packConv2d(cw, null, { stride: [2, 1], padding: [1, 0], dilation: [2, 2], groups: 1, mode: 'fbgemm' });
packConv2d(cw, new Int32Array(8), { padding: [0, 1, 1, 0], mode: 'onnx' });
const convNone = packConv2d(cw, null, { mode: 'none' });
const convOptions: PackConv2dOptions = { stride: 1, padding: 0, dilation: 1, groups: 1 };
packConv2d(cw, null, convOptions);
const geometry: Conv2dGeometry = conv.geometry;
const [padTop, padLeft, padBottom, padRight] = geometry.padding;
const [strideH, strideW] = geometry.stride;
const geometrySizes: number = geometry.inC + geometry.outC + geometry.kh + geometry.kw + geometry.groups + geometry.dilation[0];
const pair2: IntPair = [1, 2];
const padding3: Padding2d = [0, 1, 0, 1];
conv.dispose();
// @ts-expect-error padding is 1, 2 or 4 numbers
packConv2d(cw, null, { padding: [1, 1, 1] });
// @ts-expect-error stride is a number or [h, w]
packConv2d(cw, null, { stride: [1, 1, 1] });
// @ts-expect-error the option is groups, not group
packConv2d(cw, null, { group: 2 });
// @ts-expect-error mode 'onnx' takes an Int32Array bias
packConv2d(cw, new Float32Array(8), { mode: 'onnx' });
// @ts-expect-error the geometry is read-only
conv.geometry.stride = [1, 1];
// @ts-expect-error the constructor is internal
new PackedConv2d(cw, null, {});

const bMatrix = quantizePerTensor(new Float32Array(4 * 5), [4, 5], 0.1, 3, 'quint8');
const mm = packMatMul(bMatrix);
assertType<Equal<typeof mm, PackedMatMul<'onnx'>>>(true);
const mmQ = packMatMul(bMatrix, { mode: 'qnnpack' });
assertType<Equal<typeof mmQ, PackedMatMul<'qnnpack'>>>(true);
const mmOptions: PackMatMulOptions = {};
packMatMul(bMatrix, mmOptions);
const mmNone = packMatMul(bMatrix, { mode: 'none' });
const mmSizes: number = mm.n + mm.k;
// @ts-expect-error packMatMul takes no bias
packMatMul(bMatrix, null, { mode: 'onnx' });
// @ts-expect-error wrong mode string
packMatMul(bMatrix, { mode: 'ONNX' });
// @ts-expect-error PackedMatMul has no outFeatures
mm.outFeatures;
// @ts-expect-error the constructor is internal
new PackedMatMul(bMatrix);
// @ts-expect-error packed matmul weights are not packed linear weights
const notLinear: PackedLinear = mm;
// @ts-expect-error nor the other way round, though the fields overlap
const notMatMul: PackedMatMul = lin;

// ---- linear, conv2d, matmul ------------------------------------------------------------------

const y1 = linear(x8, lin, { scale: 0.1, zeroPoint: 0 });
assertType<Equal<typeof y1, QTensor<'quint8'>>>(true);
const y2 = linear(xs8, lin, { scale: 0.1, zeroPoint: 0, dtype: 'qint8', relu: true });
assertType<Equal<typeof y2, QTensor<'qint8'>>>(true);
linear(x8, linOnnx, { scale: 0.1, zeroPoint: 5, clampMin: -1, clampMax: 1, mode: 'onnx' });
linear(x8, lin, { scale: 0.1, zeroPoint: 5, mode: 'fbgemm' });
const yInt = linear(x8, lin, { mode: 'none' });
assertType<Equal<typeof yInt, QTensor<'qint32'>>>(true);
const yIntPacked = linear(x8, linNone, {});
assertType<Equal<typeof yIntPacked, QTensor<'qint32'>>>(true);
const yOverride = linear(x8, linNone, { scale: 0.1, zeroPoint: 0, dtype: 'qint8', mode: 'qnnpack' });
assertType<Equal<typeof yOverride, QTensor<'qint8'>>>(true);
const ySome = linear(x8, linSome, { scale: 0.1, zeroPoint: 0 });
assertType<Equal<typeof ySome, QTensor<'quint8' | 'qint32'>>>(true);
const anyOptions: OutputOptions<'qint8'> = { scale: 0.1, zeroPoint: 0, dtype: 'qint8', mode: someMode };
const yAny = linear(x8, lin, anyOptions);
assertType<Equal<typeof yAny, QTensor<'qint8' | 'qint32'>>>(true);
declare const outDtype: ActivationDtype;
const yEither = linear(x8, lin, { scale: 0.1, zeroPoint: 0, dtype: outDtype });
assertType<Equal<typeof yEither, QTensor<ActivationDtype>>>(true);
// Packing inline infers the mode from the options, never from the call it is passed to.
const yInline = linear(x8, packLinear(w), { scale: 0.1, zeroPoint: 0 });
assertType<Equal<typeof yInline, QTensor<'quint8'>>>(true);
const yInlineNone = linear(x8, packLinear(w, null, { mode: 'none' }), {});
assertType<Equal<typeof yInlineNone, QTensor<'qint32'>>>(true);
const linearOptions: QuantizedOutputOptions = { scale: 1, zeroPoint: 0 };
const int32Options: Int32OutputOptions = { mode: 'none' };
linear(x8, lin, linearOptions);
linear(x8, lin, int32Options);
// @ts-expect-error missing scale
linear(x8, lin, { zeroPoint: 0 });
// @ts-expect-error missing zeroPoint
linear(x8, lin, { scale: 0.1 });
// @ts-expect-error the options are required
linear(x8, lin);
// @ts-expect-error wrong mode string
linear(x8, lin, { scale: 0.1, zeroPoint: 0, mode: 'tflite' });
// @ts-expect-error the output dtype is quint8 or qint8
linear(x8, lin, { scale: 0.1, zeroPoint: 0, dtype: 'qint32' });
// @ts-expect-error relu is a boolean
linear(x8, lin, { scale: 0.1, zeroPoint: 0, relu: 1 });
// @ts-expect-error misspelt option
linear(x8, lin, { scale: 0.1, zeroPoint: 0, clamp_min: 0 });
// @ts-expect-error a QTensor where packed weights are required
linear(x8, w, { scale: 0.1, zeroPoint: 0 });
// @ts-expect-error packed conv weights are not linear weights
linear(x8, conv, { scale: 0.1, zeroPoint: 0 });
// @ts-expect-error qint32 activations are rejected
linear(wq32, lin, { scale: 0.1, zeroPoint: 0 });
// @ts-expect-error a quint8 output is not qint8
const wrongOut: QTensor<'qint8'> = linear(x8, lin, { scale: 0.1, zeroPoint: 0 });
// @ts-expect-error the result may be qint32 when the weights' mode is not known
const notSure: QTensor<'quint8'> = linear(x8, linSome, { scale: 0.1, zeroPoint: 0 });

const img = quantizePerTensor(new Float32Array(1 * 3 * 8 * 8), [1, 3, 8, 8], 0.02, 128, 'quint8');
const c1 = conv2d(img, conv, { scale: 0.05, zeroPoint: 100, relu: true });
assertType<Equal<typeof c1, QTensor<'quint8'>>>(true);
const c2 = conv2d(img, conv, { scale: 0.05, zeroPoint: 0, dtype: 'qint8', clampMin: 0, clampMax: 6, mode: 'fbgemm' });
assertType<Equal<typeof c2, QTensor<'qint8'>>>(true);
const c3 = conv2d(img, convNone, {});
assertType<Equal<typeof c3, QTensor<'qint32'>>>(true);
const c4 = conv2d(img, conv, { mode: 'none' });
assertType<Equal<typeof c4, QTensor<'qint32'>>>(true);
// @ts-expect-error missing scale in options
conv2d(img, conv, { zeroPoint: 0 });
// @ts-expect-error a QTensor where packed weights are required
conv2d(img, cw, { scale: 0.05, zeroPoint: 0 });
// @ts-expect-error packed linear weights are not conv weights
conv2d(img, lin, { scale: 0.05, zeroPoint: 0 });
// @ts-expect-error wrong mode string
conv2d(img, conv, { scale: 0.05, zeroPoint: 0, mode: 'int32' });
// @ts-expect-error geometry belongs to packConv2d, not to the call
conv2d(img, conv, { scale: 0.05, zeroPoint: 0, stride: 2 });

const m1 = matmul(x8, bMatrix, { scale: 0.2, zeroPoint: 7 });
assertType<Equal<typeof m1, QTensor<'quint8'>>>(true);
const m2 = matmul(xs8, mm, { scale: 0.2, zeroPoint: -3, dtype: 'qint8', mode: 'onnx' });
assertType<Equal<typeof m2, QTensor<'qint8'>>>(true);
matmul(x8, mmQ, { scale: 0.2, zeroPoint: 0, relu: true });
const m3 = matmul(x8, bMatrix, { mode: 'none' });
assertType<Equal<typeof m3, QTensor<'qint32'>>>(true);
const m4 = matmul(x8, mmNone, {});
assertType<Equal<typeof m4, QTensor<'qint32'>>>(true);
const m5 = matmul(x8, packMatMul(bMatrix), { scale: 0.2, zeroPoint: 0, dtype: 'qint8' });
assertType<Equal<typeof m5, QTensor<'qint8'>>>(true);
// @ts-expect-error missing scale in options
matmul(x8, bMatrix, { zeroPoint: 0 });
// @ts-expect-error the output dtype is not inferred from the variable's type
const m6: QTensor<'qint8'> = matmul(x8, bMatrix, { scale: 0.2, zeroPoint: 0 });
// @ts-expect-error packed linear weights are not a matmul operand
matmul(x8, lin, { scale: 0.2, zeroPoint: 0 });
// @ts-expect-error b must be a QTensor or PackedMatMul, not a typed array
matmul(x8, new Uint8Array(20), { scale: 0.2, zeroPoint: 0 });
// @ts-expect-error wrong mode string
matmul(x8, bMatrix, { scale: 0.2, zeroPoint: 0, mode: 'QLinearMatMul' });
// @ts-expect-error unpacked b is requantized with 'onnx' by default, never 'none': the qparams are needed
matmul(x8, bMatrix, {});

// ---- dynamic quantization --------------------------------------------------------------------

const dq: DynamicQuantizeResult = dynamicQuantizeLinear([0, 0.5, -1, 2], [2, 2]);
const dq1 = dynamicQuantizeLinear(new Float32Array(6));
assertType<Equal<typeof dq1.y, QTensor<'quint8'>>>(true);
const dqScale: number = dq.scale + dq.zeroPoint;
const mi = matmulInteger(dq.y, bMatrix);
assertType<Equal<typeof mi, QTensor<'qint32'>>>(true);
matmulInteger(xs8, mm);
const ci = convInteger(img, convNone);
assertType<Equal<typeof ci, QTensor<'qint32'>>>(true);
// @ts-expect-error the result is an object, not a tensor
dynamicQuantizeLinear([1, 2]).dispose();
// @ts-expect-error the shape is a plain array (a typed array would be ignored)
dynamicQuantizeLinear([1, 2], new Int32Array([2]));
// @ts-expect-error data holds numbers
dynamicQuantizeLinear(['1', '2']);
// @ts-expect-error matmulInteger takes no options
matmulInteger(x8, bMatrix, { mode: 'none' });
// @ts-expect-error convInteger needs packed weights
convInteger(img, cw);

// ---- elementwise -----------------------------------------------------------------------------

const e1 = add(x8, x8, { scale: 0.1, zeroPoint: 128 });
assertType<Equal<typeof e1, QTensor<'quint8'>>>(true);
const e2 = add(xs8, xs8, { scale: 0.1, zeroPoint: 0, relu: true });
assertType<Equal<typeof e2, QTensor<'qint8'>>>(true);
const mulOptions: ElementwiseOutputOptions = { scale: 0.1, zeroPoint: 0 };
const e3 = mul(xs8, xs8.select(0, 0), mulOptions);
assertType<Equal<typeof e3, QTensor<'qint8'>>>(true);
const e4 = cat([x8, x8.clone()], 0);
assertType<Equal<typeof e4, QTensor<'quint8'>>>(true);
cat([xs8], -1, { scale: 0.2 });
cat([xs8, xs8], 1, { scale: 0.2, zeroPoint: 1 });
assertType<Equal<ReturnType<typeof clamp<'qint8'>>, QTensor<'qint8'>>>(true);
const u1: QTensor<'quint8'>[] = [
  clamp(x8),
  clamp(x8, 0),
  clamp(x8, -1, 1),
  hardtanh(x8),
  hardtanh(x8, -2, 2),
  relu(x8),
  relu6(x8),
  hardswish(x8, { scale: 0.05, zeroPoint: 10 }),
  sigmoid(x8),
  leakyRelu(x8),
  leakyRelu(x8, 0.2),
  leakyRelu(x8, 0.2, { scale: 0.1 }),
  leakyRelu(x8, undefined, { zeroPoint: 100 }),
];
const u2: QTensor<'qint8'>[] = [clamp(xs8, -6, 6), relu(xs8), relu6(xs8), hardtanh(xs8), leakyRelu(xs8, 0.1, {})];
// @ts-expect-error add needs both tensors in one dtype
add(x8, xs8, { scale: 0.1, zeroPoint: 0 });
// @ts-expect-error missing scale in options
add(x8, x8, { zeroPoint: 0 });
// @ts-expect-error add has no dtype option: the output has the inputs' dtype
add(x8, x8, { scale: 0.1, zeroPoint: 0, dtype: 'qint8' });
// @ts-expect-error mul needs options
mul(x8, x8);
// @ts-expect-error cat takes an array of tensors
cat(x8, x8, 0);
// Mixed dtypes are a runtime TypeError that the types cannot tell from a tensor of unknown dtype.
const mixed = cat([x8, xs8], 0);
assertType<Equal<typeof mixed, QTensor<ActivationDtype>>>(true);
// @ts-expect-error cat has no relu option
cat([x8], 0, { relu: true });
// @ts-expect-error the bounds are numbers
clamp(x8, '0', '6');
// @ts-expect-error hardswish is quint8 only (QNNPACK's table)
hardswish(xs8, { scale: 0.05, zeroPoint: 0 });
assertType<Equal<ReturnType<typeof hardswish<'qint8'>>, QTensor<'qint8'>>>(true);
hardswish(xs8, { scale: 0.05, zeroPoint: 0, mode: 'fbgemm' });
sigmoid(xs8, { mode: 'fbgemm' });
// @ts-expect-error hardswish needs its output qparams
hardswish(x8);
// @ts-expect-error sigmoid is quint8 only
sigmoid(xs8);
// @ts-expect-error sigmoid's output qparams are fixed
sigmoid(x8, { scale: 1 / 256, zeroPoint: 0 });
// @ts-expect-error the slope is a number
leakyRelu(x8, '0.01');
// @ts-expect-error relu keeps the input's dtype
const reluWrong: QTensor<'qint8'> = relu(x8);
// @ts-expect-error qint32 tensors are not activations
relu(wq32);

// ---- pooling ---------------------------------------------------------------------------------

const p1 = maxPool2d(img, { kernelSize: 2 });
assertType<Equal<typeof p1, QTensor<'quint8'>>>(true);
maxPool2d(img, { kernelSize: [3, 3], stride: [2, 2], padding: 1, dilation: 2, ceilMode: true });
maxPool2d(img, { kernelSize: 3, stride: null });
const maxOptions: MaxPool2dOptions = { kernelSize: 2 };
const avgOptions: AvgPool2dOptions = { kernelSize: 3, stride: 1, padding: [1, 1], countIncludePad: false, divisorOverride: 9 };
const p2 = avgPool2d(quantizePerTensor(new Float32Array(48), [1, 3, 4, 4], 0.1, 0, 'qint8'), avgOptions);
assertType<Equal<typeof p2, QTensor<'qint8'>>>(true);
avgPool2d(img, { kernelSize: 2, ceilMode: true, divisorOverride: null });
const p3 = adaptiveAvgPool2d(img, 1);
adaptiveAvgPool2d(img, [2, 3]);
const p4 = mean(img, [2, 3]);
const p5 = mean(img, [2, 3], true);
assertType<Equal<typeof p4 | typeof p5 | typeof p3, QTensor<'quint8'>>>(true);
// @ts-expect-error kernelSize is required
maxPool2d(img, { stride: 2 });
// @ts-expect-error the options are required (kernelSize)
maxPool2d(img);
// @ts-expect-error avgPool2d has no dilation
avgPool2d(img, { kernelSize: 2, dilation: 2 });
// @ts-expect-error the option is kernelSize, not kernel_size
avgPool2d(img, { kernel_size: 2 });
// @ts-expect-error pooling padding is a number or [h, w]
maxPool2d(img, { kernelSize: 3, padding: [1, 1, 1, 1] });
// @ts-expect-error outputSize is a number or [h, w]
adaptiveAvgPool2d(img, [1, 1, 1]);
// @ts-expect-error mean reduces dims [2, 3] only
mean(img, [1, 2]);
// @ts-expect-error keepdim is a boolean
mean(img, [2, 3], 1);

// ---- observers -------------------------------------------------------------------------------

const mm0 = new MinMaxObserver();
new MinMaxObserver({});
new MinMaxObserver({ dtype: 'qint8', qscheme: 'per_tensor_symmetric', reduceRange: false, eps: 1e-6 });
new MinMaxObserver({ dtype: 'qint32', quantMin: -1000, quantMax: 1000 });
new MinMaxObserver({ quantMin: null, quantMax: null });
const minMaxOptions: MinMaxObserverOptions = { dtype: 'quint8', quantMin: 0, quantMax: 15 };
const perTensorObserverOptions: ObserverOptions<'per_tensor_affine' | 'per_tensor_symmetric'> = minMaxOptions;
const anyObserverOptions: ObserverOptions = { qscheme: 'per_channel_symmetric', dtype: 'qint8' };
const observed = mm0.observe([0, 1, 2, 3], [2, 2]).observe(new Float32Array(4)).observe(new Float64Array(2), new Int32Array([2]));
assertType<Equal<typeof observed, MinMaxObserver>>(true);
const mmQ0 = mm0.calculateQparams();
assertType<Equal<typeof mmQ0, QParams>>(true);
const mmState: MinMaxObserverState = mm0.reset().state();
const mmRange: number = mmState.maxVal - mmState.minVal + mm0.minVal + mm0.maxVal;
const mmConfig: [QDtype, 'per_tensor_affine' | 'per_tensor_symmetric', boolean, boolean, number, number, number, string] = [
  mm0.dtype, mm0.qscheme, mm0.reduceRange, mm0.hasCustomRange, mm0.eps, mm0.quantMin, mm0.quantMax, mm0.name,
];
// @ts-expect-error per-channel schemes belong to the per-channel observers (NotImplementedError)
new MinMaxObserver({ qscheme: 'per_channel_affine' });
// @ts-expect-error unknown qscheme
new MinMaxObserver({ qscheme: 'per_tensor_affinee' });
// @ts-expect-error quantMin and quantMax go together
new MinMaxObserver({ quantMin: 0 });
// @ts-expect-error a null quantMin with a number quantMax is a TypeError
new MinMaxObserver({ quantMin: null, quantMax: 255 });
// @ts-expect-error reduceRange is a boolean
new MinMaxObserver({ reduceRange: 'yes' });
// @ts-expect-error unknown dtype
new MinMaxObserver({ dtype: 'float32' });
// @ts-expect-error MinMaxObserver has no chAxis
new MinMaxObserver({ chAxis: 0 });
// @ts-expect-error the options are camelCase
new MinMaxObserver({ reduce_range: true });
// @ts-expect-error observe needs data
mm0.observe();
// @ts-expect-error data holds numbers
mm0.observe(['1', '2']);
// @ts-expect-error a DataView is not data
mm0.observe(new DataView(new ArrayBuffer(8)));
// @ts-expect-error shape is an array of sizes
mm0.observe([1, 2], 2);
// @ts-expect-error per-tensor qparams have no scales
mm0.calculateQparams().scales;
// @ts-expect-error the configuration is read-only
mm0.dtype = 'qint8';
// @ts-expect-error the running range is read-only (use reset())
mm0.minVal = 0;

const ma = new MovingAverageMinMaxObserver({ averagingConstant: 0.1, dtype: 'qint8', qscheme: 'per_tensor_symmetric' });
new MovingAverageMinMaxObserver();
const maOptions: MovingAverageMinMaxObserverOptions = { averagingConstant: 0.5, quantMin: -8, quantMax: 7, dtype: 'qint8' };
const maAsMinMax: MinMaxObserver = ma;
const maObserved = ma.observe([1, 2]);
assertType<Equal<typeof maObserved, MovingAverageMinMaxObserver>>(true);
const maC: number = ma.averagingConstant + ma.calculateQparams().scale + ma.state().minVal;
// @ts-expect-error averagingConstant is a number
new MovingAverageMinMaxObserver({ averagingConstant: '0.01' });
// @ts-expect-error a per-channel scheme
new MovingAverageMinMaxObserver({ qscheme: 'per_channel_symmetric' });

const pc = new PerChannelMinMaxObserver({ chAxis: 1, dtype: 'qint8', qscheme: 'per_channel_symmetric' });
new PerChannelMinMaxObserver();
new PerChannelMinMaxObserver({ chAxis: -1, quantMin: -64, quantMax: 63, dtype: 'qint8', eps: 0 });
const pcOptions: PerChannelMinMaxObserverOptions = { chAxis: 0, reduceRange: true, dtype: 'qint8' };
const pcQ = pc.observe(new Float32Array(6), [2, 3]).calculateQparams();
assertType<Equal<typeof pcQ, PerChannelQParams>>(true);
const channelScales2: Float32Array = pcQ.scales;
const channelZeroPoints2: Int32Array = pcQ.zeroPoints;
const pcState: PerChannelMinMaxObserverState = pc.state();
if (pcState.minVal !== null) {
  const pcMax: Float32Array = pcState.maxVal; // both null or both arrays
}
const pcLive: Float32Array | null = pc.minVal;
const pcChAxis: number = pc.chAxis;
const pcScheme: 'per_channel_affine' | 'per_channel_symmetric' = pc.reset().qscheme;
// @ts-expect-error a per-tensor scheme (NotImplementedError)
new PerChannelMinMaxObserver({ qscheme: 'per_tensor_affine' });
// @ts-expect-error chAxis is a number
new PerChannelMinMaxObserver({ chAxis: '0' });
// @ts-expect-error the option is chAxis, not axis
new PerChannelMinMaxObserver({ axis: 0 });
// @ts-expect-error per-channel qparams have no scale
pc.calculateQparams().scale;
// @ts-expect-error the state may be null before any data
const pcMin: Float32Array = pc.state().minVal;
// @ts-expect-error a per-channel observer is not a per-tensor one
const pcAsMinMax: MinMaxObserver = pc;

const mapc = new MovingAveragePerChannelMinMaxObserver({ averagingConstant: 0.01, chAxis: 0 });
new MovingAveragePerChannelMinMaxObserver();
const mapcOptions: MovingAveragePerChannelMinMaxObserverOptions = { averagingConstant: 0.2, qscheme: 'per_channel_affine' };
const mapcAsPerChannel: PerChannelMinMaxObserver = mapc;
const mapcQ = mapc.observe([1, 2, 3, 4], [2, 2]).calculateQparams();
assertType<Equal<typeof mapcQ, PerChannelQParams>>(true);
const mapcC: number = mapc.averagingConstant;
// @ts-expect-error a per-tensor scheme
new MovingAveragePerChannelMinMaxObserver({ qscheme: 'per_tensor_symmetric' });
// @ts-expect-error averagingConstant is a number
new MovingAveragePerChannelMinMaxObserver({ averagingConstant: null });

const hist = new HistogramObserver({ bins: 256, upsampleRate: 16, reduceRange: true });
new HistogramObserver();
new HistogramObserver({ dtype: 'qint8', qscheme: 'per_tensor_symmetric', quantMin: -127, quantMax: 127 });
const histOptions: HistogramObserverOptions = { bins: 2048, upsampleRate: 128 };
const histQ = hist.observe(new Float32Array(100), [10, 10]).calculateQparams();
assertType<Equal<typeof histQ, QParams>>(true);
const searched: HistogramSearchRange | null = hist.search();
const searchWidth: number = searched === null ? 0 : searched.max - searched.min;
const histState: HistogramObserverState = hist.state();
const histCounts: Float32Array = histState.histogram;
const histSizes: number = histState.bins + hist.bins + hist.upsampleRate + hist.dstNbins + hist.histogram.length + hist.minVal;
const histReset: HistogramObserver = hist.reset();
// @ts-expect-error bins is a number
new HistogramObserver({ bins: '2048' });
// @ts-expect-error HistogramObserver is per tensor
new HistogramObserver({ qscheme: 'per_channel_affine' });
// @ts-expect-error HistogramObserver has no averagingConstant
new HistogramObserver({ averagingConstant: 0.1 });
// @ts-expect-error search() may return null
hist.search().min;

const fixed = new FixedQParamsObserver({ scale: 1 / 256, zeroPoint: 0 });
new FixedQParamsObserver({ scale: 2 / 256, zeroPoint: 128, dtype: 'quint8', qscheme: 'per_tensor_symmetric', quantMin: 0, quantMax: 255 });
const fixedOptions: FixedQParamsObserverOptions = { scale: 0.1, zeroPoint: -3, dtype: 'qint8', quantMin: -128, quantMax: 127 };
const fixedQ: QParams = fixed.observe([1, 2]).observe().reset().calculateQparams();
const fixedState: QParams = fixed.state();
const fixedFields: number = fixed.scale + fixed.zeroPoint + fixed.quantMin + fixed.quantMax;
const fixedScheme: ObserverQScheme = fixed.qscheme;
// @ts-expect-error scale and zeroPoint are required
new FixedQParamsObserver();
// @ts-expect-error zeroPoint is required
new FixedQParamsObserver({ scale: 0.1 });
// @ts-expect-error scale is a number
new FixedQParamsObserver({ scale: '0.1', zeroPoint: 0 });
// @ts-expect-error FixedQParamsObserver has no eps
new FixedQParamsObserver({ scale: 0.1, zeroPoint: 0, eps: 1e-6 });

const placeholder = new PlaceholderObserver();
new PlaceholderObserver({ dtype: 'float16' });
const placeholderOptions: PlaceholderObserverOptions = { dtype: 'float32' };
const placeholderDtype: string = placeholder.observe([1]).reset().dtype;
assertType<Equal<ReturnType<PlaceholderObserver['calculateQparams']>, never>>(true);
// @ts-expect-error PlaceholderObserver has no state()
placeholder.state();
// @ts-expect-error dtype is a string
new PlaceholderObserver({ dtype: 32 });

const notImplemented = new NotImplementedError('qscheme');
const notImplementedName: 'NotImplementedError' = notImplemented.name;
const asError: Error = notImplemented;
new NotImplementedError();
// @ts-expect-error an Error is not a NotImplementedError
const fromError: NotImplementedError = new Error('x');

const qcX86 = defaultQConfig();
assertType<Equal<typeof qcX86, QConfig<PerChannelMinMaxObserver>>>(true);
assertType<Equal<ReturnType<typeof qcX86.weight>, PerChannelMinMaxObserver>>(true);
const qcFbgemm: QConfig<PerChannelMinMaxObserver> = defaultQConfig('fbgemm');
const qcQnnpack = defaultQConfig('qnnpack');
assertType<Equal<ReturnType<typeof qcQnnpack.weight>, MinMaxObserver>>(true);
const activation: HistogramObserver = qcQnnpack.activation();
declare const someBackend: QConfigBackend;
const qcSome = defaultQConfig(someBackend);
assertType<Equal<ReturnType<typeof qcSome.weight>, MinMaxObserver | PerChannelMinMaxObserver>>(true);
// @ts-expect-error unknown backend
defaultQConfig('arm');
// @ts-expect-error the factories are functions
qcX86.weight.observe([1]);
// @ts-expect-error x86 weights are per channel
const x86Weight: MinMaxObserver = defaultQConfig('x86').weight();
// @ts-expect-error qnnpack weights are per tensor
const qnnpackWeight: PerChannelMinMaxObserver = defaultQConfig('qnnpack').weight();

// ---- fake quantization -----------------------------------------------------------------------

const fq1 = fakeQuantize(new Float32Array([0.1, -0.2]), 0.1, 0, -128, 127);
assertType<Equal<typeof fq1, ReturnType<Float32Array['slice']>>>(true);
fakeQuantize([1, 2, 3], 0.5, 3, 0, 255);
const fq2 = fakeQuantizePerChannel(new Float32Array(6), [2, 3], [0.1, 0.2], [0, 1], 0, 0, 255);
assertType<Equal<typeof fq2, ReturnType<Float32Array['slice']>>>(true);
fakeQuantizePerChannel([1, 2, 3, 4], new Int32Array([2, 2]), new Float64Array([0.1, 0.2]), new Int32Array(2), -1, -128, 127);
// @ts-expect-error quantMin and quantMax are required
fakeQuantize([1], 0.1, 0);
// @ts-expect-error scale is a number
fakeQuantize([1], '0.1', 0, 0, 255);
// @ts-expect-error fakeQuantize takes no shape
fakeQuantize([1], [1], 0.1, 0, 0, 255);
// @ts-expect-error the per-channel form needs the shape and axis
fakeQuantizePerChannel([1, 2], [0.1, 0.2], [0, 0], 0, 255);
// @ts-expect-error scales are numbers, one per channel
fakeQuantizePerChannel([1, 2], [2], 0.1, [0, 0], 0, 0, 255);
// @ts-expect-error the result is a Float32Array, not a QTensor
fakeQuantize([1], 0.1, 0, 0, 255).dispose();

// ---- models ----
async function models(): Promise<void> {
  const model: qwasm.Model = await qwasm.loadModel(new Uint8Array(0), { semantics: 'pytorch-qnnpack' });
  const names: string[] = model.inputs.map((i) => i.name);
  const out = await model.run({ [names[0]]: new Float32Array(64) });
  const logits: ModelTensorData = out.y.data;
  const withInner = await model.run({ x: { data: new Uint8Array(4), dims: [1, 4] } }, { intermediates: true });
  const inner: Record<string, qwasm.ModelTensor> = withInner.intermediates;
  // a text encoder: int64 token ids with a symbolic sequence length, a per-node profile marking shape-only nodes
  const encoded = await model.run({ input_ids: { data: new BigInt64Array(8), dims: [1, 8] }, attention_mask: new BigInt64Array(8) }, { profile: true });
  const reused: boolean | undefined = encoded.profile?.[0].static;
  const plans: number = model.memoryPlan.plans;
  void [reused, plans];
  // @ts-expect-error token ids are not plain number arrays
  await model.run({ input_ids: [1, 2, 3] });
  const peak: number = model.peakBytes;
  const arena: number = model.memoryPlan.arenaBytes;
  const firstWeighted = model.layers.find((l) => l.weight !== null);
  const outScale: number | undefined = firstWeighted?.output?.scale;
  if (firstWeighted) model.weight(firstWeighted.name).dispose();
  void outScale;
  const ptq = await qwasm.quantizeStatic(new Uint8Array(0), [{ input: new Float32Array(64) }], { qconfig: 'qnnpack', batchSize: 16, onProgress: ({ stage, done, total }) => console.log(stage, done, total) });
  const db: number | null = ptq.report[0].sqnrDb;
  const file: Uint8Array = ptq.bytes;
  ptq.model.dispose();
  void [db, file];
  model.dispose();
  // @ts-expect-error unknown semantics
  await qwasm.loadModel('m.onnx', { semantics: 'pytorch' });
  // @ts-expect-error numbers are not models
  await qwasm.loadModel(42);
  // @ts-expect-error the constructor is internal
  new qwasm.Model();
  void [logits, inner, peak, arena];
}
type ModelTensorData = qwasm.ModelTensor['data'];
void models;

// Model errors are classes callers can test with instanceof.
async function modelErrors(bytes: Uint8Array): Promise<string> {
  try {
    (await qwasm.loadModel(bytes)).dispose();
    return 'ok';
  } catch (e) {
    if (e instanceof qwasm.ModelFormatError) return `format: ${e.message}`;
    if (e instanceof qwasm.UnsupportedError) return `unsupported: ${e.message}`;
    throw e;
  }
}
void modelErrors;

// Semantics profiles: the packing's mode follows the semantics unless a mode is given.
function semanticsTypes(w8: QTensor<'qint8'>, xu: QTensor<'quint8'>, xs: QTensor<'qint8'>) {
  const pOnnx = packLinear(w8, Int32Array.of(1, 2), { semantics: 'onnx' });
  assertType<Equal<typeof pOnnx, PackedLinear<'onnx'>>>(true);
  // @ts-expect-error the onnx form takes an int32 bias only
  packLinear(w8, [0.1, 0.2], { semantics: 'onnx' });
  const pTflite = packLinear(w8, [0.1, 0.2], { semantics: 'tflite' });
  assertType<Equal<typeof pTflite, PackedLinear<'fixedpoint'>>>(true);
  const pFb = packConv2d(w8, null, { semantics: 'pytorch-fbgemm', stride: 2 });
  assertType<Equal<typeof pFb, PackedConv2d<'fbgemm'>>>(true);
  const pMode = packLinear(w8, null, { semantics: 'onnx', mode: 'qnnpack' });
  assertType<Equal<typeof pMode, PackedLinear<'qnnpack'>>>(true);
  const pm = packMatMul(w8, { semantics: 'pytorch-qnnpack' });
  assertType<Equal<typeof pm, PackedMatMul<'qnnpack'>>>(true);
  const y = linear(xu, pFb as unknown as PackedLinear, { scale: 0.1, zeroPoint: 0, semantics: 'onnx' });
  assertType<Equal<typeof y, QTensor<'quint8'>>>(true);
  add(xu, xu, { scale: 0.1, zeroPoint: 3, semantics: 'pytorch-fbgemm' });
  add(xu, xu, { scale: 0.1, zeroPoint: 3, mode: 'fbgemm' });
  // @ts-expect-error unknown semantics
  add(xu, xu, { scale: 0.1, zeroPoint: 3, semantics: 'x86' });
  mul(xs, xs, { scale: 0.1, zeroPoint: 3, mode: 'pytorch' });
  const s8 = sigmoid(xs, { semantics: 'onnx', scale: 1 / 256, zeroPoint: -128 });
  assertType<Equal<typeof s8, QTensor<'qint8'>>>(true);
  // @ts-expect-error the qnnpack sigmoid is quint8 only
  sigmoid(xs);
  quantizePerTensor([1], [1], 0.1, 0, 'qint8', { semantics: 'onnx' });
  mean(xu, [2, 3], true, { semantics: 'onnx', scale: 0.2, zeroPoint: 4 });
  avgPool2d(xu, { kernelSize: 2, padding: [0, 1, 1, 0], semantics: 'onnx' });
  const names: qwasm.Semantics[] = Object.keys(qwasm.SEMANTICS) as qwasm.Semantics[];
  const does: string = qwasm.SEMANTICS_FORMS.add.float.does;
  void [pOnnx, pTflite, pm, names, does];
}
void semanticsTypes;

// qwasm/reference: the per-element rules, no init needed.
import * as reference from '../../js/reference.js';
const q8: number = reference.quantizeTorch(0.5, 0.1, 0, 0, 255);
const params = reference.requantizationParams('fbgemm', { inScale: 0.1, weightScale: 0.01, outScale: 0.2, bias: 0.5 });
const out8: number = reference.requantize('fbgemm', 1234, params, 128, 0, 255);
// @ts-expect-error 'none' has no per-element rule
reference.requantizationParams('none', { inScale: 1, weightScale: 1, outScale: 1 });
const sq: number | null = new reference.Sqnr().add([1], [1]).db;
void [q8, out8, sq];

// tidy / keep: the result type passes through; an async function is a type error.
function tidyTypes(t: QTensor<'quint8'>) {
  const kept: QTensor<'quint8'> = qwasm.keep(t);
  const ints: Uint8Array | Int8Array | Int32Array = qwasm.tidy(() => kept.intRepr());
  const pair: { a: QTensor<'quint8'>; n: number } = qwasm.tidy(() => ({ a: t, n: 1 }));
  // @ts-expect-error tidy scopes are synchronous
  qwasm.tidy(async () => t);
  // @ts-expect-error keep takes a QTensor
  qwasm.keep(new Float32Array(1));
  void [ints, pair];
}
void tidyTypes;
