/* 2-D convolution on channels-last data. Two algorithms, chosen when the weights are packed:
 * depthwise (one input channel per output channel) through the dwconv microkernels over an
 * indirection list, and everything else as GEMM: 1x1 / stride 1 / no padding reads the input as
 * the GEMM's A directly, other shapes gather an im2col block of output pixels first. */
#include <string.h>

#include "operators/operators.h"
#include "qtypes.h"

enum { CONV_GEMM = 1, CONV_DEPTHWISE = 2 };

/* Packed weights: this header, then the packing of the kernel table's GEMM config (per group) or
 * depthwise config, then (FBGEMM's depthwise shapes only) a copy of the raw weights. layout is
 * qw_gemm_layout / qw_dwconv_layout of the config that packed them. */
struct conv_pack_header {
  uint32_t kind;
  uint32_t layout;
  uint32_t fbgemm_depthwise; /* byte offset of the raw weights for FBGEMM's depthwise path, or 0 */
  uint32_t reserved;
};
#define HEADER_BYTES 16

/* im2col blocks of about this many bytes. */
#define IM2COL_BLOCK_BYTES (64 * 1024)

static int is_depthwise(const qw_conv2d_shape* s) {
  return s->groups > 1 && s->groups == s->in_c && s->out_c == s->in_c;
}

/* A consistent geometry (positive sizes, channels divisible by groups, the kernel inside the padded input) whose
 * padded input stays below 2^31 (every coordinate the loops form, o * stride - pad + k * dilation, then fits int32)
 * and whose weights fit QW_MAX_BYTES elements; its output size in *oh, *ow. The packing needs no more. */
int qw_conv2d_geometry(const qw_conv2d_shape* s, int64_t* oh, int64_t* ow) {
  if (s == NULL || s->batch < 0 || s->in_h <= 0 || s->in_w <= 0 || s->in_c <= 0 || s->out_c <= 0 || s->kernel_h <= 0 ||
      s->kernel_w <= 0 || s->stride_h <= 0 || s->stride_w <= 0 || s->pad_top < 0 || s->pad_left < 0 || s->pad_bottom < 0 ||
      s->pad_right < 0 || s->dilation_h <= 0 || s->dilation_w <= 0 || s->groups <= 0 || s->in_c % s->groups != 0 ||
      s->out_c % s->groups != 0) {
    return 0;
  }
  const int64_t eff_h = (int64_t)(s->kernel_h - 1) * s->dilation_h + 1;
  const int64_t eff_w = (int64_t)(s->kernel_w - 1) * s->dilation_w + 1;
  const int64_t padded_h = (int64_t)s->in_h + s->pad_top + s->pad_bottom;
  const int64_t padded_w = (int64_t)s->in_w + s->pad_left + s->pad_right;
  if (eff_h > padded_h || eff_w > padded_w || padded_h > INT32_MAX || padded_w > INT32_MAX ||
      !qw_size_fits4((uint64_t)s->out_c, (uint64_t)(s->in_c / s->groups), (uint64_t)s->kernel_h, (uint64_t)s->kernel_w)) {
    return 0;
  }
  *oh = (padded_h - eff_h) / s->stride_h + 1;
  *ow = (padded_w - eff_w) / s->stride_w + 1;
  return 1;
}

qw_status qw_conv2d_output_size(const qw_conv2d_shape* s, int32_t* out_h, int32_t* out_w) {
  int64_t oh, ow;
  if (out_h == NULL || out_w == NULL || !qw_conv2d_geometry(s, &oh, &ow)) {
    return QW_INVALID_ARGUMENT;
  }
  /* The input and the output, in elements (the callers' buffers hold them): at most QW_MAX_BYTES. */
  if (!qw_size_fits4((uint64_t)s->batch, (uint64_t)s->in_h, (uint64_t)s->in_w, (uint64_t)s->in_c) ||
      !qw_size_fits4((uint64_t)s->batch, (uint64_t)oh, (uint64_t)ow, (uint64_t)s->out_c)) {
    return QW_INVALID_ARGUMENT;
  }
  *out_h = (int32_t)oh;
  *out_w = (int32_t)ow;
  return QW_OK;
}

/* FBGEMM's depthwise fast path (FbgemmConv.cc takeDepthWiseFastPath), which PyTorch's fbgemm and x86
 * engines take for these shapes: its kernel (GenerateI8Depthwise.cc) multiplies the RAW uint8 inputs by
 * the raw int8 weights with vpmaddubsw, which adds the products of two consecutive taps (row-major) in
 * saturating int16. 7-bit inputs (reduce_range) never saturate; full-range ones can. Mode 'fbgemm'
 * reproduces it from a copy of the raw weights kept for these shapes. */
static int fbgemm_depthwise_shape(const qw_conv2d_shape* s) {
  const int32_t k = s->kernel_h, pad = (k - 1) / 2;
  return s->groups == s->in_c && (s->out_c == s->in_c || s->out_c == 2 * s->in_c) && s->in_c % 8 == 0 &&
         s->kernel_w == k && (k == 3 || k == 5 || k == 7) && (s->stride_h == 1 || s->stride_h == 2) &&
         (s->stride_w == 1 || s->stride_w == 2) && s->dilation_h == 1 && s->dilation_w == 1 && s->pad_top == pad &&
         s->pad_bottom == pad && s->pad_left == pad && s->pad_right == pad;
}

/* Raw int8 weights [out_c][taps], then the int32 weight zero point of each output channel. */
static uint64_t fbgemm_depthwise_bytes(const qw_conv2d_shape* s) {
  if (!fbgemm_depthwise_shape(s)) {
    return 0;
  }
  return qw_round_up((size_t)s->out_c * s->kernel_h * s->kernel_w, 4) + (uint64_t)s->out_c * sizeof(int32_t);
}

static size_t gemm_k(const qw_conv2d_shape* s) {
  return (size_t)s->kernel_h * s->kernel_w * (s->in_c / s->groups);
}

/* Bytes of the packed weights proper (before the FBGEMM depthwise copy), in 64 bits. The geometry was checked by
 * qw_conv2d_output_size: its weights fit QW_MAX_BYTES, so each factor here is below 2^32. */
static uint64_t packed_bytes(const struct qw_kernels* kernels, const qw_conv2d_shape* s) {
  if (is_depthwise(s)) {
    return qw_dwconv_packed_bytes(&kernels->dwconv, (size_t)s->out_c, (size_t)s->kernel_h * s->kernel_w);
  }
  const uint64_t group = qw_gemm_packed_bytes(&kernels->gemm, (size_t)(s->out_c / s->groups), gemm_k(s));
  return group > QW_MAX_BYTES ? group : (uint64_t)s->groups * group;
}

size_t qw_conv2d_pack_size_with(const struct qw_kernels* kernels, const qw_conv2d_shape* s) {
  int64_t oh, ow;
  if (!qw_conv2d_geometry(s, &oh, &ow) || (!is_depthwise(s) && gemm_k(s) >= QW_GEMM_K_MAX)) {
    return 0;
  }
  const uint64_t packed = packed_bytes(kernels, s);
  return packed > QW_MAX_BYTES ? 0 : qw_size_or_zero(qw_round_up(HEADER_BYTES + (size_t)packed, 4) + fbgemm_depthwise_bytes(s));
}

/* Keeps the raw qint8 weights and zero points for mode 'fbgemm' on FBGEMM's depthwise shapes. */
static void pack_fbgemm_depthwise(const struct qw_kernels* kernels, const qw_conv2d_shape* s, const int8_t* w,
                                  const int32_t* w_zero_points, size_t w_zp_count, void* packed) {
  struct conv_pack_header* header = (struct conv_pack_header*)packed;
  const size_t offset = qw_round_up(HEADER_BYTES + packed_bytes(kernels, s), 4);
  const size_t weights = (size_t)s->out_c * s->kernel_h * s->kernel_w;
  memcpy((char*)packed + offset, w, weights);
  int32_t* zps = (int32_t*)((char*)packed + offset + qw_round_up(weights, 4));
  for (size_t c = 0; c < (size_t)s->out_c; c++) {
    zps[c] = w_zero_points[w_zp_count == 1 ? 0 : c];
  }
  header->fbgemm_depthwise = (uint32_t)offset;
}

size_t qw_conv2d_pack_size(const qw_conv2d_shape* s) {
  return qw_conv2d_pack_size_with(qw_kernels(), s);
}

qw_status qw_conv2d_pack_with(const struct qw_kernels* kernels, const qw_conv2d_shape* s, const void* w,
                              qw_dtype w_dtype, const int32_t* w_zero_points, size_t w_zp_count, void* packed) {
  if (qw_conv2d_pack_size_with(kernels, s) == 0 || w == NULL || packed == NULL || w_zero_points == NULL ||
      (w_zp_count != 1 && w_zp_count != (size_t)s->out_c) || !qw_dtype_is_8bit(w_dtype)) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t j = 0; j < w_zp_count; j++) {
    if (!qw_zero_point_valid(w_dtype, w_zero_points[j])) {
      return QW_INVALID_QPARAMS;
    }
  }
  struct conv_pack_header* header = (struct conv_pack_header*)packed;
  memset(header, 0, HEADER_BYTES);
  const size_t taps = (size_t)s->kernel_h * s->kernel_w;
  const int is_signed = w_dtype == QW_QINT8;
  if (is_depthwise(s)) {
    /* The depthwise config's layout: int16 with the zero points subtracted, then per-channel sums. */
    const struct qw_dwconv_config* dwconv = &kernels->dwconv;
    header->kind = CONV_DEPTHWISE;
    header->layout = qw_dwconv_layout(dwconv);
    dwconv->pack(dwconv->cr, dwconv->tr, (size_t)s->out_c, taps, (const uint8_t*)w, is_signed, w_zero_points,
                 w_zp_count != 1, (char*)packed + HEADER_BYTES);
    if (fbgemm_depthwise_shape(s) && is_signed) {
      pack_fbgemm_depthwise(kernels, s, (const int8_t*)w, w_zero_points, w_zp_count, packed);
    }
    return QW_OK;
  }
  /* GEMM (the GEMM config's layout, zero points folded): per group, N = out_c / groups columns of
   * K = (kernel_h, kernel_w, in_c / groups), the order of an NHWC im2col row; the source of
   * (n, ky, kx, ci) is ((n * cin_g + ci) * kh + ky) * kw + kx. */
  const struct qw_gemm_config* gemm = &kernels->gemm;
  header->kind = CONV_GEMM;
  header->layout = qw_gemm_layout(gemm);
  const size_t cin_g = (size_t)(s->in_c / s->groups), cout_g = (size_t)(s->out_c / s->groups);
  const size_t k = gemm_k(s);
  const size_t group_bytes = qw_gemm_packed_bytes(gemm, cout_g, k);
  for (size_t g = 0; g < (size_t)s->groups; g++) {
    const struct qw_gemm_weights weights = {
        .w = (const uint8_t*)w + g * cout_g * cin_g * taps,
        .is_signed = is_signed,
        .n_stride = cin_g * taps,
        .k_stride = taps,
        .k_inner = cin_g,
        .k_outer_stride = 1,
        .zero_points = w_zero_points + (w_zp_count == 1 ? 0 : g * cout_g),
        .zp_per_column = w_zp_count != 1,
    };
    gemm->pack_w(gemm->nr, gemm->kr, cout_g, k, &weights, (char*)packed + HEADER_BYTES + g * group_bytes);
  }
  if (fbgemm_depthwise_shape(s) && is_signed) {
    pack_fbgemm_depthwise(kernels, s, (const int8_t*)w, w_zero_points, w_zp_count, packed);
  }
  return QW_OK;
}

qw_status qw_conv2d_pack(const qw_conv2d_shape* s, const void* w, qw_dtype w_dtype, const int32_t* w_zero_points,
                         size_t w_zp_count, void* packed) {
  return qw_conv2d_pack_with(qw_kernels(), s, w, w_dtype, w_zero_points, w_zp_count, packed);
}

static int direct_gemm(const qw_conv2d_shape* s) {
  return s->groups == 1 && s->kernel_h == 1 && s->kernel_w == 1 && s->stride_h == 1 && s->stride_w == 1 &&
         s->pad_top == 0 && s->pad_left == 0 && s->pad_bottom == 0 && s->pad_right == 0;
}

/* im2col rows per block: a multiple of the GEMM config's mr. */
static size_t im2col_rows(const struct qw_gemm_config* gemm, const qw_conv2d_shape* s) {
  size_t rows = IM2COL_BLOCK_BYTES / gemm_k(s);
  rows = rows / gemm->mr * gemm->mr;
  return rows < gemm->mr ? gemm->mr : rows;
}

/* In 64 bits: an output row of tap pointers and accumulators grows with the output width. */
static uint64_t workspace_size(const struct qw_kernels* kernels, const qw_conv2d_shape* s, int32_t ow) {
  if (is_depthwise(s)) {
    /* padding row, the effective bias (its end aligned for the pointers after it), an output row's tap
     * pointers and accumulators */
    const uint64_t taps = qw_dwconv_taps_padded(&kernels->dwconv, (size_t)s->kernel_h * s->kernel_w);
    const uint64_t pointers = (uint64_t)ow * taps * sizeof(void*);
    return qw_round_up((size_t)s->in_c, 16) + qw_round_up((size_t)s->out_c * sizeof(int32_t), sizeof(void*)) +
           (pointers + 15) / 16 * 16 + (uint64_t)ow * s->out_c * sizeof(int32_t);
  }
  const size_t gemm_ws = qw_gemm_workspace_size_with(kernels, (size_t)(s->out_c / s->groups), gemm_k(s));
  return direct_gemm(s) ? gemm_ws : gemm_ws + qw_round_up(im2col_rows(&kernels->gemm, s) * gemm_k(s), 16);
}

size_t qw_conv2d_workspace_size_with(const struct qw_kernels* kernels, const qw_conv2d_shape* s) {
  int32_t oh, ow;
  if (qw_conv2d_output_size(s, &oh, &ow) != QW_OK || (!is_depthwise(s) && gemm_k(s) >= QW_GEMM_K_MAX)) {
    return 0;
  }
  const uint64_t ws = workspace_size(kernels, s, ow);
  const uint64_t fbgemm_row = fbgemm_depthwise_shape(s) ? (uint64_t)s->out_c * sizeof(int32_t) : 0;
  return qw_size_or_zero(ws > fbgemm_row ? ws : fbgemm_row);
}

size_t qw_conv2d_workspace_size(const qw_conv2d_shape* s) {
  return qw_conv2d_workspace_size_with(qw_kernels(), s);
}

/* Inputs (and the padding value) of at most 128 keep every int16 pair sum in range (128 * 127 * 2 and
 * 128 * -128 * 2 fit): the exact sums are FBGEMM's, and the regular depthwise kernels compute them. Always
 * so for 7-bit (reduce_range) activations. */
static int no_pair_saturates(const void* x, size_t n, int32_t x_zero_point) {
  const uint8_t* p = (const uint8_t*)x;
  uint8_t max = (uint8_t)x_zero_point;
  for (size_t i = 0; i < n; i++) {
    max = p[i] > max ? p[i] : max;
  }
  return max <= 128;
}

/* FBGEMM's depthwise sums, one output pixel (all channels) at a time into acc, then requantized:
 * sum over tap pairs of sat16(x[t0] w[t0] + x[t1] w[t1]) with raw values (padding reads the input zero
 * point), less x_zp * (sum_t w - w_zp * taps) and w_zp * sum_t x, FBGEMM's column and row offsets. */
static void fbgemm_depthwise_run(const struct qw_kernels* kernels, const qw_conv2d_shape* s, int32_t oh, int32_t ow,
                                 const uint8_t* x, int32_t x_zp, const uint8_t* packed,
                                 const struct qw_output_stage* stage, uint8_t* y, int32_t* acc) {
  const struct conv_pack_header* header = (const struct conv_pack_header*)packed;
  const int32_t taps = s->kernel_h * s->kernel_w, mult = s->out_c / s->in_c;
  const int8_t* w = (const int8_t*)(packed + header->fbgemm_depthwise);
  const int32_t* w_zp = (const int32_t*)(packed + header->fbgemm_depthwise + qw_round_up((size_t)s->out_c * taps, 4));
  const qw_requantization_ukernel requantize = qw_output_kernel(kernels, stage);
  for (int32_t b = 0; b < s->batch; b++) {
    const uint8_t* image = x + (size_t)b * s->in_h * s->in_w * s->in_c;
    for (int32_t oy = 0; oy < oh; oy++) {
      for (int32_t ox = 0; ox < ow; ox++, y += (size_t)s->out_c * stage->elem_size) {
        for (int32_t co = 0; co < s->out_c; co++) {
          const int8_t* wc = w + (size_t)co * taps;
          const int32_t ci = co / mult;
          int32_t sum = 0, row_sum = 0, w_sum = 0, pair = 0;
          for (int32_t t = 0; t < taps; t++) {
            const int32_t iy = oy * s->stride_h - s->pad_top + t / s->kernel_w;
            const int32_t ix = ox * s->stride_w - s->pad_left + t % s->kernel_w;
            const int32_t v = (iy < 0 || iy >= s->in_h || ix < 0 || ix >= s->in_w)
                                  ? x_zp
                                  : image[((size_t)iy * s->in_w + ix) * s->in_c + ci];
            row_sum += v;
            w_sum += wc[t];
            pair += v * wc[t];
            if (t % 2 == 1 || t == taps - 1) {
              sum += pair < -32768 ? -32768 : pair > 32767 ? 32767 : pair;
              pair = 0;
            }
          }
          acc[co] = sum - x_zp * (w_sum - w_zp[co] * taps) - w_zp[co] * row_sum;
        }
        requantize((size_t)s->out_c, acc, stage->params, y);
      }
    }
  }
}

/* Copies n bytes; long runs memcpy, short ones (a few channels: the first layer of an image model
 * copies 9-byte runs) as 8- or 4-byte words, the last word ending at n and overlapping the one
 * before (no byte loop, nothing read or written outside the run). */
static inline void copy_bytes(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n >= 32) {
    memcpy(dst, src, n);
  } else if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      memcpy(dst + i, src + i, 8);
    }
    memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    memcpy(dst, src, 4);
    memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; i++) {
      dst[i] = src[i];
    }
  }
}

/* One im2col row: the kernel window of output pixel (oy, ox) over channels [c0, c0 + cin_g). When the
 * group spans every channel and the window row is inside the image, its kernel_w pixels are one
 * contiguous run of NHWC bytes, copied at once. */
static void im2col_row(const qw_conv2d_shape* s, const uint8_t* image, size_t elem, int32_t oy, int32_t ox, size_t c0,
                       uint8_t pad_byte, uint8_t* row) {
  const size_t cin_g = (size_t)(s->in_c / s->groups);
  const size_t pixel_bytes = cin_g * elem;
  const int32_t ix0 = ox * s->stride_w - s->pad_left;
  const int whole_rows = s->groups == 1 && s->dilation_w == 1 && ix0 >= 0 && ix0 + s->kernel_w <= s->in_w;
  for (int32_t ky = 0; ky < s->kernel_h; ky++) {
    const int32_t iy = oy * s->stride_h - s->pad_top + ky * s->dilation_h;
    if (whole_rows && iy >= 0 && iy < s->in_h) {
      copy_bytes(row, image + ((size_t)iy * s->in_w + ix0) * s->in_c * elem, (size_t)s->kernel_w * pixel_bytes);
      row += (size_t)s->kernel_w * pixel_bytes;
      continue;
    }
    for (int32_t kx = 0; kx < s->kernel_w; kx++, row += pixel_bytes) {
      const int32_t ix = ix0 + kx * s->dilation_w;
      if (iy < 0 || iy >= s->in_h || ix < 0 || ix >= s->in_w) {
        memset(row, pad_byte, pixel_bytes);
      } else {
        copy_bytes(row, image + (((size_t)iy * s->in_w + ix) * s->in_c + c0) * elem, pixel_bytes);
      }
    }
  }
}

qw_status qw_conv2d_with(const struct qw_kernels* kernels, const qw_conv2d_shape* s, const void* x, qw_dtype x_dtype,
                         int32_t x_zero_point, const void* packed, const void* requantization, void* y,
                         void* workspace) {
  int32_t oh, ow;
  struct qw_output_stage stage;
  if (qw_conv2d_output_size(s, &oh, &ow) != QW_OK || qw_conv2d_workspace_size_with(kernels, s) == 0 || packed == NULL ||
      workspace == NULL || (s->batch != 0 && (x == NULL || y == NULL)) || !qw_dtype_is_8bit(x_dtype) ||
      gemm_k(s) >= QW_GEMM_K_MAX) {
    return QW_INVALID_ARGUMENT;
  }
  const struct conv_pack_header* header = (const struct conv_pack_header*)packed;
  const int depthwise = is_depthwise(s);
  if (!qw_output_stage_of(requantization, (size_t)s->out_c, &stage) ||
      header->kind != (uint32_t)(depthwise ? CONV_DEPTHWISE : CONV_GEMM) ||
      header->layout != (depthwise ? qw_dwconv_layout(&kernels->dwconv) : qw_gemm_layout(&kernels->gemm)) ||
      !qw_size_fits4((uint64_t)s->batch, (uint64_t)oh, (uint64_t)ow, (uint64_t)s->out_c * stage.elem_size) ||
      !qw_aligned(y, stage.elem_size)) {
    return QW_INVALID_ARGUMENT;
  }
  if (!qw_zero_point_valid(x_dtype, x_zero_point)) {
    return QW_INVALID_QPARAMS;
  }
  if (header->fbgemm_depthwise != 0 && stage.mode == QW_REQUANT_FBGEMM && x_dtype == QW_QUINT8 &&
      stage.kernel == QW_REQUANT_KERNEL_FP32 &&
      !no_pair_saturates(x, (size_t)s->batch * s->in_h * s->in_w * s->in_c, x_zero_point)) {
    fbgemm_depthwise_run(kernels, s, oh, ow, (const uint8_t*)x, x_zero_point, (const uint8_t*)packed, &stage,
                         (uint8_t*)y, (int32_t*)workspace);
    return QW_OK;
  }
  const int x_signed = x_dtype == QW_QINT8;
  const uint8_t pad_byte = (uint8_t)x_zero_point;
  const uint8_t* weights = (const uint8_t*)packed + HEADER_BYTES;
  const size_t in_image = (size_t)s->in_h * s->in_w * s->in_c;
  const size_t out_pixels = (size_t)oh * ow;
  const size_t out_image = out_pixels * s->out_c * stage.elem_size; /* bytes */
  const struct qw_requantization_params* rq = stage.params;

  if (header->kind == CONV_DEPTHWISE) {
    const size_t channels = (size_t)s->out_c;
    const size_t taps = (size_t)s->kernel_h * s->kernel_w;
    const struct qw_dwconv_config* dwconv = &kernels->dwconv;
    const size_t taps_padded = qw_dwconv_taps_padded(dwconv, taps);
    const int32_t* wsum =
        (const int32_t*)(weights + qw_dwconv_packed_bytes(dwconv, channels, taps) - channels * sizeof(int32_t));
    uint8_t* pad_row = (uint8_t*)workspace;
    int32_t* bias = (int32_t*)(pad_row + qw_round_up(channels, 16));
    const uint8_t** tap_ptrs = (const uint8_t**)((char*)bias + qw_round_up(channels * sizeof(int32_t), sizeof(void*)));
    int32_t* acc = (int32_t*)((char*)tap_ptrs + qw_round_up((size_t)ow * taps_padded * sizeof(void*), 16));
    memset(pad_row, pad_byte, channels);
    /* The kernel multiplies raw inputs; the input zero point comes off as zp * sum_t w[t][c], folded
     * into the bias (padding taps read zp, so they cancel exactly). */
    for (size_t c = 0; c < channels; c++) {
      bias[c] = (int32_t)((uint32_t)rq->bias[c] - (uint32_t)x_zero_point * (uint32_t)wsum[c]);
    }
    struct qw_requantization_params rq_dw = *rq;
    rq_dw.bias = bias;
    const qw_dwconv_ukernel dw = dwconv->ukernel[x_signed];
    const qw_requantization_ukernel requantize = qw_output_kernel(kernels, &stage);
    for (size_t b = 0; b < (size_t)s->batch; b++) {
      const uint8_t* image = (const uint8_t*)x + b * in_image;
      uint8_t* out = (uint8_t*)y + b * out_image;
      for (int32_t oy = 0; oy < oh; oy++) {
        const uint8_t** ptr = tap_ptrs;
        for (int32_t ox = 0; ox < ow; ox++) {
          for (int32_t ky = 0; ky < s->kernel_h; ky++) {
            const int32_t iy = oy * s->stride_h - s->pad_top + ky * s->dilation_h;
            for (int32_t kx = 0; kx < s->kernel_w; kx++) {
              const int32_t ix = ox * s->stride_w - s->pad_left + kx * s->dilation_w;
              *ptr++ = (iy < 0 || iy >= s->in_h || ix < 0 || ix >= s->in_w) ? pad_row
                                                                              : image + ((size_t)iy * s->in_w + ix) * s->in_c;
            }
          }
          for (size_t t = taps; t < taps_padded; t++) {
            *ptr++ = pad_row;
          }
        }
        dw((size_t)ow, channels, taps, tap_ptrs, weights, acc);
        for (int32_t ox = 0; ox < ow; ox++, out += channels * stage.elem_size) {
          requantize(channels, acc + (size_t)ox * channels, &rq_dw, out);
        }
      }
    }
    return QW_OK;
  }

  const size_t cin_g = (size_t)(s->in_c / s->groups), cout_g = (size_t)(s->out_c / s->groups);
  const size_t k = gemm_k(s);
  const size_t group_bytes = qw_gemm_packed_bytes(&kernels->gemm, cout_g, k);
  void* gemm_ws = workspace;
  uint8_t* block = (uint8_t*)workspace + qw_gemm_workspace_size_with(kernels, cout_g, k);
  const size_t rows = im2col_rows(&kernels->gemm, s);
  for (size_t b = 0; b < (size_t)s->batch; b++) {
    const uint8_t* image = (const uint8_t*)x + b * in_image;
    uint8_t* out = (uint8_t*)y + b * out_image;
    for (size_t g = 0; g < (size_t)s->groups; g++) {
      const uint8_t* wg = weights + g * group_bytes;
      const struct qw_requantization_params rq_g = qw_requantization_params_at(rq, g * cout_g);
      struct qw_output_stage stage_g = stage;
      stage_g.params = &rq_g;
      const size_t y_stride = (size_t)s->out_c * stage.elem_size;
      uint8_t* out_g = out + g * cout_g * stage.elem_size;
      if (direct_gemm(s)) {
        qw_gemm_run(kernels, out_pixels, cout_g, k, image, (size_t)s->in_c, x_signed, x_zero_point, wg, &stage_g, out_g,
                    y_stride, gemm_ws);
        continue;
      }
      for (size_t p0 = 0; p0 < out_pixels; p0 += rows) {
        const size_t count = out_pixels - p0 < rows ? out_pixels - p0 : rows;
        for (size_t i = 0; i < count; i++) {
          const size_t p = p0 + i;
          im2col_row(s, image, 1, (int32_t)(p / (size_t)ow), (int32_t)(p % (size_t)ow), g * cin_g, pad_byte,
                     block + i * k);
        }
        qw_gemm_run(kernels, count, cout_g, k, block, k, x_signed, x_zero_point, wg, &stage_g, out_g + p0 * y_stride,
                    y_stride, gemm_ws);
      }
    }
  }
  return QW_OK;
}

qw_status qw_conv2d(const qw_conv2d_shape* s, const void* x, qw_dtype x_dtype, int32_t x_zero_point,
                    const void* packed, const void* requantization, void* y, void* workspace) {
  return qw_conv2d_with(qw_kernels(), s, x, x_dtype, x_zero_point, packed, requantization, y, workspace);
}
