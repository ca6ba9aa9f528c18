/* 2-D convolution on channels-last data. Two algorithms, chosen when the weights are packed:
 * depthwise (one input channel per output channel) through the dwconv microkernels over an
 * indirection list, and everything else as GEMM: 1x1 / stride 1 / no padding reads the input as
 * the GEMM's A directly, other shapes gather an im2col block of output pixels first. */
#include <string.h>

#include "operators/operators.h"
#include "qtypes.h"
#include "threadpool.h"

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
    return qw_dwconv_packed_bytes(&kernels->dwconv, (size_t)s->out_c, (size_t)s->kernel_h, (size_t)s->kernel_w);
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
    dwconv->pack(dwconv->cr, (size_t)s->out_c, (size_t)s->kernel_h, (size_t)s->kernel_w, (const uint8_t*)w,
                 is_signed, w_zero_points, w_zp_count != 1, (char*)packed + HEADER_BYTES);
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

/* Stands for any size past QW_MAX_BYTES in the workspace sums below: small enough that they stay exact in 64 bits
 * (a few terms, factors below 2^32). */
#define TOO_LARGE ((uint64_t)QW_MAX_BYTES + 1)

static uint64_t round_up_16(uint64_t bytes) {
  return (bytes + 15) / 16 * 16;
}

/* Depthwise geometry: tap rows (pair or quad rows) of `columns` stored columns, every `step`-th of the padded row
 * (dwconv.h), channels padded to the config's block. */
struct depthwise_geometry {
  size_t cp, groups, columns, column_step, group_step, step;
  uint64_t row_bytes; /* of one tap row, or TOO_LARGE */
};

/* paired: output pairs (dwconv.h), whose tap rows hold half the columns (the workspace is sized without them). */
static struct depthwise_geometry depthwise_geometry(const struct qw_kernels* kernels, const qw_conv2d_shape* s,
                                                    int32_t ow, int paired) {
  struct depthwise_geometry g;
  g.cp = qw_round_up((size_t)s->out_c, kernels->dwconv.cr);
  g.groups = qw_dwconv_groups(&kernels->dwconv, (size_t)s->kernel_w);
  g.column_step = (size_t)s->stride_w;
  g.group_step = kernels->dwconv.taps * (size_t)s->dilation_w;
  /* at most the padded width, below 2^31 */
  g.columns = paired ? qw_dwconv_pair_columns((size_t)ow)
                     : qw_dwconv_row_columns((size_t)ow, g.column_step, g.groups, g.group_step);
  g.step = paired ? 2 : qw_dwconv_row_step(g.column_step, g.group_step);
  /* 4 bytes per channel and stored column: a pair of int16 or a quad of bytes */
  g.row_bytes = qw_size_fits4(g.columns, g.cp, 4, 1) ? round_up_16((uint64_t)g.columns * g.cp * 4) : TOO_LARGE;
  return g;
}

/* Depthwise workspace, in 64 bits: the effective bias and the multipliers (padded to the channel block: the fused
 * kernels read whole blocks) and the padding tap row, shared; per thread, kernel_h cached tap rows, their tags and
 * the kernel rows' pointers, and an output row of accumulators. */
static uint64_t depthwise_channel_bytes(const struct qw_kernels* kernels, const qw_conv2d_shape* s) {
  return round_up_16((uint64_t)qw_round_up((size_t)s->out_c, kernels->dwconv.cr) * sizeof(int32_t));
}
static uint64_t depthwise_shared_bytes(const struct qw_kernels* kernels, const qw_conv2d_shape* s, int32_t ow) {
  return 2 * depthwise_channel_bytes(kernels, s) + depthwise_geometry(kernels, s, ow, 0).row_bytes;
}
static uint64_t depthwise_thread_bytes(const struct qw_kernels* kernels, const qw_conv2d_shape* s, int32_t ow) {
  const struct depthwise_geometry g = depthwise_geometry(kernels, s, ow, 0);
  const uint64_t acc_row = qw_size_fits4((uint64_t)ow, g.cp, sizeof(int32_t), 1)
                               ? round_up_16((uint64_t)ow * g.cp * sizeof(int32_t))
                               : TOO_LARGE;
  return (uint64_t)s->kernel_h * g.row_bytes + round_up_16((uint64_t)s->kernel_h * (sizeof(size_t) + sizeof(void*))) +
         acc_row;
}

/* GEMM workspace per thread, in 64 bits: the GEMM's, then (unless the input is read in place) an im2col block. */
static uint64_t gemm_thread_bytes(const struct qw_kernels* kernels, const qw_conv2d_shape* s) {
  const size_t gemm_ws = qw_gemm_thread_workspace_size(kernels, (size_t)(s->out_c / s->groups), gemm_k(s));
  if (gemm_ws == 0) {
    return TOO_LARGE;
  }
  /* the im2col block, and 16 bytes for the padding store of its last row (pad_row) */
  const uint64_t block = (uint64_t)im2col_rows(&kernels->gemm, s) * qw_round_up(gemm_k(s), kernels->gemm.kr);
  return direct_gemm(s) ? gemm_ws : gemm_ws + round_up_16(block) + 16;
}

/* In 64 bits: the shared part, then one part per thread (checked before it is multiplied by the thread count). */
static uint64_t workspace_size(const struct qw_kernels* kernels, const qw_conv2d_shape* s, int32_t ow) {
  const int depthwise = is_depthwise(s);
  const uint64_t thread = depthwise ? depthwise_thread_bytes(kernels, s, ow) : gemm_thread_bytes(kernels, s);
  if (thread > QW_MAX_BYTES) {
    return TOO_LARGE;
  }
  return (depthwise ? depthwise_shared_bytes(kernels, s, ow) : 0) + thread * qw_threads();
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
        requantize(1, (size_t)s->out_c, acc, 0, stage->params, y, 0);
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

/* A depthwise convolution: tiles of output rows (over the batch). Each thread keeps the tap rows of the last
 * kernel_h input rows it built (consecutive output rows share kernel_h - 1 of them at stride 1) and an output
 * row of accumulators. */
struct depthwise_job {
  const struct qw_kernels* kernels;
  const qw_conv2d_shape* s;
  struct depthwise_geometry g;
  int32_t oh, ow, x_zero_point;
  size_t elem_size, thread_bytes;
  int x_signed;
  const uint8_t* x;
  const uint8_t* weights;
  const void* pad_row;
  const struct qw_requantization_params* rq;
  qw_requantization_ukernel requantize;
  qw_dwconv_requantizing_ukernel fused; /* or NULL: ukernel, then requantize */
  uint8_t* y;
  uint8_t* per_thread;
};

#define NO_ROW SIZE_MAX

/* Whether output row oy reads input row iy. */
static int reads_row(const qw_conv2d_shape* s, int32_t oy, int32_t iy) {
  const int32_t d = iy - (oy * s->stride_h - s->pad_top);
  return d >= 0 && d % s->dilation_h == 0 && d / s->dilation_h < s->kernel_h;
}

static void depthwise_task(const void* context, size_t thread, size_t start, size_t count) {
  const struct depthwise_job* job = (const struct depthwise_job*)context;
  const qw_conv2d_shape* s = job->s;
  const struct depthwise_geometry* g = &job->g;
  const size_t kh = (size_t)s->kernel_h;
  uint8_t* slots = job->per_thread + thread * job->thread_bytes; /* kh tap rows */
  size_t* tags = (size_t*)(slots + kh * g->row_bytes);           /* which input row each holds */
  const void** rows = (const void**)(tags + kh);                   /* the kernel rows of an output row */
  int32_t* acc = (int32_t*)((uint8_t*)tags + qw_round_up(kh * (sizeof(size_t) + sizeof(void*)), 16));
  for (size_t k = 0; k < kh; k++) {
    tags[k] = NO_ROW;
  }
  const qw_dwconv_tap_row_ukernel tap_row = job->kernels->dwconv.tap_row[job->x_signed];
  const size_t in_row = (size_t)s->in_w * s->in_c;
  const size_t out_row = (size_t)job->ow * s->out_c * job->elem_size;
  for (size_t row = start; row < start + count; row++) {
    const size_t b = row / (size_t)job->oh;
    const int32_t oy = (int32_t)(row % (size_t)job->oh);
    for (size_t ky = 0; ky < kh; ky++) {
      const int32_t iy = oy * s->stride_h - s->pad_top + (int32_t)ky * s->dilation_h;
      if (iy < 0 || iy >= s->in_h) {
        rows[ky] = job->pad_row;
        continue;
      }
      const size_t tag = b * (size_t)s->in_h + (size_t)iy;
      size_t slot = 0;
      while (slot < kh && tags[slot] != tag) {
        slot++;
      }
      if (slot == kh) { /* not cached: replace a row no kernel row of this output row reads (one always is) */
        slot = 0;
        while (tags[slot] != NO_ROW && tags[slot] / (size_t)s->in_h == b &&
               reads_row(s, oy, (int32_t)(tags[slot] % (size_t)s->in_h))) {
          slot++;
        }
        tags[slot] = tag;
        tap_row(g->columns, g->step, (size_t)s->in_c, g->cp, job->x + tag * in_row, (size_t)s->in_w,
                (size_t)s->pad_left, (size_t)s->dilation_w, job->x_zero_point, slots + slot * g->row_bytes);
      }
      rows[ky] = slots + slot * g->row_bytes;
    }
    uint8_t* out = job->y + row * out_row;
    if (job->fused != NULL) {
      job->fused((size_t)job->ow, (size_t)s->out_c, g->cp, kh, g->groups, g->column_step, g->group_step, rows,
                 job->weights, job->rq, acc, out);
      continue;
    }
    job->kernels->dwconv.ukernel((size_t)job->ow, g->cp, kh, g->groups, g->column_step, g->group_step, rows,
                                 job->weights, acc);
    job->requantize((size_t)job->ow, (size_t)s->out_c, acc, g->cp, job->rq, out, (size_t)s->out_c * job->elem_size);
  }
}

static void depthwise_run(const struct qw_kernels* kernels, const qw_conv2d_shape* s, int32_t oh, int32_t ow,
                          const uint8_t* x, int x_signed, int32_t x_zero_point, const uint8_t* weights,
                          const struct qw_output_stage* stage, uint8_t* y, uint8_t* workspace) {
  const size_t channels = (size_t)s->out_c;
  const struct qw_dwconv_config* dwconv = &kernels->dwconv;
  /* The fp32 rule on plain parameters (no float bias, finite multipliers) runs inside the kernel where the
   * config has one: its multipliers padded to whole channel blocks; over output pairs where it has those. */
  const int fused_stage = stage->kernel == QW_REQUANT_KERNEL_FP32 && stage->params->fp32_plain;
  const int paired = fused_stage && qw_dwconv_output_pairs(dwconv, stage->y_signed, (size_t)s->kernel_w,
                                                           (size_t)s->stride_w, (size_t)s->dilation_w);
  const struct depthwise_geometry g = depthwise_geometry(kernels, s, ow, paired);
  const int32_t* wsum = (const int32_t*)(weights + qw_dwconv_packed_bytes(dwconv, channels, (size_t)s->kernel_h,
                                                                          (size_t)s->kernel_w) -
                                         channels * sizeof(int32_t));
  const size_t channel_bytes = depthwise_channel_bytes(kernels, s);
  int32_t* bias = (int32_t*)workspace;
  float* multiplier = (float*)(workspace + channel_bytes);
  uint8_t* pad_row = workspace + 2 * channel_bytes;
  /* The kernel multiplies raw inputs (plus the config's offset: quad rows may flip their top bit); the input zero
   * point comes off as (zp + offset) * sum_t w[t][c], folded into the bias (padding taps read zp + offset, so they
   * cancel exactly). */
  const struct qw_requantization_params* rq = stage->params;
  const int32_t x_offset = dwconv->x_offset[x_signed];
  for (size_t c = 0; c < channels; c++) {
    bias[c] = (int32_t)((uint32_t)rq->bias[c] - (uint32_t)(x_zero_point + x_offset) * (uint32_t)wsum[c]);
  }
  for (size_t c = channels; c < g.cp; c++) {
    bias[c] = 0;
  }
  dwconv->tap_row[x_signed](g.columns, g.step, channels, g.cp, NULL, 0, 0, (size_t)s->dilation_w, x_zero_point, pad_row);
  struct qw_requantization_params rq_dw = *rq;
  rq_dw.bias = bias;
  rq_dw.fp32_bounded = 0;
  const qw_dwconv_requantizing_ukernel fused = paired        ? dwconv->fp32_plain_pairs[stage->y_signed]
                                               : fused_stage ? dwconv->fp32_plain[stage->y_signed]
                                                             : NULL;
  if (fused != NULL) {
    /* fp32_bounded when no sum can reach 2^22 once scaled: |sum| <= |bias| + taps * 255 * max |x| (weights minus
     * their zero point within +-255, the kernels' inputs within [0, 255] or [-128, 127]). */
    const double taps_max = (double)s->kernel_h * s->kernel_w * 255.0 * (x_signed && x_offset == 0 ? 128.0 : 255.0);
    int bounded = 1;
    for (size_t c = 0; c < g.cp; c++) {
      multiplier[c] = c < channels ? rq->multiplier[c] : 0.0f;
      bounded &= qw_fp32_column_bounded(taps_max, bias[c], multiplier[c]);
    }
    rq_dw.multiplier = multiplier;
    rq_dw.fp32_bounded = bounded;
  }
  const struct depthwise_job job = {
      .kernels = kernels, .s = s, .g = g, .oh = oh, .ow = ow, .x_zero_point = x_zero_point,
      .elem_size = stage->elem_size, .thread_bytes = depthwise_thread_bytes(kernels, s, ow), .x_signed = x_signed,
      .x = x, .weights = weights, .pad_row = pad_row, .rq = &rq_dw, .requantize = qw_output_kernel(kernels, stage),
      .fused = fused, .y = y, .per_thread = workspace + depthwise_shared_bytes(kernels, s, ow),
  };
  /* One run of consecutive rows per thread: each tile starts by building the tap rows of its first output row
   * (kh of them), so finer tiles rebuild rows a neighbour already built (with 4 tiles per thread, two threads ran
   * MobileNetV2's depthwise layers 5-15% slower; 7-row layers then rebuilt every row three times). */
  const size_t rows = (size_t)s->batch * oh;
  qw_parallelize(depthwise_task, &job, rows, qw_parallel_tile(rows, 1, 1, 1));
}

/* A convolution as GEMM. 1x1 / stride 1 / unpadded reads the input in place (qw_gemm_parallel splits
 * it); others gather im2col blocks of output pixels: a tile is one block (and, when blocks are too few
 * to go round, a range of output channels), gathered into the thread's own block buffer. */
struct conv_gemm_job {
  const struct qw_kernels* kernels;
  const qw_conv2d_shape* s;
  int32_t ow;
  size_t k, cin_g, cout_g, out_pixels, group_bytes, thread_bytes, gemm_bytes;
  size_t rows, blocks, columns, column_tiles;
  size_t run; /* bytes of one kernel row's window (kernel_w pixels) when it is one run of the input, else 0 */
  /* the block's row stride: k, or k rounded up to the GEMM's kr with zero bytes after each row, handed to the GEMM
   * as that depth, where the config's kernels then read the rows in place (gemm.h fp32_plain_direct: quint8 A, whose
   * padding is 0; the zero weights past k make the products of those bytes 0, and their sums stay the rows') */
  size_t a_stride;
  int x_signed;
  int32_t x_zero_point;
  const uint8_t* x;
  const uint8_t* weights;
  const struct qw_output_stage* stage;
  uint8_t* y;
  uint8_t* workspace;
};

/* How many pixels from (oy, ox) along the output row (at most `limit`) have windows inside the image that are whole
 * runs of bytes (one group, no horizontal dilation): 0 when (oy, ox)'s is not. */
static int32_t interior_pixels(const struct conv_gemm_job* job, int32_t oy, int32_t ox, size_t limit) {
  const qw_conv2d_shape* s = job->s;
  if (job->run == 0) return 0;
  const int32_t iy0 = oy * s->stride_h - s->pad_top, ix0 = ox * s->stride_w - s->pad_left;
  if (iy0 < 0 || iy0 + (s->kernel_h - 1) * s->dilation_h >= s->in_h || ix0 < 0 || s->in_w + s->pad_left < s->kernel_w) {
    return 0;
  }
  /* the last ox whose window ends inside the row: ox * stride_w - pad_left + kernel_w <= in_w */
  const int32_t last = (s->in_w + s->pad_left - s->kernel_w) / s->stride_w;
  int32_t n = (last < job->ow - 1 ? last : job->ow - 1) - ox + 1;
  if (n <= 0) return 0;
  return (size_t)n < limit ? n : (int32_t)limit;
}

/* Zeroes an im2col row's padding (a_stride - k < 4 bytes: kr is 4 where rows are padded) with one 4-byte store: its
 * bytes past the row land in the next row, gathered after it, or in the block's slack (gemm_thread_bytes). A memset
 * per row became a memory.fill, which V8 runs as a call out of the wasm code (7% of a 3x3 stem convolution). */
static inline void pad_row(const struct conv_gemm_job* job, uint8_t* row) {
  if (job->a_stride != job->k) {
    assert(job->a_stride - job->k < 4);
    static const uint8_t zeros[4] = {0, 0, 0, 0};
    memcpy(row + job->k, zeros, 4);
  }
}

static void conv_gemm_task(const void* context, size_t thread, size_t start, size_t count) {
  const struct conv_gemm_job* job = (const struct conv_gemm_job*)context;
  const qw_conv2d_shape* s = job->s;
  const size_t groups = (size_t)s->groups, elem_size = job->stage->elem_size;
  const size_t y_stride = (size_t)s->out_c * elem_size;
  const size_t column_bytes = qw_gemm_column_bytes(&job->kernels->gemm, job->k);
  uint8_t* gemm_ws = job->workspace + thread * job->thread_bytes;
  uint8_t* block = gemm_ws + job->gemm_bytes;
  for (size_t t = start; t < start + count; t++) {
    const size_t column_tile = t % job->column_tiles, rest = t / job->column_tiles;
    const size_t p0 = rest % job->blocks * job->rows, g = rest / job->blocks % groups, b = rest / job->blocks / groups;
    const size_t pixels = job->out_pixels - p0 < job->rows ? job->out_pixels - p0 : job->rows;
    const size_t n0 = column_tile * job->columns;
    const size_t nc = job->cout_g - n0 < job->columns ? job->cout_g - n0 : job->columns;
    const uint8_t* image = job->x + b * ((size_t)s->in_h * s->in_w * s->in_c);
    /* (oy, ox) stepped, not divided out of each pixel's index: two divisions cost more than a small row's copies */
    int32_t oy = (int32_t)(p0 / (size_t)job->ow), ox = (int32_t)(p0 % (size_t)job->ow);
    for (size_t i = 0; i < pixels;) {
      /* the pixels of this output row whose windows lie inside the image: kernel_h runs of `run` bytes each, the
       * source stepping stride_w pixels (an image model's first layer: 3 runs of 9 bytes; through im2col_row's
       * per-row tests its gather took 0.2 of its 0.73 ms, now 0.06) */
      const int32_t n = interior_pixels(job, oy, ox, pixels - i);
      if (n > 0) {
        const size_t run = job->run, row_step = (size_t)s->dilation_h * s->in_w * s->in_c;
        const size_t pixel_step = (size_t)s->stride_w * s->in_c;
        const uint8_t* src = image + ((size_t)(oy * s->stride_h - s->pad_top) * s->in_w + (size_t)(ox * s->stride_w - s->pad_left)) * s->in_c;
        uint8_t* dst = block + i * job->a_stride;
        if (run >= 8 && run <= 16) {
          /* every kernel row but the last as one 16-byte word: its bytes past the run are the next kernel row's
           * place, which the next copy overwrites (16 <= 2 run: none reaches past the last row's end), and it reads
           * at most into the next input row, which the window's last row proves is inside the image; the last row
           * as two 8-byte words, the second ending at the run's end (3 pixels of 3 channels: 9 bytes) */
          const size_t last = (size_t)(s->kernel_h - 1);
          for (int32_t j = 0; j < n; j++, src += pixel_step, dst += job->a_stride) {
            for (size_t ky = 0; ky < last; ky++) memcpy(dst + ky * run, src + ky * row_step, 16);
            memcpy(dst + last * run, src + last * row_step, 8);
            memcpy(dst + last * run + run - 8, src + last * row_step + run - 8, 8);
            pad_row(job, dst);
          }
        } else {
          for (int32_t j = 0; j < n; j++, src += pixel_step, dst += job->a_stride) {
            for (int32_t ky = 0; ky < s->kernel_h; ky++) copy_bytes(dst + ky * run, src + ky * row_step, run);
            pad_row(job, dst);
          }
        }
        i += (size_t)n;
        ox += n;
      } else {
        im2col_row(s, image, 1, oy, ox, g * job->cin_g, (uint8_t)job->x_zero_point, block + i * job->a_stride);
        pad_row(job, block + i * job->a_stride);
        i++;
        ox++;
      }
      if (ox == job->ow) {
        ox = 0;
        oy++;
      }
    }
    const struct qw_requantization_params rq = qw_requantization_params_at(job->stage->params, g * job->cout_g + n0);
    struct qw_output_stage stage = *job->stage;
    stage.params = &rq;
    uint8_t* out = job->y + (b * job->out_pixels + p0) * y_stride + (g * job->cout_g + n0) * elem_size;
    qw_gemm_run(job->kernels, pixels, nc, job->a_stride, block, job->a_stride, job->x_signed, job->x_zero_point, NULL,
                job->weights + g * job->group_bytes + n0 * column_bytes, &stage, out, y_stride, gemm_ws);
  }
}

static void gemm_conv_run(const struct qw_kernels* kernels, const qw_conv2d_shape* s, int32_t oh, int32_t ow,
                          const uint8_t* x, int x_signed, int32_t x_zero_point, const uint8_t* weights,
                          const struct qw_output_stage* stage, uint8_t* y, uint8_t* workspace) {
  const size_t cin_g = (size_t)(s->in_c / s->groups), cout_g = (size_t)(s->out_c / s->groups);
  const size_t k = gemm_k(s);
  const size_t group_bytes = qw_gemm_packed_bytes(&kernels->gemm, cout_g, k);
  const size_t out_pixels = (size_t)oh * ow;
  const size_t in_image = (size_t)s->in_h * s->in_w * s->in_c;
  const size_t y_stride = (size_t)s->out_c * stage->elem_size;
  if (direct_gemm(s)) {
    for (size_t b = 0; b < (size_t)s->batch; b++) {
      for (size_t g = 0; g < (size_t)s->groups; g++) {
        const struct qw_requantization_params rq_g = qw_requantization_params_at(stage->params, g * cout_g);
        struct qw_output_stage stage_g = *stage;
        stage_g.params = &rq_g;
        qw_gemm_parallel(kernels, out_pixels, cout_g, k, x + b * in_image, (size_t)s->in_c, x_signed, x_zero_point, NULL,
                         weights + g * group_bytes, &stage_g, y + b * out_pixels * y_stride + g * cout_g * stage->elem_size,
                         y_stride, workspace);
      }
    }
    return;
  }
  const struct qw_gemm_config* gemm = &kernels->gemm;
  const size_t threads = qw_threads();
  const size_t max_rows = im2col_rows(gemm, s);
  size_t rows = threads == 1 ? max_rows : qw_parallel_tile(out_pixels, gemm->mr, 4, gemm->mr);
  rows = rows < max_rows ? rows : max_rows;
  const size_t blocks = (out_pixels + rows - 1) / rows;
  const size_t columns = blocks * s->batch * s->groups >= 2 * threads ? cout_g : qw_parallel_tile(cout_g, gemm->nr, 2, gemm->nr);
  const struct conv_gemm_job job = {
      .kernels = kernels, .s = s, .ow = ow, .k = k, .cin_g = cin_g, .cout_g = cout_g, .out_pixels = out_pixels,
      .group_bytes = group_bytes, .thread_bytes = gemm_thread_bytes(kernels, s),
      .gemm_bytes = qw_gemm_thread_workspace_size(kernels, cout_g, k), .rows = rows, .blocks = blocks,
      .columns = columns, .column_tiles = (cout_g + columns - 1) / columns,
      .run = s->groups == 1 && s->dilation_w == 1 ? (size_t)s->kernel_w * s->in_c : 0,
      .a_stride = !x_signed && stage->kernel == QW_REQUANT_KERNEL_FP32 && stage->params->fp32_plain &&
                          gemm->fp32_plain_direct[stage->y_signed] != NULL
                      ? qw_round_up(k, gemm->kr)
                      : k,
      .x_signed = x_signed,
      .x_zero_point = x_zero_point, .x = x, .weights = weights, .stage = stage, .y = y, .workspace = workspace,
  };
  qw_parallelize(conv_gemm_task, &job, blocks * s->batch * s->groups * job.column_tiles, 1);
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
  const uint8_t* weights = (const uint8_t*)packed + HEADER_BYTES;
  if (header->kind == CONV_DEPTHWISE) {
    depthwise_run(kernels, s, oh, ow, (const uint8_t*)x, x_signed, x_zero_point, weights, &stage, (uint8_t*)y,
                  (uint8_t*)workspace);
  } else {
    gemm_conv_run(kernels, s, oh, ow, (const uint8_t*)x, x_signed, x_zero_point, weights, &stage, (uint8_t*)y,
                  (uint8_t*)workspace);
  }
  return QW_OK;
}

qw_status qw_conv2d(const qw_conv2d_shape* s, const void* x, qw_dtype x_dtype, int32_t x_zero_point,
                    const void* packed, const void* requantization, void* y, void* workspace) {
  return qw_conv2d_with(qw_kernels(), s, x, x_dtype, x_zero_point, packed, requantization, y, workspace);
}
