// Type-level test of js/index.d.ts. Only type-checked (npx tsc -p tests/types/tsconfig.json), never run.
// Correct usage must compile; every `@ts-expect-error` line is misuse the declarations must reject.
import {
  DTYPES,
  FLOAT32_EPS,
  QSCHEMES,
  QTensor,
  backendInfo,
  chooseQParams,
  empty,
  fromIntRepr,
  fromIntReprPerChannel,
  init,
  memoryStats,
  quantRange,
  quantizePerChannel,
  quantizePerTensor,
  simdSupported,
} from '../../js/index.js';
import type {
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
assertType<Equal<typeof info.isa, 'wasmsimd' | 'scalar'>>(true);
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
