/* Float32 helpers that reproduce ATen 1.13 CPU arithmetic operation for operation. */
#include <math.h>
#include <string.h>

#include "observers/observers.h"

#define LANES QW_TORCH_SUM_LANES
#define LEVELS 4
#define ILP 4

static int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  uint64_t v = (uint64_t)x - 1;
  int64_t last = -1;
  while (v) {
    last++;
    v >>= 1;
  }
  return last + 1;
}

/* multi_row_sum + row_sum of SumKernel.cpp, where one "element" is `lanes` consecutive floats
 * (a Vectorized<float> when lanes == 8, a scalar when lanes == 1). out receives `lanes` sums. */
static void row_sum(const float* x, int64_t size, int lanes, float* out) {
  const int64_t size_ilp = size / ILP;
  float acc[LEVELS][ILP][LANES];
  memset(acc, 0, sizeof acc);
  const int64_t level_power = ceil_log2(size_ilp) / LEVELS > 4 ? ceil_log2(size_ilp) / LEVELS : 4;
  const int64_t level_step = (int64_t)1 << level_power;
  const int64_t level_mask = level_step - 1;
  int64_t i = 0;
  for (; i + level_step <= size_ilp;) {
    for (int64_t j = 0; j < level_step; ++j, ++i) {
      for (int k = 0; k < ILP; k++) {
        const float* e = x + (i * ILP + k) * lanes;
        for (int l = 0; l < lanes; l++) acc[0][k][l] += e[l];
      }
    }
    for (int j = 1; j < LEVELS; j++) {
      for (int k = 0; k < ILP; k++) {
        for (int l = 0; l < lanes; l++) {
          acc[j][k][l] += acc[j - 1][k][l];
          acc[j - 1][k][l] = 0.0f;
        }
      }
      const int64_t mask = level_mask << (j * level_power);
      if ((i & mask) != 0) break;
    }
  }
  for (; i < size_ilp; ++i) {
    for (int k = 0; k < ILP; k++) {
      const float* e = x + (i * ILP + k) * lanes;
      for (int l = 0; l < lanes; l++) acc[0][k][l] += e[l];
    }
  }
  for (int j = 1; j < LEVELS; j++) {
    for (int k = 0; k < ILP; k++) {
      for (int l = 0; l < lanes; l++) acc[0][k][l] += acc[j][k][l];
    }
  }
  float partial[ILP][LANES];
  memcpy(partial, acc[0], sizeof partial);
  for (int64_t t = size_ilp * ILP; t < size; ++t) {
    for (int l = 0; l < lanes; l++) partial[0][l] += x[t * lanes + l];
  }
  for (int k = 1; k < ILP; k++) {
    for (int l = 0; l < lanes; l++) partial[0][l] += partial[k][l];
  }
  for (int l = 0; l < lanes; l++) out[l] = partial[0][l];
}

float qw_torch_sum_f32(const float* x, size_t n) {
  float lanes[LANES];
  if (n >= LANES) {
    /* vectorized_inner_sum: whole vectors through row_sum, the tail scalars first, then the lanes. */
    const int64_t vec_size = (int64_t)n / LANES;
    row_sum(x, vec_size, LANES, lanes);
    float final_acc = 0.0f;
    for (size_t k = (size_t)vec_size * LANES; k < n; k++) final_acc += x[k];
    for (int l = 0; l < LANES; l++) final_acc += lanes[l];
    return final_acc;
  }
  /* scalar_inner_sum */
  row_sum(x, (int64_t)n, 1, lanes);
  return lanes[0];
}

float qw_div_floor_f32(float a, float b) {
  if (b == 0.0f) return a / b;
  const float mod = fmodf(a, b);
  float div = (a - mod) / b;
  if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) div -= 1.0f;
  if (div != 0.0f) {
    float fl = floorf(div);
    if (div - fl > 0.5f) fl += 1.0f;
    return fl;
  }
  return copysignf(0.0f, a / b);
}
