/* Pooling operators on channels-last data. */
#include <math.h>
#include <string.h>

#include "config.h"
#include "qtypes.h"
#include "threadpool.h"

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

/* The largest coordinate a window of size k at dilation d reaches from output o - 1 (64-bit). */
static int64_t window_end(int32_t out, int32_t stride, int32_t kernel, int32_t dilation) {
  return (int64_t)(out - 1) * stride + (int64_t)(kernel - 1) * dilation;
}

/* Positive sizes; the input and output (elements) and the window's taps fit QW_MAX_BYTES; every coordinate the
 * loops form (o * stride - pad + k * dilation, before clipping) fits int32. */
static int valid_pool_shape(const qw_pool2d_shape* s) {
  return s != NULL && s->batch >= 0 && s->in_h > 0 && s->in_w > 0 && s->channels > 0 && s->out_h > 0 && s->out_w > 0 &&
         s->kernel_h > 0 && s->kernel_w > 0 && s->stride_h > 0 && s->stride_w > 0 && s->pad_top >= 0 &&
         s->pad_left >= 0 && s->dilation_h > 0 && s->dilation_w > 0 &&
         qw_size_fits4((uint64_t)s->batch, (uint64_t)s->in_h, (uint64_t)s->in_w, (uint64_t)s->channels) &&
         qw_size_fits4((uint64_t)s->batch, (uint64_t)s->out_h, (uint64_t)s->out_w, (uint64_t)s->channels) &&
         qw_size_fits4((uint64_t)s->kernel_h, (uint64_t)s->kernel_w, sizeof(void*), 1) &&
         window_end(s->out_h, s->stride_h, s->kernel_h, s->dilation_h) < INT32_MAX &&
         window_end(s->out_w, s->stride_w, s->kernel_w, s->dilation_w) < INT32_MAX;
}

/* Per thread: the tap pointers of one window. */
static size_t max_pool_thread_bytes(const qw_pool2d_shape* s) {
  return qw_round_up((size_t)s->kernel_h * s->kernel_w * sizeof(void*), 16);
}

/* One window's tap pointers per thread, in 64 bits: 0 past QW_MAX_BYTES. */
size_t qw_max_pool2d_workspace_size(const qw_pool2d_shape* s) {
  return valid_pool_shape(s) ? qw_size_or_zero((uint64_t)max_pool_thread_bytes(s) * qw_threads()) : 0;
}

/* 1 when some tap of output position o falls inside [0, in) (a window entirely in padding means the
 * output size was wrong): the first tap at or past 0 is before `in`. In 64 bits and without a loop over the taps. */
static int window_reaches_input(int32_t o, int32_t in, int32_t kernel, int32_t stride, int32_t pad, int32_t dilation) {
  const int64_t start = (int64_t)o * stride - pad;
  const int64_t first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  return first < kernel && start + first * dilation < in;
}

/* Tiles of output rows (over the batch). */
struct max_pool_job {
  const qw_pool2d_shape* s;
  const uint8_t* x;
  uint8_t* y;
  uint8_t* workspace;
  qw_maxpool_ukernel maxpool;
  int clamp_to_edge;
};

static void max_pool_task(const void* context, size_t thread, size_t start, size_t count) {
  const struct max_pool_job* job = (const struct max_pool_job*)context;
  const qw_pool2d_shape* s = job->s;
  const uint8_t** taps = (const uint8_t**)(job->workspace + thread * max_pool_thread_bytes(s));
  const size_t c = (size_t)s->channels;
  for (size_t row = start; row < start + count; row++) {
    const int32_t oy = (int32_t)(row % (size_t)s->out_h);
    const uint8_t* in = job->x + row / (size_t)s->out_h * ((size_t)s->in_h * s->in_w * c);
    uint8_t* out = job->y + row * s->out_w * c;
    for (int32_t ox = 0; ox < s->out_w; ox++, out += c) {
      size_t n = 0;
      for (int32_t ky = 0; ky < s->kernel_h; ky++) {
        const int32_t iy = oy * s->stride_h - s->pad_top + ky * s->dilation_h;
        for (int32_t kx = 0; kx < s->kernel_w; kx++) {
          const int32_t ix = ox * s->stride_w - s->pad_left + kx * s->dilation_w;
          if (iy >= 0 && iy < s->in_h && ix >= 0 && ix < s->in_w) {
            taps[n++] = in + ((size_t)iy * s->in_w + ix) * c;
          } else if (job->clamp_to_edge) {
            /* QNNPACK's indirection buffer: positions outside the input read the nearest edge pixel. */
            const int32_t cy = iy < 0 ? 0 : iy >= s->in_h ? s->in_h - 1 : iy;
            const int32_t cx = ix < 0 ? 0 : ix >= s->in_w ? s->in_w - 1 : ix;
            taps[n++] = in + ((size_t)cy * s->in_w + cx) * c;
          }
        }
      }
      job->maxpool(c, n, taps, out);
    }
  }
}

/* Every (undilated) window overlaps the input: the first ends past the top padding, the last starts inside the input
 * (PyTorch's pooling_output_shape guarantees both). An output size that breaks this has windows of no taps. */
static int windows_overlap_input(const qw_pool2d_shape* s) {
  return s->pad_top < s->kernel_h && s->pad_left < s->kernel_w &&
         (int64_t)(s->out_h - 1) * s->stride_h - s->pad_top < s->in_h && (int64_t)(s->out_w - 1) * s->stride_w - s->pad_left < s->in_w;
}

/* int32 window sums of 8-bit values cannot overflow: at most 2^23 taps (255 * 2^23 < 2^31). Adaptive windows span
 * at most ceil(in / out) + 1 rows and columns. */
static int avg_pool_sums_fit(const qw_pool2d_shape* s, int adaptive) {
  const int64_t rows = adaptive ? (int64_t)s->in_h / s->out_h + 2 : s->kernel_h;
  const int64_t cols = adaptive ? (int64_t)s->in_w / s->out_w + 2 : s->kernel_w;
  return rows * cols <= (INT64_C(1) << 23) || (int64_t)s->in_h * s->in_w <= (INT64_C(1) << 23);
}

qw_status qw_max_pool2d(const qw_pool2d_shape* s, const void* x, qw_dtype dtype, void* y, void* workspace,
                        int clamp_to_edge) {
  if (qw_max_pool2d_workspace_size(s) == 0 || workspace == NULL || (s->batch != 0 && (x == NULL || y == NULL)) ||
      !qw_dtype_is_8bit(dtype)) {
    return QW_INVALID_ARGUMENT;
  }
  /* Every window must reach the input (clamped windows always do): checked here, before any tile runs (no tile
   * runs for an empty batch). */
  if (!clamp_to_edge && s->batch != 0) {
    for (int32_t oy = 0; oy < s->out_h; oy++) {
      if (!window_reaches_input(oy, s->in_h, s->kernel_h, s->stride_h, s->pad_top, s->dilation_h)) {
        return QW_INVALID_ARGUMENT;
      }
    }
    for (int32_t ox = 0; ox < s->out_w; ox++) {
      if (!window_reaches_input(ox, s->in_w, s->kernel_w, s->stride_w, s->pad_left, s->dilation_w)) {
        return QW_INVALID_ARGUMENT;
      }
    }
  }
  const struct max_pool_job job = {
      .s = s, .x = (const uint8_t*)x, .y = (uint8_t*)y, .workspace = (uint8_t*)workspace,
      .maxpool = qw_kernels()->maxpool[dtype == QW_QINT8], .clamp_to_edge = clamp_to_edge,
  };
  const size_t rows = (size_t)s->batch * s->out_h;
  qw_parallelize(max_pool_task, &job, rows, qw_parallel_tile(rows, 1, 4, 1));
  return QW_OK;
}

qw_status qw_lut8(size_t n, const void* x, const uint8_t* table, void* y) {
  if ((n != 0 && (x == NULL || y == NULL)) || table == NULL || !qw_count_fits(n, 1)) {
    return QW_INVALID_ARGUMENT;
  }
  if (n != 0) {
    qw_kernels()->lut(n, (const uint8_t*)x, table, (uint8_t*)y);
  }
  return QW_OK;
}

/* Tiles of output rows (over the batch), and of channels when rows are few (a global pooling). */
struct avg_pool_job {
  const qw_pool2d_shape* s;
  const uint8_t* x;
  uint8_t* y;
  qw_dtype dtype;
  float scale;
  int32_t zero_point, divisor_override, vector_channels;
  int form, adaptive, count_include_pad;
  size_t channels, channel_tiles; /* a tile: one output row, `channels` channels */
};

static void avg_pool_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct avg_pool_job* job = (const struct avg_pool_job*)context;
  const qw_pool2d_shape* s = job->s;
  const qw_dtype dtype = job->dtype;
  const int form = job->form, adaptive = job->adaptive;
  const int32_t zero_point = job->zero_point, divisor_override = job->divisor_override;
  const float scale = job->scale;
  const size_t c = (size_t)s->channels;
  const int32_t taps = s->kernel_h * s->kernel_w;
  /* QNNPACK: every tap counts (padding reads the zero point), divided by kh * kw as s / (s * kh kw). */
  const float qnnpack_multiplier = scale / (scale * (float)taps);
  for (size_t t = start; t < start + count; t++) {
    const size_t row = t / job->channel_tiles, c0 = t % job->channel_tiles * job->channels;
    const size_t c1 = c - c0 < job->channels ? c : c0 + job->channels;
    const int32_t oy = (int32_t)(row % (size_t)s->out_h);
    const uint8_t* in = job->x + row / (size_t)s->out_h * ((size_t)s->in_h * s->in_w * c);
    uint8_t* out = job->y + row * s->out_w * c;
    for (int32_t ox = 0; ox < s->out_w; ox++, out += c) {
      int32_t y0, y1, x0, x1, pool_size;
      if (adaptive) {
        /* adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)) */
        y0 = (int32_t)(((int64_t)oy * s->in_h) / s->out_h);
        y1 = (int32_t)((((int64_t)oy + 1) * s->in_h + s->out_h - 1) / s->out_h);
        x0 = (int32_t)(((int64_t)ox * s->in_w) / s->out_w);
        x1 = (int32_t)((((int64_t)ox + 1) * s->in_w + s->out_w - 1) / s->out_w);
        pool_size = (y1 - y0) * (x1 - x0);
      } else {
        y0 = oy * s->stride_h - s->pad_top;
        x0 = ox * s->stride_w - s->pad_left;
        y1 = y0 + s->kernel_h < s->in_h + s->pad_top ? y0 + s->kernel_h : s->in_h + s->pad_top;
        x1 = x0 + s->kernel_w < s->in_w + s->pad_left ? x0 + s->kernel_w : s->in_w + s->pad_left;
        pool_size = (y1 - y0) * (x1 - x0);
        y0 = y0 < 0 ? 0 : y0;
        x0 = x0 < 0 ? 0 : x0;
        y1 = y1 < s->in_h ? y1 : s->in_h;
        x1 = x1 < s->in_w ? x1 : s->in_w;
      }
      const int32_t valid = (y1 - y0) * (x1 - x0);
      int32_t divisor = divisor_override != 0 ? divisor_override : job->count_include_pad ? pool_size : valid;
      if (adaptive) {
        divisor = pool_size;
      }
      /* PyTorch 2.x's channels-last scalar loop: quantize_val(1.0f / m, zp, sum) with m = (s / s) / d */
      const float m = (scale / scale) / (float)divisor;
      const float fbgemm_inv_scale = 1.0f / (float)(double)(1.0f / m);
      for (size_t ch = c0; ch < c1; ch++) {
        int32_t sum = 0;
        for (int32_t iy = y0; iy < y1; iy++) {
          for (int32_t ix = x0; ix < x1; ix++) {
            sum += qw_load_q8(in, ((size_t)iy * s->in_w + ix) * c + ch, dtype);
          }
        }
        int32_t q;
        switch (form) {
          case QW_AVG_POOL_QNNPACK:
            q = zero_point + (int32_t)nearbyintf((float)(sum - valid * zero_point) * qnnpack_multiplier);
            break;
          case QW_AVG_POOL_GENERIC: /* zero point added before rounding */
            q = (int32_t)nearbyintf((float)(sum - valid * zero_point) * (1.0f / (float)divisor) + (float)zero_point);
            break;
          case QW_AVG_POOL_GENERIC_CHANNELS_LAST: /* zero point added after rounding */
            q = zero_point + (int32_t)nearbyintf((float)(sum - valid * zero_point) * (1.0f / (float)divisor));
            break;
          case QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST:
            q = zero_point + (int32_t)nearbyintf((float)(sum - valid * zero_point) * (1.0f / (float)pool_size));
            break;
          case QW_AVG_POOL_MEAN:
            q = (int32_t)nearbyintf((float)sum / (float)pool_size);
            break;
          case QW_AVG_POOL_GENERIC_CHANNELS_LAST_FBGEMM:
          case QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST_FBGEMM: {
            const float acc = (float)(sum - valid * zero_point);
            if ((int32_t)ch >= job->vector_channels) {
              q = (int32_t)nearbyintf((float)zero_point + acc * fbgemm_inv_scale);
            } else if (form == QW_AVG_POOL_GENERIC_CHANNELS_LAST_FBGEMM) {
              q = zero_point + (int32_t)nearbyintf(acc * m);
            } else {
              q = (int32_t)nearbyintf(fmaf(acc, fbgemm_inv_scale, (float)zero_point));
            }
            break;
          }
          default: /* QW_AVG_POOL_ADAPTIVE: the raw integers averaged, the zero point never subtracted */
            q = (int32_t)nearbyintf((float)sum * (1.0f / (float)pool_size));
            break;
        }
        qw_store_q8_saturated(out, ch, q, dtype);
      }
    }
  }
}

/* Channel blocks of one image: int32 column sums of the block over every pixel (a block's sums stay in registers or
 * L1 while the rows stream past), then onnxruntime's rounding. */
#define ORT_GLOBAL_BLOCK 64

struct ort_global_job {
  size_t pixels, channels, blocks;
  const uint8_t* x;
  uint8_t* y;
  qw_dtype dtype;
  int32_t x_zero_point, y_zero_point;
  float multiplier;
};

static void ort_global_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct ort_global_job* job = (const struct ort_global_job*)context;
  const size_t c = job->channels;
  for (size_t t = start; t < start + count; t++) {
    const size_t b = t / job->blocks, c0 = t % job->blocks * ORT_GLOBAL_BLOCK;
    const size_t nc = c - c0 < ORT_GLOBAL_BLOCK ? c - c0 : ORT_GLOBAL_BLOCK;
    int32_t sums[ORT_GLOBAL_BLOCK] = {0};
    const uint8_t* in = job->x + b * job->pixels * c + c0;
    if (job->dtype == QW_QINT8) {
      for (size_t p = 0; p < job->pixels; p++, in += c) {
        for (size_t j = 0; j < nc; j++) sums[j] += (int8_t)in[j];
      }
    } else {
      for (size_t p = 0; p < job->pixels; p++, in += c) {
        for (size_t j = 0; j < nc; j++) sums[j] += in[j];
      }
    }
    const int32_t offset = job->x_zero_point * (int32_t)job->pixels;
    for (size_t j = 0; j < nc; j++) {
      const int32_t q = job->y_zero_point + (int32_t)nearbyintf((float)(sums[j] - offset) * job->multiplier);
      qw_store_q8_saturated(job->y + b * c, c0 + j, q, job->dtype);
    }
  }
}

qw_status qw_global_avg_pool_ort(size_t batch, size_t pixels, size_t channels, const void* x, qw_dtype dtype,
                                 int32_t x_zero_point, float multiplier, int32_t y_zero_point, void* y) {
  /* pixels below 2^23 keep the int32 sums (and zp * pixels) exact and in range */
  if (pixels == 0 || channels == 0 || pixels >= ((size_t)1 << 23) || !qw_dtype_is_8bit(dtype) ||
      !qw_size_fits4(batch, pixels, channels, 1) || (batch != 0 && (x == NULL || y == NULL))) {
    return QW_INVALID_ARGUMENT;
  }
  if (!qw_zero_point_valid(dtype, x_zero_point) || !qw_zero_point_valid(dtype, y_zero_point) ||
      !(multiplier > 0.0f && multiplier < INFINITY)) {
    return QW_INVALID_QPARAMS;
  }
  const struct ort_global_job job = {
      .pixels = pixels, .channels = channels, .blocks = (channels + ORT_GLOBAL_BLOCK - 1) / ORT_GLOBAL_BLOCK,
      .x = (const uint8_t*)x, .y = (uint8_t*)y, .dtype = dtype, .x_zero_point = x_zero_point,
      .y_zero_point = y_zero_point, .multiplier = multiplier,
  };
  qw_parallelize(ort_global_task, &job, batch * job.blocks, 1);
  return QW_OK;
}

qw_status qw_avg_pool2d(const qw_pool2d_shape* s, const void* x, qw_dtype dtype, float scale, int32_t zero_point,
                        void* y, int form, int count_include_pad, int32_t divisor_override, int32_t vector_channels) {
  if (!valid_pool_shape(s) || (s->batch != 0 && (x == NULL || y == NULL)) || !qw_dtype_is_8bit(dtype) ||
      (unsigned)form > QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST_FBGEMM || divisor_override < 0 || vector_channels < 0) {
    return QW_INVALID_ARGUMENT;
  }
  const int adaptive = form == QW_AVG_POOL_ADAPTIVE || form == QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST ||
                       form == QW_AVG_POOL_MEAN || form == QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST_FBGEMM;
  if (!adaptive && !windows_overlap_input(s)) {
    return QW_INVALID_ARGUMENT;
  }
  if (!avg_pool_sums_fit(s, adaptive)) {
    return QW_UNSUPPORTED;
  }
  /* The scale only divides itself here (QNNPACK's multiplier); no reciprocal of it is formed. */
  if (!qw_scale_positive(scale)) {
    return QW_INVALID_QPARAMS;
  }
  const size_t rows = (size_t)s->batch * s->out_h, c = (size_t)s->channels;
  const size_t channels = rows >= 2 * qw_threads() ? c : qw_parallel_tile(c, 16, 2, 16);
  const struct avg_pool_job job = {
      .s = s, .x = (const uint8_t*)x, .y = (uint8_t*)y, .dtype = dtype, .scale = scale, .zero_point = zero_point,
      .divisor_override = divisor_override, .vector_channels = vector_channels, .form = form,
      .adaptive = adaptive, .count_include_pad = count_include_pad,
      .channels = channels, .channel_tiles = (c + channels - 1) / channels,
  };
  qw_parallelize(avg_pool_task, &job, rows * job.channel_tiles, 1);
  return QW_OK;
}
