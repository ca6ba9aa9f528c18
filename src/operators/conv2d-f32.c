/* float32 2-D convolution on NCHW data (the model loader's float graphs: calibration runs float
 * models before quantizing them). Per group, blocks of output pixels are gathered into an im2col
 * panel [nr-pixel tile][k][nr] (zeros for padding and past the last pixel), then the float GEMM
 * microkernels multiply tiles of mr packed output channels by each panel tile and write NCHW rows
 * directly (mr, nr and the packing: the kernel table's float GEMM config, f32/gemm.h). Two shapes skip
 * the panel:
 *   - 1x1, stride 1, no padding: the NCHW input already is the [k][pixels] panel; the GEMM reads it
 *     in place (only a last partial tile is copied into the panel).
 *   - one input channel per group (depthwise, any multiplier) with at most QW_F32_DW_TAPS taps: the
 *     channel plane is copied into the workspace inside its zero padding, its columns split by
 *     phase modulo stride_w (so a strided output row reads consecutive floats), then the depthwise
 *     kernel sums the taps of each output channel straight from those rows.
 * Sums run bias first, then k in (channel, kernel row, kernel column) order, padding taps included
 * as products with +0.0f: every path, and the scalar and SIMD builds, give the same bits. */
#include <assert.h>
#include <string.h>

#include "operators/operators.h"
#include "qtypes.h"

/* Packed weights: this header, then per group the config's tiles. layout is qw_f32_gemm_layout of the
 * config that packed them. */
struct f32_pack_header {
  uint32_t magic;
  uint32_t layout;
  uint32_t reserved[2];
};
#define F32_PACKED_MAGIC 0x46505751u /* "QWPF" */
#define HEADER_FLOATS 4

/* About this many floats per im2col panel (128 KiB). */
#define PANEL_FLOATS (32 * 1024)
#define PIXELS_MAX 1024
/* Depthwise convolutions with more taps than this go through the im2col panel. */
#define QW_F32_DW_TAPS 64

static size_t f32_k(const qw_conv2d_shape* s) {
  return (size_t)(s->in_c / s->groups) * s->kernel_h * s->kernel_w;
}

/* Tiles of mr output channels per group. */
static size_t f32_tiles(const struct qw_f32_gemm_config* gemm, const qw_conv2d_shape* s) {
  const size_t cout_g = (size_t)(s->out_c / s->groups);
  return (cout_g + gemm->mr - 1) / gemm->mr;
}

/* Output pixels per panel: a multiple of nr. */
static size_t f32_block_pixels(const struct qw_f32_gemm_config* gemm, const qw_conv2d_shape* s) {
  size_t pixels = PANEL_FLOATS / f32_k(s) / gemm->nr * gemm->nr;
  if (pixels < gemm->nr) pixels = gemm->nr;
  return pixels > PIXELS_MAX ? PIXELS_MAX : pixels;
}

/* One input channel per group, few enough taps for the direct depthwise path. */
static int f32_depthwise(const qw_conv2d_shape* s) {
  return s->in_c == s->groups && (size_t)s->kernel_h * s->kernel_w <= QW_F32_DW_TAPS;
}

static int f32_pointwise(const qw_conv2d_shape* s) {
  return s->kernel_h == 1 && s->kernel_w == 1 && s->stride_h == 1 && s->stride_w == 1 && s->pad_top == 0 &&
         s->pad_left == 0 && s->pad_bottom == 0 && s->pad_right == 0;
}

/* The depthwise path's padded, phase-split channel: stride_w planes of padded rows x dw_cols(s). */
static size_t dw_rows(const qw_conv2d_shape* s) {
  return (size_t)s->in_h + s->pad_top + s->pad_bottom;
}

static size_t dw_cols(const qw_conv2d_shape* s) {
  const size_t padded = (size_t)s->in_w + s->pad_left + s->pad_right;
  return (padded + s->stride_w - 1) / s->stride_w;
}

/* A valid geometry whose float input, output and weights each fit in QW_MAX_BYTES; its output size in *oh, *ow. */
static int f32_geometry(const qw_conv2d_shape* s, int32_t* oh, int32_t* ow) {
  return qw_conv2d_output_size(s, oh, ow) == QW_OK &&
         qw_size_fits4((uint64_t)s->batch * s->in_h, (uint64_t)s->in_w, (uint64_t)s->in_c, sizeof(float)) &&
         qw_size_fits4((uint64_t)s->batch * *oh, (uint64_t)*ow, (uint64_t)s->out_c, sizeof(float)) &&
         qw_size_fits4((uint64_t)s->out_c * (s->in_c / s->groups), (uint64_t)s->kernel_h, (uint64_t)s->kernel_w, sizeof(float));
}

size_t qw_f32_conv2d_pack_size_with(const struct qw_kernels* kernels, const qw_conv2d_shape* s) {
  int64_t oh, ow;
  if (!qw_conv2d_geometry(s, &oh, &ow) ||
      !qw_size_fits4((uint64_t)s->out_c * (s->in_c / s->groups), (uint64_t)s->kernel_h, (uint64_t)s->kernel_w, sizeof(float))) {
    return 0;
  }
  const struct qw_f32_gemm_config* gemm = &kernels->f32_gemm;
  const uint64_t group_floats = f32_tiles(gemm, s) * qw_f32_gemm_tile_size(gemm, f32_k(s)); /* below 2^33: checked weights */
  return group_floats > QW_MAX_BYTES ? 0 : qw_size_or_zero((HEADER_FLOATS + (uint64_t)s->groups * group_floats) * sizeof(float));
}

size_t qw_f32_conv2d_pack_size(const qw_conv2d_shape* s) {
  return qw_f32_conv2d_pack_size_with(qw_kernels(), s);
}

qw_status qw_f32_conv2d_pack_with(const struct qw_kernels* kernels, const qw_conv2d_shape* s, const float* w,
                                  const float* bias, float* packed) {
  if (qw_f32_conv2d_pack_size_with(kernels, s) == 0 || w == NULL || packed == NULL) {
    return QW_INVALID_ARGUMENT;
  }
  const struct qw_f32_gemm_config* gemm = &kernels->f32_gemm;
  *(struct f32_pack_header*)packed = (struct f32_pack_header){F32_PACKED_MAGIC, qw_f32_gemm_layout(gemm), {0, 0}};
  const size_t k = f32_k(s), cout_g = (size_t)(s->out_c / s->groups);
  const size_t group_floats = f32_tiles(gemm, s) * qw_f32_gemm_tile_size(gemm, k);
  for (size_t g = 0; g < (size_t)s->groups; g++) {
    gemm->pack(gemm->mr, cout_g, k, w + g * cout_g * k, bias != NULL ? bias + g * cout_g : NULL,
               packed + HEADER_FLOATS + g * group_floats);
  }
  return QW_OK;
}

qw_status qw_f32_conv2d_pack(const qw_conv2d_shape* s, const float* w, const float* bias, float* packed) {
  return qw_f32_conv2d_pack_with(qw_kernels(), s, w, bias, packed);
}

size_t qw_f32_conv2d_workspace_size_with(const struct qw_kernels* kernels, const qw_conv2d_shape* s) {
  int32_t oh, ow;
  if (!f32_geometry(s, &oh, &ow)) {
    return 0;
  }
  if (f32_depthwise(s)) {
    /* the padded plane: padded rows and columns are each below 2^31 (qw_conv2d_output_size) */
    const uint64_t plane = (uint64_t)s->stride_w * dw_rows(s);
    return plane > QW_MAX_BYTES ? 0 : qw_size_or_zero((plane * dw_cols(s) + QW_F32_DWCONV_SLACK) * sizeof(float));
  }
  return qw_size_or_zero((uint64_t)f32_k(s) * f32_block_pixels(&kernels->f32_gemm, s) * sizeof(float));
}

size_t qw_f32_conv2d_workspace_size(const qw_conv2d_shape* s) {
  return qw_f32_conv2d_workspace_size_with(qw_kernels(), s);
}

/* Copies channel plane `chan` into the workspace's interior: padded row r, padded column
 * q + i * stride_w at plane[(q * rows + r) * cols + i]. The padding around it (and past the padded
 * width) stays as dw_conv zeroed it once per call. */
static void dw_fill(const qw_conv2d_shape* s, const float* chan, float* plane) {
  const size_t rows = dw_rows(s), cols = dw_cols(s), sw = (size_t)s->stride_w;
  const size_t pl = (size_t)s->pad_left, w = (size_t)s->in_w;
  for (size_t q = 0; q < sw; q++) {
    /* padded column q + i * sw is input column q + i * sw - pl: inside for i in [i0, i1) */
    const size_t i0 = pl > q ? (pl - q + sw - 1) / sw : 0;
    const size_t i1 = pl + w > q ? (pl + w - q + sw - 1) / sw : 0;
    if (i0 >= i1) continue;
    const float* src = chan + q + i0 * sw - pl;
    float* dst = plane + (q * rows + s->pad_top) * cols + i0;
    for (size_t y = 0; y < (size_t)s->in_h; y++, src += w, dst += cols) {
      if (sw == 1) {
        memcpy(dst, src, (i1 - i0) * sizeof(float));
      } else if (sw == 2) {
        for (size_t i = 0; i < i1 - i0; i++) dst[i] = src[2 * i];
      } else {
        for (size_t i = 0; i < i1 - i0; i++) dst[i] = src[i * sw];
      }
    }
  }
}

static void dw_conv(const struct qw_kernels* kernels, const qw_conv2d_shape* s, int32_t oh, int32_t ow, const float* x,
                    const float* packed, float* y, float* plane) {
  const qw_f32_dwconv_ukernel dwconv = kernels->f32_dwconv;
  const struct qw_f32_gemm_config* gemm = &kernels->f32_gemm;
  const size_t cout_g = (size_t)(s->out_c / s->groups), tiles = f32_tiles(gemm, s);
  const size_t tile_size = qw_f32_gemm_tile_size(gemm, f32_k(s));
  const size_t rows = dw_rows(s), cols = dw_cols(s), sw = (size_t)s->stride_w;
  const size_t in_plane = (size_t)s->in_h * s->in_w, pixels = (size_t)oh * ow;
  const size_t taps = (size_t)s->kernel_h * s->kernel_w;
  size_t offsets[QW_F32_DW_TAPS]; /* of tap t's input for output (0, 0) */
  for (size_t ky = 0, t = 0; ky < (size_t)s->kernel_h; ky++) {
    for (size_t kx = 0; kx < (size_t)s->kernel_w; kx++, t++) {
      const size_t dx = kx * s->dilation_w;
      offsets[t] = ((dx % sw) * rows + ky * s->dilation_h) * cols + dx / sw;
    }
  }
  memset(plane, 0, (sw * rows * cols + QW_F32_DWCONV_SLACK) * sizeof(float));
  for (size_t b = 0; b < (size_t)s->batch; b++) {
    for (size_t g = 0; g < (size_t)s->groups; g++) {
      dw_fill(s, x + (b * s->groups + g) * in_plane, plane);
      for (size_t r = 0; r < cout_g; r++) {
        const size_t oc = g * cout_g + r;
        const float* w = packed + (g * tiles + r / gemm->mr) * tile_size + r % gemm->mr;
        dwconv((size_t)oh, (size_t)ow, taps, plane, offsets, s->stride_h * cols, w, gemm->mr,
               y + (b * s->out_c + oc) * pixels);
      }
    }
  }
}

/* One panel tile: the windows of output pixels p .. p + nr - 1 (pixels >= count are zeros) over the
 * group's channels [c0, c0 + cin_g), for k = (channel, kernel row, kernel column). */
static void im2col_tile(const qw_conv2d_shape* s, size_t nr, const float* image, size_t c0, int32_t ow, size_t p,
                        size_t count, float* panel) {
  const size_t cin_g = (size_t)(s->in_c / s->groups);
  const size_t plane = (size_t)s->in_h * s->in_w;
  const size_t taps = (size_t)s->kernel_h * s->kernel_w;
  const size_t n = count - p < nr ? count - p : nr;
  assert(nr <= QW_F32_GEMM_NR_LIMIT);
  int32_t iy0[QW_F32_GEMM_NR_LIMIT], ix0[QW_F32_GEMM_NR_LIMIT];
  for (size_t j = 0; j < n; j++) {
    const int32_t oy = (int32_t)((p + j) / (size_t)ow), ox = (int32_t)((p + j) % (size_t)ow);
    iy0[j] = oy * s->stride_h - s->pad_top;
    ix0[j] = ox * s->stride_w - s->pad_left;
  }
  /* 1x1, stride 1, no padding: the pixels are consecutive in every channel plane. */
  const int pointwise = taps == 1 && s->stride_h == 1 && s->stride_w == 1 && s->pad_top == 0 && s->pad_left == 0 &&
                        s->pad_bottom == 0 && s->pad_right == 0;
  for (size_t ci = 0; ci < cin_g; ci++) {
    const float* chan = image + (c0 + ci) * plane;
    if (pointwise) {
      size_t j = 0;
      for (; j < n; j++) panel[j] = chan[p + j];
      for (; j < nr; j++) panel[j] = 0.0f;
      panel += nr;
      continue;
    }
    for (int32_t ky = 0; ky < s->kernel_h; ky++) {
      for (int32_t kx = 0; kx < s->kernel_w; kx++, panel += nr) {
        const int32_t dy = ky * s->dilation_h, dx = kx * s->dilation_w;
        size_t j = 0;
        for (; j < n; j++) {
          const int32_t iy = iy0[j] + dy, ix = ix0[j] + dx;
          panel[j] = (iy < 0 || iy >= s->in_h || ix < 0 || ix >= s->in_w) ? 0.0f : chan[(size_t)iy * s->in_w + ix];
        }
        for (; j < nr; j++) panel[j] = 0.0f;
      }
    }
  }
}

qw_status qw_f32_conv2d_with(const struct qw_kernels* kernels, const qw_conv2d_shape* s, const float* x,
                             const float* packed, float* y, void* workspace) {
  int32_t oh, ow;
  const struct qw_f32_gemm_config* gemm = &kernels->f32_gemm;
  if (!f32_geometry(s, &oh, &ow) || qw_f32_conv2d_workspace_size_with(kernels, s) == 0 || packed == NULL ||
      workspace == NULL || (s->batch != 0 && (x == NULL || y == NULL))) {
    return QW_INVALID_ARGUMENT;
  }
  const struct f32_pack_header* header = (const struct f32_pack_header*)packed;
  if (header->magic != F32_PACKED_MAGIC || header->layout != qw_f32_gemm_layout(gemm)) {
    return QW_INVALID_ARGUMENT;
  }
  packed += HEADER_FLOATS;
  if (f32_depthwise(s)) {
    dw_conv(kernels, s, oh, ow, x, packed, y, (float*)workspace);
    return QW_OK;
  }
  const size_t mr_max = gemm->mr, nr = gemm->nr;
  const int pointwise = f32_pointwise(s);
  const size_t k = f32_k(s), cin_g = (size_t)(s->in_c / s->groups), cout_g = (size_t)(s->out_c / s->groups);
  const size_t tiles = f32_tiles(gemm, s), tile_size = qw_f32_gemm_tile_size(gemm, k);
  const size_t pixels = (size_t)oh * ow, block = f32_block_pixels(gemm, s);
  const size_t in_image = (size_t)s->in_c * s->in_h * s->in_w, out_image = (size_t)s->out_c * pixels;
  float* panel = (float*)workspace;
  for (size_t b = 0; b < (size_t)s->batch; b++) {
    const float* image = x + b * in_image;
    float* out = y + b * out_image;
    for (size_t g = 0; g < (size_t)s->groups; g++) {
      const float* wg = packed + g * tiles * tile_size;
      for (size_t p0 = 0; p0 < pixels; p0 += block) {
        const size_t end = p0 + block < pixels ? p0 + block : pixels;
        for (size_t p = p0; p < end; p += nr) {
          if (!pointwise || end - p < nr) {
            im2col_tile(s, nr, image, g * cin_g, ow, p, end, panel + (p - p0) * k);
          }
        }
        for (size_t t = 0; t < tiles; t++) {
          const size_t row = t * mr_max;
          const size_t mr = cout_g - row < mr_max ? cout_g - row : mr_max;
          const qw_f32_gemm_ukernel ukernel = gemm->gemm[mr - 1];
          float* c = out + (g * cout_g + row) * pixels;
          for (size_t p = p0; p < end; p += nr) {
            const size_t nc = end - p < nr ? end - p : nr;
            if (pointwise && nc == nr) {
              ukernel(mr, nc, k, wg + t * tile_size, image + g * cin_g * pixels + p, pixels, c + p, pixels, 1.0f);
            } else {
              ukernel(mr, nc, k, wg + t * tile_size, panel + (p - p0) * k, nr, c + p, pixels, 1.0f);
            }
          }
        }
      }
    }
  }
  return QW_OK;
}

qw_status qw_f32_conv2d(const qw_conv2d_shape* s, const float* x, const float* packed, float* y, void* workspace) {
  return qw_f32_conv2d_with(qw_kernels(), s, x, packed, y, workspace);
}

qw_status qw_f32_relu(size_t n, const float* x, float* y) {
  if ((n != 0 && (x == NULL || y == NULL)) || !qw_count_fits(n, sizeof(float))) {
    return QW_INVALID_ARGUMENT;
  }
  if (n != 0) {
    qw_kernels()->f32_relu(n, x, y);
  }
  return QW_OK;
}
