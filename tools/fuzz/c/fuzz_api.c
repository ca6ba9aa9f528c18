/* A libFuzzer harness over qwasm's C entry points (src/include/qwasm.h), built natively with AddressSanitizer and
 * UBSan by tools/fuzz/c/run.sh. Each input is a little program: a selector byte picks an entry point, the following
 * bytes give its sizes, geometry, enums, scales and data (mostly small values, sometimes extreme ones: negative,
 * 2^30, INT32_MAX, NaN). The harness allocates every buffer the way the API contract says the caller must (sizes
 * from the *_size functions, or computed from the geometry in 64 bits), so any out-of-bounds access, overflow or
 * undefined behaviour the sanitizers see is the library's. Where a size function says a geometry is invalid or too
 * large (0), the entry point is called with 16-byte buffers and must refuse it: returning QW_OK there is a failure
 * (abort). Buffers the harness would not allocate (past CAP bytes) are skipped, not called. A setup byte first picks
 * the input's thread count (1-4) and, in the relaxed build, the relaxed kernels' semantics. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qwasm.h"

#define CAP (8u << 20)   /* largest buffer the harness allocates */
#define WORK (1u << 24)  /* most multiply-adds (or window taps) a call may take: sanitized kernels are slow */

struct input {
  const uint8_t* p;
  size_t n;
};

static uint8_t u8(struct input* in) {
  if (in->n == 0) return 0;
  in->n--;
  return *in->p++;
}

static uint32_t u32(struct input* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v = v << 8 | u8(in);
  return v;
}

/* Mostly small sizes, sometimes one of the values that break size arithmetic. */
static int32_t i32(struct input* in) {
  static const int32_t extreme[] = {-1, 0, 1, 2, 3, 16, 255, 256, 65535, 65536, 1 << 20, 1 << 30, 0x7fffffff, (int32_t)0x80000000,
                                    1000000000, 46341, 32767, 32768};
  const uint8_t kind = u8(in);
  if (kind < 200) return kind % 9;
  if (kind < 240) return extreme[u8(in) % (sizeof extreme / sizeof extreme[0])];
  return (int32_t)u32(in);
}

/* v + d with int32 wrap-around (no undefined overflow in the harness itself). */
static int32_t wrap(int32_t v, int32_t d) {
  return (int32_t)((uint32_t)v + (uint32_t)d);
}

static size_t size(struct input* in) {
  const int32_t v = i32(in);
  return v < 0 ? (size_t)(uint32_t)v : (size_t)v;
}

static float real(struct input* in) {
  static const float nice[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 0.1f, 1e-3f, 1e-38f, 3e-39f, 1e38f, INFINITY, -INFINITY, NAN, 255.0f};
  const uint8_t kind = u8(in);
  if (kind < 192) return nice[kind % (sizeof nice / sizeof nice[0])];
  const uint32_t bits = u32(in);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* A positive scale most of the time. */
static float scale(struct input* in) {
  return u8(in) < 220 ? (float)(1 + u8(in)) / 256.0f : real(in);
}

/* ---- buffers: every allocation of a case, freed at its end --------------------------------------------------- */

static void* buffers[64];
static size_t nbuffers;

/* size bytes (at least 1) filled from the input, or NULL past CAP. */
static void* buffer(struct input* in, uint64_t bytes) {
  if (bytes > CAP || nbuffers == sizeof buffers / sizeof buffers[0]) return NULL;
  uint8_t* p = malloc(bytes == 0 ? 1 : (size_t)bytes);
  if (p == NULL) abort();
  for (size_t i = 0; i < bytes; i++) p[i] = in->n ? u8(in) : (uint8_t)(i * 37);
  buffers[nbuffers++] = p;
  return p;
}

static float* floats(struct input* in, uint64_t count) {
  float* f = buffer(in, count * 4);
  for (uint64_t i = 0; f != NULL && i < count; i++) f[i] = (i & 7) == 0 ? real(in) : (float)((int)(i % 17) - 8) / 4.0f;
  return f;
}

static uint8_t tiny[4][16];

/* An entry point given a geometry its own size function rejected must refuse it. */
static void must_refuse(qw_status status, const char* what) {
  if (status == QW_OK) {
    fprintf(stderr, "%s accepted arguments its size function rejected\n", what);
    abort();
  }
}

/* ---- the cases ------------------------------------------------------------------------------------------------- */

static void quantize(struct input* in) {
  const size_t n = size(in);
  const int dtype = u8(in) % 4, rounding = u8(in) % 5;
  const float s = scale(in);
  const int32_t zp = wrap(i32(in), -4);
  float* x = floats(in, n);
  void* y = buffer(in, (uint64_t)n * 4);
  float* back = buffer(in, (uint64_t)n * 4);
  if (x == NULL || y == NULL || back == NULL) return;
  qw_quantize(n, x, y, dtype, rounding, s, zp);
  qw_dequantize(n, y, back, dtype, s, zp);
  qw_requantize(n, y, dtype, s, zp, y, u8(in) % 4, scale(in), i32(in), u8(in) % 5);
  const size_t outer = size(in) % 5, channels = size(in) % 9, inner = size(in) % 7;
  const uint64_t count = (uint64_t)outer * channels * inner;
  float* scales = floats(in, channels);
  int32_t* zps = buffer(in, (uint64_t)channels * 4);
  double* scales64 = buffer(in, (uint64_t)channels * 8);
  float* xc = floats(in, count);
  void* yc = buffer(in, count * 4);
  float* backc = buffer(in, count * 4);
  if (scales == NULL || zps == NULL || scales64 == NULL || xc == NULL || yc == NULL || backc == NULL) return;
  for (size_t c = 0; c < channels; c++) scales64[c] = scales[c];
  qw_quantize_per_channel(outer, channels, inner, xc, yc, dtype, rounding, scales, zps);
  qw_dequantize_per_channel(outer, channels, inner, yc, backc, dtype, scales64, zps);
  qw_fake_quantize(n, x, back, s, zp, wrap(i32(in), -128), wrap(i32(in), +120));
  qw_fake_quantize_per_channel(outer, channels, inner, xc, backc, scales, zps, -128, 127);
  float lo, hi;
  if (n != 0) qw_observe_minmax(n, x, &lo, &hi);
  if (count != 0 && channels <= 8) {
    float mins[8], maxs[8];
    qw_observe_minmax_per_channel(outer, channels, inner, xc, mins, maxs);
  }
}

static void qparams(struct input* in) {
  int32_t qmin = 0, qmax = 0, zp;
  float s;
  qw_quant_range(u8(in) % 4, u8(in) & 1, u8(in) & 1, wrap(i32(in), -4), i32(in), &qmin, &qmax);
  qw_choose_qparams(real(in), real(in), u8(in) % 4, u8(in) % 5, qmin, qmax, u8(in) & 1, real(in), &s, &zp);
  const size_t channels = size(in) % 16;
  float* mins = floats(in, channels);
  float* maxs = floats(in, channels);
  float* scales = buffer(in, (uint64_t)channels * 4);
  int32_t* zps = buffer(in, (uint64_t)channels * 4);
  if (mins && maxs && scales && zps) qw_choose_qparams_per_channel(channels, mins, maxs, u8(in) % 4, u8(in) % 5, qmin, qmax, 0, 1e-7f, scales, zps);
}

static void read_conv_shape(struct input* in, qw_conv2d_shape* s) {
  int32_t* f = (int32_t*)s;
  for (int i = 0; i < 16; i++) f[i] = i32(in);
  if (u8(in) < 128) { /* a plausible geometry half the time */
    s->batch %= 3;
    s->in_c = 1 + s->in_c % 8;
    s->groups = 1 + (uint32_t)s->groups % 4;
    s->in_c = s->in_c * s->groups;
    s->out_c = s->groups * (1 + (uint32_t)s->out_c % 6);
    const uint8_t depthwise = u8(in);
    if (depthwise < 96) s->in_c = s->out_c = s->groups = 2 + depthwise % 24; /* the depthwise pair-row kernels */
  }
}

/* One requantization blob for n channels in a random mode (0 when it cannot be made). */
static void* requantization(struct input* in, size_t n, int int32_out) {
  const size_t bytes = qw_requantization_size(n);
  void* blob = bytes ? buffer(in, bytes) : NULL;
  double* ws = buffer(in, (uint64_t)n * 8);
  int32_t* wz = buffer(in, (uint64_t)n * 4);
  float* bias = floats(in, n);
  if (blob == NULL || ws == NULL || wz == NULL || bias == NULL) return NULL;
  for (size_t j = 0; j < n; j++) {
    ws[j] = 0.001 * (double)(1 + j % 7);
    wz[j] = 0;
  }
  const int mode = int32_out ? QW_REQUANT_NONE : (int)(u8(in) % 6);
  const qw_status status = qw_requantization_init(blob, n, mode, scale(in), ws, u8(in) & 1 ? n : 1, wz, QW_QINT8,
                                                  mode == QW_REQUANT_FBGEMM || mode == QW_REQUANT_QNNPACK ? bias : NULL, NULL,
                                                  scale(in), int32_out ? 0 : (int32_t)(u8(in) % 200), int32_out ? QW_QINT32 : (u8(in) & 1),
                                                  u8(in) & 1 ? -INFINITY : real(in), INFINITY, u8(in) & 1);
  if (status != QW_OK) return NULL;
  if (u8(in) < 64) qw_requantization_clamp(blob, n, i32(in), 255);
  return blob;
}

static void conv2d(struct input* in) {
  qw_conv2d_shape s;
  read_conv_shape(in, &s);
  int32_t oh = 0, ow = 0;
  const int dtype = u8(in) & 1;
  const size_t pack = qw_conv2d_pack_size(&s), ws = qw_conv2d_workspace_size(&s);
  if (pack == 0) {
    must_refuse(qw_conv2d_pack(&s, tiny[0], QW_QINT8, (int32_t*)tiny[1], 1, tiny[2]), "qw_conv2d_pack");
    return;
  }
  const uint64_t weights = (uint64_t)s.out_c * (s.in_c / s.groups) * s.kernel_h * s.kernel_w;
  void* w = buffer(in, weights);
  int32_t* zps = buffer(in, (uint64_t)s.out_c * 4);
  void* packed = buffer(in, pack);
  if (w == NULL || zps == NULL || packed == NULL) return;
  for (int32_t c = 0; c < s.out_c; c++) zps[c] = (int32_t)(u8(in) % 8) - 4;
  if (qw_conv2d_pack(&s, w, QW_QINT8, zps, u8(in) & 1 ? (size_t)s.out_c : 1, packed) != QW_OK) return;
  if (qw_conv2d_output_size(&s, &oh, &ow) != QW_OK || ws == 0) {
    must_refuse(qw_conv2d(&s, tiny[0], dtype, 0, packed, tiny[1], tiny[2], tiny[3]), "qw_conv2d");
    return;
  }
  const int int32_out = u8(in) < 32;
  if ((double)s.batch * oh * ow * s.out_c * (s.in_c / s.groups) * s.kernel_h * s.kernel_w > WORK) return;
  void* blob = requantization(in, (size_t)s.out_c, int32_out);
  void* x = buffer(in, (uint64_t)s.batch * s.in_h * s.in_w * s.in_c);
  void* y = buffer(in, (uint64_t)s.batch * oh * ow * s.out_c * (int32_out ? 4 : 1));
  void* workspace = buffer(in, ws);
  if (blob && x && y && workspace) qw_conv2d(&s, x, dtype, (int32_t)(u8(in) % 255) - (dtype ? 128 : 0), packed, blob, y, workspace);
}

static void conv2d_f32(struct input* in) {
  qw_conv2d_shape s;
  read_conv_shape(in, &s);
  int32_t oh = 0, ow = 0;
  const size_t pack = qw_f32_conv2d_pack_size(&s), ws = qw_f32_conv2d_workspace_size(&s);
  if (pack == 0) {
    must_refuse(qw_f32_conv2d_pack(&s, (float*)tiny[0], NULL, (float*)tiny[1]), "qw_f32_conv2d_pack");
    return;
  }
  float* w = floats(in, (uint64_t)s.out_c * (s.in_c / s.groups) * s.kernel_h * s.kernel_w);
  float* bias = floats(in, (uint64_t)s.out_c);
  float* packed = buffer(in, pack);
  if (w == NULL || bias == NULL || packed == NULL || qw_f32_conv2d_pack(&s, w, u8(in) & 1 ? bias : NULL, packed) != QW_OK) return;
  if (qw_conv2d_output_size(&s, &oh, &ow) != QW_OK || ws == 0) {
    must_refuse(qw_f32_conv2d(&s, (float*)tiny[0], packed, (float*)tiny[1], tiny[2]), "qw_f32_conv2d");
    return;
  }
  if ((double)s.batch * oh * ow * s.out_c * (s.in_c / s.groups) * s.kernel_h * s.kernel_w > WORK) return;
  float* x = floats(in, (uint64_t)s.batch * s.in_h * s.in_w * s.in_c);
  float* y = buffer(in, (uint64_t)s.batch * oh * ow * s.out_c * 4);
  void* workspace = buffer(in, ws);
  if (x && y && workspace && qw_f32_conv2d(&s, x, packed, y, workspace) == QW_OK && u8(in) & 1) {
    qw_f32_relu((size_t)s.batch * oh * ow * s.out_c, y, y);
  }
}

static void gemm(struct input* in) {
  const size_t n = size(in), k = size(in), m = size(in) % 9;
  const size_t pack = qw_gemm_pack_size(n, k), ws = qw_gemm_workspace_size(n, k);
  if (pack == 0) {
    must_refuse(qw_gemm_pack(n, k, tiny[0], QW_QINT8, k, 1, (int32_t*)tiny[1], 1, tiny[2]), "qw_gemm_pack");
    return;
  }
  if (ws == 0) return; /* packable, but no workspace for a product: qw_gemm refuses (sizes checked below) */
  void* w = buffer(in, (uint64_t)n * k);
  int32_t zp = 0;
  void* packed = buffer(in, pack);
  if (w == NULL || packed == NULL || qw_gemm_pack(n, k, w, u8(in) & 1, k, 1, &zp, 1, packed) != QW_OK) return;
  const int int32_out = u8(in) < 32;
  if ((double)m * n * k > WORK) return;
  const size_t a_stride = k + u8(in) % 3, y_stride = n * (int32_out ? 4 : 1) + u8(in) % 3;
  void* blob = requantization(in, n, int32_out);
  void* a = buffer(in, (uint64_t)m * a_stride);
  void* y = buffer(in, (uint64_t)m * y_stride);
  void* workspace = buffer(in, ws);
  if (blob && a && y && workspace) qw_gemm(m, n, k, a, a_stride, u8(in) & 1, (int32_t)(u8(in) % 128), packed, blob, y, y_stride, workspace);
  /* the dynamic products against the same packed weights */
  const size_t dws = qw_dynamic_matmul_workspace_size(m, n, k);
  float* x = floats(in, (uint64_t)m * k);
  float* bs = floats(in, n);
  float* yf = buffer(in, (uint64_t)m * n * 4);
  void* dwork = dws ? buffer(in, dws) : NULL;
  if (x && bs && yf && dwork && (u8(in) & 1) == 0) {
    qw_dynamic_matmul(m, n, k, x, packed, bs, n, u8(in) & 1 ? bs : NULL, yf, dwork);
    qw_matmul_integer_to_float(m, n, k, (const uint8_t*)a, (int32_t)(u8(in) % 256), scale(in), packed, bs, 1, NULL, yf, dwork);
  }
}

static void pooling(struct input* in) {
  qw_pool2d_shape s;
  int32_t* f = (int32_t*)&s;
  for (int i = 0; i < 14; i++) f[i] = i32(in);
  if (u8(in) < 128) {
    s.out_h = qw_pool_output_size(s.in_h, s.kernel_h, s.stride_h, s.pad_top, s.dilation_h, u8(in) & 1);
    s.out_w = qw_pool_output_size(s.in_w, s.kernel_w, s.stride_w, s.pad_left, s.dilation_w, u8(in) & 1);
  }
  const int dtype = u8(in) & 1;
  const size_t ws = qw_max_pool2d_workspace_size(&s);
  if (ws == 0) {
    must_refuse(qw_max_pool2d(&s, tiny[0], dtype, tiny[1], tiny[2], 0), "qw_max_pool2d");
    must_refuse(qw_avg_pool2d(&s, tiny[0], dtype, 0.1f, 0, tiny[1], u8(in) % 8, 1, 0, 0), "qw_avg_pool2d");
    return;
  }
  if ((double)s.batch * s.out_h * s.out_w * s.channels * s.kernel_h * s.kernel_w > WORK ||
      (double)s.batch * s.in_h * s.in_w * s.channels > WORK) {
    return;
  }
  void* x = buffer(in, (uint64_t)s.batch * s.in_h * s.in_w * s.channels);
  void* y = buffer(in, (uint64_t)s.batch * s.out_h * s.out_w * s.channels);
  void* workspace = buffer(in, ws);
  if (x == NULL || y == NULL || workspace == NULL) return;
  qw_max_pool2d(&s, x, dtype, y, workspace, u8(in) & 1);
  qw_avg_pool2d(&s, x, dtype, scale(in), (int32_t)(u8(in) % 128), y, u8(in) % 10, u8(in) & 1, i32(in), i32(in));
  /* the whole input as batch x pixels x channels; y holds batch x channels when the output has a pixel */
  if (s.out_h >= 1 && s.out_w >= 1) {
    qw_global_avg_pool_ort((size_t)s.batch, (size_t)s.in_h * s.in_w, (size_t)s.channels, x, dtype, (int32_t)(u8(in) % 128),
                           scale(in), (int32_t)(u8(in) % 128) - 64 * dtype, y);
  }
}

static void copy_strided(struct input* in) {
  const size_t rank = u8(in) % 10, elem = (size_t)1 << (u8(in) % 5);
  int32_t shape[9], ss[9], ds[9];
  uint64_t src_span = 0, dst_span = 0;
  int empty = 0;
  for (size_t k = 0; k < rank && k < 9; k++) {
    shape[k] = i32(in) % 9;
    ss[k] = i32(in);
    ds[k] = i32(in);
    if (shape[k] == 0) empty = 1;
    if (shape[k] > 0 && ss[k] >= 0 && ds[k] >= 0) {
      src_span += (uint64_t)(shape[k] - 1) * (uint64_t)ss[k];
      dst_span += (uint64_t)(shape[k] - 1) * (uint64_t)ds[k];
    }
  }
  void* src = empty ? tiny[0] : buffer(in, (src_span + 1) * elem);
  void* dst = empty ? tiny[1] : buffer(in, (dst_span + 1) * elem);
  if (src && dst) qw_copy_strided(elem, rank, shape, src, ss, dst, ds);
  /* qw_gather: rows of `elem` bytes picked by any int32 indices (those outside [-axis, axis) must be refused) */
  const size_t outer = u8(in) % 4, axis = u8(in) % 9, count = u8(in) % 9;
  int32_t indices[8];
  for (size_t i = 0; i < count; i++) indices[i] = u8(in) & 1 ? i32(in) : (int32_t)(u8(in) % 19) - 9;
  void* table = buffer(in, (uint64_t)outer * axis * elem);
  void* rows = buffer(in, (uint64_t)outer * count * elem);
  if (table && rows) qw_gather(outer, axis, elem, table, count, indices, rows);
}

static void elementwise(struct input* in) {
  const size_t n = size(in) % 4096, na = 1 + size(in) % 64, nb = 1 + size(in) % 64;
  const int dtype = u8(in) % 3;
  void* a = buffer(in, na);
  void* b = buffer(in, nb);
  void* same = buffer(in, n);
  int32_t* ai = buffer(in, (uint64_t)n * 4);
  int32_t* bi = buffer(in, (uint64_t)n * 4);
  uint8_t* y = buffer(in, n);
  uint8_t* table = buffer(in, 512);
  if (!a || !b || !same || !ai || !bi || !y || !table) return;
  for (size_t i = 0; i < n; i++) {
    ai[i] = (int32_t)(i % na);
    bi[i] = (int32_t)((i * 7) % nb);
  }
  const float as = scale(in), bs = scale(in), ys = scale(in);
  const int32_t az = (int32_t)(u8(in) % 200) - (dtype == QW_QINT8 ? 100 : 0), bz = az / 2, yz = az / 3;
  qw_add(n, same, as, az, same, bs, bz, dtype, y, ys, yz, u8(in) & 1);
  const size_t inner = 1 + size(in) % 16;
  qw_add_float(n - n % inner, a, ai, as, az, b, bi, bs, bz, dtype, y, ys, yz, u8(in) & 1, inner, 1 + size(in) % 64, u8(in) % 4);
  /* an index list of NULL reads element i: that operand then has n elements */
  const int b_listed = u8(in) & 1, a_listed = u8(in) & 1;
  qw_add_onnx(n, a, ai, as, az, b_listed ? b : same, b_listed ? bi : NULL, bs, bz, dtype, y, ys, yz);
  qw_mul_onnx(n, a, ai, as, az, b, bi, bs, bz, dtype, y, ys, yz);
  qw_mul(n, a_listed ? a : same, a_listed ? ai : NULL, as, az, b, bi, bs, bz, dtype, y, ys, yz, u8(in) & 1);
  qw_unary_table(u8(in) % 7, dtype, as, az, ys, yz, real(in), table);
  qw_lut8(n, same, table, y);
  qw_lut8_blocked(n, same, table, size(in), y);
  float s;
  int32_t zp;
  float* x = floats(in, n);
  if (x) qw_dynamic_quantize(n, x, y, &s, &zp);
}

static void float_ops(struct input* in) {
  const size_t rows = size(in) % 64, cols = size(in) % 64, skip_rows = size(in) % 4;
  float* x = floats(in, (uint64_t)rows * cols);
  float* y = buffer(in, (uint64_t)rows * cols * 4);
  float* skip = floats(in, (uint64_t)(skip_rows ? skip_rows : 1) * cols);
  float* v = floats(in, cols);
  float* sum = buffer(in, (uint64_t)rows * cols * 4);
  void* cast_x = buffer(in, (uint64_t)rows * cols * 8); /* elements of up to 8 bytes */
  void* cast_y = buffer(in, (uint64_t)rows * cols * 8);
  if (!x || !y || !skip || !v || !sum || !cast_x || !cast_y) return;
  qw_f32_unary(u8(in) % 5, rows * cols, x, y);
  qw_f32_gelu(u8(in) % 3, rows, cols, x, u8(in) & 1 ? v : NULL, y);
  qw_f32_layer_norm(rows, cols, x, u8(in) & 1 ? skip : NULL, skip_rows, u8(in) & 1 ? v : NULL, v, u8(in) & 1 ? v : NULL, real(in), y, u8(in) & 1 ? sum : NULL);
  const int types[] = {1, 2, 3, 6, 7, 9, 0, 4};
  qw_cast(rows * cols, cast_x, types[u8(in) % 8], cast_y, types[u8(in) % 8]);
  const size_t outer = size(in) % 8, axis = size(in) % 16, inner = size(in) % 8;
  const size_t ws = qw_f32_softmax_workspace_size(axis, inner);
  float* sx = floats(in, (uint64_t)outer * axis * inner);
  float* sy = buffer(in, (uint64_t)outer * axis * inner * 4);
  void* swork = ws ? buffer(in, ws) : NULL;
  if (sx && sy) qw_f32_softmax(outer, axis, inner, sx, sy, swork);
  /* broadcasting binary ops and Where over random strides, buffers sized by each operand's span */
  const size_t rank = u8(in) % 6;
  int32_t dims[5], st[3][5];
  uint64_t count = 1, span[3] = {0, 0, 0};
  for (size_t k = 0; k < rank && k < 5; k++) {
    dims[k] = i32(in) % 6;
    count *= (uint64_t)(dims[k] < 0 ? 0 : dims[k]);
    for (int o = 0; o < 3; o++) {
      st[o][k] = u8(in) < 200 ? (int32_t)(u8(in) % 8) : i32(in);
      if (dims[k] > 0 && st[o][k] >= 0) span[o] += (uint64_t)(dims[k] - 1) * (uint64_t)st[o][k];
    }
  }
  float* a = floats(in, span[0] + 1);
  float* b = floats(in, span[1] + 1);
  uint8_t* cond = buffer(in, span[2] + 1);
  float* out = buffer(in, count * 8 + 8);
  if (a && b && cond && out) {
    qw_f32_binary(u8(in) % 6, rank, dims, a, st[0], b, st[1], out);
    qw_where(4, rank, dims, cond, st[2], a, st[0], b, st[1], out);
  }
  /* matmul */
  const size_t m = size(in) % 16, n = size(in) % 16, k = size(in) % 16;
  const int trans = u8(in) & 1;
  const size_t lda = k + u8(in) % 2, ldb = (trans ? k : n) + u8(in) % 2, ldy = n + u8(in) % 2;
  const size_t mws = qw_f32_matmul_workspace_size(m, n, k);
  float* ma = floats(in, (uint64_t)m * lda);
  float* mb = floats(in, (uint64_t)(trans ? n : k) * ldb);
  float* my = floats(in, (uint64_t)m * ldy);
  void* mwork = mws ? buffer(in, mws) : NULL;
  if (ma && mb && my && mwork) qw_f32_matmul(m, n, k, ma, lda, mb, ldb, trans, u8(in) & 1, real(in), u8(in) & 1, my, ldy, mwork);
  /* the same operands as up to three products of a batch (every offset 0: the products rewrite the same y) */
  static const int32_t zero_offsets[9] = {0};
  const size_t bws = qw_f32_matmul_batch_workspace_size(m, n, k);
  void* bwork = bws ? buffer(in, bws) : NULL;
  if (ma && mb && my && bwork) {
    qw_f32_matmul_batch(1 + u8(in) % 3, zero_offsets, m, n, k, ma, lda, mb, ldb, trans, u8(in) & 1, real(in), u8(in) & 1,
                        my, ldy, bwork);
  }
}

static void histogram(struct input* in) {
  const size_t n = size(in) % 4096, bins = size(in) % 4096;
  const size_t ws = qw_histogram_workspace_size(bins);
  float* x = floats(in, n);
  float* hist = buffer(in, (uint64_t)bins * 4);
  void* workspace = ws ? buffer(in, ws) : NULL;
  if (!x || !hist || !workspace) return;
  memset(hist, 0, bins * 4);
  float lo = INFINITY, hi = -INFINITY, new_lo, new_hi;
  qw_histogram_observe(n, x, bins, i32(in), hist, &lo, &hi, workspace);
  qw_histogram_search(bins, hist, lo, hi, u8(in) & 1 ? 256.0 : (double)real(in), &new_lo, &new_hi, workspace);
}

/* ---- threads and kernel tables ----------------------------------------------------------------------------------- */

static void* worker(void* arg) {
  qw_thread_main((size_t)arg);
  return NULL;
}

/* One pthread worker for the whole run (run.sh builds the pool with QW_THREADS=1): inputs on 2 threads share their
 * tiles with it; on 3 or 4 the caller takes the absent workers' tiles, and workspaces still have their slices. */
int LLVMFuzzerInitialize(int* argc, char*** argv) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, (void*)1) != 0) abort();
  pthread_detach(thread);
  return 0;
}

/* The setup byte of an input: its thread count and (relaxed build) the relaxed dot's semantics; sometimes the
 * thread and relaxed entry points with hostile arguments first, which must be refused (or return at once). */
static void setup(struct input* in) {
  const uint8_t b = u8(in);
  if (b & 0x80) {
    const size_t hostile = size(in);
    if (hostile == 0 || hostile > 64) must_refuse(qw_threadpool_set_threads(hostile), "qw_threadpool_set_threads");
    qw_thread_main(b & 0x40 ? 0 : hostile < 64 ? 64 : hostile); /* not a worker slot: returns at once */
    const int32_t semantics = i32(in);
    if (semantics != QW_RELAXED_USDOT && semantics != QW_RELAXED_SDOT) {
      must_refuse(qw_use_relaxed_simd((qw_relaxed_semantics)semantics), "qw_use_relaxed_simd");
    }
  }
  if (qw_threadpool_set_threads(1 + b % 4) != QW_OK) abort();
#if QW_RELAXED
  if (qw_use_relaxed_simd(b & 4 ? QW_RELAXED_SDOT : QW_RELAXED_USDOT) != QW_OK) abort();
#else
  must_refuse(qw_use_relaxed_simd(b & 4 ? QW_RELAXED_SDOT : QW_RELAXED_USDOT), "qw_use_relaxed_simd");
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t n) {
  struct input in = {data, n};
  nbuffers = 0;
  setup(&in);
  static void (*const cases[])(struct input*) = {quantize, qparams, conv2d, conv2d_f32, gemm, pooling, copy_strided,
                                                 elementwise, float_ops, histogram};
  cases[u8(&in) % (sizeof cases / sizeof cases[0])](&in);
  for (size_t i = 0; i < nbuffers; i++) free(buffers[i]);
  return 0;
}
