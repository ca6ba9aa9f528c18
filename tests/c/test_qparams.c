/* qw_quant_range and qw_choose_qparams: ranges, torch's validation rules and well-known values.
 * Bit-exact agreement over hundreds of cases is checked against PyTorch's own output by
 * tests/js/qparams.test.js (fixtures from tools/golden/torch_quant.py). */
#include <float.h>
#include <math.h>

#include "check.h"
#include "qwasm.h"

static void test_ranges(void) {
  int32_t lo, hi;
  CHECK(qw_quant_range(QW_QUINT8, 0, 0, 0, 0, &lo, &hi) == QW_OK && lo == 0 && hi == 255, "quint8");
  CHECK(qw_quant_range(QW_QUINT8, 1, 0, 0, 0, &lo, &hi) == QW_OK && lo == 0 && hi == 127, "quint8 reduce_range");
  CHECK(qw_quant_range(QW_QINT8, 0, 0, 0, 0, &lo, &hi) == QW_OK && lo == -128 && hi == 127, "qint8");
  CHECK(qw_quant_range(QW_QINT8, 1, 0, 0, 0, &lo, &hi) == QW_OK && lo == -64 && hi == 63, "qint8 reduce_range");
  CHECK(qw_quant_range(QW_QINT32, 1, 0, 0, 0, &lo, &hi) == QW_OK && lo == INT32_MIN && hi == INT32_MAX, "qint32");
  CHECK(qw_quant_range(QW_QINT8, 0, 1, -8, 7, &lo, &hi) == QW_OK && lo == -8 && hi == 7, "custom 4-bit");
  /* reduce_range floor-halves a custom range, as Python's // does: -127 // 2 == -64. */
  CHECK(qw_quant_range(QW_QINT8, 1, 1, -127, 127, &lo, &hi) == QW_OK && lo == -64 && hi == 63, "custom halved");
  CHECK(qw_quant_range(QW_QINT8, 0, 1, 1, 7, &lo, &hi) == QW_INVALID_ARGUMENT, "range without 0");
  CHECK(qw_quant_range(QW_QINT8, 0, 1, 0, 0, &lo, &hi) == QW_INVALID_ARGUMENT, "empty range");
  CHECK(qw_quant_range(QW_QINT8, 0, 1, -200, 100, &lo, &hi) == QW_INVALID_ARGUMENT, "qint8 range over 256");
  CHECK(qw_quant_range((qw_dtype)3, 0, 0, 0, 0, &lo, &hi) == QW_INVALID_ARGUMENT, "bad dtype");
}

static void test_values(void) {
  float s;
  int32_t zp;
  /* quint8 affine [-1, 1]: scale = 2/255 in float32, and -1 / scale = -127.49999 in float32 (not
   * -127.5), so zp = 127, as torch 1.13 prints for MinMaxObserver over [-1, 1]. */
  CHECK(qw_choose_qparams(-1.0f, 1.0f, QW_QUINT8, QW_PER_TENSOR_AFFINE, 0, 255, 0, FLT_EPSILON, &s, &zp) == QW_OK, "ok");
  CHECK(s == 2.0f / 255.0f && zp == 127, "got %.9g %d", s, zp);
  /* Seed 004: symmetric int8 over [-10, 10] divides by 127.5. */
  CHECK(qw_choose_qparams(-10.0f, 10.0f, QW_QINT8, QW_PER_TENSOR_SYMMETRIC, -128, 127, 0, FLT_EPSILON, &s, &zp) == QW_OK,
        "ok");
  CHECK(s == 10.0f / 127.5f && zp == 0, "got %.9g %d", s, zp);
  /* Symmetric quint8 puts zp at 128, or at the floor-midpoint of a custom range. */
  CHECK(qw_choose_qparams(-1.0f, 3.0f, QW_QUINT8, QW_PER_TENSOR_SYMMETRIC, 0, 255, 0, FLT_EPSILON, &s, &zp) == QW_OK &&
            zp == 128,
        "zp %d", zp);
  CHECK(qw_choose_qparams(-1.0f, 3.0f, QW_QUINT8, QW_PER_TENSOR_SYMMETRIC, 0, 15, 1, FLT_EPSILON, &s, &zp) == QW_OK &&
            zp == 7 && s == 3.0f / 7.5f,
        "custom: %.9g %d", s, zp);
  /* A range that does not straddle 0 is widened to include it. */
  CHECK(qw_choose_qparams(1.345f, 3.453f, QW_QUINT8, QW_PER_TENSOR_AFFINE, 0, 255, 0, FLT_EPSILON, &s, &zp) == QW_OK &&
            s == 3.453f / 255.0f && zp == 0,
        "seed 004: %.9g %d", s, zp);
  /* min == max == 0 gives the eps scale; nothing observed gives (1, 0). */
  CHECK(qw_choose_qparams(0.0f, 0.0f, QW_QINT8, QW_PER_TENSOR_AFFINE, -128, 127, 0, FLT_EPSILON, &s, &zp) == QW_OK &&
            s == FLT_EPSILON && zp == -128,
        "zero range: %.9g %d", s, zp);
  CHECK(qw_choose_qparams(INFINITY, -INFINITY, QW_QUINT8, QW_PER_TENSOR_AFFINE, 0, 255, 0, FLT_EPSILON, &s, &zp) ==
                QW_OK &&
            s == 1.0f && zp == 0,
        "unobserved");
}

static void test_errors(void) {
  float s;
  int32_t zp;
  CHECK(qw_choose_qparams(2.0f, 1.0f, QW_QUINT8, QW_PER_TENSOR_AFFINE, 0, 255, 0, FLT_EPSILON, &s, &zp) ==
            QW_INVALID_ARGUMENT,
        "min > max");
  CHECK(qw_choose_qparams(NAN, 1.0f, QW_QUINT8, QW_PER_TENSOR_AFFINE, 0, 255, 0, FLT_EPSILON, &s, &zp) ==
            QW_INVALID_ARGUMENT,
        "NaN");
  CHECK(qw_choose_qparams(-INFINITY, 1.0f, QW_QUINT8, QW_PER_TENSOR_AFFINE, 0, 255, 0, FLT_EPSILON, &s, &zp) ==
            QW_INVALID_ARGUMENT,
        "-Inf");
  CHECK(qw_choose_qparams(0.0f, 1.0f, QW_QUINT8, (qw_qscheme)9, 0, 255, 0, FLT_EPSILON, &s, &zp) == QW_INVALID_ARGUMENT,
        "bad scheme");
  CHECK(qw_choose_qparams(0.0f, 1.0f, QW_QUINT8, QW_PER_TENSOR_AFFINE, 0, 255, 0, -1.0f, &s, &zp) == QW_INVALID_ARGUMENT,
        "negative eps");
  const float mins[3] = {-1.0f, -2.0f, 0.0f}, maxs[3] = {1.0f, 1.0f, 5.0f};
  float scales[3];
  int32_t zps[3];
  CHECK(qw_choose_qparams_per_channel(3, mins, maxs, QW_QINT8, QW_PER_CHANNEL_SYMMETRIC, -128, 127, 0, FLT_EPSILON,
                                      scales, zps) == QW_OK,
        "per-channel");
  CHECK(scales[0] == 1.0f / 127.5f && scales[1] == 2.0f / 127.5f && scales[2] == 5.0f / 127.5f, "per-channel scales");
  const float bad_max[3] = {1.0f, -3.0f, 5.0f};
  CHECK(qw_choose_qparams_per_channel(3, mins, bad_max, QW_QINT8, QW_PER_CHANNEL_SYMMETRIC, -128, 127, 0, FLT_EPSILON,
                                      scales, zps) == QW_INVALID_ARGUMENT,
        "per-channel min > max");
}

int main(void) {
  test_ranges();
  test_values();
  test_errors();
  return check_summary("test_qparams");
}
