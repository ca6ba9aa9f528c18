/* The kernel tables (config.c) and the drivers that read them. For each table of kernel_tables.h
 * (this build's, the scalar baseline, a table with other layouts):
 *   - the configs are consistent (a kernel for every row count up to mr, layouts the packers can write);
 *   - the int8 convolution driver, through the table, against a plain-loop int32 reference: GEMM (1x1
 *     read in place, im2col blocks, groups, deep K over several column blocks) and depthwise, odd
 *     channel counts, padding, strides, dilation, batches;
 *   - the table's elementwise entries (max pooling, transpose, table lookup, ONNX add, float ReLU)
 *     against plain loops at every length 1..70;
 *   - weights packed by one layout are refused by a table with another, and accepted by one that
 *     shares it.
 * Then the contract asserts: compiled in natively (the Debug ASan/UBSan build), where a broken
 * contract must abort (checked in a child process); compiled out of the release wasm. */
#include <math.h>

#include "check.h"
#include "kernel_tables.h"
#include "operators/operators.h"
#include "qwasm.h"

#if !defined(__EMSCRIPTEN__)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

static int32_t value_of(uint8_t byte, int is_signed) {
  return is_signed ? (int32_t)(int8_t)byte : (int32_t)byte;
}

/* ---- configuration invariants -------------------------------------------------------------------- */

static void test_invariants(struct kernel_table t) {
  const struct qw_kernels* k = t.kernels;
  const struct qw_gemm_config* gemm = &k->gemm;
  CHECK(gemm->mr >= 1 && gemm->mr <= QW_GEMM_MR_LIMIT && gemm->nr >= 1 && gemm->kr >= 2 && gemm->kr % 2 == 0,
        "%s gemm mr %u nr %u kr %u", t.name, gemm->mr, gemm->nr, gemm->kr);
  CHECK((gemm->packing == QW_GEMM_PACKING_X16_C2 && gemm->pack_w == qw_pack_x16c2_gemm_weights &&
         gemm->a_element_size == 2 && gemm->w_element_size == 2 && gemm->a_row_extra == 0 && gemm->a_header == 0 &&
         gemm->w_column_extra == 0) ||
            (gemm->packing == QW_GEMM_PACKING_X8_C4 && gemm->pack_w == qw_pack_x8c4_gemm_weights && gemm->kr % 4 == 0 &&
             gemm->a_element_size == 1 && gemm->w_element_size == 1 && gemm->a_row_extra == 4 &&
             gemm->a_header == 16 && gemm->w_column_extra == 8),
        "%s gemm packing", t.name);
  for (size_t r = 0; r < QW_GEMM_MR_LIMIT; r++) {
    CHECK((r < gemm->mr) == (gemm->gemm[r] != NULL), "%s gemm kernel for %zu rows", t.name, r + 1);
  }
  CHECK(gemm->pack_a[0] != NULL && gemm->pack_a[1] != NULL, "%s gemm pack_a", t.name);
  const struct qw_dwconv_config* dw = &k->dwconv;
  CHECK(dw->cr >= 1 && dw->ukernel != NULL && dw->tap_row[0] != NULL && dw->tap_row[1] != NULL &&
            ((dw->packing == QW_DWCONV_PACKING_X16_ROW_PAIRS && dw->pack == qw_pack_x16_row_pairs_dwconv_weights &&
              dw->taps == 2 && dw->x_offset[0] == 0 && dw->x_offset[1] == 0) ||
             (dw->packing == QW_DWCONV_PACKING_X8_ROW_QUADS && dw->pack == qw_pack_x8_row_quads_dwconv_weights &&
              dw->taps == 4 && dw->cr % 4 == 0 && (dw->x_offset[0] == 0 || dw->x_offset[0] == -128) &&
              (dw->x_offset[1] == 0 || dw->x_offset[1] == 128))),
        "%s dwconv config", t.name);
  const struct qw_f32_gemm_config* f32 = &k->f32_gemm;
  CHECK(f32->mr >= 1 && f32->mr <= QW_F32_GEMM_MR_LIMIT && f32->nr >= 1 && f32->nr <= QW_F32_GEMM_NR_LIMIT &&
            f32->pack != NULL && f32->packx != NULL,
        "%s f32 gemm mr %u nr %u", t.name, f32->mr, f32->nr);
  for (size_t r = 0; r < QW_F32_GEMM_MR_LIMIT; r++) {
    CHECK((r < f32->mr) == (f32->gemm[r] != NULL), "%s f32 gemm kernel for %zu rows", t.name, r + 1);
  }
  for (int kernel = 0; kernel < 3; kernel++) {
    CHECK(k->requantize[kernel][0] != NULL && k->requantize[kernel][1] != NULL, "%s requantize[%d]", t.name, kernel);
  }
  CHECK(k->lut != NULL && k->transpose_x8 != NULL && k->maxpool[0] != NULL && k->maxpool[1] != NULL &&
            k->vadd_onnx[0] != NULL && k->vadd_onnx[1] != NULL && k->f32_dwconv != NULL && k->f32_relu != NULL,
        "%s table entries", t.name);
}

/* ---- the int8 convolution through a table ---------------------------------------------------------- */

/* y[b][oy][ox][oc] = bias[oc] + sum (x - x_zp) * (w - w_zp[oc]) over the window, padding contributing 0. */
static void conv_reference(const qw_conv2d_shape* s, int32_t oh, int32_t ow, const uint8_t* x, int x_signed,
                           int32_t x_zp, const uint8_t* w, int w_signed, const int32_t* w_zp, size_t zp_count,
                           const int32_t* bias, int32_t* y) {
  const int32_t cin_g = s->in_c / s->groups, cout_g = s->out_c / s->groups;
  for (int32_t b = 0; b < s->batch; b++) {
    for (int32_t oy = 0; oy < oh; oy++) {
      for (int32_t ox = 0; ox < ow; ox++) {
        for (int32_t oc = 0; oc < s->out_c; oc++) {
          const int32_t g = oc / cout_g, zp = w_zp[zp_count == 1 ? 0 : (size_t)oc];
          int64_t sum = bias[oc];
          for (int32_t ci = 0; ci < cin_g; ci++) {
            for (int32_t ky = 0; ky < s->kernel_h; ky++) {
              for (int32_t kx = 0; kx < s->kernel_w; kx++) {
                const int32_t iy = oy * s->stride_h - s->pad_top + ky * s->dilation_h;
                const int32_t ix = ox * s->stride_w - s->pad_left + kx * s->dilation_w;
                if (iy < 0 || iy >= s->in_h || ix < 0 || ix >= s->in_w) continue;
                const uint8_t xv = x[(((size_t)b * s->in_h + iy) * s->in_w + ix) * s->in_c + g * cin_g + ci];
                const uint8_t wv = w[(((size_t)oc * cin_g + ci) * s->kernel_h + ky) * s->kernel_w + kx];
                sum += (int64_t)(value_of(xv, x_signed) - x_zp) * (value_of(wv, w_signed) - zp);
              }
            }
          }
          y[(((size_t)b * oh + oy) * ow + ox) * s->out_c + oc] = (int32_t)sum;
        }
      }
    }
  }
}

/* The same convolution to 8-bit outputs by the fp32 rule (qnnpack or onnx, plain parameters: the output stage
 * the tables may fuse into their kernels, dwconv.h / gemm.h): every byte against the scalar rule on the exact
 * sums ref (bias included), with and without a fused ReLU. */
static void conv_requantized_case(struct kernel_table t, const qw_conv2d_shape* s, int32_t oh, int32_t ow,
                                  const uint8_t* x, qw_dtype x_dtype, int32_t x_zp, const void* packed,
                                  const int32_t* w_zp, qw_dtype w_dtype, size_t zp_count, const int32_t* bias, void* ws,
                                  const int32_t* ref, unsigned variant) {
  const size_t n = (size_t)s->out_c, ny = (size_t)s->batch * oh * ow * n;
  double* w_scales = exact_alloc(n * sizeof(double));
  for (size_t j = 0; j < n; j++) w_scales[j] = 0.001 + 0.01 * rng_uniform(0.0f, 1.0f);
  for (int y_signed = 0; y_signed < 2; y_signed++) {
    const qw_dtype y_dtype = y_signed ? QW_QINT8 : QW_QUINT8;
    const int32_t y_zp = (y_signed ? -128 : 0) + (int32_t)(rng_u32() % 256);
    const qw_requant_mode mode = (variant + (unsigned)y_signed) % 2 ? QW_REQUANT_ONNX : QW_REQUANT_QNNPACK;
    const float clamp_min = (variant / 2 + (unsigned)y_signed) % 2 ? 0.0f : -INFINITY;
    void* blob = exact_alloc(qw_requantization_size(n));
    CHECK(qw_requantization_init(blob, n, mode, 0.02 + 0.01 * (variant % 3), w_scales, zp_count, w_zp, w_dtype, NULL,
                                 bias, 0.05 + 0.3 * rng_uniform(0.0f, 1.0f), y_zp, y_dtype, clamp_min, INFINITY,
                                 zp_count != 1) == QW_OK,
          "%s requantization blob", t.name);
    struct qw_output_stage stage;
    CHECK(qw_output_stage_of(blob, n, &stage) && stage.kernel == QW_REQUANT_KERNEL_FP32, "%s output stage", t.name);
    uint8_t* y = exact_alloc(ny);
    CHECK(qw_conv2d_with(t.kernels, s, x, x_dtype, x_zp, packed, blob, y, ws) == QW_OK, "%s conv to 8 bits", t.name);
    size_t bad = 0, first = 0;
    int32_t expect_first = 0;
    for (size_t i = 0; i < ny; i++) {
      /* ref holds bias + sum, the x of the rule (no second bias) */
      const int32_t expect = qw_requantize_fp32_value(ref[i], i % n, stage.params);
      if (value_of(y[i], y_signed) != expect && bad++ == 0) {
        first = i;
        expect_first = expect;
      }
    }
    CHECK(bad == 0, "%s conv %dx%dx%dx%d -> %d, kernel %dx%d stride %d groups %d to %s (mode %d, clamp %g): %zu wrong, "
          "y[%zu] = %d, expected %d",
          t.name, s->batch, s->in_h, s->in_w, s->in_c, s->out_c, s->kernel_h, s->kernel_w, s->stride_w, s->groups,
          y_signed ? "qint8" : "quint8", (int)mode, (double)clamp_min, bad, first, bad ? value_of(y[first], y_signed) : 0,
          expect_first);
    free(blob);
    free(y);
  }
  free(w_scales);
}

static void conv_case(struct kernel_table t, qw_conv2d_shape s, unsigned variant) {
  const struct qw_kernels* kernels = t.kernels;
  int32_t oh = 0, ow = 0;
  CHECK(qw_conv2d_output_size(&s, &oh, &ow) == QW_OK, "geometry");
  const int x_signed = (int)(variant % 2), w_signed = (int)(variant / 2 % 2);
  const qw_dtype x_dtype = x_signed ? QW_QINT8 : QW_QUINT8, w_dtype = w_signed ? QW_QINT8 : QW_QUINT8;
  const int32_t x_zp = (x_signed ? -128 : 0) + (int32_t)(rng_u32() % 256);
  const size_t zp_count = variant % 3 == 0 ? 1 : (size_t)s.out_c;
  const size_t nx = (size_t)s.batch * s.in_h * s.in_w * s.in_c;
  const size_t nw = (size_t)s.out_c * (s.in_c / s.groups) * s.kernel_h * s.kernel_w;
  const size_t ny = (size_t)s.batch * oh * ow * s.out_c;
  uint8_t* x = exact_alloc(nx);
  uint8_t* w = exact_alloc(nw);
  int32_t* w_zp = exact_alloc(zp_count * sizeof(int32_t));
  int32_t* bias = exact_alloc((size_t)s.out_c * sizeof(int32_t));
  for (size_t i = 0; i < nx; i++) x[i] = (uint8_t)rng_u32();
  for (size_t i = 0; i < nw; i++) w[i] = (uint8_t)rng_u32();
  for (size_t i = 0; i < zp_count; i++) w_zp[i] = (w_signed ? -128 : 0) + (int32_t)(rng_u32() % 256);
  for (int32_t i = 0; i < s.out_c; i++) bias[i] = (int32_t)(rng_u32() % 200001) - 100000;

  void* packed = exact_alloc(qw_conv2d_pack_size_with(kernels, &s));
  CHECK(qw_conv2d_pack_with(kernels, &s, w, w_dtype, w_zp, zp_count, packed) == QW_OK, "%s pack", t.name);
  void* blob = exact_alloc(qw_requantization_size((size_t)s.out_c));
  const double one = 1.0;
  CHECK(qw_requantization_init(blob, (size_t)s.out_c, QW_REQUANT_NONE, 1.0, &one, 1, w_zp, w_dtype, NULL, bias, 1.0, 0,
                               QW_QINT32, -INFINITY, INFINITY, 0) == QW_OK,
        "blob");
  void* ws = exact_alloc(qw_conv2d_workspace_size_with(kernels, &s));
  int32_t* y = exact_alloc(ny * sizeof(int32_t));
  int32_t* ref = exact_alloc(ny * sizeof(int32_t));
  const qw_status st = qw_conv2d_with(kernels, &s, x, x_dtype, x_zp, packed, blob, y, ws);
  CHECK(st == QW_OK, "%s conv status %d", t.name, st);
  conv_reference(&s, oh, ow, x, x_signed, x_zp, w, w_signed, w_zp, zp_count, bias, ref);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < ny; i++) {
    if (y[i] != ref[i] && bad++ == 0) first = i;
  }
  CHECK(bad == 0,
        "%s conv %dx%dx%dx%d -> %d, kernel %dx%d stride %dx%d groups %d variant %u: %zu wrong, y[%zu] = %d, "
        "expected %d",
        t.name, s.batch, s.in_h, s.in_w, s.in_c, s.out_c, s.kernel_h, s.kernel_w, s.stride_h, s.stride_w, s.groups,
        variant, bad, first, y[first], ref[first]);
  conv_requantized_case(t, &s, oh, ow, x, x_dtype, x_zp, packed, w_zp, w_dtype, zp_count, bias, ws, ref, variant);
  free(x);
  free(w);
  free(w_zp);
  free(bias);
  free(packed);
  free(blob);
  free(ws);
  free(y);
  free(ref);
}

static void test_conv(struct kernel_table t) {
  /* batch, in_h, in_w, in_c, out_c, kernel_h, kernel_w, stride_h, stride_w, pads t l b r, dilation h w, groups */
  static const qw_conv2d_shape cases[] = {
      {1, 5, 7, 13, 21, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},     /* 1x1: the input read in place */
      {2, 3, 3, 8, 17, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},      /* batches, 9 pixels */
      {1, 9, 11, 3, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     /* K 27: the stem */
      {1, 10, 12, 3, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},     /* the stem at stride 2: interior runs of 9 bytes */
      {1, 4, 1, 3, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},       /* a row narrower than the kernel: no interior pixel */
      {1, 6, 9, 2, 4, 3, 2, 1, 3, 0, 0, 0, 0, 1, 1, 1},       /* runs of 4 bytes, stride 3, no padding */
      {1, 8, 8, 5, 7, 3, 3, 2, 2, 1, 0, 1, 2, 1, 1, 1},       /* stride, lopsided padding */
      {1, 10, 9, 4, 6, 3, 2, 1, 2, 2, 1, 0, 1, 2, 1, 2},      /* dilation, groups */
      {1, 6, 6, 12, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},      /* groups of 4 -> 3 */
      {1, 62, 61, 3, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     /* several im2col blocks */
      {1, 4, 5, 256, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    /* K 2304: several column blocks */
      {1, 7, 9, 19, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 19},    /* depthwise, 19 channels */
      {2, 9, 8, 37, 37, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 37},    /* depthwise, stride 2, batches */
      {1, 11, 10, 24, 24, 5, 5, 1, 2, 2, 2, 2, 2, 1, 1, 24},  /* depthwise 5x5 */
      {1, 12, 12, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 5},     /* depthwise, dilation */
      {1, 3, 4, 2, 2, 2, 3, 1, 1, 0, 1, 1, 1, 1, 1, 2},       /* depthwise 6 taps */
      {1, 6, 6, 2, 2, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 2},       /* depthwise 49 taps, mostly padding */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (unsigned variant = 0; variant < 4; variant++) {
      conv_case(t, cases[i], (unsigned)i + variant);
    }
  }
}

/* ---- the elementwise entries ---------------------------------------------------------------------- */

static void test_elementwise(struct kernel_table t) {
  const struct qw_kernels* k = t.kernels;
  uint8_t table[256];
  for (int i = 0; i < 256; i++) table[i] = (uint8_t)rng_u32();
  for (size_t n = 1; n <= 70; n++) {
    uint8_t* a = exact_alloc(n);
    uint8_t* b = exact_alloc(n);
    uint8_t* y = exact_alloc(n);
    for (size_t i = 0; i < n; i++) {
      a[i] = (uint8_t)rng_u32();
      b[i] = (uint8_t)rng_u32();
    }
    /* Table lookup. */
    k->lut(n, a, table, y);
    int bad = 0;
    for (size_t i = 0; i < n; i++) bad += y[i] != table[a[i]];
    CHECK(bad == 0, "%s lut n=%zu", t.name, n);
    /* Max pooling over 3 rows of n channels. */
    const uint8_t* rows[3] = {a, b, y};
    for (int is_signed = 0; is_signed < 2; is_signed++) {
      uint8_t* out = exact_alloc(n);
      k->maxpool[is_signed](n, 3, rows, out);
      bad = 0;
      for (size_t c = 0; c < n; c++) {
        int32_t m = value_of(a[c], is_signed);
        if (value_of(b[c], is_signed) > m) m = value_of(b[c], is_signed);
        if (value_of(y[c], is_signed) > m) m = value_of(y[c], is_signed);
        bad += value_of(out[c], is_signed) != m;
      }
      CHECK(bad == 0, "%s maxpool signed=%d channels=%zu", t.name, is_signed, n);
      free(out);
    }
    /* ONNX Runtime's QLinearAdd against its per-element rule. */
    for (int is_signed = 0; is_signed < 2; is_signed++) {
      const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255, y_zp = lo + 100;
      const struct qw_vadd_onnx_params p = {.a_scale = 0.031f, .b_scale = 0.017f, .y_scale = 0.043f,
                                            .a_zero_point = lo + 7, .b_zero_point = lo + 201,
                                            .y_zero_point = (float)y_zp, .y_min = (float)(lo - y_zp),
                                            .y_max = (float)(hi - y_zp)};
      uint8_t* out = exact_alloc(n);
      k->vadd_onnx[is_signed](n, a, b, out, &p);
      bad = 0;
      for (size_t i = 0; i < n; i++) {
        const int32_t expect = qw_vadd_onnx_value(value_of(a[i], is_signed), value_of(b[i], is_signed), &p);
        bad += value_of(out[i], is_signed) != expect;
      }
      CHECK(bad == 0, "%s vadd_onnx signed=%d n=%zu", t.name, is_signed, n);
      free(out);
    }
    /* Transpose of a 3 x n block (and n x 3), source rows padded by 5 bytes. */
    {
      uint8_t* src = exact_alloc(3 * (n + 5));
      uint8_t* dst = exact_alloc(n * 3);
      for (size_t i = 0; i < 3 * (n + 5); i++) src[i] = (uint8_t)rng_u32();
      k->transpose_x8(3, n, src, n + 5, dst, 3);
      bad = 0;
      for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < n; j++) bad += dst[j * 3 + i] != src[i * (n + 5) + j];
      }
      k->transpose_x8(n, 3, src, 3, dst, n);
      for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < 3; j++) bad += dst[j * n + i] != src[i * 3 + j];
      }
      CHECK(bad == 0, "%s transpose n=%zu", t.name, n);
      free(src);
      free(dst);
    }
    /* Float ReLU: NaN and -0.0f give +0.0f. */
    {
      float* x = exact_alloc(n * sizeof(float));
      float* r = exact_alloc(n * sizeof(float));
      const float special[] = {NAN, -0.0f, 0.0f, -1.0f, 2.5f, INFINITY, -INFINITY};
      for (size_t i = 0; i < n; i++) x[i] = i % 3 == 0 ? special[i / 3 % 7] : rng_uniform(-2.0f, 2.0f);
      k->f32_relu(n, x, r);
      bad = 0;
      for (size_t i = 0; i < n; i++) {
        const float expect = x[i] > 0.0f ? x[i] : 0.0f;
        bad += bits_of(r[i]) != bits_of(expect);
      }
      CHECK(bad == 0, "%s f32 relu n=%zu", t.name, n);
      free(x);
      free(r);
    }
    free(a);
    free(b);
    free(y);
  }
}

/* ---- packed weights and layouts ------------------------------------------------------------------- */

/* Packs with `from`, runs with `to`: accepted exactly when the layouts agree. */
static void test_layouts(struct kernel_table from, struct kernel_table to) {
  const qw_status expect_gemm = qw_gemm_layout(&from.kernels->gemm) == qw_gemm_layout(&to.kernels->gemm)
                                    ? QW_OK
                                    : QW_INVALID_ARGUMENT;
  const qw_status expect_dw = qw_dwconv_layout(&from.kernels->dwconv) == qw_dwconv_layout(&to.kernels->dwconv)
                                  ? QW_OK
                                  : QW_INVALID_ARGUMENT;
  const qw_status expect_f32 = qw_f32_gemm_layout(&from.kernels->f32_gemm) == qw_f32_gemm_layout(&to.kernels->f32_gemm)
                                   ? QW_OK
                                   : QW_INVALID_ARGUMENT;
  enum { N = 20, K = 9 };
  uint8_t w[N * 2 * K], a[2 * K]; /* w: the GEMM, 2 -> N 3x3 and N-channel depthwise weights */
  for (size_t i = 0; i < sizeof w; i++) w[i] = (uint8_t)rng_u32();
  for (size_t i = 0; i < sizeof a; i++) a[i] = (uint8_t)rng_u32();
  const int32_t zp = 3;
  const double one = 1.0;
  void* blob = exact_alloc(qw_requantization_size(N));
  CHECK(qw_requantization_init(blob, N, QW_REQUANT_NONE, 1.0, &one, 1, &zp, QW_QUINT8, NULL, NULL, 1.0, 0, QW_QINT32,
                               -INFINITY, INFINITY, 0) == QW_OK,
        "blob");

  /* GEMM: the result, when accepted, equals the packing table's own. */
  void* packed = exact_alloc(qw_gemm_pack_size_with(from.kernels, N, K));
  CHECK(qw_gemm_pack_with(from.kernels, N, K, w, QW_QUINT8, K, 1, &zp, 1, packed) == QW_OK, "gemm pack");
  int32_t y_from[2 * N], y_to[2 * N];
  void* ws_from = exact_alloc(qw_gemm_workspace_size_with(from.kernels, N, K));
  void* ws_to = exact_alloc(qw_gemm_workspace_size_with(to.kernels, N, K));
  CHECK(qw_gemm_with(from.kernels, 2, N, K, a, K, QW_QUINT8, 5, packed, blob, y_from, N * 4, ws_from) == QW_OK,
        "gemm with its own table");
  const qw_status st = qw_gemm_with(to.kernels, 2, N, K, a, K, QW_QUINT8, 5, packed, blob, y_to, N * 4, ws_to);
  CHECK(st == expect_gemm, "gemm packed by %s, run by %s: status %d, expected %d", from.name, to.name, st, expect_gemm);
  CHECK(st != QW_OK || memcmp(y_from, y_to, sizeof y_from) == 0, "gemm packed by %s, run by %s: results differ",
        from.name, to.name);
  free(packed);
  free(ws_from);
  free(ws_to);

  /* Convolutions: GEMM (3x3, 2 -> 20) and depthwise (3x3, 20 channels) packings. */
  const qw_conv2d_shape shapes[2] = {{1, 4, 4, 2, N, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                                     {1, 4, 4, N, N, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, N}};
  for (int depthwise = 0; depthwise < 2; depthwise++) {
    const qw_conv2d_shape* s = &shapes[depthwise];
    uint8_t x[4 * 4 * N];
    for (size_t i = 0; i < sizeof x; i++) x[i] = (uint8_t)rng_u32();
    void* cpacked = exact_alloc(qw_conv2d_pack_size_with(from.kernels, s));
    CHECK(qw_conv2d_pack_with(from.kernels, s, w, QW_QUINT8, &zp, 1, cpacked) == QW_OK, "conv pack");
    void* ws = exact_alloc(qw_conv2d_workspace_size_with(to.kernels, s));
    int32_t y[4 * 4 * N];
    const qw_status cst = qw_conv2d_with(to.kernels, s, x, QW_QUINT8, 1, cpacked, blob, y, ws);
    const qw_status expect = depthwise ? expect_dw : expect_gemm;
    CHECK(cst == expect, "conv (depthwise %d) packed by %s, run by %s: status %d, expected %d", depthwise, from.name,
          to.name, cst, expect);
    free(cpacked);
    free(ws);
  }

  /* Float convolution. */
  const qw_conv2d_shape fs = {1, 4, 4, 2, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  float fw[5 * 2 * 9], fx[2 * 16], fy[5 * 16];
  for (size_t i = 0; i < 5 * 2 * 9; i++) fw[i] = rng_uniform(-1.0f, 1.0f);
  for (size_t i = 0; i < 2 * 16; i++) fx[i] = rng_uniform(-1.0f, 1.0f);
  float* fpacked = exact_alloc(qw_f32_conv2d_pack_size_with(from.kernels, &fs));
  CHECK(qw_f32_conv2d_pack_with(from.kernels, &fs, fw, NULL, fpacked) == QW_OK, "f32 pack");
  void* fws = exact_alloc(qw_f32_conv2d_workspace_size_with(to.kernels, &fs));
  const qw_status fst = qw_f32_conv2d_with(to.kernels, &fs, fx, fpacked, fy, fws);
  CHECK(fst == expect_f32, "f32 conv packed by %s, run by %s: status %d, expected %d", from.name, to.name, fst,
        expect_f32);
  free(fpacked);
  free(fws);
  free(blob);
}

/* ---- contract asserts ----------------------------------------------------------------------------- */

#if !defined(__EMSCRIPTEN__)
static void gemm_rows_beyond_mr(void) {
  int16_t panel[5 * 4] = {0}, w[8 * 4] = {0};
  int32_t c[5 * 8];
  qw_scalar_kernels.gemm.gemm[3](5, 8, 4, panel, w, c, 8); /* the 4-row kernel asked for 5 rows */
}
static void gemm_odd_kc(void) {
  int16_t panel[3] = {0}, w[8 * 3] = {0};
  int32_t c[8];
  qw_kernels()->gemm.gemm[0](1, 8, 3, panel, w, c, 8); /* kc must be a multiple of the pair / step */
}
static void pack_a_short_panel(void) {
  uint8_t a[8] = {0};
  int16_t panel[8];
  qw_kernels()->gemm.pack_a[0](1, 8, 4, a, 8, 0, panel); /* kc < k */
}
static void dwconv_no_channels(void) {
  const int16_t row[16] = {0};
  const void* rows[1] = {row};
  int16_t w[16] = {0};
  int32_t acc[4];
  qw_kernels()->dwconv.ukernel(1, 0, 1, 1, 1, 2, rows, w, acc);
}
static void quantize_empty(void) {
  float x[1] = {0};
  uint8_t y[1];
  struct qw_quantize_params p;
  qw_quantize_params_init(&p, 1.0f, 0, 0, 255);
  qw_kernels()->quantize[0][QW_QUINT8](0, x, y, &p); /* entry points skip empty calls */
}
static void f32_gemm_wide(void) {
  float w[4 * 2] = {0}, a[2 * 16] = {0}, c[16];
  qw_kernels()->f32_gemm.gemm[0](1, 9, 1, w, a, 16, c, 16, 1.0f); /* nc beyond the 8-column tile */
}
static void requantize_null_output(void) {
  int32_t acc[1] = {0}, bias[1] = {0};
  float zero[1] = {0}, one[1] = {1};
  const struct qw_requantization_params p = {.bias = bias, .bias_f32 = zero, .multiplier = one, .qmax = 255};
  qw_kernels()->requantize[QW_REQUANT_KERNEL_FP32][0](1, 1, acc, 1, &p, NULL, 1);
}

/* Runs f in a child process; 1 if it died of SIGABRT (a failed assert), its stderr discarded. */
static int aborts(void (*f)(void)) {
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    if (freopen("/dev/null", "w", stderr) == NULL) _exit(2);
    f();
    _exit(0);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}
#endif

static void test_asserts(void) {
#if defined(__EMSCRIPTEN__)
  /* The wasm builds are Release builds (NDEBUG): the asserts cost nothing there. */
  CHECK(qw_kernel_asserts == 0, "asserts compiled into the wasm build");
#else
  CHECK(qw_kernel_asserts == 1, "the native tests must run with the kernels' asserts (a Debug build)");
  static const struct {
    const char* name;
    void (*f)(void);
  } breaches[] = {
      {"gemm rows beyond mr", gemm_rows_beyond_mr}, {"gemm odd kc", gemm_odd_kc},
      {"pack_a kc < k", pack_a_short_panel},        {"dwconv 0 channels", dwconv_no_channels},
      {"quantize n = 0", quantize_empty},           {"f32 gemm nc > nr", f32_gemm_wide},
      {"requantize NULL output", requantize_null_output},
  };
  for (size_t i = 0; i < sizeof breaches / sizeof breaches[0]; i++) {
    CHECK(aborts(breaches[i].f), "%s: no assert fired", breaches[i].name);
  }
#endif
}

int main(void) {
  struct kernel_table tables[KERNEL_TABLES_MAX];
  const size_t count = kernel_tables(tables);
  for (size_t t = 0; t < count; t++) {
    test_invariants(tables[t]);
    test_conv(tables[t]);
    test_elementwise(tables[t]);
  }
  /* The other-layout table's layouts differ from the build's, so the refusals below are exercised. */
  size_t other = 0;
  while (other < count && strcmp(tables[other].name, "other-layout") != 0) other++;
  CHECK(other < count && qw_gemm_layout(&tables[other].kernels->gemm) != qw_gemm_layout(&qw_kernels()->gemm) &&
            qw_dwconv_layout(&tables[other].kernels->dwconv) != qw_dwconv_layout(&qw_kernels()->dwconv) &&
            qw_f32_gemm_layout(&tables[other].kernels->f32_gemm) != qw_f32_gemm_layout(&qw_kernels()->f32_gemm),
        "the test table shares a layout with the build");
  for (size_t from = 0; from < count; from++) {
    for (size_t to = 0; to < count; to++) {
      test_layouts(tables[from], tables[to]);
    }
  }
  test_asserts();
  printf("isa: %s, %zu kernel tables\n", qw_isa(), count);
  return check_summary("test_config");
}
