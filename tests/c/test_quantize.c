/* Quantize / dequantize / requantize kernels: the selected kernels (SIMD in the simd build) against
 * the scalar baseline on every length up to a few vectors and on hostile inputs, buffers sized
 * exactly so sanitizers catch any over-read, plus the documented special values. Agreement with
 * real PyTorch and ONNX is checked by the JS suites against committed golden fixtures. */
#include <float.h>
#include <math.h>

#include "check.h"
#include "config.h"
#include "qwasm.h"

static const size_t dtype_size[3] = {1, 1, 4};
static const char* dtype_name[3] = {"quint8", "qint8", "qint32"};
static const int32_t dtype_min[3] = {0, -128, INT32_MIN};
static const int32_t dtype_max[3] = {255, 127, INT32_MAX};

static int32_t load_q(const void* buf, qw_dtype dtype, size_t i) {
  switch (dtype) {
    case QW_QUINT8: return ((const uint8_t*)buf)[i];
    case QW_QINT8: return ((const int8_t*)buf)[i];
    default: return ((const int32_t*)buf)[i];
  }
}

/* A mix of ordinary values, exact ties after scaling, and raw bit patterns (NaN, Inf, subnormals,
 * huge magnitudes, -0.0). */
static void fill_hostile(float* x, size_t n, float scale) {
  for (size_t i = 0; i < n; i++) {
    switch (rng_u32() % 4) {
      case 0: x[i] = rng_uniform(-300.0f, 300.0f) * scale; break;
      case 1: x[i] = ((float)((int32_t)(rng_u32() % 600) - 300) + 0.5f) * scale; break;
      case 2: x[i] = float_from_bits(rng_u32()); break;
      default: x[i] = rng_uniform(-1.0f, 1.0f) * 3e9f * scale; break;
    }
  }
}

static void test_simd_matches_scalar(void) {
  const struct qw_kernels* selected = qw_kernels();
  const float scales[] = {1.0f, 0.5f, 0.1f, 1.0f / 3.0f, 0.00214854861f, 3e-5f, 1e6f};
  for (int rounding = 0; rounding <= 1; rounding++) {
    for (int dt = 0; dt < 3; dt++) {
      for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
        for (size_t n = 1; n <= 70; n += (n < 40 ? 1 : 7)) {
          const int32_t zps[] = {0, dtype_min[dt], dtype_max[dt], dt == 0 ? 128 : 3};
          for (size_t zi = 0; zi < 4; zi++) {
            struct qw_quantize_params p;
            qw_quantize_params_init(&p, scales[si], zps[zi], dtype_min[dt], dtype_max[dt]);
            float* x = exact_alloc(n * sizeof(float));
            void* a = exact_alloc(n * dtype_size[dt]);
            void* b = exact_alloc(n * dtype_size[dt]);
            fill_hostile(x, n, scales[si]);
            selected->quantize[rounding][dt](n, x, a, &p);
            qw_scalar_kernels.quantize[rounding][dt](n, x, b, &p);
            CHECK(memcmp(a, b, n * dtype_size[dt]) == 0, "quantize %s rounding %d n=%zu scale=%g zp=%d differs from scalar",
                  dtype_name[dt], rounding, n, scales[si], zps[zi]);
            /* Every output inside the dtype's range, every NaN at the zero point. */
            for (size_t i = 0; i < n; i++) {
              const int32_t q = load_q(b, (qw_dtype)dt, i);
              CHECK(q >= dtype_min[dt] && q <= dtype_max[dt], "out of range");
              if (isnan(x[i])) {
                CHECK(q == zps[zi], "NaN gave %d, not the zero point %d", q, zps[zi]);
              }
            }
            free(x);
            free(a);
            free(b);
          }
        }
      }
    }
  }
}

/* DynamicQuantizeLinear's kernel (quantize_dynamic) against the ONNX rule's scalar kernel, on data quantized with the
 * scale and zero point of its own range as qw_dynamic_quantize chooses them: values across the range, its ends, zeros
 * of both signs, and exact ties x / scale = k + 0.5 (counted, so that the rounding is exercised), for ranges from a
 * scale near FLT_MIN to 1e30, one-sided ranges included. */
static void test_dynamic_kernel(void) {
  const struct qw_kernels* selected = qw_kernels();
  const float ranges[][2] = {{-3.5f, 7.25f}, {-1.0f, 0.0f}, {0.0f, 2.0f}, {-0.013f, 11.9f}, {-1e30f, 3e29f},
                             {-255.0f * FLT_MIN, 100.0f * FLT_MIN}, {-1e-3f, 1e-3f}, {-6.0f, 6.0f}};
  size_t ties = 0;
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
    const float lo = ranges[r][0], hi = ranges[r][1];
    const float scale = (hi - lo) / 255.0f;
    float zp_f = 0.0f - lo / scale;
    zp_f = zp_f < 0.0f ? 0.0f : zp_f > 255.0f ? 255.0f : zp_f;
    struct qw_quantize_params p;
    qw_quantize_params_init(&p, scale, (int32_t)nearbyintf(zp_f), 0, 255);
    for (size_t n = 1; n <= 300; n += (n < 40 ? 1 : 37)) {
      float* x = exact_alloc(n * sizeof(float));
      uint8_t* a = exact_alloc(n);
      uint8_t* b = exact_alloc(n);
      for (size_t i = 0; i < n; i++) {
        switch (rng_u32() % 4) {
          case 0: x[i] = rng_uniform(lo, hi); break;
          case 1: x[i] = i % 2 ? lo : hi; break;
          case 2: x[i] = i % 2 ? -0.0f : 0.0f; break;
          default: {
            const float t = ((float)((int32_t)(rng_u32() % 256) - p.zero_point) + 0.5f) * scale;
            x[i] = t < lo ? lo : t > hi ? hi : t;
            ties += x[i] / scale - nearbyintf(x[i] / scale) == 0.5f || x[i] / scale - nearbyintf(x[i] / scale) == -0.5f;
          }
        }
      }
      selected->quantize_dynamic(n, x, a, &p);
      qw_scalar_kernels.quantize[QW_ROUND_ONNX][QW_QUINT8](n, x, b, &p);
      CHECK(memcmp(a, b, n) == 0, "dynamic quantize of [%g, %g] (scale %g, zp %d), n=%zu: differs from the ONNX rule", lo,
            hi, scale, p.zero_point, n);
      free(x), free(a), free(b);
    }
  }
  CHECK(ties > 1000, "only %zu exact ties", ties);
}

static void test_dequantize_simd_matches_scalar(void) {
  const struct qw_kernels* selected = qw_kernels();
  for (int dt = 0; dt < 3; dt++) {
    for (size_t n = 1; n <= 300; n += (n < 40 ? 1 : 13)) {
      const struct qw_dequantize_params p = {rng_uniform(1e-4f, 2.0f), dt == 2 ? (int32_t)rng_u32() : (int32_t)(rng_u32() % 256) + dtype_min[dt]};
      void* q = exact_alloc(n * dtype_size[dt]);
      float* a = exact_alloc(n * sizeof(float));
      float* b = exact_alloc(n * sizeof(float));
      for (size_t i = 0; i < n * dtype_size[dt]; i++) {
        ((uint8_t*)q)[i] = (uint8_t)rng_u32();
      }
      selected->dequantize[dt](n, q, a, &p);
      qw_scalar_kernels.dequantize[dt](n, q, b, &p);
      CHECK(memcmp(a, b, n * sizeof(float)) == 0, "dequantize %s n=%zu differs from scalar", dtype_name[dt], n);
      /* The float64-scale (per-channel) kernels, with a scale that is not a float32. */
      const struct qw_dequantize_f64_params p64 = {(double)p.scale * (1.0 + 1e-12), (float)p.zero_point};
      selected->dequantize_f64scale[dt](n, q, a, &p64);
      qw_scalar_kernels.dequantize_f64scale[dt](n, q, b, &p64);
      CHECK(memcmp(a, b, n * sizeof(float)) == 0, "f64-scale dequantize %s n=%zu differs from scalar", dtype_name[dt], n);
      free(q);
      free(a);
      free(b);
    }
  }
}

/* Facts stated in docs/quantization.md, checked through the public API. */
static void test_documented_values(void) {
  /* The FBGEMM case: x * (1/s) = 127.5 -> 128 (torch), x / s = 127.49999 -> 127 (onnx). */
  const float x = 0.273939937f;
  int32_t q = 0;
  CHECK(qw_quantize(1, &x, &q, QW_QINT32, QW_ROUND_TORCH, 0.00214854861f, 0) == QW_OK, "status");
  CHECK(q == 128, "torch rule gave %d", q);
  CHECK(qw_quantize(1, &x, &q, QW_QINT32, QW_ROUND_ONNX, 0.00214854861f, 0) == QW_OK, "status");
  CHECK(q == 127, "onnx rule gave %d", q);

  /* Ties go to even: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2. */
  const float ties[3] = {2.5f, 3.5f, -2.5f};
  int8_t t[3];
  CHECK(qw_quantize(3, ties, t, QW_QINT8, QW_ROUND_TORCH, 1.0f, 0) == QW_OK, "status");
  CHECK(t[0] == 2 && t[1] == 4 && t[2] == -2, "ties gave %d %d %d", t[0], t[1], t[2]);

  /* Non-finite and huge: NaN -> zp, +Inf/-Inf and |x| >= 2^63 saturate. */
  const float special[5] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f};
  uint8_t u[5];
  CHECK(qw_quantize(5, special, u, QW_QUINT8, QW_ROUND_TORCH, 0.1f, 7) == QW_OK, "status");
  CHECK(u[0] == 7 && u[1] == 255 && u[2] == 0 && u[3] == 255 && u[4] == 0, "special gave %d %d %d %d %d", u[0], u[1],
        u[2], u[3], u[4]);
  int32_t w[5];
  CHECK(qw_quantize(5, special, w, QW_QINT32, QW_ROUND_ONNX, 0.1f, -7) == QW_OK, "status");
  CHECK(w[0] == -7 && w[1] == INT32_MAX && w[2] == INT32_MIN && w[3] == INT32_MAX && w[4] == INT32_MIN, "qint32 special");

  /* torch adds the zero point in float32: 2^24 + 1 is not a float, so 16777216 + 1 -> 16777216. */
  const float big = 16777216.0f;
  CHECK(qw_quantize(1, &big, &q, QW_QINT32, QW_ROUND_TORCH, 1.0f, 1) == QW_OK, "status");
  CHECK(q == 16777216, "torch qint32 float add gave %d", q);
  CHECK(qw_quantize(1, &big, &q, QW_QINT32, QW_ROUND_ONNX, 1.0f, 1) == QW_OK, "status");
  CHECK(q == 16777217, "onnx qint32 exact add gave %d", q);

  /* Dequantize: scale * (q - zp). */
  const uint8_t dq_in[3] = {0, 128, 255};
  float dq[3];
  CHECK(qw_dequantize(3, dq_in, dq, QW_QUINT8, 0.5f, 128) == QW_OK, "status");
  CHECK(dq[0] == -64.0f && dq[1] == 0.0f && dq[2] == 63.5f, "dequantize gave %g %g %g", dq[0], dq[1], dq[2]);
}

static void test_per_channel_and_requantize(void) {
  enum { OUTER = 3, CH = 5, INNER = 7, N = OUTER * CH * INNER };
  float x[N];
  fill_hostile(x, N, 0.05f);
  float scales[CH];
  double scales_f64[CH];
  int32_t zps[CH];
  for (int c = 0; c < CH; c++) {
    scales[c] = rng_uniform(0.01f, 0.2f);
    scales_f64[c] = scales[c]; /* float32-representable: then per-channel equals per-tensor */
    zps[c] = (int32_t)(rng_u32() % 256) - 128;
  }
  int8_t q[N];
  float back[N];
  CHECK(qw_quantize_per_channel(OUTER, CH, INNER, x, q, QW_QINT8, QW_ROUND_TORCH, scales, zps) == QW_OK, "status");
  CHECK(qw_dequantize_per_channel(OUTER, CH, INNER, q, back, QW_QINT8, scales_f64, zps) == QW_OK, "status");
  for (int o = 0; o < OUTER; o++) {
    for (int c = 0; c < CH; c++) {
      const size_t off = ((size_t)o * CH + c) * INNER;
      int8_t ref[INNER];
      float ref_back[INNER];
      qw_quantize(INNER, x + off, ref, QW_QINT8, QW_ROUND_TORCH, scales[c], zps[c]);
      qw_dequantize(INNER, ref, ref_back, QW_QINT8, scales[c], zps[c]);
      CHECK(memcmp(ref, q + off, INNER) == 0, "per-channel quantize, channel %d", c);
      CHECK(memcmp(ref_back, back + off, sizeof ref_back) == 0, "per-channel dequantize, channel %d", c);
    }
  }

  /* Requantize = dequantize then quantize, across dtypes, lengths crossing the internal block. */
  for (size_t n = 0; n < 700; n += 37) {
    uint8_t* src = exact_alloc(n);
    int32_t* dst = exact_alloc(n * 4);
    float* mid = exact_alloc(n * sizeof(float));
    int32_t* ref = exact_alloc(n * 4);
    for (size_t i = 0; i < n; i++) {
      src[i] = (uint8_t)rng_u32();
    }
    CHECK(qw_requantize(n, src, QW_QUINT8, 0.37f, 100, dst, QW_QINT32, 0.011f, -5, QW_ROUND_TORCH) == QW_OK, "status");
    qw_dequantize(n, src, mid, QW_QUINT8, 0.37f, 100);
    qw_quantize(n, mid, ref, QW_QINT32, QW_ROUND_TORCH, 0.011f, -5);
    CHECK(n == 0 || memcmp(dst, ref, n * 4) == 0, "requantize n=%zu", n);
    /* In place with equal element sizes. */
    uint8_t* inplace = exact_alloc(n);
    memcpy(inplace, src, n);
    int8_t* expect = exact_alloc(n);
    qw_requantize(n, src, QW_QUINT8, 0.37f, 100, expect, QW_QINT8, 0.5f, 3, QW_ROUND_ONNX);
    CHECK(qw_requantize(n, inplace, QW_QUINT8, 0.37f, 100, inplace, QW_QINT8, 0.5f, 3, QW_ROUND_ONNX) == QW_OK, "status");
    CHECK(n == 0 || memcmp(inplace, expect, n) == 0, "in-place requantize n=%zu", n);
    free(src);
    free(dst);
    free(mid);
    free(ref);
    free(inplace);
    free(expect);
  }
}

/* PyTorch 2.x on x86 (FBGEMM's Quantize): the zero point is added before rounding; values measured with
 * torch 2.13 (tests/fixtures/torch2/replay.json holds the full comparison). */
static void test_fbgemm_rules(void) {
  const float x[5] = {1.25f, 0.75f, NAN, INFINITY, -INFINITY};
  uint8_t u[5];
  CHECK(qw_quantize(5, x, u, QW_QUINT8, QW_ROUND_FBGEMM, 0.5f, 1) == QW_OK, "status");
  CHECK(u[0] == 4 && u[1] == 2, "round(1 + 2.5) = 4, round(1 + 1.5) = 2 (torch 1.13: 3 and 3)");
  CHECK(u[2] == 255 && u[3] == 255 && u[4] == 0, "NaN and +Inf -> qmax, -Inf -> qmin");
  CHECK(qw_quantize(5, x, u, QW_QUINT8, QW_ROUND_FBGEMM_SCALAR, 0.5f, 1) == QW_OK, "status");
  CHECK(u[0] == 4 && u[1] == 2 && u[2] == 0 && u[3] == 255 && u[4] == 0, "scalar rule: NaN -> 0");
  int32_t w[3];
  CHECK(qw_quantize(3, x + 2, w, QW_QINT32, QW_ROUND_FBGEMM, 1.0f, 0) == QW_OK, "status");
  CHECK(w[0] == INT32_MIN && w[1] == INT32_MAX && w[2] == INT32_MIN, "qint32: NaN -> INT32_MIN, +-Inf saturate");
  /* one rounding (fma) against two: torch.quantize_per_tensor(17.549036026000977, 0.3856930136680603, 151)
   * gives 197 on torch 2.13; zp + (float)(x * (1/s)) rounds to 196 */
  const float near = 17.549036026000977f;
  CHECK(qw_quantize(1, &near, u, QW_QUINT8, QW_ROUND_FBGEMM, 0.3856930136680603f, 151) == QW_OK && u[0] == 197,
        "fma: 197");
  CHECK(qw_quantize(1, &near, u, QW_QUINT8, QW_ROUND_FBGEMM_SCALAR, 0.3856930136680603f, 151) == QW_OK && u[0] == 196,
        "two roundings: 196");
}

static void test_validation(void) {
  float x = 1.0f;
  uint8_t q;
  CHECK(qw_quantize(1, &x, &q, QW_QUINT8, QW_ROUND_TORCH, 0.0f, 0) == QW_INVALID_QPARAMS, "scale 0");
  CHECK(qw_quantize(1, &x, &q, QW_QUINT8, QW_ROUND_TORCH, -1.0f, 0) == QW_INVALID_QPARAMS, "scale < 0");
  CHECK(qw_quantize(1, &x, &q, QW_QUINT8, QW_ROUND_TORCH, NAN, 0) == QW_INVALID_QPARAMS, "scale NaN");
  CHECK(qw_quantize(1, &x, &q, QW_QUINT8, QW_ROUND_TORCH, INFINITY, 0) == QW_INVALID_QPARAMS, "scale Inf");
  CHECK(qw_quantize(1, &x, &q, QW_QUINT8, QW_ROUND_TORCH, 1e-45f, 0) == QW_INVALID_QPARAMS, "reciprocal overflows");
  CHECK(qw_quantize(1, &x, &q, QW_QUINT8, QW_ROUND_TORCH, 1.0f, 256) == QW_INVALID_QPARAMS, "zp > 255");
  CHECK(qw_quantize(1, &x, &q, QW_QINT8, QW_ROUND_TORCH, 1.0f, -129) == QW_INVALID_QPARAMS, "zp < -128");
  CHECK(qw_quantize(1, &x, &q, (qw_dtype)7, QW_ROUND_TORCH, 1.0f, 0) == QW_INVALID_ARGUMENT, "bad dtype");
  CHECK(qw_quantize(1, &x, &q, QW_QUINT8, (qw_rounding)4, 1.0f, 0) == QW_INVALID_ARGUMENT, "bad rounding");
  CHECK(qw_quantize(1, NULL, &q, QW_QUINT8, QW_ROUND_TORCH, 1.0f, 0) == QW_INVALID_ARGUMENT, "NULL input");
  CHECK(qw_quantize(0, NULL, NULL, QW_QUINT8, QW_ROUND_TORCH, 1.0f, 0) == QW_OK, "empty is fine");
  CHECK(qw_dequantize(1, &q, &x, QW_QINT8, 1.0f, 200) == QW_INVALID_QPARAMS, "dequantize zp");
  int32_t wide[2];
  CHECK(qw_requantize(2, wide, QW_QINT32, 1.0f, 0, wide, QW_QINT8, 1.0f, 0, QW_ROUND_TORCH) == QW_INVALID_ARGUMENT,
        "in-place requantize across sizes");
}

/* The GEMM / convolution output stage: the selected requantization kernels against the scalar ones on
 * hostile accumulators (int32 extremes, exact .5 ties after scaling), per-column multipliers that
 * include NaN, infinities, huge and subnormal values, float biases, every zero point edge and
 * fused clamps, over lengths across the vector steps and tails; with and without fp32_plain. */
static void test_requantize_kernels_match_scalar(void) {
  const struct qw_kernels* selected = qw_kernels();
  const float special[] = {NAN, INFINITY, -INFINITY, 3e38f, 1e-40f, 0.0f, -0.0f, 0.5f, 1.0f, 0.25f};
  int plain_cases = 0;
  for (int out_signed = 0; out_signed <= 1; out_signed++) {
    const int32_t lo = out_signed ? -128 : 0, hi = out_signed ? 127 : 255;
    const int32_t zps[] = {lo, hi, out_signed ? 0 : 128, out_signed ? -3 : 7};
    for (size_t n = 1; n <= 70; n += (n < 40 ? 1 : 7)) {
      for (unsigned variant = 0; variant < 24; variant++) {
        int32_t* acc = exact_alloc(n * sizeof(int32_t));
        int32_t* bias = exact_alloc(n * sizeof(int32_t));
        float* bias_f32 = exact_alloc(n * sizeof(float));
        float* multiplier = exact_alloc(n * sizeof(float));
        uint8_t* a = exact_alloc(n);
        uint8_t* b = exact_alloc(n);
        for (size_t j = 0; j < n; j++) {
          const uint32_t r = rng_u32();
          acc[j] = r % 7 == 0 ? (int32_t)rng_u32() : r % 7 == 1 ? (r & 8 ? INT32_MAX : INT32_MIN)
                                                                 : (int32_t)(rng_u32() % 20001) - 10000;
          bias[j] = variant % 3 == 0 ? 0 : (int32_t)(rng_u32() % 2001) - 1000;
          bias_f32[j] = variant % 4 == 1 ? rng_uniform(-500.0f, 500.0f) : variant % 8 == 3 ? special[rng_u32() % 10] : 0.0f;
          multiplier[j] = variant % 5 == 4 ? special[rng_u32() % 10]
                          : variant % 2   ? rng_uniform(1e-4f, 2e-2f)
                                          : 1.0f / (float)(1 + rng_u32() % 8); /* exact ties after scaling */
        }
        const int32_t zp = zps[variant % 4];
        int32_t qmin = lo, qmax = hi;
        if (variant % 3 == 1) qmin = zp; /* ReLU */
        if (variant % 6 == 2) { qmin = lo + 10; qmax = hi - 20; }
        if (qmin > qmax) qmin = qmax;
        /* fp32_plain exactly when it holds (as qw_requantization_init sets it) */
        int plain = 1;
        for (size_t j = 0; j < n; j++) plain &= bias_f32[j] == 0.0f && isfinite(multiplier[j]);
        const struct qw_requantization_params params = {
            .bias = bias, .bias_f32 = bias_f32, .multiplier = multiplier, .zero_point = zp, .qmin = qmin, .qmax = qmax,
            .fp32_plain = plain};
        selected->requantize[0][out_signed](1, n, acc, n, &params, a, n);
        qw_scalar_kernels.requantize[0][out_signed](1, n, acc, n, &params, b, n);
        CHECK(memcmp(a, b, n) == 0, "requantize fp32 signed=%d n=%zu variant=%u zp=%d [%d, %d] plain=%d differs from scalar",
              out_signed, n, variant, zp, qmin, qmax, plain);
        plain_cases += plain;
        free(acc);
        free(bias);
        free(bias_f32);
        free(multiplier);
        free(a);
        free(b);
      }
    }
  }
  CHECK(plain_cases > 1000, "only %d cases with fp32_plain parameters", plain_cases);
}

int main(void) {
  test_fbgemm_rules();
  test_simd_matches_scalar();
  test_dynamic_kernel();
  test_dequantize_simd_matches_scalar();
  test_requantize_kernels_match_scalar();
  test_documented_values();
  test_per_channel_and_requantize();
  test_validation();
  printf("isa: %s\n", qw_isa());
  return check_summary("test_quantize");
}
