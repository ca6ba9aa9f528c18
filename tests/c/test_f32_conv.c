/* qw_f32_conv2d: NCHW float convolution against a reference summing in the kernel's documented
 * float32 order (bias, then channel, kernel row, kernel column), bit for bit, through each kernel
 * table of kernel_tables.h (so with two float GEMM tiles); argument checks. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "kernel_tables.h"
#include "operators/operators.h"
#include "qwasm.h"

static void reference(const qw_conv2d_shape* s, int32_t oh, int32_t ow, const float* x, const float* w,
                      const float* bias, float* y) {
  const int32_t cg = s->in_c / s->groups, mg = s->out_c / s->groups;
  size_t o = 0;
  for (int32_t b = 0; b < s->batch; b++) {
    for (int32_t oc = 0; oc < s->out_c; oc++) {
      const int32_t g = oc / mg;
      for (int32_t oy = 0; oy < oh; oy++) {
        for (int32_t ox = 0; ox < ow; ox++, o++) {
          float acc = bias != NULL ? bias[oc] : 0.0f;
          for (int32_t ci = 0; ci < cg; ci++) {
            for (int32_t ky = 0; ky < s->kernel_h; ky++) {
              for (int32_t kx = 0; kx < s->kernel_w; kx++) {
                const int32_t iy = oy * s->stride_h - s->pad_top + ky * s->dilation_h;
                const int32_t ix = ox * s->stride_w - s->pad_left + kx * s->dilation_w;
                const float xv = (iy < 0 || iy >= s->in_h || ix < 0 || ix >= s->in_w)
                                     ? 0.0f
                                     : x[(((size_t)b * s->in_c + g * cg + ci) * s->in_h + iy) * s->in_w + ix];
                const float product = xv * w[(((size_t)oc * cg + ci) * s->kernel_h + ky) * s->kernel_w + kx];
                acc = acc + product;
              }
            }
          }
          y[o] = acc;
        }
      }
    }
  }
}

/* zeros: every input and bias -0.0f (padding taps then decide the sign of zero sums). */
static void run_case(struct kernel_table t, qw_conv2d_shape s, int with_bias, int zeros) {
  int32_t oh = 0, ow = 0;
  CHECK(qw_conv2d_output_size(&s, &oh, &ow) == QW_OK, "geometry");
  const size_t nx = (size_t)s.batch * s.in_c * s.in_h * s.in_w;
  const size_t nw = (size_t)s.out_c * (s.in_c / s.groups) * s.kernel_h * s.kernel_w;
  const size_t ny = (size_t)s.batch * s.out_c * oh * ow;
  float* x = malloc(nx * sizeof(float));
  float* w = malloc(nw * sizeof(float));
  float* bias = with_bias ? malloc((size_t)s.out_c * sizeof(float)) : NULL;
  float* y = malloc(ny * sizeof(float));
  float* ref = malloc(ny * sizeof(float));
  for (size_t i = 0; i < nx; i++) x[i] = zeros ? -0.0f : rng_uniform(-3.0f, 3.0f);
  for (size_t i = 0; i < nw; i++) w[i] = rng_uniform(-1.0f, 1.0f);
  for (int32_t i = 0; with_bias && i < s.out_c; i++) bias[i] = zeros ? -0.0f : rng_uniform(-2.0f, 2.0f);
  const size_t pack_bytes = qw_f32_conv2d_pack_size_with(t.kernels, &s);
  const size_t ws_bytes = qw_f32_conv2d_workspace_size_with(t.kernels, &s);
  CHECK(pack_bytes > 0 && ws_bytes > 0, "sizes");
  float* packed = malloc(pack_bytes);
  void* ws = malloc(ws_bytes);
  CHECK(qw_f32_conv2d_pack_with(t.kernels, &s, w, bias, packed) == QW_OK, "pack");
  CHECK(qw_f32_conv2d_with(t.kernels, &s, x, packed, y, ws) == QW_OK, "conv");
  reference(&s, oh, ow, x, w, bias, ref);
  CHECK(memcmp(y, ref, ny * sizeof(float)) == 0, "%s: bits of %dx%dx%dx%d -> %d, kernel %dx%d, groups %d", t.name,
        s.batch, s.in_c, s.in_h, s.in_w, s.out_c, s.kernel_h, s.kernel_w, s.groups);
  free(x);
  free(w);
  free(bias);
  free(y);
  free(ref);
  free(packed);
  free(ws);
}

/* qw_f32_relu: v > 0 ? v : +0 (NaN, -0 and negatives give +0), in place or not, every length 0 .. 40. */
static void relu_cases(void) {
  float x[40], y[40], ref[40];
  const float special[] = {-0.0f, 0.0f, NAN, -NAN, INFINITY, -INFINITY, 1e-45f, -1e-45f, 3.0f, -3.0f};
  for (size_t i = 0; i < 40; i++) x[i] = i < 10 ? special[i] : rng_uniform(-1.0f, 1.0f);
  for (size_t n = 0; n <= 40; n++) {
    for (size_t i = 0; i < n; i++) ref[i] = x[(i * 7) % 40] > 0.0f ? x[(i * 7) % 40] : 0.0f;
    for (size_t i = 0; i < n; i++) y[i] = x[(i * 7) % 40];
    float z[40];
    memcpy(z, y, sizeof(z));
    CHECK(qw_f32_relu(n, z, y) == QW_OK && memcmp(y, ref, n * sizeof(float)) == 0, "relu n=%zu", n);
    CHECK(qw_f32_relu(n, z, z) == QW_OK && memcmp(z, ref, n * sizeof(float)) == 0, "relu in place n=%zu", n);
  }
  CHECK(qw_f32_relu(1, NULL, y) == QW_INVALID_ARGUMENT, "relu NULL");
}

int main(void) {
  relu_cases();
  /* batch, in_h, in_w, in_c, out_c, kernel_h, kernel_w, stride_h, stride_w, pads t l b r, dilation h w, groups */
  const qw_conv2d_shape cases[] = {
      {1, 7, 9, 3, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 11, 6, 4, 6, 3, 2, 2, 1, 0, 1, 2, 0, 1, 1, 2},
      {1, 9, 9, 6, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 6},
      {1, 13, 13, 8, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8},
      {1, 5, 7, 17, 13, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {3, 4, 3, 9, 7, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},
      {1, 10, 10, 2, 3, 5, 5, 3, 2, 2, 0, 1, 3, 1, 2, 1},
      {1, 40, 40, 5, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* more pixels than one panel */
      {1, 3, 3, 300, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1}, /* deep k: one 8-pixel tile per panel */
      /* 1x1 stride 1 unpadded: the GEMM reads the input in place (full tiles), partial last tiles */
      {1, 9, 7, 21, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {2, 8, 8, 5, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {1, 50, 50, 40, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, /* several panels */
      {1, 6, 10, 6, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2},   /* grouped 1x1 */
      {1, 3, 5, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 4},   /* 1x1 depthwise */
      /* depthwise (one input channel per group): multiplier 1 and 2, odd sizes, strides, pads */
      {1, 17, 19, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5},
      {2, 17, 19, 5, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 5},
      {1, 23, 22, 3, 6, 3, 3, 2, 2, 0, 1, 1, 0, 1, 1, 3},
      {1, 12, 31, 4, 4, 5, 5, 2, 3, 2, 2, 2, 2, 1, 1, 4},
      {1, 11, 13, 3, 3, 3, 3, 1, 3, 3, 0, 2, 4, 2, 2, 3}, /* dilation, lopsided pads wider than the kernel */
      {1, 6, 40, 2, 4, 1, 4, 1, 2, 0, 3, 0, 1, 1, 1, 2},
      {1, 1, 1, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},   /* one pixel, all but one tap padding */
      {1, 16, 16, 2, 2, 9, 9, 1, 1, 4, 4, 4, 4, 1, 1, 2}, /* 81 taps: the im2col path */
      {1, 112, 112, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3},
      {1, 14, 14, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 7},
  };
  const size_t n = sizeof(cases) / sizeof(cases[0]);
  struct kernel_table tables[3];
  const size_t count = kernel_tables(tables);
  for (size_t t = 0; t < count; t++) {
    for (size_t i = 0; i < n; i++) {
      run_case(tables[t], cases[i], (int)(i % 2 == 0), 0);
      run_case(tables[t], cases[i], 1, 1);
    }
  }
  qw_conv2d_shape bad = cases[0];
  bad.groups = 2; /* 3 input channels */
  float f = 0.0f;
  CHECK(qw_f32_conv2d_pack_size(&bad) == 0 && qw_f32_conv2d_workspace_size(&bad) == 0, "bad groups: sizes");
  CHECK(qw_f32_conv2d_pack(&bad, &f, NULL, &f) == QW_INVALID_ARGUMENT, "bad groups: pack");
  CHECK(qw_f32_conv2d(&bad, &f, &f, &f, &f) == QW_INVALID_ARGUMENT, "bad groups: conv");
  CHECK(qw_f32_conv2d_pack(&cases[0], NULL, NULL, &f) == QW_INVALID_ARGUMENT, "NULL weights");
  CHECK(qw_f32_conv2d(&cases[0], &f, &f, &f, NULL) == QW_INVALID_ARGUMENT, "NULL workspace");
  const float not_packed[4] = {0};
  CHECK(qw_f32_conv2d(&cases[0], &f, not_packed, &f, &f) == QW_INVALID_ARGUMENT, "weights not packed");
  return check_summary("test_f32_conv");
}
