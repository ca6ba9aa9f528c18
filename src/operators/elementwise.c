/* Elementwise quantized operators, PyTorch semantics (engine named per function). Binary ops take
 * contiguous, same-shaped operands unless they say otherwise; broadcasting is resolved by the caller
 * into strides. */
#include <math.h>
#include <string.h>

#include "config.h"
#include "qtypes.h"
#include "threadpool.h"
#include "quantize/quantize.h"

static float fp32_from_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
static uint32_t fp32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* Arithmetic shift right (floor), defined for negative values. */
static int32_t asr(int32_t x, uint32_t shift) {
  return x >= 0 ? (int32_t)((uint32_t)x >> shift) : -(int32_t)(((uint32_t)(-(int64_t)x) + ((UINT32_C(1) << shift) - 1)) >> shift);
}

/* Index lists (broadcasting) of n int32 entries fit in a buffer. */
static int index_lists_fit(size_t n, const int32_t* a_index, const int32_t* b_index) {
  return (a_index == NULL && b_index == NULL) || qw_count_fits(n, sizeof(int32_t));
}

/* The arguments every binary op checks: buffers, an 8-bit dtype, usable scales and zero points. */
static qw_status check_binary(size_t n, const void* a, float a_scale, int32_t a_zero_point, const void* b,
                              float b_scale, int32_t b_zero_point, qw_dtype dtype, const void* y, float y_scale,
                              int32_t y_zero_point) {
  if ((n != 0 && (a == NULL || b == NULL || y == NULL)) || !qw_dtype_is_8bit(dtype) || !qw_count_fits(n, 1)) {
    return QW_INVALID_ARGUMENT;
  }
  if (!qw_qparams_valid(dtype, a_scale, a_zero_point) || !qw_qparams_valid(dtype, b_scale, b_zero_point) ||
      !qw_qparams_valid(dtype, y_scale, y_zero_point)) {
    return QW_INVALID_QPARAMS;
  }
  return QW_OK;
}

qw_status qw_add(size_t n, const void* a, float a_scale, int32_t a_zero_point, const void* b, float b_scale,
                 int32_t b_zero_point, qw_dtype dtype, void* y, float y_scale, int32_t y_zero_point, int relu) {
  const qw_status status = check_binary(n, a, a_scale, a_zero_point, b, b_scale, b_zero_point, dtype, y, y_scale,
                                         y_zero_point);
  if (status != QW_OK) {
    return status;
  }
  const int32_t lo = qw_dtype_min(dtype), hi = qw_dtype_max(dtype);
  /* Both input scales relative to the output's, as float32; the larger sets the fixed-point shift. */
  const float a_ratio = a_scale / y_scale, b_ratio = b_scale / y_scale;
  const float max_ratio = a_ratio > b_ratio ? a_ratio : b_ratio;
  if (!(max_ratio >= 0x1.0p-14f && max_ratio < 0x1.0p+8f) || !(a_ratio >= 0x1.0p-14f) || !(b_ratio >= 0x1.0p-14f)) {
    return QW_UNSUPPORTED; /* QNNPACK / XNNPACK reject these scale ratios too */
  }
  const int32_t exponent = (int32_t)(fp32_to_bits(max_ratio) >> 23) - 127;
  const int32_t y_min = relu ? y_zero_point : lo;
  if (dtype == QW_QUINT8) {
    /* PyTorch's qnnpack engine (QNNPACK q8vadd): shift = 21 - exponent, multipliers lrintf(ratio * 2^shift),
     * the sum shifted right rounding half away from zero. */
    const uint32_t shift = (uint32_t)(21 - exponent);
    if (shift >= 32) {
      return QW_UNSUPPORTED; /* QNNPACK's own shift would be undefined here */
    }
    const float scale_multiplier = fp32_from_bits((uint32_t)(shift + 127) << 23);
    const int32_t a_mult = (int32_t)lrintf(a_ratio * scale_multiplier);
    const int32_t b_mult = (int32_t)lrintf(b_ratio * scale_multiplier);
    const int32_t zero_point_product = (int32_t)(0u - ((uint32_t)a_mult * (uint32_t)a_zero_point +
                                                       (uint32_t)b_mult * (uint32_t)b_zero_point));
    const int32_t mask = (int32_t)((UINT32_C(1) << shift) - 1);
    const int32_t threshold = mask >> 1;
    for (size_t i = 0; i < n; i++) {
      const int32_t acc = (int32_t)((uint32_t)zero_point_product + (uint32_t)(qw_load_q8(a, i, dtype) * a_mult) +
                                    (uint32_t)(qw_load_q8(b, i, dtype) * b_mult));
      const int32_t rem = (acc & mask) - (int32_t)(acc < 0);
      int32_t v = asr(acc, shift) + (int32_t)(rem > threshold) + y_zero_point;
      v = v < y_min ? y_min : v > hi ? hi : v;
      qw_store_q8(y, i, v);
    }
  } else {
    /* qint8 goes to XNNPACK in PyTorch: shift = 20 - exponent, rounding half up. */
    const uint32_t shift = (uint32_t)(20 - exponent);
    if (shift >= 32) {
      return QW_UNSUPPORTED;
    }
    const float scale_multiplier = fp32_from_bits((uint32_t)(shift + 127) << 23);
    const int32_t a_mult = (int32_t)lrintf(a_ratio * scale_multiplier);
    const int32_t b_mult = (int32_t)lrintf(b_ratio * scale_multiplier);
    const int64_t bias = ((int64_t)1 << (shift - 1)) - ((int64_t)a_mult * a_zero_point + (int64_t)b_mult * b_zero_point);
    for (size_t i = 0; i < n; i++) {
      const int64_t acc = bias + (int64_t)qw_load_q8(a, i, dtype) * a_mult + (int64_t)qw_load_q8(b, i, dtype) * b_mult;
      int64_t v = (acc >> shift) + y_zero_point;
      v = v < y_min ? y_min : v > hi ? hi : v;
      qw_store_q8(y, i, (int32_t)v);
    }
  }
  return QW_OK;
}

qw_status qw_mul(size_t n, const void* a, const int32_t* a_index, float a_scale, int32_t a_zero_point, const void* b,
                 const int32_t* b_index, float b_scale, int32_t b_zero_point, qw_dtype dtype, void* y, float y_scale,
                 int32_t y_zero_point, int relu) {
  const qw_status status = check_binary(n, a, a_scale, a_zero_point, b, b_scale, b_zero_point, dtype, y, y_scale,
                                         y_zero_point);
  if (status != QW_OK) {
    return status;
  }
  if (!index_lists_fit(n, a_index, b_index)) {
    return QW_INVALID_ARGUMENT;
  }
  const int32_t lo = qw_dtype_min(dtype), hi = qw_dtype_max(dtype);
  /* PyTorch: rint((float)((a - za)(b - zb)) * ((a_s * b_s) * (1 / y_s))) + yz, relu at yz. */
  const float multiplier = (a_scale * b_scale) * (1.0f / y_scale);
  const int32_t y_min = relu ? y_zero_point : lo;
  for (size_t i = 0; i < n; i++) {
    const int32_t ai = qw_load_q8(a, a_index ? (size_t)a_index[i] : i, dtype) - a_zero_point;
    const int32_t bi = qw_load_q8(b, b_index ? (size_t)b_index[i] : i, dtype) - b_zero_point;
    struct qw_quantize_params p;
    qw_quantize_params_init(&p, 1.0f, y_zero_point, y_min, hi);
    /* nearbyint(v) + zp, clamped: the torch rule with inv_scale 1 applied to v */
    qw_store_q8(y, i, qw_quantize_torch((float)(ai * bi) * multiplier, &p));
  }
  return QW_OK;
}

/* expf correctly rounded in practice: exp in double, rounded once to float. */
static float expf_rounded(float x) {
  return (float)exp((double)x);
}

/* PyTorch's generic (TensorIterator) kernels dequantize elements in whole vector blocks with an FMA,
 * fma(s, q, s * -zp), and the remaining tail with (q - zp) * s: two tables, [0] for the blocks and
 * [1] for the tail (qw_lut8_blocked applies them). The blocks quantize by torch's rule (ATen's vector
 * quantize adds the zero point after rounding); the tail by torch's rule too in PyTorch 1.13, by
 * FBGEMM's scalar rule in PyTorch 2.x's x86 builds (tail_fbgemm). */
static qw_status generic_tables(qw_unary_op op, qw_dtype dtype, float in_scale, int32_t in_zero_point,
                                float out_scale, int32_t out_zero_point, float param, int tail_fbgemm,
                                uint8_t* tables) {
  const int32_t lo = qw_dtype_min(dtype), hi = qw_dtype_max(dtype);
  if (!qw_qparams_valid(dtype, in_scale, in_zero_point) || !qw_qparams_valid(dtype, out_scale, out_zero_point)) {
    return QW_INVALID_QPARAMS;
  }
  if (!isfinite(param)) {
    return QW_INVALID_ARGUMENT;
  }
  struct qw_quantize_params p;
  qw_quantize_params_init(&p, out_scale, out_zero_point, lo, hi);
  const float premul = in_scale * -(float)in_zero_point;
  for (int32_t q = lo; q <= hi; q++) {
    const float dx[2] = {fmaf(in_scale, (float)q, premul), (float)(q - in_zero_point) * in_scale};
    for (int t = 0; t < 2; t++) {
      const float x = dx[t];
      float dy;
      if (op == QW_UNARY_HARDSWISH_FBGEMM) {
        float x3 = x + 3.0f;
        x3 = x3 > 0.0f ? x3 : 0.0f;
        x3 = x3 < 6.0f ? x3 : 6.0f;
        dy = t == 0 ? x * x3 * (1.0f / 6.0f) : x * x3 / 6.0f; /* the vector code multiplies by 1/6 */
      } else if (op == QW_UNARY_SIGMOID_FBGEMM) {
        dy = 1.0f / (1.0f + expf_rounded(-x));
      } else {
        dy = x > 0.0f ? x : x * param;
      }
      const int32_t y = t == 1 && tail_fbgemm ? qw_quantize_fbgemm_scalar(dy, &p) : qw_quantize_torch(dy, &p);
      tables[t * 256 + (uint8_t)q] = (uint8_t)y;
    }
  }
  return QW_OK;
}

qw_status qw_lut8_blocked(size_t n, const void* x, const uint8_t* tables, size_t block, void* y) {
  if ((n != 0 && (x == NULL || y == NULL)) || tables == NULL || block == 0 || !qw_count_fits(n, 1)) {
    return QW_INVALID_ARGUMENT;
  }
  const size_t body = n / block * block;
  const qw_u8_lut_ukernel lut = qw_kernels()->lut;
  if (body != 0) {
    lut(body, (const uint8_t*)x, tables, (uint8_t*)y);
  }
  if (body != n) {
    lut(n - body, (const uint8_t*)x + body, tables + 256, (uint8_t*)y + body);
  }
  return QW_OK;
}

qw_status qw_unary_table(qw_unary_op op, qw_dtype in_dtype, float in_scale, int32_t in_zero_point, float out_scale,
                         int32_t out_zero_point, float param, uint8_t* table) {
  if (table == NULL || (unsigned)op > QW_UNARY_SIGMOID_FBGEMM || !qw_dtype_is_8bit(in_dtype)) {
    return QW_INVALID_ARGUMENT;
  }
  if (op >= QW_UNARY_LEAKY_RELU) {
    return generic_tables(op, in_dtype, in_scale, in_zero_point, out_scale, out_zero_point, param,
                          op != QW_UNARY_LEAKY_RELU, table);
  }
  if (in_dtype != QW_QUINT8) {
    return QW_UNSUPPORTED;
  }
  if (!qw_qparams_valid(QW_QUINT8, in_scale, in_zero_point) ||
      !qw_qparams_valid(QW_QUINT8, out_scale, out_zero_point)) {
    return QW_INVALID_QPARAMS;
  }
  (void)param;
  /* QNNPACK's lookup tables (PyTorch's qnnpack engine), entry by entry as QNNPACK builds them. */
  const float inv_output_scale = 1.0f / out_scale;
  for (int32_t i = 0; i < 256; i++) {
    const float x = in_scale * (float)(i - in_zero_point);
    float v;
    if (op == QW_UNARY_HARDSWISH_QNNPACK) {
      float x2 = x + 3.0f;
      x2 = x2 > 0.0f ? x2 : 0.0f;
      x2 = x2 < 6.0f ? x2 : 6.0f;
      v = inv_output_scale * (x * x2 / 6.0f) + (float)out_zero_point;
    } else {
      v = inv_output_scale / (1.0f + expf_rounded(-x)); /* the output zero point is added after rounding */
    }
    v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
    int32_t q = (int32_t)lrintf(v);
    if (op == QW_UNARY_SIGMOID_QNNPACK) {
      q = (q + out_zero_point) & 0xFF;
    }
    table[i] = (uint8_t)q;
  }
  return QW_OK;
}

qw_status qw_add_float(size_t n, const void* a, const int32_t* a_index, float a_scale, int32_t a_zero_point,
                       const void* b, const int32_t* b_index, float b_scale, int32_t b_zero_point, qw_dtype dtype,
                       void* y, float y_scale, int32_t y_zero_point, int relu, size_t inner, size_t block,
                       qw_rounding tail_rounding) {
  const qw_status status = check_binary(n, a, a_scale, a_zero_point, b, b_scale, b_zero_point, dtype, y, y_scale,
                                        y_zero_point);
  if (status != QW_OK) {
    return status;
  }
  if (inner == 0 || block == 0 || (n != 0 && n % inner != 0) || !index_lists_fit(n, a_index, b_index) ||
      (tail_rounding != QW_ROUND_TORCH && tail_rounding != QW_ROUND_FBGEMM_SCALAR)) {
    return QW_INVALID_ARGUMENT;
  }
  struct qw_quantize_params p;
  qw_quantize_params_init(&p, y_scale, y_zero_point, qw_dtype_min(dtype), qw_dtype_max(dtype));
  const float a_premul = a_scale * -(float)a_zero_point, b_premul = b_scale * -(float)b_zero_point;
  const size_t vector_part = inner / block * block;
  for (size_t i = 0; i < n; i++) {
    const int32_t qa = qw_load_q8(a, a_index ? (size_t)a_index[i] : i, dtype);
    const int32_t qb = qw_load_q8(b, b_index ? (size_t)b_index[i] : i, dtype);
    float da, db;
    const int vector = i % inner < vector_part;
    if (vector) {
      da = fmaf(a_scale, (float)qa, a_premul);
      db = fmaf(b_scale, (float)qb, b_premul);
    } else {
      da = (float)(qa - a_zero_point) * a_scale;
      db = (float)(qb - b_zero_point) * b_scale;
    }
    float c = da + db;
    if (relu) {
      c = c > 0.0f ? c : 0.0f;
    }
    qw_store_q8(y, i, vector || tail_rounding == QW_ROUND_TORCH ? qw_quantize_torch(c, &p) : qw_quantize_fbgemm_scalar(c, &p));
  }
  return QW_OK;
}

/* QLinearAdd without broadcasting: chunks of elements over the thread pool (the kernel's result per
 * element does not depend on where a chunk starts). */
struct vadd_onnx_job {
  qw_vadd_onnx_ukernel vadd;
  const uint8_t* a;
  const uint8_t* b;
  uint8_t* y;
  const struct qw_vadd_onnx_params* params;
};

static void vadd_onnx_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct vadd_onnx_job* job = (const struct vadd_onnx_job*)context;
  job->vadd(count, job->a + start, job->b + start, job->y + start, job->params);
}

static qw_status binary_onnx(int mul, size_t n, const void* a, const int32_t* a_index, float a_scale,
                             int32_t a_zero_point, const void* b, const int32_t* b_index, float b_scale,
                             int32_t b_zero_point, qw_dtype dtype, void* y, float y_scale, int32_t y_zero_point) {
  const qw_status status = check_binary(n, a, a_scale, a_zero_point, b, b_scale, b_zero_point, dtype, y, y_scale,
                                        y_zero_point);
  if (status != QW_OK) {
    return status;
  }
  if (!index_lists_fit(n, a_index, b_index)) {
    return QW_INVALID_ARGUMENT;
  }
  const struct qw_vadd_onnx_params p = {
      .a_scale = a_scale,
      .b_scale = b_scale,
      .y_scale = y_scale,
      .a_zero_point = a_zero_point,
      .b_zero_point = b_zero_point,
      .y_zero_point = (float)y_zero_point,
      .y_min = (float)(qw_dtype_min(dtype) - y_zero_point),
      .y_max = (float)(qw_dtype_max(dtype) - y_zero_point),
  };
  if (!mul && a_index == NULL && b_index == NULL) {
    const struct vadd_onnx_job job = {qw_kernels()->vadd_onnx[dtype == QW_QINT8], (const uint8_t*)a,
                                      (const uint8_t*)b, (uint8_t*)y, &p};
    /* tiles from 4 Ki elements, not QW_TILE_MIN_ELEMENTS: at about 0.5 ns an element (four f32x4.div per 16) that is
     * 2 us, and MobileNetV2's residual adds of 12 Ki elements then split (two threads, Node 24: 6.6 -> 6.0 us a
     * node, its JavaScript included) */
    qw_parallelize(vadd_onnx_task, &job, n, qw_parallel_tile(n, 64, 2, 4096));
    return QW_OK;
  }
  for (size_t i = 0; i < n; i++) { /* broadcasting: the caller's index lists, the same per-element rule */
    const int32_t qa = qw_load_q8(a, a_index ? (size_t)a_index[i] : i, dtype);
    const int32_t qb = qw_load_q8(b, b_index ? (size_t)b_index[i] : i, dtype);
    qw_store_q8(y, i, mul ? qw_vmul_onnx_value(qa, qb, &p) : qw_vadd_onnx_value(qa, qb, &p));
  }
  return QW_OK;
}

qw_status qw_add_onnx(size_t n, const void* a, const int32_t* a_index, float a_scale, int32_t a_zero_point,
                      const void* b, const int32_t* b_index, float b_scale, int32_t b_zero_point, qw_dtype dtype,
                      void* y, float y_scale, int32_t y_zero_point) {
  return binary_onnx(0, n, a, a_index, a_scale, a_zero_point, b, b_index, b_scale, b_zero_point, dtype, y, y_scale,
                     y_zero_point);
}

/* QLinearMul is rare in CNNs: the scalar rule only. */
qw_status qw_mul_onnx(size_t n, const void* a, const int32_t* a_index, float a_scale, int32_t a_zero_point,
                      const void* b, const int32_t* b_index, float b_scale, int32_t b_zero_point, qw_dtype dtype,
                      void* y, float y_scale, int32_t y_zero_point) {
  return binary_onnx(1, n, a, a_index, a_scale, a_zero_point, b, b_index, b_scale, b_zero_point, dtype, y, y_scale,
                     y_zero_point);
}
