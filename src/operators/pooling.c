/* Pooling operators on channels-last data. */
#include <string.h>

#include "config.h"
#include "qwasm.h"

/* PyTorch's pooling_output_shape: floor (or ceil) of (in + 2 pad - dilation (k - 1) - 1) / stride,
 * plus 1; with ceil_mode the last window must start inside the input or its left padding. */
int32_t qw_pool_output_size(int32_t in, int32_t kernel, int32_t stride, int32_t pad, int32_t dilation, int ceil_mode) {
  if (in <= 0 || kernel <= 0 || stride <= 0 || pad < 0 || dilation <= 0 || pad > kernel / 2) {
    return -1;
  }
  const int64_t span = (int64_t)in + 2 * pad - (int64_t)dilation * (kernel - 1) - 1;
  if (span < 0) {
    return -1;
  }
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= (int64_t)in + pad) {
    out--;
  }
  return (int32_t)out;
}

static int valid_pool_shape(const qw_pool2d_shape* s) {
  return s != NULL && s->batch >= 0 && s->in_h > 0 && s->in_w > 0 && s->channels > 0 && s->out_h > 0 && s->out_w > 0 &&
         s->kernel_h > 0 && s->kernel_w > 0 && s->stride_h > 0 && s->stride_w > 0 && s->pad_top >= 0 &&
         s->pad_left >= 0 && s->dilation_h > 0 && s->dilation_w > 0;
}

size_t qw_max_pool2d_workspace_size(const qw_pool2d_shape* s) {
  return valid_pool_shape(s) ? (size_t)s->kernel_h * s->kernel_w * sizeof(void*) : 0;
}

qw_status qw_max_pool2d(const qw_pool2d_shape* s, const void* x, qw_dtype dtype, void* y, void* workspace) {
  if (!valid_pool_shape(s) || workspace == NULL || (s->batch != 0 && (x == NULL || y == NULL)) ||
      (dtype != QW_QUINT8 && dtype != QW_QINT8)) {
    return QW_INVALID_ARGUMENT;
  }
  const qw_maxpool_ukernel maxpool = qw_kernels()->maxpool[dtype == QW_QINT8];
  const uint8_t** taps = (const uint8_t**)workspace;
  const size_t c = (size_t)s->channels;
  const uint8_t* in = (const uint8_t*)x;
  uint8_t* out = (uint8_t*)y;
  for (int32_t b = 0; b < s->batch; b++, in += (size_t)s->in_h * s->in_w * c) {
    for (int32_t oy = 0; oy < s->out_h; oy++) {
      for (int32_t ox = 0; ox < s->out_w; ox++, out += c) {
        size_t count = 0;
        for (int32_t ky = 0; ky < s->kernel_h; ky++) {
          const int32_t iy = oy * s->stride_h - s->pad_top + ky * s->dilation_h;
          for (int32_t kx = 0; kx < s->kernel_w; kx++) {
            const int32_t ix = ox * s->stride_w - s->pad_left + kx * s->dilation_w;
            if (iy >= 0 && iy < s->in_h && ix >= 0 && ix < s->in_w) {
              taps[count++] = in + ((size_t)iy * s->in_w + ix) * c;
            }
          }
        }
        if (count == 0) {
          return QW_INVALID_ARGUMENT; /* a window entirely in padding: the output size was wrong */
        }
        maxpool(c, count, taps, out);
      }
    }
  }
  return QW_OK;
}

qw_status qw_lut8(size_t n, const void* x, const uint8_t* table, void* y) {
  if ((n != 0 && (x == NULL || y == NULL)) || table == NULL) {
    return QW_INVALID_ARGUMENT;
  }
  qw_u8_lut_ukernel__scalar(n, (const uint8_t*)x, table, (uint8_t*)y);
  return QW_OK;
}
