/*
 * qwasm.h: the public C API of qwasm.
 *
 * Conventions (docs/quantization.md derives them):
 *   real = scale * (q - zero_point)
 *   quint8 q in [0, 255], qint8 q in [-128, 127], qint32 q in [-2^31, 2^31 - 1].
 *
 * Every function here validates its arguments and returns a qw_status; nothing
 * aborts. Scales are float32 (PyTorch keeps scales as double but casts them to
 * float before any arithmetic; callers pass the already-cast float).
 *
 * Memory: the library never allocates inside a kernel. Buffers are owned by the
 * caller (the JS package allocates them with qw_alloc). Kernels read exactly the
 * elements they are given: no over-read, no over-write, so buffers need no padding.
 * Input and output buffers must not overlap unless a function says otherwise. int32 data (qint32 tensors, int32
 * outputs) must be 4-byte aligned, and its row strides multiples of 4 (QW_INVALID_ARGUMENT otherwise).
 *
 * Sizes: no buffer an entry point reads or writes (a tensor, packed weights, a workspace, a table) may
 * exceed QW_MAX_BYTES bytes, and no element count may exceed it either. Every size is computed in 64-bit
 * arithmetic and checked against it: a *_size function returns 0 and an entry point QW_INVALID_ARGUMENT when
 * a size (or an output height / width, which are int32) would be larger. Pointers are 32-bit unsigned in
 * wasm32: the whole memory (up to 4 GiB, the build's MAXIMUM_MEMORY) is addressable.
 */
#ifndef QWASM_H
#define QWASM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define QW_API EMSCRIPTEN_KEEPALIVE
#else
#define QW_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes returned by every API function. */
typedef enum qw_status {
  QW_OK = 0,
  QW_INVALID_ARGUMENT = 1, /* a NULL pointer, a bad enum, a bad range, an inconsistent size */
  QW_INVALID_QPARAMS = 2,  /* scale not finite and > 0 (or below ~2.9e-39, where 1/scale overflows), or zero
                              point outside the quantized range */
  QW_UNSUPPORTED = 3,      /* a valid request this build does not implement */
  QW_OUT_OF_MEMORY = 4,
} qw_status;

/* Quantized element types, with PyTorch's names. Values are part of the ABI. */
typedef enum qw_dtype {
  QW_QUINT8 = 0, /* uint8 storage, [0, 255] */
  QW_QINT8 = 1,  /* int8 storage, [-128, 127] */
  QW_QINT32 = 2, /* int32 storage, [-2^31, 2^31 - 1] */
} qw_dtype;

/* Rounding rule of quantize. Both round half to even; they differ in how x meets the scale.
 *   QW_ROUND_TORCH: q = clamp(zp + nearbyint(x * (1.0f / scale)), qmin, qmax), the addition of zp
 *                   done in float32 as PyTorch 1.13 does (visible for qint32 beyond 2^24).
 *   QW_ROUND_ONNX:  q = saturate(round_half_even(x / scale) + zp), the addition exact (ONNX QuantizeLinear).
 * Non-finite input (both rules): NaN -> zero_point, +Inf -> qmax, -Inf -> qmin, and finite values
 * beyond the range saturate. (PyTorch 1.13 maps NaN, +-Inf and |x / scale| >= 2^63 to qmin through an
 * int64 conversion overflow; qwasm deliberately does not reproduce that.)
 * PyTorch 2.x from PyPI on x86 (FBGEMM inside, its LEGACY Quantize) adds the zero point BEFORE rounding:
 *   QW_ROUND_FBGEMM:        torch.quantize_per_tensor there. quint8 / qint8 (QuantizeAvx2):
 *                           q = clamp(nearbyint(fmaf(x, 1.0f / scale, (float)zp))), one rounding of
 *                           x / scale + zp; NaN and +Inf -> qmax, -Inf -> qmin. qint32, and every dtype
 *                           per channel, as QW_ROUND_FBGEMM_SCALAR.
 *   QW_ROUND_FBGEMM_SCALAR: FBGEMM's scalar Quantize (quantize_val: torch.quantize_per_channel, qint32,
 *                           the scalar tails of the generic kernels): q = clamp(nearbyint((float)zp +
 *                           x * (1.0f / scale))), two float roundings; NaN -> 0 (8-bit, the low byte of
 *                           INT32_MIN) or qmin (qint32), +-Inf saturate. */
typedef enum qw_rounding {
  QW_ROUND_TORCH = 0,
  QW_ROUND_ONNX = 1,
  QW_ROUND_FBGEMM = 2,
  QW_ROUND_FBGEMM_SCALAR = 3,
} qw_rounding;

/* The schemes of torch.ao.quantization observers. */
typedef enum qw_qscheme {
  QW_PER_TENSOR_AFFINE = 0,
  QW_PER_TENSOR_SYMMETRIC = 1,
  QW_PER_CHANNEL_AFFINE = 2,
  QW_PER_CHANNEL_SYMMETRIC = 3,
} qw_qscheme;

/* ---- memory (for the JS package; kernels never call these) ------------------------------ */

/* The largest buffer and the largest element count any entry point takes: 2^31 - 1 (the README's Limits). */
#define QW_MAX_BYTES ((size_t)0x7fffffff)

/* 16-byte aligned allocation; returns NULL when size is 0 or larger than QW_MAX_BYTES, or memory cannot grow. */
QW_API void* qw_alloc(size_t size);
QW_API void qw_free(void* ptr);

/* ---- threads (qwasm-simd-threads.wasm; the other builds run one thread) -------------------- */

/* Sets how many threads run operators, the caller included: 1..64 where the build has threads
 * (QW_INVALID_ARGUMENT otherwise), only 1 elsewhere (QW_UNSUPPORTED). Call it once, after the workers
 * have entered qw_thread_main and before any workspace size is asked for: workspaces have a part per thread. */
QW_API qw_status qw_threadpool_set_threads(size_t threads);
/* A worker's loop (worker `index`, 1..threads - 1, in its own instance of the module with its own
 * stack): runs the tiles it claims until qw_threadpool_shutdown. Returns at once in builds without threads. */
QW_API void qw_thread_main(size_t index);
/* Makes every worker return from qw_thread_main. */
QW_API void qw_threadpool_shutdown(void);

/* ---- relaxed SIMD (qwasm-relaxed-threads.wasm) ----------------------------------------------------- */

/* What the engine's i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c) computes exactly for any bytes (a signed):
 * USDOT b unsigned (x86 AVX-VNNI vpdpbusd), SDOT b signed (ARM sdot, x86 AVX-VNNI-INT8 vpdpbssd). Engines that
 * saturate pairs of products (x86 without VNNI: pmaddubsw) have neither; their relaxed dot is exact only for b
 * in [0, 127], and qwasm does not use it there. */
typedef enum qw_relaxed_semantics {
  QW_RELAXED_NONE = 0,
  QW_RELAXED_USDOT = 1,
  QW_RELAXED_SDOT = 2,
} qw_relaxed_semantics;

/* Switches the GEMM to the relaxed-dot kernels for the engine's semantics; call once, before anything is packed
 * (packed weights record their layout). QW_UNSUPPORTED in builds without relaxed SIMD. */
QW_API qw_status qw_use_relaxed_simd(qw_relaxed_semantics semantics);

/* ---- choosing scale and zero point (torch.ao.quantization.observer._calculate_qparams) ---- */

/* The integer range an observer quantizes to, as torch.ao.quantization.utils.calculate_qmin_qmax:
 * without a custom range: quint8 [0,255] ([0,127] with reduce_range), qint8 [-128,127] ([-64,63]),
 * qint32 [-2^31, 2^31-1] (reduce_range ignored). With a custom range (has_custom_range != 0) it
 * must contain 0, quant_min < quant_max, its length must not exceed 256 (qint8) or 2^31 (qint32),
 * and reduce_range floor-halves both ends. Out: *qmin, *qmax. */
QW_API qw_status qw_quant_range(qw_dtype dtype, int reduce_range, int has_custom_range, int32_t quant_min,
                                int32_t quant_max, int32_t* qmin, int32_t* qmax);

/* Scale and zero point for an observed [min_val, max_val], bit-exact with PyTorch 1.13's
 * _calculate_qparams in float32 arithmetic. [qmin, qmax] comes from qw_quant_range; has_custom_range
 * selects the quint8 symmetric zero point ((qmin + qmax) floor-div 2 instead of 128); eps is the
 * lower bound of the scale (PyTorch's default: FLT_EPSILON). min_val > max_val, NaN or a non-finite
 * value (other than the unobserved pair min=+Inf, max=-Inf, which gives (1.0, 0)) -> QW_INVALID_ARGUMENT.
 * Per-channel schemes compute the same per channel: use qw_choose_qparams_per_channel. */
QW_API qw_status qw_choose_qparams(float min_val, float max_val, qw_dtype dtype, qw_qscheme qscheme, int32_t qmin,
                                   int32_t qmax, int has_custom_range, float eps, float* scale, int32_t* zero_point);

/* The same for `channels` (min, max) pairs; scales[c] and zero_points[c] receive channel c. */
QW_API qw_status qw_choose_qparams_per_channel(size_t channels, const float* min_vals, const float* max_vals,
                                               qw_dtype dtype, qw_qscheme qscheme, int32_t qmin, int32_t qmax,
                                               int has_custom_range, float eps, float* scales, int32_t* zero_points);

/* ---- quantize / dequantize / requantize ------------------------------------------------- */

/* y[i] = quantize(x[i]) for i < n; y holds n elements of dtype. See qw_rounding for the rules. */
QW_API qw_status qw_quantize(size_t n, const float* x, void* y, qw_dtype dtype, qw_rounding rounding, float scale,
                             int32_t zero_point);

/* Per-channel quantize of a contiguous tensor viewed as [outer, channels, inner] (the channel axis
 * in the middle): element (o, c, i) uses scales[c], zero_points[c]. */
QW_API qw_status qw_quantize_per_channel(size_t outer, size_t channels, size_t inner, const float* x, void* y,
                                         qw_dtype dtype, qw_rounding rounding, const float* scales,
                                         const int32_t* zero_points);

/* y[i] = scale * (float)(q[i] - zero_point), one float rounding after an exact integer subtraction
 * (PyTorch's dequantize_val, ONNX DequantizeLinear). For qint32 the subtraction wraps modulo 2^32. */
QW_API qw_status qw_dequantize(size_t n, const void* q, float* y, qw_dtype dtype, float scale, int32_t zero_point);

/* Per-channel dequantize, layout as qw_quantize_per_channel, with PyTorch's float64 channel scales:
 * y = (float)((double)((float)q - (float)zp) * scales[c]). (PyTorch keeps per-channel scales in a
 * float64 tensor and uses them as they are here, unlike the per-tensor path, which casts the scale
 * to float first. For 8-bit data and float32-representable scales both give the same result.) */
QW_API qw_status qw_dequantize_per_channel(size_t outer, size_t channels, size_t inner, const void* q, float* y,
                                           qw_dtype dtype, const double* scales, const int32_t* zero_points);

/* y[i] = quantize(dequantize(x[i])) with new qparams and dtype (PyTorch's requantize_val): the float
 * in between is exactly what qw_dequantize produces. x and y may be the same buffer when the dtypes
 * have the same size. */
QW_API qw_status qw_requantize(size_t n, const void* x, qw_dtype x_dtype, float x_scale, int32_t x_zero_point, void* y,
                               qw_dtype y_dtype, float y_scale, int32_t y_zero_point, qw_rounding rounding);

/* ---- pooling, channels-last ---------------------------------------------------------------- */

/* Geometry of a pooling: 14 int32 in this order. The output size is given (qw_pool_output_size
 * computes PyTorch's); windows are clipped to the input (padding never wins a max). */
typedef struct qw_pool2d_shape {
  int32_t batch, in_h, in_w, channels, out_h, out_w;
  int32_t kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w;
} qw_pool2d_shape;

/* PyTorch's pooling_output_shape for one dimension, or -1 if the arguments are invalid
 * (including padding larger than half the kernel, which PyTorch rejects). */
QW_API int32_t qw_pool_output_size(int32_t in, int32_t kernel, int32_t stride, int32_t pad, int32_t dilation,
                                   int ceil_mode);

/* Workspace bytes of qw_max_pool2d. */
QW_API size_t qw_max_pool2d_workspace_size(const qw_pool2d_shape* shape);

/* Max pooling of quint8 / qint8 NHWC data; the output keeps the input's qparams. Window positions
 * outside the input are skipped, or with clamp_to_edge read the nearest edge pixel (QNNPACK's
 * behaviour, which PyTorch's qnnpack engine shows when dilation > 1 meets padding). */
QW_API qw_status qw_max_pool2d(const qw_pool2d_shape* shape, const void* x, qw_dtype dtype, void* y, void* workspace,
                               int clamp_to_edge);

/* Average pooling forms of PyTorch's quantized kernels (NHWC data, input qparams kept):
 *   QNNPACK:                 zp + rint((float)sum(q - zp) * (s / (s * kh * kw))), padding counts as zp;
 *   GENERIC:                 rint((float)sum(q - zp) * (1 / d) + zp) over the valid taps, d by
 *                            count_include_pad / divisor_override as in float avg_pool2d;
 *   GENERIC_CHANNELS_LAST:   zp + rint((float)sum(q - zp) * (1 / d));
 *   ADAPTIVE:                adaptive windows, rint((float)sum(q) * (1 / n)), the zero point never
 *                            subtracted (PyTorch's non-QNNPACK adaptive_avg_pool2d);
 *   ADAPTIVE_CHANNELS_LAST:  adaptive windows, zp + rint((float)sum(q - zp) * (1 / n));
 *   MEAN:                    adaptive windows, rint((float)sum(q) / n), divided (PyTorch's
 *                            qmean_inner_dim_kernel: torch.mean over trailing dims outside QNNPACK);
 *   GENERIC_CHANNELS_LAST_FBGEMM, ADAPTIVE_CHANNELS_LAST_FBGEMM: the channels-last kernels in PyTorch 2.x's
 *                            x86 builds, m = (s / s) / d. Their scalar channel loop (channels from
 *                            vector_channels on) is quantize_val(1 / m, zp, sum(q - zp)):
 *                            nearbyint((float)zp + (float)sum * (1.0f / (float)(1.0f / m))). The channels
 *                            below vector_channels take their vector loops: avg_pool2d's rounds first,
 *                            zp + nearbyint((float)sum * m); adaptive_avg_pool2d's is FBGEMM's quantize,
 *                            nearbyint(fma((float)sum, 1.0f / (float)(1.0f / m), zp)) (QuantizedOpKernels.cpp
 *                            do_avg_pool_nhwc_on_AVX_n / do_avg_pool_on_AVX_n; vector_channels is the channel
 *                            count rounded down to the vector width of ATen's dispatch level: 16 for AVX512,
 *                            8 for AVX2, 0 without AVX). Other forms ignore vector_channels.
 * The results saturate to the dtype's range. */
enum {
  QW_AVG_POOL_QNNPACK = 0,
  QW_AVG_POOL_GENERIC = 1,
  QW_AVG_POOL_GENERIC_CHANNELS_LAST = 2,
  QW_AVG_POOL_ADAPTIVE = 3,
  QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST = 4,
  QW_AVG_POOL_MEAN = 5,
  QW_AVG_POOL_GENERIC_CHANNELS_LAST_FBGEMM = 6,
  QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST_FBGEMM = 7,
};
QW_API qw_status qw_avg_pool2d(const qw_pool2d_shape* shape, const void* x, qw_dtype dtype, float scale,
                               int32_t zero_point, void* y, int form, int count_include_pad, int32_t divisor_override,
                               int32_t vector_channels);

/* onnxruntime's QLinearGlobalAveragePool (NHWC data; mlas/lib/qlgavgpool.cpp): per image and channel, over its
 * `pixels` pixels, y = saturate(y_zero_point + nearbyint((float)(sum(q) - x_zero_point * pixels) * multiplier)),
 * multiplier = x_scale / (y_scale * pixels) computed in float by the caller (as onnxruntime does). y: batch x channels. */
QW_API qw_status qw_global_avg_pool_ort(size_t batch, size_t pixels, size_t channels, const void* x, qw_dtype dtype,
                                        int32_t x_zero_point, float multiplier, int32_t y_zero_point, void* y);

/* y[i] = table[byte of x[i]] for 8-bit data: a unary op as a 256-entry table (for qint8 the entry of
 * q is at index (uint8_t)q). */
QW_API qw_status qw_lut8(size_t n, const void* x, const uint8_t* table, void* y);

/* ---- elementwise operators ---------------------------------------------------------------- */

/* Quantized add of two same-shaped contiguous 8-bit tensors (same dtype), PyTorch's fixed-point
 * kernels: quint8 as QNNPACK (shift 21 - exponent of the larger scale ratio, rounding half away from
 * zero), qint8 as XNNPACK (shift 20 - exponent, rounding half up). relu clamps at y_zero_point.
 * Scale ratios a_scale / y_scale outside [2^-14, 2^8) -> QW_UNSUPPORTED (the references reject
 * them). */
QW_API qw_status qw_add(size_t n, const void* a, float a_scale, int32_t a_zero_point, const void* b, float b_scale,
                        int32_t b_zero_point, qw_dtype dtype, void* y, float y_scale, int32_t y_zero_point, int relu);

/* Quantized add as PyTorch's x86 / fbgemm / onednn engines compute it: dequantize, add in float,
 * (relu,) quantize with the output qparams by torch's rule. Element i reads a[a_index[i]] and
 * b[b_index[i]] (NULL: i). PyTorch's vectorized kernel dequantizes with an FMA in whole blocks of
 * `block` elements (64 on AVX2) of its innermost dimension of `inner` elements, the tail without:
 * element i takes the FMA when i % inner < inner / block * block. The blocks quantize by torch's rule;
 * the tail by tail_rounding: QW_ROUND_TORCH as PyTorch 1.13, QW_ROUND_FBGEMM_SCALAR as PyTorch 2.x's x86
 * builds (FBGEMM's scalar Quantize: the zero point added before rounding). */
QW_API qw_status qw_add_float(size_t n, const void* a, const int32_t* a_index, float a_scale, int32_t a_zero_point,
                              const void* b, const int32_t* b_index, float b_scale, int32_t b_zero_point,
                              qw_dtype dtype, void* y, float y_scale, int32_t y_zero_point, int relu, size_t inner,
                              size_t block, qw_rounding tail_rounding);

/* Quantized add as ONNX Runtime computes com.microsoft QLinearAdd (MLAS's portable kernel, used by
 * its wasm build): c = (a_s * (float)(a - za) + b_s * (float)(b - zb)) / y_s, clamped to
 * [qmin - yz, qmax - yz], y = nearbyintf(c + (float)yz). Index lists broadcast as for qw_add_float. */
QW_API qw_status qw_add_onnx(size_t n, const void* a, const int32_t* a_index, float a_scale, int32_t a_zero_point,
                             const void* b, const int32_t* b_index, float b_scale, int32_t b_zero_point,
                             qw_dtype dtype, void* y, float y_scale, int32_t y_zero_point);

/* QLinearMul as ONNX Runtime computes it: c = (a_s (a - za) * b_s (b - zb)) / y_s, then as qw_add_onnx. */
QW_API qw_status qw_mul_onnx(size_t n, const void* a, const int32_t* a_index, float a_scale, int32_t a_zero_point,
                             const void* b, const int32_t* b_index, float b_scale, int32_t b_zero_point,
                             qw_dtype dtype, void* y, float y_scale, int32_t y_zero_point);

/* Quantized mul, PyTorch: rint((float)((a - za) * (b - zb)) * ((a_s * b_s) * (1 / y_s))) + yz.
 * Output element i reads a[a_index[i]] and b[b_index[i]] (NULL: i), which is how the caller
 * broadcasts. */
QW_API qw_status qw_mul(size_t n, const void* a, const int32_t* a_index, float a_scale, int32_t a_zero_point,
                        const void* b, const int32_t* b_index, float b_scale, int32_t b_zero_point, qw_dtype dtype,
                        void* y, float y_scale, int32_t y_zero_point, int relu);

/* Unary ops computed as 256-entry tables (apply with qw_lut8). */
typedef enum qw_unary_op {
  QW_UNARY_HARDSWISH_QNNPACK = 0, /* quint8: QNNPACK's table, lrintf(clamp(h / y_s + yz)) */
  QW_UNARY_SIGMOID_QNNPACK = 1,   /* quint8: QNNPACK's table, lrintf(clamp(256 / (1 + exp(-x)))) + yz */
  QW_UNARY_LEAKY_RELU = 2,        /* quint8 / qint8, param = negative slope: PyTorch's generic kernel, two
                                     tables (block / tail dequantization), apply with qw_lut8_blocked */
  /* PyTorch 2.x's x86 builds (fbgemm / x86 engines): the generic kernel, two tables as for
   * QW_UNARY_LEAKY_RELU, the tail quantized by FBGEMM's scalar rule (zero point added before rounding). */
  QW_UNARY_LEAKY_RELU_FBGEMM = 3,
  QW_UNARY_HARDSWISH_FBGEMM = 4,  /* x * min(max(x + 3, 0), 6), times 1/6 in the blocks, / 6 in the tail */
  QW_UNARY_SIGMOID_FBGEMM = 5,    /* 1 / (1 + exp(-x)); output (1/256, 0) for quint8, (1/256, -128) for qint8 */
} qw_unary_op;

/* Fills table[256] (table[512] for the two-table ops) for an op with the given qparams. */
QW_API qw_status qw_unary_table(qw_unary_op op, qw_dtype in_dtype, float in_scale, int32_t in_zero_point,
                                float out_scale, int32_t out_zero_point, float param, uint8_t* table);

/* y[i] = tables[byte of x[i]] for i < n / block * block, tables[256 + byte] for the tail: how
 * PyTorch's vectorized kernels treat whole blocks and the tail differently (block 64 on AVX2). */
QW_API qw_status qw_lut8_blocked(size_t n, const void* x, const uint8_t* tables, size_t block, void* y);

/* ONNX DynamicQuantizeLinear: *scale = (max(x, 0) - min(x, 0)) / 255, *zero_point =
 * round_half_even(clamp(-min / scale, 0, 255)), y = quantize(x) by the onnx rule (uint8). NaN or
 * infinite input -> QW_INVALID_ARGUMENT; all-zero input gives scale 0, zero point 0, y = 0. */
QW_API qw_status qw_dynamic_quantize(size_t n, const float* x, uint8_t* y, float* scale, int32_t* zero_point);

/* ---- layout ------------------------------------------------------------------------------ */

/* Copies a strided view to another: for every index (i0..i{rank-1}) < shape,
 * dst[sum(ik * dst_strides[k])] = src[sum(ik * src_strides[k])]. Strides are in ELEMENTS and
 * non-negative (0 broadcasts a source; a destination must not alias itself, nor overlap src: the copy is split
 * over the threads); each element is elem_size bytes (1, 2, 4 or 8). rank <= QW_MAX_RANK; rank 0 copies one
 * element. */
#define QW_MAX_RANK 8
QW_API qw_status qw_copy_strided(size_t elem_size, size_t rank, const int32_t* shape, const void* src,
                                 const int32_t* src_strides, void* dst, const int32_t* dst_strides);

/* ONNX Gather of whole rows: y[o][i] = data[o][indices[i]] for o < outer, i < count, each a row of row_bytes bytes
 * (data viewed as [outer][axis_size][row_bytes]); an index may be negative (counted from the end, as ONNX allows).
 * QW_INVALID_ARGUMENT, with nothing written, when an index is outside [-axis_size, axis_size). y must not overlap data. */
QW_API qw_status qw_gather(size_t outer, size_t axis_size, size_t row_bytes, const void* data, size_t count,
                           const int32_t* indices, void* y);

/* ---- requantization of int32 accumulators (GEMM, convolution) ---------------------------- */

/* How an int32 accumulator becomes an 8-bit output; each is bit-exact with its reference
 * (docs/quantization.md, "Requantization modes"):
 *   QW_REQUANT_QNNPACK:    PyTorch's qnnpack engine: float bias rounded to int32 at scale
 *                          w_scale * in_scale; requant_scale = w_scale * in_scale * (1 / out_scale).
 *   QW_REQUANT_FBGEMM:     PyTorch's fbgemm / x86 engine (FBGEMM's x86 kernels): bias stays float,
 *                          added to the float accumulator as bias * (float)(1.0 / (double)(in_scale *
 *                          w_scale)) per tensor, bias / (in_scale * w_scale) per channel; multiplier =
 *                          (in_scale * w_scale) / out_scale; nearest-even, and a scaled value beyond
 *                          int32 (or NaN) gives the lower bound, as cvtps2dq's INT32_MIN does.
 *   QW_REQUANT_ONNX:       QLinearConv / QLinearMatMul: int32 bias (scale in_scale * w_scale) given;
 *                          multiplier = in_scale * w_scale / out_scale.
 *   QW_REQUANT_FIXEDPOINT: integer only (gemmlowp / TFLite): multiplier as a Q31 m0 and a shift,
 *                          SaturatingRoundingDoublingHighMul then RoundingDivideByPOT: two roundings,
 *                          so a result may differ by one from rounding the exact product once.
 *   QW_REQUANT_ONEDNN:     oneDNN's int8 convolution as PyTorch 2.x's x86 engine runs it (symmetric weights
 *                          on AVX512-VNNI hosts): S = 1.0f / (float)(1.0 / in_scale), Dinv = 1.0f / (1.0f /
 *                          (float)(1.0 / out_scale)); v = ((float)acc * S) * (float)w_scale + bias (float,
 *                          unscaled); q = clamp(nearbyint(v * Dinv + (float)zp)): the zero point added
 *                          before rounding. */
typedef enum qw_requant_mode {
  QW_REQUANT_QNNPACK = 0,
  QW_REQUANT_FBGEMM = 1,
  QW_REQUANT_ONNX = 2,
  QW_REQUANT_FIXEDPOINT = 3,
  QW_REQUANT_NONE = 4, /* int32 output: the exact sum (ONNX MatMulInteger / ConvInteger); out_dtype qint32 */
  QW_REQUANT_ONEDNN = 5,
} qw_requant_mode;

/* Bytes of a requantization blob for n output channels. */
QW_API size_t qw_requantization_size(size_t n);

/* Fills a requantization blob (qw_requantization_size(n) bytes, 4-byte aligned) for n output
 * channels. Scales are given as PyTorch keeps them (double); each mode rounds them to float where its
 * reference does. w_scales / w_zero_points: w_scale_count = 1 (per tensor) or n entries; w_dtype is the
 * weights' dtype (quint8 or qint8); w_per_channel non-zero when the weights are quantized per channel
 * (which a single output channel cannot tell from w_scale_count; FBGEMM takes their bias differently). bias_f32 or bias_i32 (n entries) or neither; ONNX takes only
 * int32. out_dtype quint8 or qint8 (qint32 with QW_REQUANT_NONE, where scales are ignored). [clamp_min, clamp_max] is a fused activation in real units
 * (-INFINITY, INFINITY for none; 0, INFINITY for ReLU, which gives PyTorch's clamp at the output zero
 * point), quantized with the OUTPUT qparams by the mode's rounding rule. (PyTorch's standalone
 * hardtanh / relu6 quantize their bounds with their input's qparams, which are also their output's.) */
QW_API qw_status qw_requantization_init(void* blob, size_t n, qw_requant_mode mode, double in_scale,
                                        const double* w_scales, size_t w_scale_count, const int32_t* w_zero_points,
                                        qw_dtype w_dtype, const float* bias_f32, const int32_t* bias_i32,
                                        double out_scale, int32_t out_zero_point, qw_dtype out_dtype, float clamp_min,
                                        float clamp_max, int32_t w_per_channel);

/* Narrows a blob's output range to the integers [lo, hi]: an integer Clip after the layer (ONNX Clip with
 * 8-bit bounds) fused into it, exactly: clamp(clamp(v, qmin, qmax), lo, hi). */
QW_API qw_status qw_requantization_clamp(void* blob, size_t n, int32_t lo, int32_t hi);

/* ---- int8 GEMM: y = requantize(sum_k (a - a_zp) * (w - w_zp)) -------------------------------- */

/* Bytes of packed weights for n output columns of k. */
QW_API size_t qw_gemm_pack_size(size_t n, size_t k);

/* Packs weights W[n][k] = w[n * n_stride + k * k_stride] (strides in elements; a PyTorch Linear
 * weight [N, K] has n_stride = K, k_stride = 1; an ONNX MatMul B [K, N] has n_stride = 1,
 * k_stride = N), qint8 or quint8, with their zero points (zp_count 1 or n), as int16 (w - w_zp)
 * in the layout of this build's GEMM config (src/gemm/gemm.h). Done once per weight tensor.
 * k < 32768. The packed weights record their layout; qw_gemm refuses (QW_INVALID_ARGUMENT) weights
 * packed with another. */
QW_API qw_status qw_gemm_pack(size_t n, size_t k, const void* w, qw_dtype w_dtype, size_t n_stride, size_t k_stride,
                              const int32_t* w_zero_points, size_t zp_count, void* packed);

/* Bytes of workspace qw_gemm needs. */
QW_API size_t qw_gemm_workspace_size(size_t n, size_t k);

/* y[m][n] for m rows of activations a (quint8 or qint8, a_stride bytes apart) times packed weights,
 * requantized by a blob for n channels; y rows y_stride bytes apart, dtype from the blob. */
QW_API qw_status qw_gemm(size_t m, size_t n, size_t k, const void* a, size_t a_stride, qw_dtype a_dtype,
                         int32_t a_zero_point, const void* packed, const void* requantization, void* y,
                         size_t y_stride, void* workspace);

/* ---- 2-D convolution, channels-last -------------------------------------------------------- */

/* The geometry of a convolution: 16 int32 in this order (the JS package writes it as such). */
typedef struct qw_conv2d_shape {
  int32_t batch, in_h, in_w, in_c, out_c;
  int32_t kernel_h, kernel_w, stride_h, stride_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  int32_t dilation_h, dilation_w, groups;
} qw_conv2d_shape;

/* Output height and width; QW_INVALID_ARGUMENT for an inconsistent geometry (channels not divisible
 * by groups, non-positive sizes, a kernel larger than the padded input, ...), a padded input past 2^31 - 1, or
 * an input, output or weight tensor of more than QW_MAX_BYTES elements. */
QW_API qw_status qw_conv2d_output_size(const qw_conv2d_shape* shape, int32_t* out_h, int32_t* out_w);

/* Bytes of packed weights; 0 for an invalid geometry or more than QW_MAX_BYTES (the packing does not depend on
 * batch, in_h and in_w beyond the kernel fitting). */
QW_API size_t qw_conv2d_pack_size(const qw_conv2d_shape* shape);

/* Packs weights given as PyTorch / ONNX lay them out: [out_c][in_c / groups][kernel_h][kernel_w],
 * qint8 or quint8, with their zero points (w_zp_count = 1 or out_c). The packing chooses the
 * algorithm: depthwise (groups == in_c == out_c) or GEMM over an im2col of the input, and records
 * it with the layout, which qw_conv2d checks (QW_INVALID_ARGUMENT when either differs). */
QW_API qw_status qw_conv2d_pack(const qw_conv2d_shape* shape, const void* w, qw_dtype w_dtype,
                                const int32_t* w_zero_points, size_t w_zp_count, void* packed);

/* Bytes of workspace qw_conv2d needs. */
QW_API size_t qw_conv2d_workspace_size(const qw_conv2d_shape* shape);

/* y = requantize(conv2d(x - x_zp, w)), x and y channels-last (NHWC, contiguous), x quint8 or qint8;
 * padding contributes real zeros (the input zero point); the requantization blob has out_c channels. */
QW_API qw_status qw_conv2d(const qw_conv2d_shape* shape, const void* x, qw_dtype x_dtype, int32_t x_zero_point,
                           const void* packed, const void* requantization, void* y, void* workspace);

/* ---- float32 2-D convolution, NCHW (float models: calibration before quantization) ---------- */

/* The geometry is qw_conv2d_shape's, validated by qw_conv2d_output_size; x, y and the weights are
 * float32, x [batch][in_c][in_h][in_w] and y [batch][out_c][out_h][out_w], contiguous. The packing
 * needs only channels, kernel, groups (any valid in_h / in_w). */
QW_API size_t qw_f32_conv2d_pack_size(const qw_conv2d_shape* shape);

/* Packs weights [out_c][in_c / groups][kernel_h][kernel_w] and an optional bias [out_c] (NULL: zeros)
 * into qw_f32_conv2d_pack_size bytes, recording the layout, which qw_f32_conv2d checks
 * (QW_INVALID_ARGUMENT for anything else). */
QW_API qw_status qw_f32_conv2d_pack(const qw_conv2d_shape* shape, const float* w, const float* bias, float* packed);

/* Bytes of workspace qw_f32_conv2d needs (channels and kernel; for depthwise convolutions, one
 * padded input plane: in_h, in_w and the padding too). */
QW_API size_t qw_f32_conv2d_workspace_size(const qw_conv2d_shape* shape);

/* y = conv2d(x, w) + bias, padding contributing zeros. Each output sums bias first, then the taps in
 * (input channel, kernel row, kernel column) order, in float32 with no FMA: the SIMD and scalar
 * builds give the same bits. */
QW_API qw_status qw_f32_conv2d(const qw_conv2d_shape* shape, const float* x, const float* packed, float* y,
                               void* workspace);

/* y[i] = x[i] > 0 ? x[i] : +0.0f for i < n (NaN and -0.0f give +0.0f), x == y allowed: a float Conv's
 * Relu applied in wasm before its output leaves (the model loader fuses Conv + Relu). */
QW_API qw_status qw_f32_relu(size_t n, const float* x, float* y);

/* ---- observers and fake quantization (torch.ao.quantization, PyTorch 1.13) ----------------- */

/* torch.aminmax of n >= 1 floats; NaN anywhere gives NaN for both. */
QW_API qw_status qw_observe_minmax(size_t n, const float* x, float* min_val, float* max_val);

/* aminmax per channel of a contiguous tensor viewed as [outer, channels, inner]. */
QW_API qw_status qw_observe_minmax_per_channel(size_t outer, size_t channels, size_t inner, const float* x,
                                               float* min_vals, float* max_vals);

/* Bytes of workspace qw_histogram_observe and qw_histogram_search need for `bins` bins (8-byte aligned). */
QW_API size_t qw_histogram_workspace_size(size_t bins);

/* HistogramObserver.forward of PyTorch 1.13 on n >= 1 finite floats: updates hist[bins], *min_val,
 * *max_val in place (start from zeros, +Inf, -Inf). Reproduces torch.histc with the int()-truncated
 * bounds torch passes, _adjust_min_max and _combine_histograms in float32 / float64 as torch does.
 * Non-finite data -> QW_INVALID_ARGUMENT (torch raises in int()); a merge torch itself cannot do
 * (its slice assignment fails) or an absurd downsample rate -> QW_UNSUPPORTED. */
QW_API qw_status qw_histogram_observe(size_t n, const float* x, size_t bins, int32_t upsample_rate, float* hist,
                                      float* min_val, float* max_val, void* workspace);

/* HistogramObserver._non_linear_param_search: the narrowed [*new_min, *new_max] that
 * qw_choose_qparams then turns into scale and zero point. dst_nbins is 2^bits of the dtype (256 for
 * 8-bit types). Sums use ATen's AVX2 cascade order, the float32 comparisons torch makes. */
QW_API qw_status qw_histogram_search(size_t bins, const float* hist, float min_val, float max_val, double dst_nbins,
                                     float* new_min, float* new_max, void* workspace);

/* torch.fake_quantize_per_tensor_affine: y = (clamp(zp + nearbyint(x * (1/scale)), qmin, qmax) - zp) * scale
 * with torch's float32 / float64 steps. NaN -> 0, +-Inf saturate (torch 1.13 gives qmin, an int64
 * overflow). x and y may be the same buffer. */
QW_API qw_status qw_fake_quantize(size_t n, const float* x, float* y, float scale, int32_t zero_point,
                                  int32_t quant_min, int32_t quant_max);

/* torch.fake_quantize_per_channel_affine over [outer, channels, inner]. */
QW_API qw_status qw_fake_quantize_per_channel(size_t outer, size_t channels, size_t inner, const float* x, float* y,
                                              const float* scales, const int32_t* zero_points, int32_t quant_min,
                                              int32_t quant_max);

/* ---- float operators of transformers, with onnxruntime's arithmetic -------------------------- */
/*
 * Each reproduces what onnxruntime-web (its wasm build: MLAS's portable and wasm SIMD128 kernels) computes,
 * bit for bit; docs/transformer-ops.md names the onnxruntime source of each formula. float32 in and out,
 * contiguous row-major tensors; x == y allowed where said.
 */

/* Unary float operators (x == y allowed):
 *   QW_F32_EXP  MlasComputeExp (range-reduced polynomial, exact two-step scaling down to 2^-150)
 *   QW_F32_ERF  the Erf operator (MlasComputeErf: polynomial below 0.921875, 1 - exp(-p(|x|)) above)
 *   QW_F32_TANH the Tanh operator (MlasComputeTanh: a rational approximation on [-9, 9])
 *   QW_F32_SQRT the Sqrt operator (IEEE square root) */
typedef enum qw_f32_unary_op {
  QW_F32_EXP = 0,
  QW_F32_ERF = 1,
  QW_F32_TANH = 2,
  QW_F32_SQRT = 3,
} qw_f32_unary_op;
QW_API qw_status qw_f32_unary(qw_f32_unary_op op, size_t n, const float* x, float* y);

/* GELU in onnxruntime's forms, over rows of `cols` (bias: NULL or [cols], added first: v = x + bias):
 *   QW_GELU_ERF:  y = (v * 0.5f) * (erf(v * 0.70710677f) + 1)  -- ONNX Gelu-20 approximate="none",
 *                 com.microsoft Gelu, BiasGelu (with bias)
 *   QW_GELU_TANH: y = (v * 0.5f) * (tanh(v * ((0.035677408f * v) * v + 0.7978846f)) + 1)
 *                 -- ONNX Gelu-20 approximate="tanh", com.microsoft FastGelu (bias optional)
 * erf and tanh as qw_f32_unary. x == y allowed. */
typedef enum qw_gelu_form {
  QW_GELU_ERF = 0,
  QW_GELU_TANH = 1,
} qw_gelu_form;
QW_API qw_status qw_f32_gelu(qw_gelu_form form, size_t rows, size_t cols, const float* x, const float* bias, float* y);

/* Softmax over the middle axis of a contiguous [outer, axis_len, inner] tensor (ONNX Softmax-13 with any
 * axis; opset < 13 coerces to 2-D: outer = prod(dims[:axis]), axis_len = prod(dims[axis:]), inner = 1).
 * Each row of axis_len values as MlasComputeSoftmax (max, exp(x - max) summed lane-wise, times 1 / sum);
 * onnxruntime transposes other axes last and back, which changes no value. x == y allowed when inner == 1.
 * workspace: qw_f32_softmax_workspace_size bytes (0 when inner == 1: pass NULL). */
QW_API size_t qw_f32_softmax_workspace_size(size_t axis_len, size_t inner);
QW_API qw_status qw_f32_softmax(size_t outer, size_t axis_len, size_t inner, const float* x, float* y,
                                void* workspace);

/* Layer normalization of `rows` rows of `cols` (LayerNormalization with axis -1 after flattening:
 * cols = prod(dims[axis:]); com.microsoft SkipLayerNormalization with skip != NULL):
 *   v = x (+ skip[r % skip_rows]) (+ bias); mean and m2 by Welford's recurrence in float32 as onnxruntime
 *   1.30's CPU kernels do (d = v - mean; mean += d / (h + 1); m2 += d * (v - mean), h in order),
 *   std = sqrtf(m2 / cols + epsilon), y = (v - mean) / std * gamma (+ beta).
 * skip: NULL or skip_rows rows (the skip tensor repeats over the rows); bias, beta: NULL or [cols];
 * sum: NULL or [rows, cols] receiving v (SkipLayerNormalization's fourth output). x == y allowed. */
QW_API qw_status qw_f32_layer_norm(size_t rows, size_t cols, const float* x, const float* skip, size_t skip_rows,
                                   const float* bias, const float* gamma, const float* beta, float epsilon, float* y,
                                   float* sum);

/* Binary float operators with numpy broadcasting: out_dims[rank] is the output shape (contiguous), a and b
 * are read at the index dot their strides (elements; 0 broadcasts a dimension). One IEEE operation per
 * element for add / sub / mul / div; pow is onnxruntime's Pow for a float exponent: x * x and (x * x) * x
 * where the exponent is a single 2 or 3 over the innermost span, powf otherwise (libm's powf: identical
 * where qwasm and onnxruntime-web share Emscripten's musl). rank <= QW_MAX_RANK. */
typedef enum qw_f32_binary_op {
  QW_F32_ADD = 0,
  QW_F32_SUB = 1,
  QW_F32_MUL = 2,
  QW_F32_DIV = 3,
  QW_F32_POW = 4,
} qw_f32_binary_op;
QW_API qw_status qw_f32_binary(qw_f32_binary_op op, size_t rank, const int32_t* out_dims, const float* a,
                               const int32_t* a_strides, const float* b, const int32_t* b_strides, float* y);

/* ONNX Where with broadcasting: y = cond ? a : b, elements of elem_size bytes (1, 4 or 8), cond one byte
 * (non-zero = true); strides as qw_f32_binary. */
QW_API qw_status qw_where(size_t elem_size, size_t rank, const int32_t* out_dims, const uint8_t* cond,
                          const int32_t* cond_strides, const void* a, const int32_t* a_strides, const void* b,
                          const int32_t* b_strides, void* y);

/* Element types of qw_cast, numbered as ONNX's TensorProto.DataType. */
typedef enum qw_tensor_type {
  QW_TYPE_FLOAT32 = 1,
  QW_TYPE_UINT8 = 2,
  QW_TYPE_INT8 = 3,
  QW_TYPE_INT32 = 6,
  QW_TYPE_INT64 = 7,
  QW_TYPE_BOOL = 9,
} qw_tensor_type;

/* ONNX Cast as onnxruntime-web does it: float -> integer truncates toward zero, saturating (NaN -> 0;
 * the wasm build converts with the saturating instructions); integer -> float rounds to nearest even;
 * integer -> narrower integer wraps (two's complement); anything -> bool is (x != 0) (NaN is true);
 * bool -> anything is 0 or 1. */
QW_API qw_status qw_cast(size_t n, const void* x, qw_tensor_type x_type, void* y, qw_tensor_type y_type);

/* Float matrix product y[m][n] = alpha * sum_k a[m][k] * b[k][n] (b[n][k] when transpose_b), plus y as it
 * was when accumulate (onnxruntime's Gemm with beta 1: y pre-filled with the broadcast C), rows lda / ldb / ldy
 * floats apart, summed as onnxruntime's SGEMM (MLAS sgemm.cpp + SgemmKernelWasmSimd.cpp) does:
 * K is cut into blocks; within a block each output sums its products in k order starting from 0, and the
 * block results are scaled by alpha and added in block order (the first one stored, or added to y when
 * accumulating). The block length is MLAS's: 256 when onnxruntime pre-packed B (b_prepacked: the B of a
 * MatMul / Gemm is a 2-D constant initializer), otherwise 128, doubled while N is at most half the column
 * stride (which starts at 128 and halves down to 16) and halved while K is at most half of it. A single row
 * (m == 1) with alpha 1, B neither transposed nor pre-packed takes MLAS's GEMV instead: over all of K, y = a0 b0
 * (y as it is when accumulating), then four products at a time, added in turn to the columns of its vector loop
 * (all but the last n % 4), summed first ((p1 + p2) + p3) + p4 and then added for the last n % 4 columns, the
 * rest one by one. (MatMul = alpha 1; com.microsoft FusedMatMul = alpha, transB.) Batched / broadcast MatMul
 * is this per matrix; a MatMul with a 1-D B is computed by onnxruntime as one m = 1, n = 1 product per output
 * row. workspace: qw_f32_matmul_workspace_size bytes. */
QW_API size_t qw_f32_matmul_workspace_size(size_t m, size_t n, size_t k);
QW_API qw_status qw_f32_matmul(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b, size_t ldb,
                               int transpose_b, int b_prepacked, float alpha, int accumulate, float* y, size_t ldy,
                               void* workspace);

/* count products of one shape in one call (the heads of attention's batched MatMuls): product i is qw_f32_matmul's
 * with a + offsets[3i], b + offsets[3i + 1] and y + offsets[3i + 2] (element offsets, each >= 0), the same bits. With
 * at least as many products as threads each thread computes whole products, so that no B panel is gathered twice
 * and one dispatch serves them all; with fewer, each product is split by row tiles. workspace:
 * qw_f32_matmul_batch_workspace_size bytes. */
QW_API size_t qw_f32_matmul_batch_workspace_size(size_t m, size_t n, size_t k);
QW_API qw_status qw_f32_matmul_batch(size_t count, const int32_t* offsets, size_t m, size_t n, size_t k,
                                     const float* a, size_t lda, const float* b, size_t ldb, int transpose_b,
                                     int b_prepacked, float alpha, int accumulate, float* y, size_t ldy,
                                     void* workspace);
/* A constant B packed once for qw_f32_matmul_packed (what onnxruntime does with a MatMul's / Gemm's constant 2-D B):
 * b as for qw_f32_matmul (b[k][n], or b[n][k] when transpose_b; rows ldb floats apart), copied into the float GEMM
 * config's column panels, which the kernels read contiguously. qw_f32_matmul_pack_size: the bytes (0 when n or k is
 * 0 or too large). */
QW_API size_t qw_f32_matmul_pack_size(size_t n, size_t k);
QW_API qw_status qw_f32_matmul_pack(size_t n, size_t k, const float* b, size_t ldb, int transpose_b, void* packed);
/* qw_f32_matmul with b_prepacked 1 (MLAS's K blocks of 256; never the GEMV path) on a B packed by
 * qw_f32_matmul_pack: the same bits. QW_INVALID_ARGUMENT when packed is not such a B of n x k for this build's
 * float GEMM. workspace: qw_f32_matmul_workspace_size bytes. */
QW_API qw_status qw_f32_matmul_packed(size_t m, size_t n, size_t k, const float* a, size_t lda, const void* packed,
                                      float alpha, int accumulate, float* y, size_t ldy, void* workspace);

/* Dynamic int8 matrix product against weights packed once by qw_gemm_pack (B[k][n]: n_stride 1,
 * k_stride n; int8 or uint8 with their zero point), writing float, as onnxruntime's
 * com.microsoft DynamicQuantizeMatMul (its fusion of DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul
 * -> Mul -> Add):
 *   a_scale, a_zp from the WHOLE x (m rows of k): min = min(x, 0), max = max(x, 0),
 *     a_scale = max == min ? 1 : (max - min) / 255, a_zp = round_half_even(clamp(0 - min / a_scale, 0, 255));
 *   q = saturate(round_half_even(x / a_scale) + a_zp)                  (uint8, the ONNX rule)
 *   y[i][j] = (float)(sum_k (q - a_zp)(B - b_zp)) * (a_scale * b_scale[j]) (+ bias[j])
 * b_scales: b_scale_count 1 or n; bias NULL or [n]. NaN or infinite x -> QW_INVALID_ARGUMENT.
 * workspace: qw_dynamic_matmul_workspace_size bytes. */
QW_API size_t qw_dynamic_matmul_workspace_size(size_t m, size_t n, size_t k);
QW_API qw_status qw_dynamic_matmul(size_t m, size_t n, size_t k, const float* x, const void* packed,
                                   const float* b_scales, size_t b_scale_count, const float* bias, float* y,
                                   void* workspace);

/* com.microsoft MatMulIntegerToFloat: the same product for already quantized uint8 activations a with
 * their scale and zero point (onnxruntime's fusion when one DynamicQuantizeLinear feeds several MatMuls). */
QW_API qw_status qw_matmul_integer_to_float(size_t m, size_t n, size_t k, const uint8_t* a, int32_t a_zero_point,
                                            float a_scale, const void* packed, const float* b_scales,
                                            size_t b_scale_count, const float* bias, float* y, void* workspace);

/* Name of the kernel set this build selected ("wasmsimd" or "scalar"). */
QW_API const char* qw_isa(void);

#ifdef __cplusplus
}
#endif

#endif /* QWASM_H */
