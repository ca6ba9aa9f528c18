// Type declarations for qwasm's public API (js/index.js and the modules it re-exports).
// Hand-written: keep in step with js/*.js. Checked by tests/types/api.ts (npx tsc -p tests/types/tsconfig.json).

// ---- basic types -----------------------------------------------------------------------------

/** A quantized element type, with PyTorch's names: quint8 [0, 255], qint8 [-128, 127], qint32 [-2^31, 2^31 - 1]. */
export type QDtype = 'quint8' | 'qint8' | 'qint32';

/**
 * Rounding rule of quantize; both round half to even. 'torch' (the default): x * (1/scale), as PyTorch;
 * 'onnx': x / scale, as ONNX QuantizeLinear.
 */
export type Rounding = 'torch' | 'onnx';

/** The quantization scheme of a QTensor: one (scale, zero point) for the tensor, or one per index along an axis. */
export type QScheme = 'per_tensor_affine' | 'per_channel_affine';

/** The per-tensor schemes of torch.ao.quantization observers, accepted by chooseQParams. */
export type PerTensorObserverQScheme = 'per_tensor_affine' | 'per_tensor_symmetric';

/** The per-channel schemes of torch.ao.quantization observers, accepted by chooseQParams. */
export type PerChannelObserverQScheme = 'per_channel_affine' | 'per_channel_symmetric';

/** Every scheme of torch.ao.quantization observers, the keys of QSCHEMES. */
export type ObserverQScheme = PerTensorObserverQScheme | PerChannelObserverQScheme;

/** A Uint8Array over its own ArrayBuffer (`Uint8Array<ArrayBuffer>` on TypeScript >= 5.7). */
export type OwnedUint8Array = ReturnType<Uint8Array['slice']>;
/** An Int8Array over its own ArrayBuffer (`Int8Array<ArrayBuffer>` on TypeScript >= 5.7). */
export type OwnedInt8Array = ReturnType<Int8Array['slice']>;
/** An Int32Array over its own ArrayBuffer (`Int32Array<ArrayBuffer>` on TypeScript >= 5.7). */
export type OwnedInt32Array = ReturnType<Int32Array['slice']>;
/** A Float32Array over its own ArrayBuffer (`Float32Array<ArrayBuffer>` on TypeScript >= 5.7). */
export type OwnedFloat32Array = ReturnType<Float32Array['slice']>;
/** A Float64Array over its own ArrayBuffer (`Float64Array<ArrayBuffer>` on TypeScript >= 5.7). */
export type OwnedFloat64Array = ReturnType<Float64Array['slice']>;

/** The typed array holding a dtype's integers: quint8 -> Uint8Array, qint8 -> Int8Array, qint32 -> Int32Array. */
export type IntArrayOf<D extends QDtype> = D extends 'quint8'
  ? OwnedUint8Array
  : D extends 'qint8'
    ? OwnedInt8Array
    : OwnedInt32Array;

/** Numbers accepted as data: a plain array or a non-BigInt typed array (a DataView is rejected). */
export type NumberArray =
  | readonly number[]
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array;

/** Dimension sizes: non-negative safe integers, at most 8 of them, at most 2^31 - 1 elements in all. */
export type Shape = NumberArray;

// ---- runtime ---------------------------------------------------------------------------------

/** Options of init(). */
export interface InitOptions {
  /** true: require the SIMD128 build (throws if unsupported); false: force the scalar build; default: SIMD where supported. */
  simd?: boolean;
  /**
   * Where the .wasm files are: a directory prefix (string or URL) to which 'qwasm-simd.wasm' or 'qwasm-scalar.wasm'
   * is appended, or the URL of each build. Default: ../dist/ next to js/, resolved from import.meta.url.
   */
  wasmPaths?: string | URL | { simd?: string | URL; scalar?: string | URL };
  /**
   * The wasm binary itself (bytes or a compiled module); used instead of wasmPaths when given.
   * (`& object`: lib.dom's WebAssembly.Module is an empty interface that would otherwise admit strings.)
   */
  wasmBinary?: ArrayBuffer | ArrayBufferView | (WebAssembly.Module & object);
}

/** Which build runs. */
export interface BackendInfo {
  /** 'wasmsimd' for the SIMD128 build, 'scalar' otherwise. */
  isa: 'wasmsimd' | 'scalar';
  /** true when isa is 'wasmsimd'. */
  simd: boolean;
  /** Where the binary came from: its URL or path, or 'wasmBinary'. */
  source: string;
}

/** Live wasm allocations made by qwasm (tensors, packed weights), for leak checks. */
export interface MemoryStats {
  /** Bytes in live allocations. */
  liveBytes: number;
  /** Number of live allocations. */
  liveAllocations: number;
  /** Current size of the wasm linear memory in bytes. */
  wasmMemoryBytes: number;
}

/**
 * Loads the wasm backend once: the SIMD128 build where the engine supports it, the scalar build otherwise.
 * Later calls return the same backend; they throw if they ask for a different `simd`.
 */
export function init(options?: InitOptions): Promise<BackendInfo>;

/** Which build runs: { isa: 'wasmsimd' | 'scalar', simd, source }. Throws when init() has not completed. */
export function backendInfo(): BackendInfo;

/** Live wasm allocations made by qwasm (tensors, packed weights): for leak checks. Throws before init(). */
export function memoryStats(): MemoryStats;

/** True when this engine runs wasm SIMD128 including i32x4.dot_i16x8_s. */
export function simdSupported(): boolean;

// ---- dtypes and qparams ----------------------------------------------------------------------

/** The quantized dtypes: name, C API code, bytes per element, integer range and typed-array constructor. Frozen. */
export const DTYPES: {
  readonly quint8: {
    readonly name: 'quint8';
    readonly code: 0;
    readonly bytes: 1;
    readonly min: 0;
    readonly max: 255;
    readonly IntArray: Uint8ArrayConstructor;
  };
  readonly qint8: {
    readonly name: 'qint8';
    readonly code: 1;
    readonly bytes: 1;
    readonly min: -128;
    readonly max: 127;
    readonly IntArray: Int8ArrayConstructor;
  };
  readonly qint32: {
    readonly name: 'qint32';
    readonly code: 2;
    readonly bytes: 4;
    readonly min: -2147483648;
    readonly max: 2147483647;
    readonly IntArray: Int32ArrayConstructor;
  };
};

/** One entry of DTYPES. */
export type DtypeInfo = (typeof DTYPES)[QDtype];

/** The observer qschemes with their C API codes. Frozen. */
export const QSCHEMES: {
  readonly per_tensor_affine: 0;
  readonly per_tensor_symmetric: 1;
  readonly per_channel_affine: 2;
  readonly per_channel_symmetric: 3;
};

/** float32 machine epsilon (2^-23), PyTorch's default eps. */
export const FLOAT32_EPS: number;

/**
 * The integer range options of an observer. quantMin and quantMax (32-bit integers) go together: the range must
 * include 0, quantMin < quantMax, and hold at most 256 values for qint8 or 2^31 for qint32.
 */
export type QuantRangeOptions = {
  /** Default 'quint8'. */
  dtype?: QDtype;
  /** Halve the default range (quint8 [0, 127], qint8 [-64, 63]; ignored for qint32). Default false. */
  reduceRange?: boolean;
} & ({ quantMin?: undefined; quantMax?: undefined } | { quantMin: number; quantMax: number });

/** An observer's integer range. */
export interface QuantRange {
  quantMin: number;
  quantMax: number;
}

/**
 * The integer range an observer quantizes to (torch.ao.quantization.utils.calculate_qmin_qmax).
 * Returns { quantMin, quantMax }. Throws before init().
 */
export function quantRange(options?: QuantRangeOptions): QuantRange;

/** Options of chooseQParams for a per-tensor scheme: the observed range as numbers. */
export type ChooseQParamsOptions = QuantRangeOptions & {
  /** Observed minimum; min = +Infinity with max = -Infinity (nothing observed) gives (1.0, 0). */
  min: number;
  /** Observed maximum, >= min as float32. */
  max: number;
  /** Default 'per_tensor_affine'. */
  qscheme?: PerTensorObserverQScheme;
  /** Lower bound of the scale, finite and >= 0. Default FLOAT32_EPS (2^-23). */
  eps?: number;
};

/** Options of chooseQParams for a per-channel scheme: the observed range of each channel, finite. */
export type ChooseQParamsPerChannelOptions = QuantRangeOptions & {
  /** Observed minimum of each channel. */
  min: NumberArray;
  /** Observed maximum of each channel, as many as min. */
  max: NumberArray;
  /** A per-channel scheme (required: the default is per-tensor). */
  qscheme: PerChannelObserverQScheme;
  /** Lower bound of the scale, finite and >= 0. Default FLOAT32_EPS (2^-23). */
  eps?: number;
};

/** Per-tensor qparams chosen by chooseQParams; scale is a float32 value. */
export interface QParams {
  scale: number;
  zeroPoint: number;
}

/** Per-channel qparams chosen by chooseQParams. */
export interface PerChannelQParams {
  scales: OwnedFloat32Array;
  zeroPoints: OwnedInt32Array;
}

/** Scale and zero point for an observed range, bit-exact with PyTorch 1.13 observers. Returns { scale, zeroPoint }. */
export function chooseQParams(options: ChooseQParamsOptions): QParams;
/** Per-channel scales and zero points for observed ranges, bit-exact with PyTorch 1.13. Returns { scales, zeroPoints }. */
export function chooseQParams(options: ChooseQParamsPerChannelOptions): PerChannelQParams;
/** Scale and zero point(s) for an observed range, per tensor or per channel as options.qscheme says. */
export function chooseQParams(options: ChooseQParamsOptions | ChooseQParamsPerChannelOptions): QParams | PerChannelQParams;

// ---- QTensor ---------------------------------------------------------------------------------

/** Options of operations that quantize. */
export interface RoundingOptions {
  /** Default 'torch'. */
  rounding?: Rounding;
}

/** Per-tensor qparams for empty(). */
export interface EmptyPerTensorQParams<D extends QDtype = QDtype> {
  dtype: D;
  /** Finite and > 0 as float32. */
  scale: number;
  /** An integer in the dtype's range. */
  zeroPoint: number;
  scales?: undefined;
}

/** Per-channel qparams for empty(): one scale and zero point per index along axis. */
export interface EmptyPerChannelQParams<D extends QDtype = QDtype> {
  dtype: D;
  scales: NumberArray;
  zeroPoints: NumberArray;
  axis: number;
}

/**
 * A quantized tensor whose integers live in wasm memory, modelled on PyTorch's quantized tensors. Views
 * (transpose, permute, select, slice, reshape of contiguous data) share storage, freed when the last user is disposed.
 */
export class QTensor<D extends QDtype = QDtype> {
  #private;

  /** Internal: use quantizePerTensor, quantizePerChannel, fromIntRepr, fromIntReprPerChannel, empty or QTensor.fromBytes. */
  private constructor();

  /** Dimension sizes (frozen). */
  get shape(): readonly number[];
  /** Number of dimensions. */
  get ndim(): number;
  /** The quantized dtype. */
  get dtype(): D;
  /** 'per_tensor_affine' or 'per_channel_affine'. */
  get qscheme(): QScheme;
  /** Strides in elements, as torch's stride() (a frozen copy). */
  get strides(): readonly number[];
  /** True once dispose() was called; later use of the tensor then throws (dispose() and toString() excepted). */
  get disposed(): boolean;

  /** Number of elements (the product of shape). */
  numel(): number;
  /** True when the elements are laid out row-major without gaps (dimensions of size <= 1 ignored). */
  isContiguous(): boolean;
  /** The scale of a per-tensor tensor; throws for a per-channel one. */
  qScale(): number;
  /** The zero point of a per-tensor tensor; throws for a per-channel one. */
  qZeroPoint(): number;
  /** Per-channel scales as float64, as torch keeps them (a copy); throws for a per-tensor tensor. */
  qPerChannelScales(): OwnedFloat64Array;
  /** Per-channel zero points (a copy); throws for a per-tensor tensor. */
  qPerChannelZeroPoints(): OwnedInt32Array;
  /** The channel axis of a per-channel tensor; throws for a per-tensor tensor. */
  qPerChannelAxis(): number;

  /** The integers, row-major, in a new Uint8Array / Int8Array / Int32Array (quint8 / qint8 / qint32). */
  intRepr(): IntArrayOf<D>;
  /** The real values scale * (q - zero_point), row-major, as a new Float32Array. */
  dequantize(): OwnedFloat32Array;
  /** The single real value of a one-element tensor; throws a RangeError otherwise. */
  item(): number;

  /** Swaps two dimensions (a view). Negative dims count from the end. */
  transpose(dim0: number, dim1: number): QTensor<D>;
  /** Reorders dimensions: result dim k is this tensor's dim dims[k] (a view). dims must list every dimension. */
  permute(dims: readonly number[]): QTensor<D>;
  /** A contiguous tensor with the same values: a view when already contiguous, else a copy. */
  contiguous(): QTensor<D>;
  /**
   * The same elements in a new shape (one entry may be -1). A view of contiguous data, a copy otherwise.
   * A per-channel tensor keeps its channel dimension intact or the call throws.
   */
  reshape(shape: readonly number[]): QTensor<D>;
  /** The sub-tensor at `index` along `dim`, with that dimension removed (a view), like t[index]. */
  select(dim: number, index: number): QTensor<D>;
  /** Elements start <= i < end (step > 0) along dim, Python-style negative bounds (a view). Defaults: 0, size, 1. */
  slice(dim: number, start?: number | null, end?: number | null, step?: number): QTensor<D>;
  /** t.at(i, j) is t[i][j]: successive selects along the leading dimensions (a view). */
  at(...indices: number[]): QTensor<D>;

  /** A contiguous copy with new storage and the same qparams. */
  clone(): QTensor<D>;
  /**
   * Writes other's values into this tensor, requantized to THIS tensor's dtype and qparams:
   * quantize(other.dequantize()). Shapes must match; views write through to their base. Returns this.
   */
  copyFrom(other: QTensor, options?: RoundingOptions): this;
  /**
   * A new per-tensor tensor holding this tensor's values requantized to (scale, zeroPoint, dtype):
   * quantize(dequantize(q)). dtype defaults to this tensor's.
   */
  requantize(scale: number, zeroPoint: number, dtype?: undefined, options?: RoundingOptions): QTensor<D>;
  /**
   * A new per-tensor tensor holding this tensor's values requantized to (scale, zeroPoint, dtype):
   * quantize(dequantize(q)).
   */
  requantize<E extends QDtype>(scale: number, zeroPoint: number, dtype: E, options?: RoundingOptions): QTensor<E>;

  /** A compact byte string (docs/qtensor-format.md) that QTensor.fromBytes turns back into an equal tensor. */
  toBytes(): OwnedUint8Array;
  /** Decodes a toBytes() byte string into a new tensor; throws a RangeError on malformed input. Needs init(). */
  static fromBytes(bytes: Uint8Array | ArrayBuffer): QTensor;

  /** Releases this tensor's hold on its wasm storage. Idempotent; any later use throws. */
  dispose(): void;
  /** In the spirit of torch's print: values, size, dtype, scheme, scale, zero_point ('QTensor(<disposed>)' once disposed). */
  toString(): string;
  /** The same as dispose(), for `using t = ...` (installed only where the engine defines Symbol.dispose). */
  [Symbol.dispose](): void;
  /** 'QTensor'. */
  get [Symbol.toStringTag](): string;
}

/**
 * torch.quantize_per_tensor: q = clamp(round(x / scale) + zeroPoint) with the chosen rounding rule
 * ('torch', the default: x * (1/scale); 'onnx': x / scale), ties to even. data: numbers (float32 after conversion).
 */
export function quantizePerTensor<D extends QDtype>(
  data: NumberArray,
  shape: Shape,
  scale: number,
  zeroPoint: number,
  dtype: D,
  options?: RoundingOptions,
): QTensor<D>;

/** torch.quantize_per_channel: one (scale, zero point) per index along `axis`; scales are used as float32. */
export function quantizePerChannel<D extends QDtype>(
  data: NumberArray,
  shape: Shape,
  scales: NumberArray,
  zeroPoints: NumberArray,
  axis: number,
  dtype: D,
  options?: RoundingOptions,
): QTensor<D>;

/**
 * Wraps integers you quantized yourself (torch._make_per_tensor_quantized_tensor): real values are
 * scale * (ints[i] - zeroPoint). Each integer must be in the dtype's range.
 */
export function fromIntRepr<D extends QDtype>(
  ints: NumberArray,
  shape: Shape,
  scale: number,
  zeroPoint: number,
  dtype: D,
): QTensor<D>;

/** Per-channel counterpart of fromIntRepr (torch._make_per_channel_quantized_tensor). */
export function fromIntReprPerChannel<D extends QDtype>(
  ints: NumberArray,
  shape: Shape,
  scales: NumberArray,
  zeroPoints: NumberArray,
  axis: number,
  dtype: D,
): QTensor<D>;

/**
 * A tensor of the given shape whose every element is its zero point (so it dequantizes to 0).
 * qparams: { dtype, scale, zeroPoint } or { dtype, scales, zeroPoints, axis }.
 */
export function empty<D extends QDtype>(shape: Shape, qparams: EmptyPerTensorQParams<D> | EmptyPerChannelQParams<D>): QTensor<D>;
