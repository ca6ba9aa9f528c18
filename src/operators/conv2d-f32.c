/* float32 2-D convolution on NCHW data (the model loader's float graphs: calibration runs float
 * models before quantizing them). Per group, blocks of output pixels are gathered into an im2col
 * panel [8-pixel tile][k][8] (zeros for padding and past the last pixel), then the float GEMM
 * microkernels multiply tiles of 4 packed output channels by each panel tile and write NCHW rows
 * directly. Two shapes skip the panel:
 *   - 1x1, stride 1, no padding: the NCHW input already is the [k][pixels] panel; the GEMM reads it
 *     in place (only a last partial 8-pixel tile is copied into the panel).
 *   - one input channel per group (depthwise, any multiplier) with at most QW_F32_DW_TAPS taps: the
 *     channel plane is copied into the workspace inside its zero padding, its columns split by
 *     phase modulo stride_w (so a strided output row reads consecutive floats), then the depthwise
 *     kernel sums the taps of each output channel straight from those rows.
 * Sums run bias first, then k in (channel, kernel row, kernel column) order, padding taps included
 * as products with +0.0f: every path, and the scalar and SIMD builds, give the same bits. */
#include <string.h>

#include "config.h"
#include "qwasm.h"

/* About this many floats per im2col panel (128 KiB). */
#define PANEL_FLOATS (32 * 1024)
#define PIXELS_MAX 1024
/* Depthwise convolutions with more taps than this go through the im2col panel. */
#define QW_F32_DW_TAPS 64

static size_t f32_k(const qw_conv2d_shape* s) {
  return (size_t)(s->in_c / s->groups) * s->kernel_h * s->kernel_w;
}

static size_t f32_tiles(const qw_conv2d_shape* s) {
  const size_t cout_g = (size_t)(s->out_c / s->groups);
  return (cout_g + QW_F32_GEMM_MR - 1) / QW_F32_GEMM_MR;
}

/* Output pixels per panel: a multiple of 8. */
static size_t f32_block_pixels(const qw_conv2d_shape* s) {
  size_t pixels = PANEL_FLOATS / f32_k(s) / QW_F32_GEMM_NR * QW_F32_GEMM_NR;
  if (pixels < QW_F32_GEMM_NR) pixels = QW_F32_GEMM_NR;
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

size_t qw_f32_conv2d_pack_size(const qw_conv2d_shape* s) {
  int32_t oh, ow;
  if (qw_conv2d_output_size(s, &oh, &ow) != QW_OK) {
    return 0;
  }
  return (size_t)s->groups * f32_tiles(s) * qw_f32_gemm_tile_size(f32_k(s)) * sizeof(float);
}

qw_status qw_f32_conv2d_pack(const qw_conv2d_shape* s, const float* w, const float* bias, float* packed) {
  int32_t oh, ow;
  if (qw_conv2d_output_size(s, &oh, &ow) != QW_OK || w == NULL || packed == NULL) {
    return QW_INVALID_ARGUMENT;
  }
  const size_t k = f32_k(s), cout_g = (size_t)(s->out_c / s->groups), tiles = f32_tiles(s);
  for (size_t g = 0; g < (size_t)s->groups; g++) {
    for (size_t t = 0; t < tiles; t++) {
      float* tile = packed + (g * tiles + t) * qw_f32_gemm_tile_size(k);
      for (size_t m = 0; m < QW_F32_GEMM_MR; m++) {
        const size_t row = t * QW_F32_GEMM_MR + m; /* within the group */
        const size_t oc = g * cout_g + row;
        const int real = row < cout_g;
        tile[m] = real && bias != NULL ? bias[oc] : 0.0f;
        for (size_t kk = 0; kk < k; kk++) {
          tile[QW_F32_GEMM_MR * (kk + 1) + m] = real ? w[oc * k + kk] : 0.0f;
        }
      }
    }
  }
  return QW_OK;
}

size_t qw_f32_conv2d_workspace_size(const qw_conv2d_shape* s) {
  int32_t oh, ow;
  if (qw_conv2d_output_size(s, &oh, &ow) != QW_OK) {
    return 0;
  }
  if (f32_depthwise(s)) {
    return ((size_t)s->stride_w * dw_rows(s) * dw_cols(s) + QW_F32_DWCONV_SLACK) * sizeof(float);
  }
  return f32_k(s) * f32_block_pixels(s) * sizeof(float);
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

static void dw_conv(const qw_conv2d_shape* s, int32_t oh, int32_t ow, const float* x, const float* packed, float* y,
                    float* plane) {
  const qw_f32_dwconv_ukernel dwconv = qw_kernels()->f32_dwconv;
  const size_t cout_g = (size_t)(s->out_c / s->groups), tiles = f32_tiles(s), tile_size = qw_f32_gemm_tile_size(f32_k(s));
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
        const float* w = packed + (g * tiles + r / QW_F32_GEMM_MR) * tile_size + r % QW_F32_GEMM_MR;
        dwconv((size_t)oh, (size_t)ow, taps, plane, offsets, s->stride_h * cols, w, y + (b * s->out_c + oc) * pixels);
      }
    }
  }
}

/* One panel tile: the windows of output pixels p .. p + 7 (pixels >= count are zeros) over the
 * group's channels [c0, c0 + cin_g), for k = (channel, kernel row, kernel column). */
static void im2col_tile(const qw_conv2d_shape* s, const float* image, size_t c0, int32_t ow, size_t p, size_t count,
                        float* panel) {
  const size_t cin_g = (size_t)(s->in_c / s->groups);
  const size_t plane = (size_t)s->in_h * s->in_w;
  const size_t taps = (size_t)s->kernel_h * s->kernel_w;
  const size_t n = count - p < QW_F32_GEMM_NR ? count - p : QW_F32_GEMM_NR;
  int32_t iy0[QW_F32_GEMM_NR], ix0[QW_F32_GEMM_NR];
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
      for (; j < QW_F32_GEMM_NR; j++) panel[j] = 0.0f;
      panel += QW_F32_GEMM_NR;
      continue;
    }
    for (int32_t ky = 0; ky < s->kernel_h; ky++) {
      for (int32_t kx = 0; kx < s->kernel_w; kx++, panel += QW_F32_GEMM_NR) {
        const int32_t dy = ky * s->dilation_h, dx = kx * s->dilation_w;
        size_t j = 0;
        for (; j < n; j++) {
          const int32_t iy = iy0[j] + dy, ix = ix0[j] + dx;
          panel[j] = (iy < 0 || iy >= s->in_h || ix < 0 || ix >= s->in_w) ? 0.0f : chan[(size_t)iy * s->in_w + ix];
        }
        for (; j < QW_F32_GEMM_NR; j++) panel[j] = 0.0f;
      }
    }
  }
}

qw_status qw_f32_conv2d(const qw_conv2d_shape* s, const float* x, const float* packed, float* y, void* workspace) {
  int32_t oh, ow;
  if (qw_conv2d_output_size(s, &oh, &ow) != QW_OK || packed == NULL || workspace == NULL ||
      (s->batch != 0 && (x == NULL || y == NULL))) {
    return QW_INVALID_ARGUMENT;
  }
  if (f32_depthwise(s)) {
    dw_conv(s, oh, ow, x, packed, y, (float*)workspace);
    return QW_OK;
  }
  const struct qw_kernels* kernels = qw_kernels();
  const int pointwise = f32_pointwise(s);
  const size_t k = f32_k(s), cin_g = (size_t)(s->in_c / s->groups), cout_g = (size_t)(s->out_c / s->groups);
  const size_t tiles = f32_tiles(s), tile_size = qw_f32_gemm_tile_size(k);
  const size_t pixels = (size_t)oh * ow, block = f32_block_pixels(s);
  const size_t in_image = (size_t)s->in_c * s->in_h * s->in_w, out_image = (size_t)s->out_c * pixels;
  float* panel = (float*)workspace;
  for (size_t b = 0; b < (size_t)s->batch; b++) {
    const float* image = x + b * in_image;
    float* out = y + b * out_image;
    for (size_t g = 0; g < (size_t)s->groups; g++) {
      const float* wg = packed + g * tiles * tile_size;
      for (size_t p0 = 0; p0 < pixels; p0 += block) {
        const size_t end = p0 + block < pixels ? p0 + block : pixels;
        for (size_t p = p0; p < end; p += QW_F32_GEMM_NR) {
          if (!pointwise || end - p < QW_F32_GEMM_NR) {
            im2col_tile(s, image, g * cin_g, ow, p, end, panel + (p - p0) * k);
          }
        }
        for (size_t t = 0; t < tiles; t++) {
          const size_t row = t * QW_F32_GEMM_MR;
          const size_t mr = cout_g - row < QW_F32_GEMM_MR ? cout_g - row : QW_F32_GEMM_MR;
          const qw_f32_gemm_ukernel gemm = kernels->f32_gemm[mr - 1];
          float* c = out + (g * cout_g + row) * pixels;
          for (size_t p = p0; p < end; p += QW_F32_GEMM_NR) {
            const size_t nc = end - p < QW_F32_GEMM_NR ? end - p : QW_F32_GEMM_NR;
            if (pointwise && nc == QW_F32_GEMM_NR) {
              gemm(mr, nc, k, wg + t * tile_size, image + g * cin_g * pixels + p, pixels, c + p, pixels);
            } else {
              gemm(mr, nc, k, wg + t * tile_size, panel + (p - p0) * k, QW_F32_GEMM_NR, c + p, pixels);
            }
          }
        }
      }
    }
  }
  return QW_OK;
}

qw_status qw_f32_relu(size_t n, const float* x, float* y) {
  if (n != 0 && (x == NULL || y == NULL)) {
    return QW_INVALID_ARGUMENT;
  }
  qw_kernels()->f32_relu(n, x, y);
  return QW_OK;
}
