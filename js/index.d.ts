// Type declarations for qwasm's public API (js/index.js and the modules it re-exports).
// Hand-written: keep in step with js/*.js. Checked by tests/types/api.ts (npx tsc -p tests/types/tsconfig.json).

// ---- what the host's libs may lack ------------------------------------------------------------

declare global {
  // Symbol.dispose (for `using`) is declared by lib esnext.disposable and @types/node, not by the ES2022 + DOM
  // libs a browser project starts from; declared here the same way, so QTensor[Symbol.dispose] type-checks there.
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}

/**
 * WebAssembly.Module where the program's libs declare it (lib.dom does; a Node program with only ES and @types/node
 * libs has no WebAssembly types), otherwise never. (`& object`: lib.dom's WebAssembly.Module is an empty interface
 * that would otherwise admit strings.)
 */
type CompiledWasmModule = typeof globalThis extends { WebAssembly: { Module: abstract new (...args: never[]) => infer M } } ? M & object : never;

// ---- basic types -----------------------------------------------------------------------------

/** A quantized element type, with PyTorch's names: quint8 [0, 255], qint8 [-128, 127], qint32 [-2^31, 2^31 - 1]. */
export type QDtype = 'quint8' | 'qint8' | 'qint32';

/**
 * Rounding rule of quantize; all round half to even. 'torch' (the default): zp + round(x * (1/scale)), as
 * PyTorch 1.13 without FBGEMM; 'onnx': x / scale, as ONNX QuantizeLinear; 'fbgemm': as PyTorch 2.x's x86
 * builds (FBGEMM inside), round(x * (1/scale) + zp) with the zero point added before rounding (one rounding
 * per tensor for 8-bit types, two per channel and for qint32; docs/pytorch2.md).
 */
export type Rounding = 'torch' | 'onnx' | 'fbgemm';

/**
 * A semantics profile (js/semantics.js): which reference each operation reproduces. 'pytorch-qnnpack' (PyTorch's
 * qnnpack engine, as Debian's 1.13 computes it), 'pytorch2-qnnpack' (that engine in PyTorch 2.x's x86 builds, FBGEMM's
 * quantize inside), 'pytorch-fbgemm' (PyTorch 2.x's fbgemm engine on x86),
 * 'pytorch-x86' (its x86 engine: oneDNN for convolutions with symmetric weights), 'onnx' (the ONNX specification
 * and ONNX Runtime),
 * 'tflite' (TensorFlow Lite's integer kernels; of its forms only the fixed-point requantization has kernels yet,
 * the others throw UnsupportedError).
 */
export type Semantics = 'pytorch-qnnpack' | 'pytorch2-qnnpack' | 'pytorch-fbgemm' | 'pytorch-x86' | 'onnx' | 'tflite';

/** The families of operations a profile fixes a form for. */
export type SemanticsFamily = 'rounding' | 'requantization' | 'add' | 'mul' | 'pooling' | 'sigmoid' | 'hardswish' | 'leakyRelu' | 'dynamic';

/** What a form of a family computes, and whether qwasm lacks its kernel. */
export interface SemanticsForm {
  readonly does: string;
  readonly missing?: true;
}

/** The profiles: per family, the name of its form (a key of SEMANTICS_FORMS[family]). Frozen. */
export const SEMANTICS: Readonly<Record<Semantics, Readonly<Record<SemanticsFamily, string> & { reference: string }>>>;

/** Every form of every family. Frozen. */
export const SEMANTICS_FORMS: Readonly<Record<SemanticsFamily, Readonly<Record<string, SemanticsForm>>>>;

/** The option every operator takes: the profile whose forms it computes (each operator's default is documented). */
export interface SemanticsOptions {
  semantics?: Semantics;
}

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
   * Threads running the operators (onnxruntime-web's name): default 1; 0: one per logical core, at most 8; at most
   * 64. More than 1 runs qwasm-simd-threads.wasm with Web Workers (worker_threads in Node) over a shared memory,
   * which a page may only have when it is cross-origin isolated; where threads cannot run, 1 thread runs with the
   * same results, backendInfo().threadsFallback says why and console.warn says so once.
   */
  numThreads?: number;
  /**
   * Relaxed SIMD's dot product for the int8 GEMM and depthwise convolution, used only where the engine computes it
   * exactly for full bytes (a runtime probe), with the same results. Its build imports a shared memory: on one thread
   * any page where the engine makes one (Chromium: every page), on more a cross-origin isolated one. 'auto'
   * (default): where the probe passes in browsers and in Node 24 or later; true: also in older Node, with a warning
   * when it cannot run; false: never.
   */
  relaxedSimd?: boolean | 'auto';
  /**
   * Where the .wasm files are: a directory prefix (string or URL) to which the file names are appended, or the URL
   * of each build. Default: ../dist/ next to js/, resolved from import.meta.url.
   */
  wasmPaths?: string | URL | { simd?: string | URL; scalar?: string | URL; simdThreads?: string | URL; relaxedThreads?: string | URL };
  /** The wasm binary itself (bytes or a compiled WebAssembly.Module); used instead of wasmPaths when given. */
  wasmBinary?: ArrayBuffer | ArrayBufferView | CompiledWasmModule;
}

/** Which build runs. */
export interface BackendInfo {
  /** 'wasmsimd' for the SIMD128 builds, 'wasmrelaxed' when the relaxed-SIMD kernels run, 'scalar' otherwise. */
  isa: 'wasmsimd' | 'wasmrelaxed' | 'scalar';
  /** true unless isa is 'scalar'. */
  simd: boolean;
  /** Where the binary came from: its URL or path, or 'wasmBinary'. */
  source: string;
  /** Threads running the operators. */
  threads: number;
  /** Why one thread runs although numThreads asked for more. */
  threadsFallback?: string;
  /** The exact semantics of the engine's relaxed dot product the relaxed kernels rely on. */
  relaxed?: 'usdot' | 'sdot';
  /** Why relaxedSimd: true was not honoured. */
  relaxedFallback?: string;
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

/** Which build runs: { isa, simd, source, threads, ... }. Throws when init() has not completed. */
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

/** Options of operations that quantize: a rounding rule, or the semantics whose rule applies (default 'pytorch-qnnpack'). */
export interface RoundingOptions extends SemanticsOptions {
  /** Default: the semantics' ('torch' for PyTorch). Overrides the semantics. */
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
  /**
   * torch.flatten: dimensions startDim..endDim (defaults 0 and -1, negative counting from the end) merged into one,
   * through reshape (a view of contiguous data). A 0-dimensional tensor becomes [1]. Throws a RangeError when
   * startDim comes after endDim.
   */
  flatten(startDim?: number, endDim?: number): QTensor<D>;
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
 * Runs fn() and disposes every QTensor created during it, except those in its result (a QTensor, or QTensors in
 * arrays, plain objects, Maps and Sets) and those passed to keep(); returned tensors pass to the enclosing tidy().
 * For loops: undisposed tensors are freed by the garbage collector only between tasks, never during a synchronous
 * loop. fn must be synchronous (a returned Promise throws a TypeError). Packed weights and models are not affected.
 */
export function tidy<T>(fn: () => T extends PromiseLike<unknown> ? never : T): T;

/** Marks a tensor that no tidy() disposes (its own dispose() still does). Returns it. */
export function keep<T extends QTensor>(tensor: T): T;

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

// ---- operators: shared types -----------------------------------------------------------------

/** The dtypes operators take as activations (and weights), and produce as 8-bit outputs: quint8 or qint8. */
export type ActivationDtype = 'quint8' | 'qint8';

// T, but not a place to infer T from (TypeScript's NoInfer, which needs 5.4). Not exported (see `export {}` at the end).
type NotInferred<T> = [T][T extends unknown ? 0 : never];

/** Requantization modes with their C API codes (src/include/qwasm.h qw_requant_mode). Frozen. */
export const REQUANT_MODES: {
  /** PyTorch's qnnpack engine: float bias rounded to int32 at scale w_scale * in_scale. */
  readonly qnnpack: 0;
  /** PyTorch's fbgemm / x86 engine: the bias stays float. */
  readonly fbgemm: 1;
  /** ONNX QLinearConv / QLinearMatMul: takes only an int32 bias (at scale in_scale * w_scale). */
  readonly onnx: 2;
  /** Integer only (gemmlowp / TFLite): a Q31 multiplier and a shift. */
  readonly fixedpoint: 3;
  /** No requantization: the exact int32 sums as a qint32 tensor (ONNX MatMulInteger / ConvInteger). */
  readonly none: 4;
  /**
   * oneDNN's int8 convolution as PyTorch 2.x's x86 engine runs it (convolutions with symmetric weights on hosts
   * with AVX512-VNNI): float bias added unscaled, the output zero point added before rounding.
   */
  readonly onednn: 5;
};

/** How int32 accumulators become outputs: a key of REQUANT_MODES. */
export type RequantMode = keyof typeof REQUANT_MODES;

/** The requantization form of each profile. */
export interface SemanticsRequantMode {
  'pytorch-qnnpack': 'qnnpack';
  'pytorch2-qnnpack': 'qnnpack';
  'pytorch-fbgemm': 'fbgemm';
  /** linear / matmul: 'fbgemm'; conv2d: 'onednn' for symmetric weights and groups <= 100, else 'fbgemm'. */
  'pytorch-x86': 'fbgemm' | 'onednn';
  onnx: 'onnx';
  tflite: 'fixedpoint';
}

/** The mode of packed weights: the mode given, else the semantics' requantization form. */
type ModeOf<M extends RequantMode, S extends Semantics> = [M] extends [never] ? SemanticsRequantMode[S] : M;

/** The modes that requantize to an 8-bit output (every mode but 'none'). */
export type Int8RequantMode = Exclude<RequantMode, 'none'>;

/**
 * A bias for packLinear / packConv2d, one value per output channel: an Int32Array is kept as int32 sums, any other
 * numbers as float32. Mode 'onnx' takes only an Int32Array (at scale in_scale * w_scale), so a mode that may be
 * 'onnx' requires one.
 */
export type BiasFor<M extends RequantMode> = 'onnx' extends M ? Int32Array : NumberArray;

/**
 * Output options of linear, conv2d and matmul when they requantize: the output qparams and a fused clamp.
 * (In mode 'none' they are not used: see Int32OutputOptions.)
 */
export interface QuantizedOutputOptions<O extends ActivationDtype = ActivationDtype> {
  /** Output scale: finite and > 0 as float32. */
  scale: number;
  /** Output zero point: an integer in the output dtype's range. */
  zeroPoint: number;
  /** Output dtype. Default 'quint8'. */
  dtype?: O;
  /** Fused ReLU (raises clampMin to 0). Default false. */
  relu?: boolean;
  /** Fused clamp in real units; clampMin <= clampMax. Defaults -Infinity and Infinity. */
  clampMin?: number;
  clampMax?: number;
  /**
   * A clamp in output integers, [lo, hi] with lo <= hi, applied after the real-unit clamp: what an ONNX Clip with
   * 8-bit bounds after the layer computes, done in the same pass. Default none.
   */
  outputRange?: readonly [number, number];
  /** Overrides the packed weights' mode for this call (matmul with an unpacked b: default 'onnx'). */
  mode?: Int8RequantMode;
  /** Overrides the packed weights' mode with this profile's requantization form. */
  semantics?: Semantics;
}

/** Options of a call that returns the exact int32 sums as a qint32 tensor (scale 1, zero point 0). */
export interface Int32OutputOptions {
  mode: 'none';
}

/** Output options whose mode is not known statically (the output is qint32 when the call's mode is 'none'). */
export type OutputOptions<O extends ActivationDtype = ActivationDtype> = Omit<QuantizedOutputOptions<O>, 'mode'> & {
  mode?: RequantMode;
};

/** A size or step along H and W: one integer for both, or [h, w]. */
export type IntPair = number | readonly [number, number];

/** Convolution padding: one integer for all sides, [h, w], or [top, left, bottom, right]. */
export type Padding2d = IntPair | readonly [number, number, number, number];

/** The geometry of a packed convolution. */
export interface Conv2dGeometry {
  /** Input channels (inChannels / groups of the weight, times groups). */
  readonly inC: number;
  readonly outC: number;
  readonly kh: number;
  readonly kw: number;
  readonly groups: number;
  /** [h, w]. */
  readonly stride: readonly [number, number];
  /** [h, w]. */
  readonly dilation: readonly [number, number];
  /** [top, left, bottom, right]. */
  readonly padding: readonly [number, number, number, number];
}

// ---- packed weights --------------------------------------------------------------------------

/** Options of packLinear. */
export interface PackLinearOptions<M extends RequantMode = RequantMode, S extends Semantics = Semantics> {
  /** The requantization mode of calls with these weights (a call may override it). Default: the semantics'. */
  mode?: M;
  /** Default 'pytorch-qnnpack' (mode 'qnnpack'). */
  semantics?: S;
}

/** Options of packConv2d: the convolution's geometry and mode. */
export interface PackConv2dOptions<M extends RequantMode = RequantMode, S extends Semantics = Semantics> {
  /** Default 1. */
  stride?: IntPair;
  /** Default 0. */
  padding?: Padding2d;
  /** Default 1. */
  dilation?: IntPair;
  /** A positive integer dividing outChannels. Default 1. */
  groups?: number;
  /** The requantization mode of calls with these weights (a call may override it). Default: the semantics'. */
  mode?: M;
  /** Default 'pytorch-qnnpack' (mode 'qnnpack'). */
  semantics?: S;
}

/** Options of packMatMul. */
export interface PackMatMulOptions<M extends RequantMode = RequantMode, S extends Semantics = Semantics> {
  /** The requantization mode of calls with this b (a call may override it). Default: the semantics'. */
  mode?: M;
  /** Default 'onnx' (mode 'onnx'). */
  semantics?: S;
}

/**
 * Weights of a fully-connected layer, packed once into wasm memory: y = x W^T + b. Made by packLinear; free with
 * dispose() (or `using`).
 */
export class PackedLinear<M extends RequantMode = RequantMode> {
  #private;
  /** Internal: use packLinear. */
  private constructor();
  /** The requantization mode of calls that do not override it. */
  readonly mode: M;
  /** Output features: the weight's shape[0]. */
  readonly outFeatures: number;
  /** Input features: the weight's shape[1]. */
  readonly inFeatures: number;
  /** GEMM output channels (= outFeatures). */
  readonly n: number;
  /** GEMM depth (= inFeatures). */
  readonly k: number;
  /** True once dispose() was called; operators then throw on these weights. */
  get disposed(): boolean;
  /** Frees the packed weights. Idempotent. */
  dispose(): void;
  /** The same as dispose(), for `using w = ...` (installed only where the engine defines Symbol.dispose). */
  [Symbol.dispose](): void;
}

/** Weights of a 2-D convolution, packed once into wasm memory, with the convolution's geometry. Made by packConv2d. */
export class PackedConv2d<M extends RequantMode = RequantMode> {
  #private;
  /** Internal: use packConv2d. */
  private constructor();
  /** The requantization mode of calls that do not override it. */
  readonly mode: M;
  /** Channels, kernel, stride, dilation, padding and groups. */
  readonly geometry: Conv2dGeometry;
  /** True once dispose() was called; operators then throw on these weights. */
  get disposed(): boolean;
  /** Frees the packed weights. Idempotent. */
  dispose(): void;
  /** The same as dispose(), for `using w = ...` (installed only where the engine defines Symbol.dispose). */
  [Symbol.dispose](): void;
}

/** A matmul's right operand B [K, N], packed once into wasm memory. Made by packMatMul. */
export class PackedMatMul<M extends RequantMode = RequantMode> {
  #private;
  /** Internal: use packMatMul. */
  private constructor();
  /** The requantization mode of calls that do not override it. */
  readonly mode: M;
  /** Columns of B (output channels). */
  readonly n: number;
  /** Rows of B (the depth K). */
  readonly k: number;
  /** True once dispose() was called; operators then throw on these weights. */
  get disposed(): boolean;
  /** Frees the packed weights. Idempotent. */
  dispose(): void;
  /** The same as dispose(), for `using w = ...` (installed only where the engine defines Symbol.dispose). */
  [Symbol.dispose](): void;
}

/**
 * Packs a [outFeatures, inFeatures] weight (qint8 / quint8, per tensor or per channel on axis 0) for linear().
 * bias: one value per output feature, or null. options: { semantics = 'pytorch-qnnpack', mode } (mode: a
 * requantization form, by default the semantics').
 * Throws a TypeError for a non-QTensor or qint32 weight, an unknown mode, or a non-Int32Array bias in mode 'onnx';
 * a RangeError for a weight that is not 2-D, has an empty dimension or inFeatures >= 32768, is per channel on
 * another axis, or a bias of the wrong length.
 */
export function packLinear<M extends RequantMode = never, S extends Semantics = 'pytorch-qnnpack'>(
  weight: QTensor<ActivationDtype>,
  bias?: BiasFor<ModeOf<M, S>> | null,
  options?: PackLinearOptions<M, S>,
): PackedLinear<NotInferred<ModeOf<M, S>>>;

/**
 * Packs a convolution weight [outChannels, inChannels / groups, kH, kW] (qint8 / quint8, per tensor or per channel
 * on axis 0) for conv2d(). bias: one value per output channel, or null. options: { stride = 1, padding = 0
 * (number, [h, w] or [top, left, bottom, right]), dilation = 1, groups = 1, semantics = 'pytorch-qnnpack', mode }.
 * Throws a TypeError for a non-QTensor or qint32 weight, an unknown mode, or a non-Int32Array bias in mode 'onnx';
 * a RangeError for a weight that is not 4-D or has an empty dimension, a bad stride / padding / dilation / groups,
 * per-channel qparams on another axis, or a bias of the wrong length.
 */
export function packConv2d<M extends RequantMode = never, S extends Semantics = 'pytorch-qnnpack'>(
  weight: QTensor<ActivationDtype>,
  bias?: BiasFor<ModeOf<M, S>> | null,
  options?: PackConv2dOptions<M, S>,
): PackedConv2d<NotInferred<ModeOf<M, S>>>;

/**
 * Packs a matmul's right operand b [K, N] (qint8 / quint8, per tensor or per column on axis 1) for matmul().
 * options: { semantics = 'onnx', mode }. Throws a TypeError for a non-QTensor or qint32 b or an unknown mode; a RangeError for
 * a b that is not 2-D or is per channel on another axis.
 */
export function packMatMul<M extends RequantMode = never, S extends Semantics = 'onnx'>(
  b: QTensor<ActivationDtype>,
  options?: PackMatMulOptions<M, S>,
): PackedMatMul<NotInferred<ModeOf<M, S>>>;

// ---- linear, conv2d, matmul ------------------------------------------------------------------

/**
 * Quantized linear layer (torch.ao.nn.quantized.Linear): x [..., inFeatures] -> [..., outFeatures].
 * With options.mode 'none': the exact int32 sums as a qint32 tensor (scale 1); the output qparams are not used.
 */
export function linear(x: QTensor<ActivationDtype>, weights: PackedLinear, options: Int32OutputOptions): QTensor<'qint32'>;
/** Weights packed with mode 'none' and no override: the exact int32 sums as a qint32 tensor (scale 1). */
export function linear(x: QTensor<ActivationDtype>, weights: PackedLinear<'none'>, options: { mode?: 'none' }): QTensor<'qint32'>;
/**
 * Quantized linear layer (torch.ao.nn.quantized.Linear): x [..., inFeatures] -> [..., outFeatures], a new contiguous
 * tensor. x: per tensor, quint8 or qint8. options: { scale, zeroPoint, dtype = 'quint8', relu = false, clampMin,
 * clampMax, mode } (mode: default the weights'). Throws a TypeError for a bad input, weights not from packLinear, a
 * bad dtype or relu, or mode 'onnx' with a float bias; a RangeError for a bad scale, zero point or clamp, or an input
 * not ending in inFeatures; an Error once the weights were disposed.
 */
export function linear<O extends ActivationDtype = 'quint8'>(
  x: QTensor<ActivationDtype>,
  weights: PackedLinear<Int8RequantMode>,
  options: QuantizedOutputOptions<O>,
): QTensor<NotInferred<O>>;
/** Quantized linear layer with a requantizing mode or semantics given for the call (overriding the weights'). */
export function linear<O extends ActivationDtype = 'quint8'>(
  x: QTensor<ActivationDtype>,
  weights: PackedLinear,
  options: QuantizedOutputOptions<O> & ({ mode: Int8RequantMode } | { semantics: Semantics }),
): QTensor<NotInferred<O>>;
/** Quantized linear layer whose mode is not known statically: qint32 when it is 'none'. */
export function linear<O extends ActivationDtype = 'quint8'>(
  x: QTensor<ActivationDtype>,
  weights: PackedLinear,
  options: OutputOptions<O>,
): QTensor<NotInferred<O> | 'qint32'>;

/**
 * Quantized 2-D convolution (torch.ao.nn.quantized.Conv2d): x [N, C, H, W] -> [N, outC, outH, outW], returned
 * stored channels-last. With options.mode 'none': the exact int32 sums as a qint32 tensor (scale 1).
 */
export function conv2d(x: QTensor<ActivationDtype>, weights: PackedConv2d, options: Int32OutputOptions): QTensor<'qint32'>;
/** Weights packed with mode 'none' and no override: the exact int32 sums as a qint32 tensor (scale 1). */
export function conv2d(x: QTensor<ActivationDtype>, weights: PackedConv2d<'none'>, options: { mode?: 'none' }): QTensor<'qint32'>;
/**
 * Quantized 2-D convolution (torch.ao.nn.quantized.Conv2d): x [N, C, H, W] -> [N, outC, outH, outW], returned
 * stored channels-last (NCHW shape, NHWC memory). x: per tensor, quint8 or qint8, any layout. options: { scale,
 * zeroPoint, dtype = 'quint8', relu = false, clampMin, clampMax, mode } (mode: default the weights'). Throws a
 * TypeError for a bad input, weights not from packConv2d, a bad dtype or relu, or mode 'onnx' with a float bias; a
 * RangeError for a bad scale, zero point or clamp, an input not [N, inC, H, W], or a kernel that does not fit the
 * padded input; an Error once the weights were disposed.
 */
export function conv2d<O extends ActivationDtype = 'quint8'>(
  x: QTensor<ActivationDtype>,
  weights: PackedConv2d<Int8RequantMode>,
  options: QuantizedOutputOptions<O>,
): QTensor<NotInferred<O>>;
/** Quantized 2-D convolution with a requantizing mode or semantics given for the call (overriding the weights'). */
export function conv2d<O extends ActivationDtype = 'quint8'>(
  x: QTensor<ActivationDtype>,
  weights: PackedConv2d,
  options: QuantizedOutputOptions<O> & ({ mode: Int8RequantMode } | { semantics: Semantics }),
): QTensor<NotInferred<O>>;
/** Quantized 2-D convolution whose mode is not known statically: qint32 when it is 'none'. */
export function conv2d<O extends ActivationDtype = 'quint8'>(
  x: QTensor<ActivationDtype>,
  weights: PackedConv2d,
  options: OutputOptions<O>,
): QTensor<NotInferred<O> | 'qint32'>;

/**
 * Quantized matmul (ONNX QLinearMatMul): a [..., M, K] x b [..., K, N] -> [..., M, N]. With options.mode 'none':
 * the exact int32 sums as a qint32 tensor (scale 1), as matmulInteger.
 */
export function matmul(
  a: QTensor<ActivationDtype>,
  b: QTensor<ActivationDtype> | PackedMatMul,
  options: Int32OutputOptions,
): QTensor<'qint32'>;
/** b packed with mode 'none' and no override: the exact int32 sums as a qint32 tensor (scale 1). */
export function matmul(a: QTensor<ActivationDtype>, b: PackedMatMul<'none'>, options: { mode?: 'none' }): QTensor<'qint32'>;
/**
 * Quantized matmul (ONNX QLinearMatMul): a [..., M, K] x b [..., K, N] -> [..., M, N], a new contiguous tensor,
 * with numpy broadcasting of the batch dimensions. a: per tensor, quint8 or qint8. b: a QTensor (packed per call;
 * per channel on its last axis allowed) or a PackedMatMul (2-D). options: { scale, zeroPoint, dtype = 'quint8',
 * relu, clampMin, clampMax, mode } (mode: default b's, 'onnx' for a QTensor b). Throws a TypeError for a bad a or
 * b, dtype or relu, or an unknown mode; a RangeError for a bad scale, zero point or clamp, an a or b of fewer than 2
 * dimensions, K that differs, or batch shapes that do not broadcast; an Error once b was disposed.
 */
export function matmul<O extends ActivationDtype = 'quint8'>(
  a: QTensor<ActivationDtype>,
  b: QTensor<ActivationDtype> | PackedMatMul<Int8RequantMode>,
  options: QuantizedOutputOptions<O>,
): QTensor<NotInferred<O>>;
/** Quantized matmul with a requantizing mode or semantics given for the call (overriding b's). */
export function matmul<O extends ActivationDtype = 'quint8'>(
  a: QTensor<ActivationDtype>,
  b: PackedMatMul,
  options: QuantizedOutputOptions<O> & ({ mode: Int8RequantMode } | { semantics: Semantics }),
): QTensor<NotInferred<O>>;
/** Quantized matmul whose mode is not known statically: qint32 when it is 'none'. */
export function matmul<O extends ActivationDtype = 'quint8'>(
  a: QTensor<ActivationDtype>,
  b: QTensor<ActivationDtype> | PackedMatMul,
  options: OutputOptions<O>,
): QTensor<NotInferred<O> | 'qint32'>;

// ---- dynamic quantization (ONNX DynamicQuantizeLinear, MatMulInteger, ConvInteger) -----------

/** The result of dynamicQuantizeLinear. */
export interface DynamicQuantizeResult {
  /** The quantized data (quint8); for an all-zero input it carries scale 1 so that it stays a valid tensor. */
  y: QTensor<'quint8'>;
  /** ONNX's y_scale (float32; 0 for an all-zero input). */
  scale: number;
  /** ONNX's y_zero_point. */
  zeroPoint: number;
}

/**
 * ONNX DynamicQuantizeLinear: uint8 qparams from the data's range (widened to include 0), then the onnx-rule
 * quantize. shape: default [data.length] (a non-array shape is ignored). Returns { y, scale, zeroPoint }. Throws a
 * TypeError when data is not numbers; a RangeError when its length does not match shape, or it holds NaN or Infinity.
 */
export function dynamicQuantizeLinear(data: NumberArray, shape?: readonly number[]): DynamicQuantizeResult;

/** Result of dynamicLinear: the float output and the qparams the input was quantized with (null for 'onnx'). */
export interface DynamicLinearResult {
  data: Float32Array;
  shape: number[];
  scale: number | null;
  zeroPoint: number | null;
}

/**
 * Dynamic quantized linear (torch.ao.nn.quantized.dynamic.Linear, quantize_dynamic's layer; com.microsoft
 * DynamicQuantizeMatMul): float x [..., inFeatures] quantized per call with qparams from its own range, times the
 * packed int8 weights, plus their float bias, as float. Forms (semantics family 'dynamic', or mode): 'qnnpack'
 * (PyTorch's qnnpack engine: [0, 255], (float)acc * (x_s * w_s) + bias), 'fbgemm' (PyTorch 2.x's fbgemm / x86
 * engines: [0, 127] with reduceRange (default true, as the module), fma((float)acc, x_s * w_s, bias)), 'onnx'
 * (ONNX Runtime's DynamicQuantizeMatMul; pack its weights with mode 'none', as mode 'onnx' takes int32 biases only).
 * Throws a TypeError for bad weights or an int32 bias; a RangeError for a
 * shape that does not end in inFeatures or non-finite x.
 */
export function dynamicLinear(
  x: NumberArray,
  shape: readonly number[],
  weights: PackedLinear,
  options?: SemanticsOptions & { mode?: 'qnnpack' | 'fbgemm' | 'onnx'; relu?: boolean; reduceRange?: boolean; rounding?: Rounding },
): DynamicLinearResult;

/**
 * ONNX MatMulInteger: the exact int32 sums of (a - a_zp)(b - b_zp) as a qint32 tensor (scale 1);
 * matmul(a, b, { mode: 'none' }).
 */
export function matmulInteger(a: QTensor<ActivationDtype>, b: QTensor<ActivationDtype> | PackedMatMul): QTensor<'qint32'>;

/**
 * ONNX ConvInteger: the exact int32 sums as a qint32 tensor (scale 1), stored channels-last; weights from
 * packConv2d(w, null, { mode: 'none', ... }). conv2d(x, weights, { mode: 'none' }).
 */
export function convInteger(x: QTensor<ActivationDtype>, weights: PackedConv2d): QTensor<'qint32'>;

// ---- elementwise -----------------------------------------------------------------------------

/** Output options of add and mul: the output qparams (zeroPoint in the inputs' dtype range), a fused ReLU, the semantics. */
export interface ElementwiseOutputOptions extends QParams, SemanticsOptions {
  /** add_relu / mul_relu. Default false. */
  relu?: boolean;
}

/** Options of add: the output qparams, a fused ReLU, and which PyTorch kernel to reproduce. */
export interface AddOptions extends ElementwiseOutputOptions {
  /**
   * 'qnnpack' (default): PyTorch's qnnpack engine: same shapes take its fixed-point kernels (QNNPACK for quint8,
   * XNNPACK for qint8), broadcasting its float kernel. 'float': the float kernel of PyTorch 1.13's x86 / fbgemm /
   * onednn engines (dequantize, add, quantize), with its AVX2 vector blocks. 'fbgemm': that kernel in PyTorch
   * 2.x's x86 builds, whose scalar tail adds the zero point before rounding. 'onnx': com.microsoft QLinearAdd as
   * ONNX Runtime computes it ((a_s (a - za) + b_s (b - zb)) / y_s, clamped, + y_z, rounded half to even; no relu).
   */
  mode?: 'qnnpack' | 'qnnpack2' | 'float' | 'fbgemm' | 'onnx';
}

/**
 * Quantized add (torch.ops.quantized.add / add_relu, FloatFunctional.add) of a and b (same dtype, per tensor)
 * with numpy broadcasting. options: { scale, zeroPoint, relu = false, semantics = 'pytorch-qnnpack', mode } (mode
 * 'fbgemm' is the 'float' form, the x86 / fbgemm engine's; semantics 'pytorch-fbgemm' picks it too). Throws a TypeError for
 * bad inputs, dtypes that differ, a bad relu or mode; a RangeError for shapes that do not broadcast, a bad scale or
 * zero point, or (fixed point) scale ratios a.scale / scale, b.scale / scale outside [2^-14, 2^8).
 */
export function add<D extends ActivationDtype>(a: QTensor<D>, b: QTensor<NotInferred<D>>, options: AddOptions): QTensor<D>;

/**
 * Options of mul: mode 'pytorch' (also 'qnnpack'; the default of every PyTorch semantics) is PyTorch's kernel; 'onnx'
 * is com.microsoft QLinearMul as ONNX Runtime computes it (no relu).
 */
export interface MulOptions extends ElementwiseOutputOptions {
  mode?: 'pytorch' | 'qnnpack' | 'onnx';
}

/**
 * Quantized mul (torch.ops.quantized.mul / mul_relu) with numpy broadcasting:
 * rint((float)((a - za)(b - zb)) * ((a_s * b_s) * (1 / y_s))) + yz. options: { scale, zeroPoint, relu = false }.
 * Throws a TypeError for bad inputs, dtypes that differ or a bad relu; a RangeError for shapes that do not broadcast
 * or a bad scale or zero point.
 */
export function mul<D extends ActivationDtype>(a: QTensor<D>, b: QTensor<NotInferred<D>>, options: MulOptions): QTensor<D>;

/**
 * Quantized cat (torch.ops.quantized.cat): every input requantized to the output qparams (quantize(dequantize(q)),
 * by options.rounding, 'torch' by default), joined along dim. options: { scale, zeroPoint }, each by default the
 * first input's. Throws a
 * TypeError for an empty array, a bad input or dtypes that differ; a RangeError for a bad dim, shapes that differ
 * outside dim, or a bad scale or zero point.
 */
export function cat<D extends ActivationDtype>(
  tensors: readonly QTensor<D>[],
  dim: number,
  options?: Partial<QParams> & SemanticsOptions & { rounding?: Rounding },
): QTensor<D>;

/**
 * clamp (torch.clamp): min(max(q, quantize(minValue)), quantize(maxValue)), the bounds quantized with the INPUT's
 * qparams (by options.rounding, torch's rule by default; 'fbgemm' for PyTorch 2.x's x86 builds); the output keeps
 * the input's qparams. Defaults -Infinity and Infinity. As in torch, minValue > maxValue is allowed and gives
 * quantize(maxValue) everywhere. Throws a TypeError for a bad input or a bound that is not a number (or is NaN).
 */
export function clamp<D extends ActivationDtype>(x: QTensor<D>, minValue?: number, maxValue?: number, options?: RoundingOptions): QTensor<D>;

/**
 * hardtanh (torch.ao.nn.quantized.functional.hardtanh): clamp with minValue <= maxValue required (RangeError
 * otherwise). Defaults -1 and 1.
 */
export function hardtanh<D extends ActivationDtype>(x: QTensor<D>, minValue?: number, maxValue?: number, options?: RoundingOptions): QTensor<D>;

/** relu: max(q, zero point), the input's qparams kept. */
export function relu<D extends ActivationDtype>(x: QTensor<D>): QTensor<D>;

/** relu6: min(max(q, zero point), quantize(6.0)), the input's qparams kept; options.rounding as for clamp. */
export function relu6<D extends ActivationDtype>(x: QTensor<D>, options?: RoundingOptions): QTensor<D>;

/**
 * Quantized hardswish (torch.ao.nn.quantized.Hardswish). options: { scale, zeroPoint, mode }. mode 'qnnpack'
 * (default): quint8 only, QNNPACK's table; 'fbgemm': PyTorch 2.x's generic kernel on x86 (quint8 or qint8, vector
 * blocks of 64). Throws a TypeError for a bad input (non-quint8 in 'qnnpack'); a RangeError for a bad scale or zero
 * point.
 */
export function hardswish(x: QTensor<'quint8'>, options: QParams & { semantics?: 'pytorch-qnnpack'; mode?: 'qnnpack' }): QTensor<'quint8'>;
export function hardswish<D extends ActivationDtype>(
  x: QTensor<D>,
  options: QParams & ({ mode: 'fbgemm' } | { semantics: 'pytorch-fbgemm' | 'pytorch-x86' }),
): QTensor<D>;

/**
 * Quantized sigmoid (torch.sigmoid). Form 'qnnpack' (the default): quint8 only, QNNPACK's table, output qparams
 * (1/256, 0); 'fbgemm' (semantics 'pytorch-fbgemm' / 'pytorch-x86'): PyTorch 2.x's generic kernel on x86, (1/256, 0)
 * for quint8 and (1/256, -128) for qint8; 'onnx': com.microsoft QLinearSigmoid (MLAS's logistic in a table), to the
 * given output qparams.
 */
export function sigmoid(x: QTensor<'quint8'>, options?: { semantics?: 'pytorch-qnnpack'; mode?: 'qnnpack' }): QTensor<'quint8'>;
export function sigmoid<D extends ActivationDtype>(x: QTensor<D>, options: { mode: 'fbgemm' } | { semantics: 'pytorch-fbgemm' | 'pytorch-x86' }): QTensor<D>;
export function sigmoid<D extends ActivationDtype>(x: QTensor<D>, options: QParams & ({ semantics: 'onnx' } | { mode: 'onnx' })): QTensor<D>;

/**
 * Quantized leaky_relu (torch.ao.nn.quantized.LeakyReLU / functional.leaky_relu): y = x > 0 ? x : x * negativeSlope
 * (default 0.01), requantized to { scale, zeroPoint } (each by default the input's). Reproduces PyTorch's generic CPU
 * kernel on AVX2; exact for tensors of up to 32768 elements. mode 'float' (default): PyTorch 1.13's; 'fbgemm':
 * PyTorch 2.x's x86 builds (the tail adds the zero point before rounding). Throws a TypeError for a bad input or a
 * non-finite negativeSlope; a RangeError for a bad scale or zero point.
 */
export function leakyRelu<D extends ActivationDtype>(
  x: QTensor<D>,
  negativeSlope?: number,
  options?: Partial<QParams> & SemanticsOptions & { mode?: 'generic' | 'float' | 'fbgemm' | 'onnx' },
): QTensor<D>;

// ---- pooling ---------------------------------------------------------------------------------

/**
 * Which PyTorch engine's pooling kernels to reproduce: 'qnnpack' (default; QNNPACK for quint8 where PyTorch's qnnpack
 * engine takes it), 'generic' (PyTorch 1.13's other engines), 'fbgemm' (PyTorch 2.x's x86 builds: the generic
 * kernels, whose channels-last scalar loop, taken when C == 1 or H * W == 1, adds the zero point before rounding) or
 * 'qnnpack2' (PyTorch 2.x's qnnpack engine in x86 builds: 'qnnpack' where QNNPACK runs, 'fbgemm' elsewhere).
 */
export type PoolMode = 'qnnpack' | 'qnnpack2' | 'generic' | 'fbgemm' | 'onnx';

/** Options of maxPool2d. */
export interface MaxPool2dOptions extends SemanticsOptions {
  /** Required. */
  kernelSize: IntPair;
  /** Default kernelSize. */
  stride?: IntPair | null;
  /** At most half the kernel. Default 0. */
  padding?: IntPair;
  /** Default 1. */
  dilation?: IntPair;
  /** Default false. */
  ceilMode?: boolean;
  /** Default 'qnnpack'. */
  mode?: PoolMode;
}

/** Options of avgPool2d. */
export interface AvgPool2dOptions extends SemanticsOptions {
  /** Required. */
  kernelSize: IntPair;
  /** Default kernelSize (semantics 'onnx': 1). */
  stride?: IntPair | null;
  /** At most half the kernel. Default 0. Semantics 'onnx' also takes [top, left, bottom, right]. */
  padding?: IntPair | readonly [number, number, number, number];
  /** Output qparams: semantics 'onnx' only (QLinearAveragePool's y_scale / y_zero_point); default the input's. */
  scale?: number;
  zeroPoint?: number;
  /** Default false. */
  ceilMode?: boolean;
  /** Default true (ONNX's 0 with semantics 'onnx'; ignored by the qnnpack form: quint8 without ceilMode). */
  countIncludePad?: boolean;
  /** A positive integer, or null for none (the default; ignored by the qnnpack form). */
  divisorOverride?: number | null;
  /** Default 'qnnpack'. */
  mode?: PoolMode;
  /**
   * PyTorch's ATen dispatch level (torch.backends.cpu.get_cpu_capability(), lower case): which channels its
   * channels-last vector loops round (form 'fbgemm'). Default 'avx512'.
   */
  cpuCapability?: 'avx512' | 'avx2' | 'default';
}

/**
 * Quantized max_pool2d of x [N, C, H, W] (per tensor, quint8 or qint8); the output keeps the input's qparams and is
 * stored channels-last. options: { kernelSize, stride = kernelSize, padding = 0, dilation = 1, ceilMode = false }.
 * Without ceilMode on quint8, window positions outside the input read as the nearest edge pixel (PyTorch's qnnpack
 * engine; visible only when dilation > 1 meets padding), and are skipped elsewhere (its generic kernel).
 * Throws a TypeError for a bad input; a RangeError for an input that is not 4-D, a bad kernelSize, stride, padding
 * or dilation, or a window that does not fit.
 */
export function maxPool2d<D extends ActivationDtype>(x: QTensor<D>, options: MaxPool2dOptions): QTensor<D>;

/**
 * Quantized avg_pool2d of x [N, C, H, W] (per tensor, quint8 or qint8); the output keeps the input's qparams and is
 * stored channels-last. options: { kernelSize, stride = kernelSize, padding = 0, ceilMode = false,
 * countIncludePad = true, divisorOverride }. Like PyTorch's qnnpack engine, quint8 without ceilMode counts padding as
 * the zero point and divides by kH * kW whatever countIncludePad and divisorOverride say; the other calls follow the
 * generic kernel. Throws a TypeError for a bad input; a RangeError for an input that is not 4-D, a bad kernelSize,
 * stride, padding or divisorOverride, or a window that does not fit.
 */
export function avgPool2d<D extends ActivationDtype>(x: QTensor<D>, options: AvgPool2dOptions): QTensor<D>;

/**
 * Quantized adaptive_avg_pool2d of x [N, C, H, W] to outputSize ([h, w] or a number); the output keeps the input's
 * qparams and is stored channels-last. Sizes that divide the input run as a QNNPACK average pool (quint8); others as
 * PyTorch's generic kernel, which averages the raw integers without subtracting the zero point. Throws a TypeError
 * for a bad input; a RangeError for an input that is not 4-D or a bad outputSize.
 */
export function adaptiveAvgPool2d<D extends ActivationDtype>(
  x: QTensor<D>,
  outputSize: IntPair,
  options?: SemanticsOptions & { mode?: PoolMode; cpuCapability?: 'avx512' | 'avx2' | 'default' },
): QTensor<D>;

/**
 * Quantized mean of x [N, C, H, W] over the spatial dimensions [2, 3], the input's qparams kept: [N, C], or
 * [N, C, 1, 1] (channels-last) with keepdim (default false). mode 'qnnpack' (default): PyTorch's qnnpack engine,
 * QNNPACK's global average pool for quint8; 'generic' / 'fbgemm': the x86 / fbgemm engines. qint8 (any mode) and
 * quint8 outside 'qnnpack' average the raw integers, rint((float)sum(q) / n). Throws a RangeError for dims other than [2, 3] or
 * an input that is not 4-D; a TypeError for a bad input or mode.
 */
export function mean<D extends ActivationDtype>(
  x: QTensor<D>,
  dims: readonly [2, 3],
  keepdim?: boolean,
  options?: SemanticsOptions & Partial<QParams> & { mode?: PoolMode },
): QTensor<D>;

// ---- observers (torch.ao.quantization) -------------------------------------------------------

/** torch raises NotImplementedError for option combinations an observer class does not support. */
export class NotImplementedError extends Error {
  constructor(message?: string);
  name: 'NotImplementedError';
}

/**
 * Options shared by the observers that choose qparams (torch's UniformQuantizationObserverBase), validated in
 * torch's order with torch's messages. quantMin and quantMax (32-bit integers, default null: the dtype's range) go
 * together: the range must include 0, quantMin < quantMax, and hold at most 256 values for qint8 or 2^31 for qint32.
 */
export type ObserverOptions<S extends ObserverQScheme = ObserverQScheme> = {
  /** Default 'quint8'. */
  dtype?: QDtype;
  /**
   * Default 'per_tensor_affine' (per-tensor observers) or 'per_channel_affine' (per-channel observers); a scheme of
   * the other kind throws a NotImplementedError.
   */
  qscheme?: S;
  /** Halve the default range (quint8 [0, 127], qint8 [-64, 63]; ignored for qint32). Default false. */
  reduceRange?: boolean;
  /** Lower bound of the scale, finite and >= 0 (kept as float32). Default FLOAT32_EPS (2^-23). */
  eps?: number;
} & ({ quantMin?: null; quantMax?: null } | { quantMin: number; quantMax: number });

/** Options of MinMaxObserver. */
export type MinMaxObserverOptions = ObserverOptions<PerTensorObserverQScheme>;

/** Options of MovingAverageMinMaxObserver. */
export type MovingAverageMinMaxObserverOptions = MinMaxObserverOptions & {
  /** c in min += c * (cur_min - min): a finite number. Default 0.01. */
  averagingConstant?: number;
};

/** Options of PerChannelMinMaxObserver. */
export type PerChannelMinMaxObserverOptions = ObserverOptions<PerChannelObserverQScheme> & {
  /** The channel axis, an integer; negative counts from the end (observe checks it against the rank). Default 0. */
  chAxis?: number;
};

/** Options of MovingAveragePerChannelMinMaxObserver. */
export type MovingAveragePerChannelMinMaxObserverOptions = PerChannelMinMaxObserverOptions & {
  /** c in min += c * (cur_min - min), per channel: a finite number. Default 0.01. */
  averagingConstant?: number;
};

/** Options of HistogramObserver. */
export type HistogramObserverOptions = MinMaxObserverOptions & {
  /** Number of histogram bins, an integer in [1, 2^24]. Default 2048. */
  bins?: number;
  /** Upsampling factor of the histogram merge, an integer in [1, 2^20]. Default 128. */
  upsampleRate?: number;
};

/** Options of FixedQParamsObserver (torch's scale, zero_point, dtype, qscheme, quant_min, quant_max). */
export interface FixedQParamsObserverOptions {
  /** Required: finite and > 0 as float32 (kept as float32). */
  scale: number;
  /** Required: an integer. */
  zeroPoint: number;
  /** Default 'quint8'. */
  dtype?: QDtype;
  /** Any key of QSCHEMES. Default 'per_tensor_affine'. */
  qscheme?: ObserverQScheme;
  /** Stored as given. Default 0. */
  quantMin?: number;
  /** Stored as given. Default 255. */
  quantMax?: number;
}

/** Options of PlaceholderObserver. */
export interface PlaceholderObserverOptions {
  /** Stored as given (not checked). Default 'float32'. */
  dtype?: string;
}

/** What MinMaxObserver.state() returns (+Infinity and -Infinity before any data). */
export interface MinMaxObserverState {
  minVal: number;
  maxVal: number;
}

/** What the per-channel observers' state() returns: copies of the running min and max (both null before any data). */
export type PerChannelMinMaxObserverState =
  | { minVal: OwnedFloat32Array; maxVal: OwnedFloat32Array }
  | { minVal: null; maxVal: null };

/** What HistogramObserver.state() returns: the running range and a copy of the histogram. */
export interface HistogramObserverState {
  minVal: number;
  maxVal: number;
  histogram: OwnedFloat32Array;
  bins: number;
}

/** The range HistogramObserver.search() picks. */
export interface HistogramSearchRange {
  min: number;
  max: number;
}

// torch's UniformQuantizationObserverBase: the validated options. Not exported (see `export {}` at the end).
declare abstract class UniformObserver<S extends ObserverQScheme> {
  /** The class name, used in error messages. */
  readonly name: string;
  readonly dtype: QDtype;
  readonly qscheme: S;
  readonly reduceRange: boolean;
  /** True when quantMin and quantMax were given. */
  readonly hasCustomRange: boolean;
  /** eps as float32. */
  readonly eps: number;
  /** The integer range in use (the given one, or the dtype's, reduced with reduceRange). */
  readonly quantMin: number;
  readonly quantMax: number;
}

/**
 * MinMaxObserver: running min and max of everything observed (torch.ao.quantization.MinMaxObserver).
 * options: { dtype = 'quint8', qscheme = 'per_tensor_affine', reduceRange = false, quantMin, quantMax, eps }.
 * Throws a TypeError for an unknown qscheme or dtype, a non-boolean reduceRange, or quantMin without quantMax; a
 * RangeError for a bad eps or quantMin / quantMax; a NotImplementedError for a per-channel qscheme, or a symmetric
 * qscheme with reduceRange on quint8.
 */
export class MinMaxObserver extends UniformObserver<PerTensorObserverQScheme> {
  constructor(options?: MinMaxObserverOptions);
  /** Running minimum (+Infinity before any data). */
  readonly minVal: number;
  /** Running maximum (-Infinity before any data). */
  readonly maxVal: number;
  /**
   * Records data (a Float32Array of the given shape, default [data.length]); empty data is ignored, as in torch.
   * NaN propagates into the range. Throws a TypeError for data that is not numbers or a bad shape; a RangeError
   * when shape does not hold data.length elements.
   */
  observe(data: NumberArray, shape?: Shape): this;
  /**
   * { scale, zeroPoint } as torch's calculate_qparams ((1.0, 0) before any data). Throws a RangeError when the
   * observed range is not finite.
   */
  calculateQparams(): QParams;
  /** Forgets everything observed. */
  reset(): this;
  /** { minVal, maxVal }. */
  state(): MinMaxObserverState;
}

/**
 * MovingAverageMinMaxObserver: min += c * (cur_min - min) in float32 after the first batch (which sets min and max).
 * options: those of MinMaxObserver and { averagingConstant = 0.01 } (a finite number, else a TypeError).
 */
export class MovingAverageMinMaxObserver extends MinMaxObserver {
  constructor(options?: MovingAverageMinMaxObserverOptions);
  readonly averagingConstant: number;
}

/**
 * PerChannelMinMaxObserver: running min and max per index of axis chAxis.
 * options: { dtype = 'quint8', qscheme = 'per_channel_affine', reduceRange = false, quantMin, quantMax, eps,
 * chAxis = 0 }. Throws as MinMaxObserver (a NotImplementedError for a per-tensor qscheme), and a TypeError for a
 * non-integer chAxis.
 */
export class PerChannelMinMaxObserver extends UniformObserver<PerChannelObserverQScheme> {
  constructor(options?: PerChannelMinMaxObserverOptions);
  /** The channel axis as given (may be negative). */
  readonly chAxis: number;
  /** Running minimum per channel (null before any data). */
  readonly minVal: OwnedFloat32Array | null;
  /** Running maximum per channel (null before any data). */
  readonly maxVal: OwnedFloat32Array | null;
  /**
   * Records data of the given shape (default [data.length]); empty data is ignored, as in torch. Throws a TypeError
   * for data that is not numbers or a bad shape; a RangeError when shape does not hold data.length elements, chAxis
   * is outside [-rank, rank), or the number of channels differs from earlier data.
   */
  observe(data: NumberArray, shape?: Shape): this;
  /**
   * { scales: Float32Array, zeroPoints: Int32Array }; ([1], [0]) before anything was observed, as torch. Throws a
   * RangeError when an observed range is not finite.
   */
  calculateQparams(): PerChannelQParams;
  /** Forgets everything observed. */
  reset(): this;
  /** { minVal, maxVal }: copies, or null before any data. */
  state(): PerChannelMinMaxObserverState;
}

/**
 * MovingAveragePerChannelMinMaxObserver: PerChannelMinMaxObserver with min += c * (cur_min - min) per channel after
 * the first batch. options: those of PerChannelMinMaxObserver and { averagingConstant = 0.01 } (a finite number,
 * else a TypeError).
 */
export class MovingAveragePerChannelMinMaxObserver extends PerChannelMinMaxObserver {
  constructor(options?: MovingAveragePerChannelMinMaxObserverOptions);
  readonly averagingConstant: number;
}

/**
 * HistogramObserver: a running histogram (bins = 2048, merged across calls by upsampling with
 * upsampleRate = 128) whose L2 search (_non_linear_param_search) narrows [min, max] before the
 * scale and zero point are chosen. Exactly torch 1.13's float arithmetic, including its histc call
 * with int()-truncated bounds (values outside [trunc(min), trunc(max)] are not counted there).
 * options: those of MinMaxObserver and { bins = 2048, upsampleRate = 128 }. Throws as MinMaxObserver (but accepts a
 * symmetric qscheme with reduceRange on quint8, as torch), and a RangeError for a bad bins or upsampleRate.
 */
export class HistogramObserver extends UniformObserver<PerTensorObserverQScheme> {
  constructor(options?: HistogramObserverOptions);
  readonly bins: number;
  readonly upsampleRate: number;
  /** 2^bits of the dtype (256 for quint8 and qint8). */
  readonly dstNbins: number;
  /** The running histogram over [minVal, maxVal]. */
  readonly histogram: OwnedFloat32Array;
  /** Running minimum (+Infinity before any data). */
  readonly minVal: number;
  /** Running maximum (-Infinity before any data). */
  readonly maxVal: number;
  /**
   * Records data of the given shape (default [data.length]); empty data is ignored. Throws a TypeError for data
   * that is not numbers or a bad shape; a RangeError when shape does not hold data.length elements, the data holds
   * NaN or Infinity, or its range is too far from the histogram's for torch's merge.
   */
  observe(data: NumberArray, shape?: Shape): this;
  /** The [min, max] that _non_linear_param_search picks from the histogram: { min, max }, or null before any data. */
  search(): HistogramSearchRange | null;
  /** { scale, zeroPoint }; (1.0, 0) before anything was observed, as torch (which also warns). */
  calculateQparams(): QParams;
  /** Forgets everything observed (a new, empty histogram). */
  reset(): this;
  /** { minVal, maxVal, histogram, bins }. */
  state(): HistogramObserverState;
}

/**
 * FixedQParamsObserver: observe does nothing; calculateQparams returns the given qparams.
 * options (required): { scale, zeroPoint, dtype = 'quint8', qscheme = 'per_tensor_affine', quantMin = 0,
 * quantMax = 255 }. Throws a RangeError for a bad scale; a TypeError for a non-integer zeroPoint or an unknown dtype
 * or qscheme.
 */
export class FixedQParamsObserver {
  constructor(options: FixedQParamsObserverOptions);
  /** float32. */
  readonly scale: number;
  readonly zeroPoint: number;
  readonly dtype: QDtype;
  readonly qscheme: ObserverQScheme;
  readonly quantMin: number;
  readonly quantMax: number;
  /** Does nothing (its arguments are not even checked). */
  observe(data?: NumberArray, shape?: Shape): this;
  /** { scale, zeroPoint }, as given. */
  calculateQparams(): QParams;
  /** Does nothing. */
  reset(): this;
  /** { scale, zeroPoint }. */
  state(): QParams;
}

/** PlaceholderObserver: carries a dtype only; calculateQparams throws, as in torch. options: { dtype = 'float32' }. */
export class PlaceholderObserver {
  constructor(options?: PlaceholderObserverOptions);
  readonly dtype: string;
  /** Does nothing (its arguments are not even checked). */
  observe(data?: NumberArray, shape?: Shape): this;
  /** Always throws an Error: calculate_qparams should not be called for PlaceholderObserver. */
  calculateQparams(): never;
  /** Does nothing. */
  reset(): this;
}

/** The backends of defaultQConfig. */
export type QConfigBackend = 'x86' | 'fbgemm' | 'qnnpack';

/** A default qconfig: factories each returning a fresh observer with torch's arguments. */
export interface QConfig<
  W extends MinMaxObserver | PerChannelMinMaxObserver = MinMaxObserver | PerChannelMinMaxObserver,
> {
  /** HistogramObserver({ reduceRange }): true for 'x86' and 'fbgemm', false for 'qnnpack'. */
  activation: () => HistogramObserver;
  /**
   * 'x86', 'fbgemm': PerChannelMinMaxObserver({ dtype: 'qint8', qscheme: 'per_channel_symmetric' });
   * 'qnnpack': MinMaxObserver({ dtype: 'qint8', qscheme: 'per_tensor_symmetric' }).
   */
  weight: () => W;
}

/**
 * torch.ao.quantization.get_default_qconfig(backend) for 'x86' (the default), 'fbgemm' or 'qnnpack':
 * { activation, weight }, each a factory returning a fresh observer with torch's arguments.
 * Throws a TypeError for another backend.
 */
export function defaultQConfig(backend?: 'x86' | 'fbgemm'): QConfig<PerChannelMinMaxObserver>;
/** torch.ao.quantization.get_default_qconfig('qnnpack'): per-tensor symmetric qint8 weights. */
export function defaultQConfig(backend: 'qnnpack'): QConfig<MinMaxObserver>;
/** torch.ao.quantization.get_default_qconfig(backend) for a backend not known statically. */
export function defaultQConfig(backend: QConfigBackend): QConfig;

// ---- fake quantization -----------------------------------------------------------------------

/**
 * torch.fake_quantize_per_tensor_affine (QAT's forward), bit for bit with PyTorch 1.13 for finite inputs:
 * (clamp(zp + nearbyint(x * (1/scale)), qmin, qmax) - zp) * scale. NaN gives 0 and +-Inf saturate (torch 1.13
 * turns all three into quant_min through an int64 overflow). Returns a new Float32Array.
 * Throws a TypeError for data that is not numbers or a non-integer zeroPoint; a RangeError when quantMin or quantMax
 * is not a 32-bit integer, quantMin > quantMax, zeroPoint is outside [quantMin, quantMax], or the scale is not finite
 * and > 0 with a finite float32 reciprocal.
 */
export function fakeQuantize(
  data: NumberArray,
  scale: number,
  zeroPoint: number,
  quantMin: number,
  quantMax: number,
): OwnedFloat32Array;

/**
 * torch.fake_quantize_per_channel_affine: per channel along `axis` of `shape`; scales (used as float32) and
 * zeroPoints have one entry per channel. Returns a new Float32Array in data's layout. Throws as fakeQuantize, and a
 * TypeError for a bad shape; a RangeError when shape does not hold data.length elements, axis is not an integer in
 * [-rank, rank), or scales or zeroPoints do not have one entry per channel.
 */
export function fakeQuantizePerChannel(
  data: NumberArray,
  shape: Shape,
  scales: NumberArray,
  zeroPoints: NumberArray,
  axis: number,
  quantMin: number,
  quantMax: number,
): OwnedFloat32Array;

// Only the declarations marked `export` are exported (a .d.ts module otherwise exports every declaration).
// ---- models ------------------------------------------------------------------------------------

/** The element types a model's inputs and outputs can have. */
export type ModelDtype = 'float32' | 'uint8' | 'int8' | 'int32' | 'int64' | 'bool';

/** A model input or output: name, element type and dimensions (symbolic ones as their names). */
export interface ModelValueInfo {
  readonly name: string;
  readonly dtype: ModelDtype;
  readonly dims: ReadonlyArray<number | string>;
  /**
   * Inputs: the qparams the input is quantized with (its QuantizeLinear) or read with (an 8-bit input).
   * Outputs: the qparams of the 8-bit output, or of the 8-bit tensor a float output was dequantized from.
   * null when the value is not quantized.
   */
  readonly qparams: LayerQParams | null;
}

/** A tensor returned by Model.run. */
export interface ModelTensor {
  readonly dtype: ModelDtype;
  readonly dims: number[];
  readonly data: Float32Array | Uint8Array | Int8Array | Int32Array | BigInt64Array;
}

/** One node of the graph, as Model.layers lists it. */
export interface ModelLayer {
  readonly name: string;
  readonly opType: string;
  readonly domain: string;
  readonly inputs: string[];
  readonly outputs: string[];
  readonly attributes: Record<string, unknown>;
  /** The qparams of the layer's 8-bit input (from its slots, or from the producer's output); null if none. */
  readonly input: LayerQParams | null;
  /** The qparams of the layer's 8-bit output; null if none. */
  readonly output: LayerQParams | null;
  /** The constant quantized weight's description (Model.weight gives the tensor); null if none. */
  readonly weight: {
    readonly name: string;
    readonly dtype: 'int8' | 'uint8';
    readonly dims: number[];
    readonly scales: number[];
    readonly zeroPoints: number[];
    /** The axis of per-channel scales. */
    readonly axis: number;
  } | null;
  /** The constant bias (name of the initializer); null if none. */
  readonly bias: { readonly name: string; readonly dtype: string; readonly dims: number[] } | null;
}

export interface LayerQParams {
  readonly scale: number;
  readonly zeroPoint: number;
  readonly dtype: 'uint8' | 'int8';
}

/** One node's time in a profiled Model.run. */
export interface ModelLayerTiming {
  readonly name: string;
  readonly opType: string;
  readonly ms: number;
  /** true for a node that depends on the input shapes alone: computed on the first run with these shapes, then reused. */
  readonly static?: true;
}

/** The typed array of each input element type: int64 as BigInt64Array, bool as Uint8Array of 0 / 1. */
export type ModelFeedData = Float32Array | Uint8Array | Int8Array | Int32Array | BigInt64Array;

/**
 * What a model input accepts: the typed array of its element type (ModelDtype: float32 Float32Array, int64
 * BigInt64Array, int32 Int32Array, uint8 / bool Uint8Array, int8 Int8Array) with the model's static shape, the
 * same with an explicit shape ({ data, dims }: symbolic dimensions such as the sequence length), or a QTensor for
 * an 8-bit input. Another element type is a TypeError naming the input and the type it needs.
 */
export type ModelFeed = ModelFeedData | QTensor | { data: ModelFeedData; dims: number[] };

/** A model file that is malformed or inconsistent; the message names the tensor, node or attribute at fault. */
export class ModelFormatError extends Error {}
/** A model that uses an operator, attribute or type qwasm does not implement; the message names the node and opset. */
export class UnsupportedError extends Error {}

/** Options of loadModel. */
export interface LoadModelOptions {
  /**
   * The semantics to run with (a profile: 'onnx', 'pytorch-qnnpack', 'pytorch-fbgemm', 'tflite'). Default: the file's
   * metadata entry "qwasm.semantics" (tools/export_torch.py records the PyTorch engine it reproduces), else 'onnx'.
   * A node whose form in this semantics has no kernel fails the load with an UnsupportedError naming it.
   */
  semantics?: Semantics;
}

/** A loaded ONNX model. */
export class Model {
  private constructor();
  /** The graph inputs (initializers excluded). */
  readonly inputs: ReadonlyArray<ModelValueInfo>;
  readonly outputs: ReadonlyArray<ModelValueInfo>;
  /** The file's metadata_props. */
  readonly metadata: Readonly<Record<string, string>>;
  /** The semantics the model runs with. */
  readonly semantics: Semantics;
  /**
   * The most wasm memory a run has held for activations and scratch so far, in bytes (packed weights
   * excluded). Once planned, this is the arena's size.
   */
  readonly peakBytes: number;
  /**
   * The activation arena, planned on the first run for given input shapes and reused by later runs
   * (layer outputs and scratch placed by lifetime; a different shape or allocation pattern plans again).
   * plannedBytes: the summed sizes of the allocations the arena holds. Zeros before the first run. Each input shape
   * (a transformer's sequence length) has its own plan; the last 8 are kept (`plans`), sharing one arena as large as
   * the largest.
   */
  readonly memoryPlan: Readonly<{ arenaBytes: number; slots: number; plannedBytes: number; plans: number }>;
  /** One entry per node, in execution order. */
  readonly layers: ModelLayer[];
  /** A layer's weight as a new QTensor (per channel along layers[i].weight.axis if it has several scales); the caller disposes it. */
  weight(layerName: string): QTensor;
  /**
   * Runs the model. Throws for a missing, unknown or mis-shaped input (naming it) and for a disposed model.
   * With { intermediates: true } the result also holds every node output under `intermediates`; with
   * { profile: true }, `profile`: each node's name, opType and wall time in ms, in execution order.
   */
  run(feeds: Record<string, ModelFeed>, options?: { intermediates?: false; profile?: boolean }): Promise<Record<string, ModelTensor> & { profile?: ModelLayerTiming[] }>;
  run(feeds: Record<string, ModelFeed>, options: { intermediates: true; profile?: boolean }): Promise<Record<string, ModelTensor> & { intermediates: Record<string, ModelTensor>; profile?: ModelLayerTiming[] }>;
  /**
   * A copy of a constant (initializer) of the graph, e.g. a layer's weights, bias, scales or zero points (the
   * names Model.layers lists as inputs): { dtype, dims, data }, or undefined when `name` is not a constant.
   */
  initializer(name: string): ModelTensor | undefined;
  /** Frees the packed weights. Idempotent; later runs throw. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/**
 * Loads an ONNX model from bytes, an ArrayBuffer, or a URL / path (fetched, or read from disk in Node).
 * Malformed, truncated or hostile files, unsupported operators (named with node and opset) and unreadable sources
 * are rejected with an Error.
 */
export function loadModel(source: Uint8Array | ArrayBuffer | string | URL, options?: LoadModelOptions): Promise<Model>;

/** One quantized tensor of a quantizeStatic result, with its error against the float model. */
export interface QuantizationReportRow {
  readonly tensor: string;
  /** The float node producing it (null for a graph input). */
  readonly producer: string | null;
  readonly opType: string;
  readonly scale: number;
  readonly zeroPoint: number;
  /** 10 log10(sum x^2 / sum (x - dequantized int8)^2) over the calibration set; Infinity without error; null if not comparable. */
  readonly sqnrDb: number | null;
}

export interface QuantizeStaticResult {
  /** The QDQ ONNX file: loadable by loadModel and by onnxruntime. */
  readonly bytes: Uint8Array;
  /** The int8 model, loaded from bytes; the caller disposes it. */
  readonly model: Model;
  /** Every quantized tensor's qparams. */
  readonly qparams: Map<string, LayerQParams>;
  readonly report: QuantizationReportRow[];
  readonly qconfig: string;
}

/**
 * Post-training static quantization of a float ONNX model (js/model/ptq.js): runs it on the calibration feeds
 * with the qconfig's activation observers on every tensor PyTorch would observe (fusing Conv/Gemm/MatMul/Add
 * with a following Relu/Clip), quantizes the weights with its weight observer, writes a QDQ ONNX file and
 * loads it. batchSize: samples per observer call (torch's calibration batch size; HistogramObserver depends on it).
 * onProgress: called after every sample of the calibration pass ('calibrate') and of the SQNR pass ('measure').
 */
export function quantizeStatic(
  source: Uint8Array | ArrayBuffer | string | URL,
  calibration: Iterable<Record<string, ModelFeed>>,
  options?: { qconfig?: QConfigBackend | QConfig; batchSize?: number; onProgress?: (progress: QuantizeStaticProgress) => void },
): Promise<QuantizeStaticResult>;

/** What quantizeStatic's onProgress receives: `done` of `total` samples of a pass. */
export interface QuantizeStaticProgress {
  readonly stage: 'calibrate' | 'measure';
  readonly done: number;
  readonly total: number;
}

export {};
