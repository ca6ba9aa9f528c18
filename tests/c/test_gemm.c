/* GEMM and depthwise-convolution microkernels against plain-loop int32 references, in the spirit of
 * XNNPACK's GemmMicrokernelTester: a parameter struct per case, gemm_test() packs real weights with
 * the config's pack_w, packs A with its pack_a kernel, runs its microkernel for mr rows and compares
 * EVERY output exactly (tolerance 0) with sum_k (a - a_zp) * (w - w_zp[n]). Every buffer is
 * allocated with its exact size so AddressSanitizer flags any over-read or over-write. Each kernel
 * table of kernel_tables.h is swept (sizes from its configs), then the whole driver through
 * qw_gemm_with (int32 output, QW_REQUANT_NONE) for each table, then the argument checks, then dwconv. */
#include <math.h>

#include "check.h"
#include "kernel_tables.h"
#include "operators/operators.h"
#include "qwasm.h"

#define SENTINEL ((int32_t)0x5A5A5A5A)

static int32_t edge_zero_point(int is_signed, unsigned which) {
  static const int32_t u[3] = {0, 128, 255}, s[3] = {-128, 0, 127};
  return is_signed ? s[which % 3] : u[which % 3];
}

/* A random 8-bit value of the dtype; with extremes, the value farthest from zp (or its opposite end). */
static uint8_t gen_byte(int is_signed, int extremes, int32_t zp) {
  if (!extremes) {
    return (uint8_t)rng_u32();
  }
  const int32_t lo = is_signed ? -128 : 0, hi = lo + 255;
  int32_t v;
  switch (rng_u32() % 4) {
    case 0: v = lo; break;
    case 1: v = hi; break;
    default: v = zp - lo > hi - zp ? lo : hi; break; /* |v - zp| maximal */
  }
  return (uint8_t)v;
}

static int32_t value_of(uint8_t byte, int is_signed) {
  return is_signed ? (int32_t)(int8_t)byte : (int32_t)byte;
}

/* ---- GEMM microkernel tester ------------------------------------------------------------------- */

struct gemm_params {
  size_t m;        /* rows = mr of the kernel call, 1..config mr */
  size_t n;        /* columns (nc of the kernel call) */
  size_t k;
  size_t a_stride; /* bytes; 0: k */
  size_t c_stride; /* int32 elements; 0: n */
  int a_signed, w_signed;
  int32_t a_zero_point;
  int per_channel;      /* per-column weight zero points (random in range), else w_zero_point */
  int32_t w_zero_point; /* per-tensor weight zero point */
  int extremes;         /* values at the ends of the ranges: the largest |products| */
};

/* W[n][k] = w[j * n_stride + kk * k_stride] packed by the config's pack_w. */
static void pack_matrix(const struct qw_gemm_config* gemm, size_t n, size_t k, const uint8_t* w, size_t n_stride,
                        size_t k_stride, int is_signed, const int32_t* zero_points, size_t zp_count, void* packed) {
  const struct qw_gemm_weights weights = {
      .w = w,
      .is_signed = is_signed,
      .n_stride = n_stride,
      .k_stride = k_stride,
      .k_inner = k,
      .k_outer_stride = 0,
      .zero_points = zero_points,
      .zp_per_column = zp_count != 1,
  };
  gemm->pack_w(gemm->nr, gemm->kr, n, k, &weights, packed);
}

/* The config's fused kernels (gemm with the fp32_plain output stage) for the same panel and weights, against the
 * scalar rule applied to c (the plain kernel's sums, already checked): every byte, for random biases, multipliers
 * from far below to far above one output step per sum, clamps at and inside the 8-bit range, fp32_bounded set
 * whenever these sums allow it (the kernels' contract), and nothing written past n in any row. */
static size_t directs_tested; /* fp32_plain_direct kernel runs (the relaxed usdot table's), counted */

static void requantizing_gemm_test(const struct gemm_params* p, struct kernel_table sel, const int32_t* c,
                                   size_t c_stride, const void* panel, const void* packed, const uint8_t* a,
                                   size_t a_stride) {
  const struct qw_gemm_config* gemm = &sel.kernels->gemm;
  const size_t m = p->m, n = p->n, kc = qw_round_up(p->k, gemm->kr);
  /* the kernels reading quint8 A's rows in place (fp32_plain_direct) where the table has them, on the same rows */
  const struct qw_gemm_direct_a rows = {.za = p->a_zero_point, .a = a, .a_stride = a_stride};
  for (int form = 0; form < 4; form++) { /* [output signed] from a panel, then from the rows in place */
    const int is_direct = form >= 2, y_signed = form % 2;
    const qw_gemm_requantizing_ukernel fused = !is_direct ? gemm->fp32_plain[y_signed][m - 1]
                                               : !p->a_signed && p->k == kc ? gemm->fp32_plain_direct[y_signed]
                                                                            : NULL;
    if (fused == NULL) {
      continue;
    }
    directs_tested += is_direct;
    for (int round = 0; round < 3; round++) {
      int32_t* bias = exact_alloc(n * sizeof(int32_t));
      float* multiplier = exact_alloc(n * sizeof(float));
      float* bias_f32 = exact_alloc(n * sizeof(float)); /* zeros (fp32_plain), read by the scalar rule */
      for (size_t j = 0; j < n; j++) {
        bias_f32[j] = 0.0f;
        bias[j] = (int32_t)(rng_u32() % 200001) - 100000;
        /* 2^-4 .. 2^-20 times [0.5, 1): outputs from saturated to a few steps; now and then 0, negative or huge */
        const uint32_t pick = rng_u32() % 16;
        multiplier[j] = pick == 0 ? 0.0f : pick == 1 ? -ldexpf(rng_uniform(0.5f, 1.0f), -12)
                        : pick == 2 && round == 2 ? 1e30f
                                                  : ldexpf(rng_uniform(0.5f, 1.0f), -4 - (int)(rng_u32() % 17));
      }
      const int32_t lo = y_signed ? -128 : 0, hi = lo + 255;
      const int32_t zp = lo + (int32_t)(rng_u32() % 256);
      const int32_t qmin = round == 1 ? zp : lo + (int32_t)(rng_u32() % 40);
      int32_t qmax = round == 0 ? hi : hi - (int32_t)(rng_u32() % 40);
      qmax = qmax < qmin ? qmin : qmax;
      struct qw_requantization_params params = {
          .bias = bias, .bias_f32 = bias_f32, .multiplier = multiplier, .zero_point = zp, .qmin = qmin, .qmax = qmax, .fp32_plain = 1,
      };
      int bounded = 1;
      for (size_t r = 0; r < m; r++) {
        for (size_t j = 0; j < n; j++) {
          bounded &= fabsf((float)qw_requant_input(c[r * c_stride + j], j, &params) * multiplier[j]) < 4194304.0f;
        }
      }
      params.fp32_bounded = bounded;
      const size_t y_stride = n + (size_t)(rng_u32() % 3) * 5;
      const size_t y_bytes = (m - 1) * y_stride + n;
      uint8_t* y = exact_alloc(y_bytes);
      memset(y, 0xA5, y_bytes);
      fused(m, n, kc, is_direct ? (const void*)&rows : panel, packed, &params, y, y_stride);
      int bad = 0;
      for (size_t r = 0; r < m; r++) {
        for (size_t j = 0; j < n; j++) {
          const int32_t expect = qw_requantize_fp32_value(qw_requant_input(c[r * c_stride + j], j, &params), j, &params);
          const int32_t got = value_of(y[r * y_stride + j], y_signed);
          if (got != expect && bad++ == 0) {
            CHECK(0, "%s fp32_plain%s[%d][%zu] n=%zu k=%zu bounded=%d zp=%d [%d, %d]: y[%zu][%zu] = %d, expected %d "
                  "(sum %d, bias %d, multiplier %g)", sel.name, is_direct ? "_direct" : "", y_signed, m - 1, n, p->k, bounded, zp, qmin, qmax, r, j,
                  got, expect, c[r * c_stride + j], bias[j], (double)multiplier[j]);
          }
        }
        for (size_t j = n; r + 1 < m && j < y_stride; j++) {
          bad += y[r * y_stride + j] != 0xA5;
        }
      }
      CHECK(bad == 0, "%s fp32_plain%s[%d][%zu] m=%zu n=%zu k=%zu: %d wrong or stray bytes", sel.name,
            is_direct ? "_direct" : "", y_signed, m - 1, m, n, p->k, bad);
      free(bias);
      free(bias_f32);
      free(multiplier);
      free(y);
    }
  }
}

/* The config's kernels with the dynamic matmul's float output fused, against scale_output's scalar rule applied to c
 * (the plain kernel's sums, already checked): (float)c * multiplier (+ bias_f32), every float's bits, with and without
 * the bias, and nothing written past n in any row. */
static void f32_output_gemm_test(const struct gemm_params* p, struct kernel_table sel, const int32_t* c,
                                 size_t c_stride, const void* panel, const void* packed) {
  const struct qw_gemm_config* gemm = &sel.kernels->gemm;
  const size_t m = p->m, n = p->n, kc = qw_round_up(p->k, gemm->kr);
  const qw_gemm_requantizing_ukernel fused = gemm->f32_output[m - 1];
  if (fused == NULL) {
    return;
  }
  for (int with_bias = 0; with_bias < 2; with_bias++) {
    float* multiplier = exact_alloc(n * sizeof(float));
    float* bias_f32 = exact_alloc(n * sizeof(float));
    for (size_t j = 0; j < n; j++) {
      multiplier[j] = ldexpf(rng_uniform(0.5f, 1.0f), -6 - (int)(rng_u32() % 20)) * (rng_u32() % 2 ? 1.0f : -1.0f);
      bias_f32[j] = rng_uniform(-4.0f, 4.0f);
    }
    struct qw_requantization_params params = {.multiplier = multiplier, .bias_f32 = with_bias ? bias_f32 : NULL};
    const size_t y_stride = n + (size_t)(rng_u32() % 3) * 3; /* floats */
    const size_t y_elems = (m - 1) * y_stride + n;
    float* y = exact_alloc(y_elems * sizeof(float));
    for (size_t i = 0; i < y_elems; i++) y[i] = float_from_bits(0x7FC05A5Au);
    fused(m, n, kc, panel, packed, &params, y, y_stride * sizeof(float));
    int bad = 0;
    for (size_t r = 0; r < m; r++) {
      for (size_t j = 0; j < n; j++) {
        const float expect = with_bias ? (float)c[r * c_stride + j] * multiplier[j] + bias_f32[j]
                                       : (float)c[r * c_stride + j] * multiplier[j];
        const float got = y[r * y_stride + j];
        if (memcmp(&got, &expect, sizeof got) != 0 && bad++ == 0) {
          CHECK(0, "%s f32_output[%zu] n=%zu k=%zu bias=%d: y[%zu][%zu] = %.9g, expected %.9g (sum %d)", sel.name,
                m - 1, n, p->k, with_bias, r, j, (double)got, (double)expect, c[r * c_stride + j]);
        }
      }
      for (size_t j = n; r + 1 < m && j < y_stride; j++) {
        uint32_t bits;
        memcpy(&bits, &y[r * y_stride + j], sizeof bits);
        bad += bits != 0x7FC05A5Au;
      }
    }
    CHECK(bad == 0, "%s f32_output[%zu] m=%zu n=%zu k=%zu: %d wrong or stray floats", sel.name, m - 1, m, n, p->k, bad);
    free(multiplier);
    free(bias_f32);
    free(y);
  }
}

static void gemm_test(struct gemm_params p, struct kernel_table sel) {
  const struct qw_gemm_config* gemm = &sel.kernels->gemm;
  const size_t m = p.m, n = p.n, k = p.k;
  const size_t a_stride = p.a_stride != 0 ? p.a_stride : k;
  const size_t c_stride = p.c_stride != 0 ? p.c_stride : n;
  const size_t kc = qw_round_up(k, gemm->kr);
  const size_t zp_count = p.per_channel ? n : 1;
  const int32_t w_lo = p.w_signed ? -128 : 0;

  int32_t* w_zp = exact_alloc(zp_count * sizeof(int32_t));
  for (size_t j = 0; j < zp_count; j++) {
    w_zp[j] = p.per_channel ? w_lo + (int32_t)(rng_u32() % 256) : p.w_zero_point;
  }
  /* W[n][k], stored k-major (n_stride 1, k_stride n) on odd cases to exercise the strides. */
  const int k_major = (n + k) % 2 == 1;
  const size_t n_stride = k_major ? 1 : k, k_stride = k_major ? n : 1;
  uint8_t* w = exact_alloc(n * k);
  for (size_t j = 0; j < n; j++) {
    for (size_t kk = 0; kk < k; kk++) {
      w[j * n_stride + kk * k_stride] = gen_byte(p.w_signed, p.extremes, w_zp[p.per_channel ? j : 0]);
    }
  }
  const size_t packed_bytes = qw_gemm_packed_bytes(gemm, n, k);
  int16_t* packed = exact_alloc(packed_bytes);
  memset(packed, 0x77, packed_bytes);
  pack_matrix(gemm, n, k, w, n_stride, k_stride, p.w_signed, w_zp, zp_count, packed);

  /* The packing itself: every weight at its index, everything else (K and N padding) zero. */
  if (gemm->packing == QW_GEMM_PACKING_X16_C2) {
    uint8_t* used = exact_alloc(packed_bytes / sizeof(int16_t));
    memset(used, 0, packed_bytes / sizeof(int16_t));
    int bad = 0;
    for (size_t j = 0; j < n; j++) {
      for (size_t kk = 0; kk < k; kk++) {
        const size_t i = qw_gemm_x16c2_index(gemm->nr, gemm->kr, k, j, kk);
        const int32_t expect = value_of(w[j * n_stride + kk * k_stride], p.w_signed) - w_zp[p.per_channel ? j : 0];
        bad += i >= packed_bytes / sizeof(int16_t) || used[i] || packed[i] != expect;
        if (i < packed_bytes / sizeof(int16_t)) used[i] = 1;
      }
    }
    for (size_t i = 0; i < packed_bytes / sizeof(int16_t); i++) {
      bad += !used[i] && packed[i] != 0;
    }
    CHECK(bad == 0, "%s packed weights n=%zu k=%zu: %d wrong entries", sel.name, n, k, bad);
    free(used);
  } else {
    /* X8_C4: int8 w - c (c = 128 for quint8), zero padding, per tile the column terms K z - sum w8 and z = w_zp - c. */
    const uint8_t* bytes = (const uint8_t*)packed;
    const int32_t c = p.w_signed ? 0 : 128;
    int bad = 0;
    for (size_t j = 0; j < qw_round_up(n, gemm->nr); j++) {
      int32_t sum = 0;
      for (size_t kk = 0; kk < kc; kk++) {
        const int32_t expect = j < n && kk < k ? value_of(w[j * n_stride + kk * k_stride], p.w_signed) - c : 0;
        bad += (int8_t)bytes[qw_gemm_x8c4_index(gemm->nr, gemm->kr, k, j, kk)] != expect;
        sum += expect;
      }
      const int32_t* trailer = (const int32_t*)(bytes + (j / gemm->nr) * gemm->nr * (kc + 8) + gemm->nr * kc);
      const int32_t z = j < n ? w_zp[p.per_channel ? j : 0] - c : 0;
      bad += trailer[j % gemm->nr] != (int32_t)((uint32_t)k * (uint32_t)z - (uint32_t)sum);
      bad += trailer[gemm->nr + j % gemm->nr] != z;
    }
    CHECK(bad == 0, "%s x8c4 packed weights n=%zu k=%zu: %d wrong entries", sel.name, n, k, bad);
  }

  /* A: exactly (m - 1) * a_stride + k bytes; the gaps between rows hold random bytes. */
  const size_t a_bytes = (m - 1) * a_stride + k;
  uint8_t* a = exact_alloc(a_bytes);
  for (size_t i = 0; i < a_bytes; i++) {
    a[i] = gen_byte(p.a_signed, p.extremes, p.a_zero_point);
  }

  const size_t panel_bytes = qw_gemm_panel_bytes(gemm, m, k);
  uint8_t* panel = exact_alloc(panel_bytes);
  memset(panel, 0x77, panel_bytes); /* garbage: the padding must be written as zeros */
  gemm->pack_a[p.a_signed](m, k, kc, a, a_stride, p.a_zero_point, panel);
  {
    int bad = 0;
    if (gemm->packing == QW_GEMM_PACKING_X16_C2) {
      /* row after row, or interleaved by k pair with the rows past m copies of row m - 1 */
      const int16_t* values = (const int16_t*)panel;
      const size_t rows = gemm->a_interleaved ? qw_gemm_panel_rows(m) : m;
      for (size_t r = 0; r < rows; r++) {
        const size_t source = r < m ? r : m - 1;
        for (size_t kk = 0; kk < kc; kk++) {
          const int32_t expect = kk < k ? value_of(a[source * a_stride + kk], p.a_signed) - p.a_zero_point : 0;
          bad += values[gemm->a_interleaved ? kk / 2 * 2 * rows + 2 * r + kk % 2 : r * kc + kk] != expect;
        }
      }
    } else {
      /* X8_C4: {za = a_zp + offset}, then the rows of b = a + offset (mod 256) interleaved by groups of 4 depth
       * steps (rows past m copies of row m - 1), then their sums of b. */
      const int32_t* header = (const int32_t*)panel;
      const int32_t offset = header[0] - p.a_zero_point;
      const int b_signed = offset < 0 || (offset == 0 && p.a_signed);
      bad += offset != 0 && offset != 128 && offset != -128;
      const size_t rows = qw_gemm_panel_rows(m);
      const uint8_t* groups = panel + 16;
      for (size_t r = 0; r < rows; r++) {
        const size_t source = r < m ? r : m - 1;
        int32_t sum = 0;
        for (size_t kk = 0; kk < kc; kk++) {
          const int32_t expect = kk < k ? value_of(a[source * a_stride + kk], p.a_signed) + offset : 0;
          bad += value_of(groups[kk / 4 * 4 * rows + 4 * r + kk % 4], b_signed) != expect;
          sum += expect;
        }
        int32_t stored;
        memcpy(&stored, groups + rows * kc + 4 * r, sizeof stored);
        bad += stored != sum;
      }
    }
    CHECK(bad == 0, "%s pack_a[%d] m=%zu k=%zu a_stride=%zu zp=%d: %d wrong entries", sel.name, p.a_signed, m, k,
          a_stride, p.a_zero_point, bad);
  }

  const size_t c_elems = (m - 1) * c_stride + n;
  int32_t* c = exact_alloc(c_elems * sizeof(int32_t));
  for (size_t i = 0; i < c_elems; i++) {
    c[i] = SENTINEL;
  }
  gemm->gemm[m - 1](m, n, kc, panel, packed, c, c_stride);

  int bad = 0;
  for (size_t r = 0; r < m; r++) {
    for (size_t j = 0; j < n; j++) {
      int64_t sum = 0;
      for (size_t kk = 0; kk < k; kk++) {
        sum += (int64_t)(value_of(a[r * a_stride + kk], p.a_signed) - p.a_zero_point) *
               (int64_t)(value_of(w[j * n_stride + kk * k_stride], p.w_signed) - w_zp[p.per_channel ? j : 0]);
      }
      const int32_t got = c[r * c_stride + j];
      if (sum != (int64_t)got) {
        if (bad++ == 0) {
          CHECK(0, "%s gemm[%zu] m=%zu n=%zu k=%zu a_stride=%zu c_stride=%zu a_signed=%d a_zp=%d w_signed=%d %s "
                "extremes=%d: C[%zu][%zu] = %d, expected %lld",
                sel.name, m - 1, m, n, k, a_stride, c_stride, p.a_signed, p.a_zero_point, p.w_signed,
                p.per_channel ? "per-channel" : "per-tensor", p.extremes, r, j, got, (long long)sum);
        }
      }
    }
    for (size_t j = n; r + 1 < m && j < c_stride; j++) {
      if (c[r * c_stride + j] != SENTINEL && bad++ == 0) {
        CHECK(0, "%s gemm[%zu] m=%zu n=%zu k=%zu wrote C[%zu][%zu] beyond n (c_stride %zu)", sel.name, m - 1, m, n, k,
              r, j, c_stride);
      }
    }
  }
  CHECK(bad == 0, "%s gemm: %d wrong outputs", sel.name, bad);
  if (bad == 0) {
    requantizing_gemm_test(&p, sel, c, c_stride, panel, packed, a, a_stride);
    f32_output_gemm_test(&p, sel, c, c_stride, panel, packed);
  }

  free(w_zp);
  free(w);
  free(packed);
  free(a);
  free(panel);
  free(c);
}

static void test_gemm_microkernels(struct kernel_table sel) {
  /* 25..32: one four-tile pass of the 1-row SIMD kernel, its last tile cut; 33..57: a pass and 1..3
   * tiles after it; 64, 100: two and three passes. */
  static const size_t ncs[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 25, 31, 32, 33, 41, 57, 64, 100};
  static const size_t ks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 31, 33, 64, 100};
  unsigned variant = 0;
  for (size_t mr = 1; mr <= sel.kernels->gemm.mr; mr++) {
    for (size_t ni = 0; ni < sizeof ncs / sizeof ncs[0]; ni++) {
      for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++, variant++) {
        const size_t n = ncs[ni], k = ks[ki];
        /* Every (a dtype, a zero point at an edge) combination; the weight side and the strides
         * rotate with the case number. */
        for (unsigned z = 0; z < 6; z++) {
          const unsigned v = variant * 6 + z;
          const int a_signed = (int)(z / 3), w_signed = (int)(v / 2 % 2);
          gemm_test((struct gemm_params){
                        .m = mr,
                        .n = n,
                        .k = k,
                        .a_stride = v % 3 == 0 ? k : v % 3 == 1 ? k + 7 : k + 17,
                        .c_stride = v % 4 == 3 ? n + 5 : 0,
                        .a_signed = a_signed,
                        .w_signed = w_signed,
                        .a_zero_point = edge_zero_point(a_signed, z),
                        .per_channel = (int)(v % 2),
                        .w_zero_point = edge_zero_point(w_signed, v / 4),
                        .extremes = v % 5 == 4,
                    },
                    sel);
        }
      }
    }
  }
  /* Deep K at the int32 limit of the contract (K < 2^15, |a - a_zp| = |w - w_zp| = 255): the sums
   * reach +-2,130,674,175 (the 1-row SIMD kernel sums two dots before each accumulator; n 41: its
   * four-tile pass and the tiles after it). */
  const struct qw_gemm_config* gemm = &sel.kernels->gemm;
  for (size_t mr = 1; mr <= gemm->mr; mr++) {
    for (int sign = 0; sign < 2; sign++) {
      const size_t k = 32767, n = 41, kc = qw_round_up(k, gemm->kr);
      int32_t w_zp = sign ? 255 : 0;
      uint8_t* a = exact_alloc((mr - 1) * k + k);
      memset(a, 255, (mr - 1) * k + k);
      uint8_t* w = exact_alloc(n * k);
      memset(w, sign ? 0 : 255, n * k);
      int16_t* packed = exact_alloc(qw_gemm_packed_bytes(gemm, n, k));
      pack_matrix(gemm, n, k, w, k, 1, 0, &w_zp, 1, packed);
      uint8_t* panel = exact_alloc(qw_gemm_panel_bytes(gemm, mr, k));
      gemm->pack_a[0](mr, k, kc, a, k, 0, panel);
      int32_t* c = exact_alloc(mr * n * sizeof(int32_t));
      gemm->gemm[mr - 1](mr, n, kc, panel, packed, c, n);
      const int32_t expect = (sign ? -1 : 1) * 32767 * 255 * 255;
      int bad = 0;
      for (size_t i = 0; i < mr * n; i++) {
        bad += c[i] != expect;
      }
      CHECK(bad == 0, "%s gemm[%zu] K=32767 extreme sums: c[0] = %d, expected %d", sel.name, mr - 1, c[0], expect);
      free(a);
      free(w);
      free(packed);
      free(panel);
      free(c);
    }
  }
}

/* ---- the driver, through the config ------------------------------------------------------------- */

static void test_qw_gemm_driver(struct kernel_table sel) {
  const struct qw_kernels* kernels = sel.kernels;
  for (int iter = 0; iter < 300; iter++) {
    const size_t m = 1 + rng_u32() % 9;
    /* Mostly small; some deep K, where the driver blocks the columns (block = 256 KiB of weights). */
    const int deep = iter % 25 == 24;
    const size_t n = deep ? 1 + rng_u32() % 40 : 1 + rng_u32() % 70;
    const size_t k = deep ? 4000 + rng_u32() % 13000 : 1 + rng_u32() % 150;
    const size_t a_stride = k + (iter % 3 == 0 ? 0 : rng_u32() % 13);
    const size_t y_stride = (n + (iter % 4 == 1 ? rng_u32() % 5 : 0)) * sizeof(int32_t);
    const int a_signed = (int)(rng_u32() % 2), w_signed = (int)(rng_u32() % 2);
    const qw_dtype a_dtype = a_signed ? QW_QINT8 : QW_QUINT8, w_dtype = w_signed ? QW_QINT8 : QW_QUINT8;
    const int32_t a_zp = iter % 2 ? edge_zero_point(a_signed, rng_u32()) : (a_signed ? -128 : 0) + (int32_t)(rng_u32() % 256);
    const size_t zp_count = iter % 3 == 2 ? 1 : n;
    const int with_bias = iter % 5 == 3;

    int32_t* w_zp = exact_alloc(zp_count * sizeof(int32_t));
    for (size_t j = 0; j < zp_count; j++) {
      w_zp[j] = (w_signed ? -128 : 0) + (int32_t)(rng_u32() % 256);
    }
    uint8_t* w = exact_alloc(n * k);
    for (size_t i = 0; i < n * k; i++) {
      w[i] = (uint8_t)rng_u32();
    }
    const size_t a_bytes = (m - 1) * a_stride + k;
    uint8_t* a = exact_alloc(a_bytes);
    for (size_t i = 0; i < a_bytes; i++) {
      a[i] = (uint8_t)rng_u32();
    }
    int32_t* bias = exact_alloc(n * sizeof(int32_t));
    for (size_t j = 0; j < n; j++) {
      bias[j] = (int32_t)rng_u32();
    }

    void* packed = exact_alloc(qw_gemm_pack_size_with(kernels, n, k));
    CHECK(qw_gemm_pack_with(kernels, n, k, w, w_dtype, k, 1, w_zp, zp_count, packed) == QW_OK, "qw_gemm_pack status");
    void* blob = exact_alloc(qw_requantization_size(n));
    const double one = 1.0;
    CHECK(qw_requantization_init(blob, n, QW_REQUANT_NONE, 1.0, &one, 1, w_zp, w_dtype, NULL, with_bias ? bias : NULL,
                                 1.0, 0, QW_QINT32, -INFINITY, INFINITY, 0) == QW_OK,
          "qw_requantization_init status");
    void* ws = exact_alloc(qw_gemm_workspace_size_with(kernels, n, k));
    const size_t y_bytes = (m - 1) * y_stride + n * sizeof(int32_t);
    int32_t* y = exact_alloc(y_bytes);
    memset(y, 0x5A, y_bytes);
    const qw_status st = qw_gemm_with(kernels, m, n, k, a, a_stride, a_dtype, a_zp, packed, blob, y, y_stride, ws);
    CHECK(st == QW_OK, "qw_gemm status %d", st);

    int bad = 0;
    const size_t row = y_stride / sizeof(int32_t);
    for (size_t r = 0; r < m; r++) {
      for (size_t j = 0; j < n; j++) {
        int64_t sum = 0;
        for (size_t kk = 0; kk < k; kk++) {
          sum += (int64_t)(value_of(a[r * a_stride + kk], a_signed) - a_zp) *
                 (int64_t)(value_of(w[j * k + kk], w_signed) - w_zp[zp_count == 1 ? 0 : j]);
        }
        const int32_t expect = (int32_t)(uint32_t)((uint64_t)sum + (uint64_t)(with_bias ? (int64_t)bias[j] : 0));
        const int32_t got = y[r * row + j];
        if (got != expect && bad++ == 0) {
          CHECK(0, "%s qw_gemm m=%zu n=%zu k=%zu a_stride=%zu a_signed=%d a_zp=%d w_signed=%d zp_count=%zu bias=%d: "
                "y[%zu][%zu] = %d, expected %d",
                sel.name, m, n, k, a_stride, a_signed, a_zp, w_signed, zp_count, with_bias, r, j, got, expect);
        }
      }
      for (size_t j = n; r + 1 < m && j < row; j++) {
        bad += y[r * row + j] != SENTINEL;
      }
    }
    CHECK(bad == 0, "%s qw_gemm m=%zu n=%zu k=%zu: %d wrong outputs", sel.name, m, n, k, bad);

    free(w_zp);
    free(w);
    free(a);
    free(bias);
    free(packed);
    free(blob);
    free(ws);
    free(y);
  }
}

static void test_qw_gemm_arguments(void) {
  enum { N = 5, K = 6, M = 2 };
  uint8_t w[N * K], a[M * K];
  for (int i = 0; i < N * K; i++) w[i] = (uint8_t)(i * 37);
  for (int i = 0; i < M * K; i++) a[i] = (uint8_t)(i * 11);
  const int32_t zp0 = 0, zp_bad_u = 256, zp_bad_s = 128;
  const double one = 1.0;

  /* Packing. */
  CHECK(qw_gemm_pack_size(0, K) == 0 && qw_gemm_pack_size(N, 0) == 0, "empty pack size");
  void* packed = exact_alloc(qw_gemm_pack_size(N, K));
  void* other = exact_alloc(qw_gemm_pack_size(N + 1, K + 1));
  CHECK(qw_gemm_pack(N, K, NULL, QW_QUINT8, K, 1, &zp0, 1, packed) == QW_INVALID_ARGUMENT, "NULL w");
  CHECK(qw_gemm_pack(N, K, w, QW_QUINT8, K, 1, &zp0, 1, NULL) == QW_INVALID_ARGUMENT, "NULL packed");
  CHECK(qw_gemm_pack(N, K, w, QW_QUINT8, K, 1, NULL, 1, packed) == QW_INVALID_ARGUMENT, "NULL zero points");
  CHECK(qw_gemm_pack(0, K, w, QW_QUINT8, K, 1, &zp0, 1, packed) == QW_INVALID_ARGUMENT, "n = 0");
  CHECK(qw_gemm_pack(N, 0, w, QW_QUINT8, K, 1, &zp0, 1, packed) == QW_INVALID_ARGUMENT, "k = 0");
  CHECK(qw_gemm_pack(1, 32768, w, QW_QUINT8, 1, 1, &zp0, 1, packed) == QW_INVALID_ARGUMENT, "k = 32768");
  CHECK(qw_gemm_pack(1, 40000, w, QW_QUINT8, 1, 1, &zp0, 1, packed) == QW_INVALID_ARGUMENT, "k = 40000");
  CHECK(qw_gemm_pack(N, K, w, QW_QUINT8, K, 1, &zp0, 2, packed) == QW_INVALID_ARGUMENT, "zp_count 2 of 5");
  CHECK(qw_gemm_pack(N, K, w, QW_QINT32, K, 1, &zp0, 1, packed) == QW_INVALID_ARGUMENT, "qint32 weights");
  CHECK(qw_gemm_pack(N, K, w, (qw_dtype)9, K, 1, &zp0, 1, packed) == QW_INVALID_ARGUMENT, "bad dtype");
  CHECK(qw_gemm_pack(N, K, w, QW_QUINT8, K, 1, &zp_bad_u, 1, packed) == QW_INVALID_QPARAMS, "w zp 256 quint8");
  CHECK(qw_gemm_pack(N, K, w, QW_QINT8, K, 1, &zp_bad_s, 1, packed) == QW_INVALID_QPARAMS, "w zp 128 qint8");
  const int32_t zp_neg = -1;
  CHECK(qw_gemm_pack(N, K, w, QW_QUINT8, K, 1, &zp_neg, 1, packed) == QW_INVALID_QPARAMS, "w zp -1 quint8");
  CHECK(qw_gemm_pack(N + 1, K + 1, w, QW_QUINT8, 0, 0, &zp0, 1, other) == QW_OK, "other pack");
  CHECK(qw_gemm_pack(N, K, w, QW_QUINT8, K, 1, &zp0, 1, packed) == QW_OK, "pack");

  void* blob = exact_alloc(qw_requantization_size(N));
  void* blob_n1 = exact_alloc(qw_requantization_size(N + 1));
  CHECK(qw_requantization_init(blob, N, QW_REQUANT_NONE, 1.0, &one, 1, &zp0, QW_QUINT8, NULL, NULL, 1.0, 0, QW_QINT32,
                               -INFINITY, INFINITY, 0) == QW_OK,
        "blob");
  CHECK(qw_requantization_init(blob_n1, N + 1, QW_REQUANT_NONE, 1.0, &one, 1, &zp0, QW_QUINT8, NULL, NULL, 1.0, 0,
                               QW_QINT32, -INFINITY, INFINITY, 0) == QW_OK,
        "blob n+1");
  CHECK(qw_requantization_init(blob, N, QW_REQUANT_NONE, 1.0, &one, 1, &zp0, QW_QUINT8, NULL, NULL, 1.0, 0, QW_QUINT8,
                               -INFINITY, INFINITY, 0) == QW_INVALID_ARGUMENT,
        "mode none wants qint32 output");
  CHECK(qw_requantization_init(blob, N, QW_REQUANT_NONE, 1.0, &one, 1, &zp0, QW_QUINT8, NULL, NULL, 1.0, 0, QW_QINT32,
                               -INFINITY, INFINITY, 0) == QW_OK,
        "blob again");
  void* ws = exact_alloc(qw_gemm_workspace_size(N + 1, K + 1));
  int32_t y[M * (N + 1)];
  const size_t ys = N * sizeof(int32_t);

  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 3, packed, blob, y, ys, ws) == QW_OK, "valid call");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 3, NULL, blob, y, ys, ws) == QW_INVALID_ARGUMENT, "NULL packed");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 3, packed, NULL, y, ys, ws) == QW_INVALID_ARGUMENT, "NULL blob");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 3, packed, blob, y, ys, NULL) == QW_INVALID_ARGUMENT, "NULL workspace");
  CHECK(qw_gemm(M, N, K, NULL, K, QW_QUINT8, 3, packed, blob, y, ys, ws) == QW_INVALID_ARGUMENT, "NULL a");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 3, packed, blob, NULL, ys, ws) == QW_INVALID_ARGUMENT, "NULL y");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 3, blob, blob, y, ys, ws) == QW_INVALID_ARGUMENT, "not packed weights");
  /* n / k that disagree with the packed header (the blob made for the same wrong n, so only the
   * header can object). */
  CHECK(qw_gemm(M, N + 1, K, a, K, QW_QUINT8, 3, packed, blob_n1, y, ys + 4, ws) == QW_INVALID_ARGUMENT,
        "n disagrees with the packed header");
  CHECK(qw_gemm(M, N, K - 1, a, K, QW_QUINT8, 3, packed, blob, y, ys, ws) == QW_INVALID_ARGUMENT,
        "k disagrees with the packed header");
  CHECK(qw_gemm(M, N, K + 1, a, K + 1, QW_QUINT8, 3, packed, blob, y, ys, ws) == QW_INVALID_ARGUMENT,
        "k + 1 disagrees with the packed header");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 3, other, blob, y, ys, ws) == QW_INVALID_ARGUMENT,
        "packed for another n, k");
  CHECK(qw_gemm(M, N, 32768, a, 32768, QW_QUINT8, 3, packed, blob, y, ys, ws) == QW_INVALID_ARGUMENT, "k = 32768");
  CHECK(qw_gemm(M, N + 1, K, a, K, QW_QUINT8, 3, packed, blob, y, ys + 4, ws) == QW_INVALID_ARGUMENT,
        "blob for another n");
  CHECK(qw_gemm(M, N, K, a, K - 1, QW_QUINT8, 3, packed, blob, y, ys, ws) == QW_INVALID_ARGUMENT, "a_stride < k");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 3, packed, blob, y, ys - 1, ws) == QW_INVALID_ARGUMENT, "y_stride < n * 4");
  CHECK(qw_gemm(M, N, K, a, K, QW_QINT32, 3, packed, blob, y, ys, ws) == QW_INVALID_ARGUMENT, "qint32 activations");
  CHECK(qw_gemm(M, N, K, a, K, (qw_dtype)5, 3, packed, blob, y, ys, ws) == QW_INVALID_ARGUMENT, "bad a dtype");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 256, packed, blob, y, ys, ws) == QW_INVALID_QPARAMS, "a zp 256 quint8");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, -1, packed, blob, y, ys, ws) == QW_INVALID_QPARAMS, "a zp -1 quint8");
  CHECK(qw_gemm(M, N, K, a, K, QW_QINT8, 128, packed, blob, y, ys, ws) == QW_INVALID_QPARAMS, "a zp 128 qint8");
  CHECK(qw_gemm(M, N, K, a, K, QW_QINT8, -129, packed, blob, y, ys, ws) == QW_INVALID_QPARAMS, "a zp -129 qint8");
  CHECK(qw_gemm(M, N, K, a, K, QW_QINT8, -128, packed, blob, y, ys, ws) == QW_OK, "a zp -128 qint8");
  CHECK(qw_gemm(M, N, K, a, K, QW_QUINT8, 255, packed, blob, y, ys, ws) == QW_OK, "a zp 255 quint8");
  /* m = 0: nothing to read or write. */
  CHECK(qw_gemm(0, N, K, NULL, 0, QW_QUINT8, 0, packed, blob, NULL, 0, ws) == QW_OK, "m = 0");

  free(packed);
  free(other);
  free(blob);
  free(blob_n1);
  free(ws);
}

/* ---- depthwise convolution microkernels -------------------------------------------------------- */

struct dwconv_params {
  size_t ow, channels, kh, kw, column_step, dilation, pad_left;
  int a_signed, w_signed;
  int extremes;
  int symmetric; /* weight zero points 0 (qint8) or 128 (quint8): the quad kernels' fast path */
};

/* v(x) of a tap row: the input at column x - pad_left, the zero point outside it. */
static int32_t pair_value(const uint8_t* row, size_t in_w, size_t pad_left, size_t channels, int32_t zp, long x,
                          size_t c, int is_signed) {
  const long i = x - (long)pad_left;
  return i >= 0 && i < (long)in_w ? value_of(row[(size_t)i * channels + c], is_signed) : zp;
}

/* The config's requantizing kernels (fp32 rule, plain parameters) against the sums acc of its ukernel plus a bias,
 * requantized by the scalar rule: every byte, outputs of `channels` bytes written and nothing past them. Random
 * biases, multipliers (some so large that v passes 2^22 or overflows to infinity), zero points and [qmin, qmax]
 * (fused activations). */
static void dwconv_fp32_plain_test(const struct dwconv_params* p, struct kernel_table sel, size_t cp, size_t groups,
                                   const void* const* rows, const void* packed, const int32_t* acc, int pairs) {
  const struct qw_dwconv_config* dwconv = &sel.kernels->dwconv;
  const size_t C = p->channels;
  const qw_dwconv_requantizing_ukernel* kernels = pairs ? dwconv->fp32_plain_pairs : dwconv->fp32_plain;
  for (int run = 0; run < 4; run++) {
    const int y_signed = run % 2, bounded = run / 2;
    if (kernels[y_signed] == NULL) {
      continue;
    }
    int32_t* bias = exact_alloc(cp * sizeof(int32_t));
    float* multiplier = exact_alloc(cp * sizeof(float));
    for (size_t c = 0; c < cp; c++) {
      bias[c] = (int32_t)(rng_u32() % 400001) - 200000;
      /* mostly scales that round within range; some that take v past 2^22 and to infinity (not when the run
       * promises fp32_bounded, whose promise is checked against the sums below) */
      const uint32_t kind = bounded ? 2 : rng_u32() % 16;
      multiplier[c] = kind == 0 ? 3e38f : kind == 1 ? rng_uniform(1.0f, 1e5f) : rng_uniform(0.0f, 1.0f) / (float)(1u << (rng_u32() % 16));
    }
    if (bounded) {
      int broken = 0;
      for (size_t i = 0; i < p->ow * cp; i++) {
        const double sum = (double)acc[i] + bias[i % cp];
        broken += fabs(sum) > INT32_MAX || fabs(sum * multiplier[i % cp]) >= 4194304.0;
      }
      CHECK(broken == 0, "%s dwconv fp32_bounded test: %d sums break the promise", sel.name, broken);
    }
    const int32_t lo = y_signed ? -128 : 0;
    const int32_t zp = lo + (int32_t)(rng_u32() % 256);
    const int32_t qmin = rng_u32() % 2 ? lo : lo + (int32_t)(rng_u32() % 128);
    const int32_t qmax = rng_u32() % 2 ? lo + 255 : qmin + (int32_t)(rng_u32() % (size_t)(lo + 256 - qmin));
    float* bias_f32 = exact_alloc(cp * sizeof(float));
    memset(bias_f32, 0, cp * sizeof(float));
    const struct qw_requantization_params params = {.bias = bias, .bias_f32 = bias_f32, .multiplier = multiplier,
                                                    .zero_point = zp, .qmin = qmin, .qmax = qmax, .fp32_plain = 1,
                                                    .fp32_bounded = bounded};
    uint8_t* y = exact_alloc(p->ow * C);
    int32_t* scratch = exact_alloc(p->ow * cp * sizeof(int32_t));
    kernels[y_signed](p->ow, C, cp, p->kh, groups, p->column_step, dwconv->taps * p->dilation, rows, packed, &params,
                      scratch, y);
    int bad = 0;
    for (size_t ox = 0; ox < p->ow; ox++) {
      for (size_t c = 0; c < C; c++) {
        const int32_t expect = qw_requantize_fp32_value(qw_requant_input(acc[ox * cp + c], c, &params), c, &params);
        const int32_t got = value_of(y[ox * C + c], y_signed);
        if (got != expect && bad++ == 0) {
          CHECK(0, "%s dwconv fp32_plain%s y_signed=%d bounded=%d ow=%zu C=%zu %zux%zu step=%zu: y[%zu][%zu] = %d, "
                "expected %d", sel.name, pairs ? " (output pairs)" : "", y_signed, bounded, p->ow, C, p->kh, p->kw,
                p->column_step, ox, c, got, expect);
        }
      }
    }
    CHECK(bad == 0, "%s dwconv fp32_plain: %d wrong outputs", sel.name, bad);
    free(bias);
    free(multiplier);
    free(bias_f32);
    free(y);
    free(scratch);
  }
}

/* The packed weights of either layout (dwconv.h): every weight at its place, everything else zero, then the
 * layout's trailers. */
static int dwconv_packing_errors(const struct qw_dwconv_config* dwconv, size_t C, size_t KH, size_t KW, const uint8_t* w,
                                 int w_signed, const int32_t* w_zp, const void* packed, size_t bytes) {
  const size_t CP = qw_round_up(C, dwconv->cr), GROUPS = qw_dwconv_groups(dwconv, KW);
  const size_t weight_bytes = CP * KH * GROUPS * 4;
  uint8_t* seen = exact_alloc(weight_bytes);
  memset(seen, 0, weight_bytes);
  int bad = 0;
  const int quads = dwconv->packing == QW_DWCONV_PACKING_X8_ROW_QUADS;
  const int32_t c8 = quads && !w_signed ? 128 : 0; /* quads: int8 w - c */
  for (size_t c = 0; c < C; c++) {
    for (size_t t = 0; t < KH * KW; t++) {
      const int32_t v = value_of(w[c * KH * KW + t], w_signed);
      if (quads) {
        const size_t i = qw_dwconv_row_quads_offset(dwconv->cr, KH, GROUPS, c, t / KW, t % KW);
        bad += i >= weight_bytes || seen[i] || ((const int8_t*)packed)[i] != v - c8;
        if (i < weight_bytes) seen[i] = 1;
      } else {
        const size_t i = qw_dwconv_row_pairs_index(dwconv->cr, KH, GROUPS, c, t / KW, t % KW);
        bad += 2 * i >= weight_bytes || seen[2 * i] || ((const int16_t*)packed)[i] != v - w_zp[c];
        if (2 * i < weight_bytes) seen[2 * i] = seen[2 * i + 1] = 1;
      }
    }
  }
  for (size_t i = 0; i < weight_bytes; i++) {
    bad += !seen[i] && ((const uint8_t*)packed)[i] != 0;
  }
  if (quads) {
    const uint8_t* masks = (const uint8_t*)packed + weight_bytes;
    for (size_t i = 0; i < GROUPS * 16; i++) bad += masks[i] != (i / 16 * 4 + i % 4 < KW);
    const int32_t* z = (const int32_t*)(masks + GROUPS * 16);
    for (size_t c = 0; c < CP; c++) bad += z[c] != (c < C ? w_zp[c] - c8 : 0);
  }
  const int32_t* sums = (const int32_t*)((const char*)packed + bytes - C * sizeof(int32_t));
  for (size_t c = 0; c < C; c++) {
    int32_t sum = 0;
    for (size_t t = 0; t < KH * KW; t++) sum += value_of(w[c * KH * KW + t], w_signed) - w_zp[c];
    bad += sums[c] != sum;
  }
  free(seen);
  return bad;
}

/* The tap of channel c at stored column k, tap t (t < the config's taps) of a tap row, as its kernels read it. */
static int32_t tap_at(const struct qw_dwconv_config* dwconv, const void* row, size_t columns, size_t k, size_t c,
                      size_t t) {
  const size_t offset = qw_dwconv_tap_offset(dwconv->cr, columns, k, c);
  return dwconv->taps == 2 ? ((const int16_t*)row)[offset / 2 + t] : ((const uint8_t*)row)[offset + t];
}

/* What tap_at should hold: the input (or zero point) plus the config's offset, as a pair's int16 or a quad's byte;
 * 0 past the last channel. */
static int32_t tap_expected(const struct qw_dwconv_config* dwconv, int a_signed, int32_t value, int real_channel) {
  if (!real_channel) return 0;
  return dwconv->taps == 2 ? value : (uint8_t)(value + dwconv->x_offset[a_signed]);
}

/* The entries of a tap row (`columns` stored columns of padded column k * step) that differ from the input row it was
 * built from (in_w pixels of C channels, CP padded; zero point a_zp outside it). */
static int tap_row_errors(const struct qw_dwconv_config* dwconv, const void* row, size_t columns, size_t step,
                          size_t dilation, const uint8_t* in, size_t in_w, size_t pad_left, size_t C, size_t CP,
                          int32_t a_zp, int a_signed) {
  int bad = 0;
  for (size_t k = 0; k < columns; k++) {
    for (size_t c = 0; c < CP; c++) {
      for (size_t t = 0; t < dwconv->taps; t++) {
        const int32_t v = c < C ? pair_value(in, in_w, pad_left, C, a_zp, (long)(k * step + t * dilation), c, a_signed)
                                : 0;
        bad += tap_at(dwconv, row, columns, k, c, t) != tap_expected(dwconv, a_signed, v, c < C);
      }
    }
  }
  return bad;
}

static void dwconv_test(struct dwconv_params p, struct kernel_table sel) {
  const struct qw_dwconv_config* dwconv = &sel.kernels->dwconv;
  const size_t C = p.channels, KH = p.kh, KW = p.kw, CP = qw_round_up(C, dwconv->cr);
  const size_t GROUPS = qw_dwconv_groups(dwconv, KW), TAPS = dwconv->taps;
  const size_t group_step = TAPS * p.dilation;
  const size_t columns = qw_dwconv_row_columns(p.ow, p.column_step, GROUPS, group_step);
  const size_t step = qw_dwconv_row_step(p.column_step, group_step);
  const size_t bytes = qw_dwconv_packed_bytes(dwconv, C, KH, KW);
  const int32_t x_offset = dwconv->x_offset[p.a_signed];

  /* w[c][ky][kx], as a depthwise convolution's [out_c][1][kernel_h][kernel_w] weights are laid out. */
  int32_t* w_zp = exact_alloc(C * sizeof(int32_t));
  uint8_t* w = exact_alloc(C * KH * KW);
  for (size_t c = 0; c < C; c++) {
    w_zp[c] = p.symmetric ? (p.w_signed ? 0 : 128) : (p.w_signed ? -128 : 0) + (int32_t)(rng_u32() % 256);
    for (size_t t = 0; t < KH * KW; t++) {
      w[c * KH * KW + t] = gen_byte(p.w_signed, p.extremes, w_zp[c]);
    }
  }
  uint8_t* packed = exact_alloc(bytes);
  memset(packed, 0x77, bytes);
  dwconv->pack(dwconv->cr, C, KH, KW, w, p.w_signed, w_zp, 1, packed);
  const int bad_packing = dwconv_packing_errors(dwconv, C, KH, KW, w, p.w_signed, w_zp, packed, bytes);
  CHECK(bad_packing == 0, "%s dwconv packing C=%zu %zux%zu: %d wrong entries", sel.name, C, KH, KW, bad_packing);

  /* One input row per kernel row (its own exact allocation), a few columns short of the pair row on the right
   * and pad_left on the left, so that both ends read the zero point. */
  const int32_t a_zp = p.a_signed ? (int32_t)(rng_u32() % 256) - 128 : (int32_t)(rng_u32() % 256);
  const size_t padded_w = (columns - 1) * step + 1;
  const size_t in_w = padded_w > p.pad_left + 1 + rng_u32() % 3 ? padded_w - p.pad_left - rng_u32() % 3 : 1;
  uint8_t** in = exact_alloc(KH * sizeof(uint8_t*));
  void** rows = exact_alloc(KH * sizeof(void*));
  int bad_taps = 0;
  for (size_t ky = 0; ky < KH; ky++) {
    in[ky] = exact_alloc(in_w * C);
    for (size_t i = 0; i < in_w * C; i++) in[ky][i] = gen_byte(p.a_signed, p.extremes, a_zp);
    rows[ky] = exact_alloc(columns * CP * 4);
    dwconv->tap_row[p.a_signed](columns, step, C, CP, in[ky], in_w, p.pad_left, p.dilation, a_zp, rows[ky]);
    bad_taps += tap_row_errors(dwconv, rows[ky], columns, step, p.dilation, in[ky], in_w, p.pad_left, C, CP, a_zp,
                               p.a_signed);
  }
  CHECK(bad_taps == 0, "%s dwconv tap rows C=%zu columns=%zu step=%zu pad_left=%zu dilation=%zu: %d wrong taps",
        sel.name, C, columns, step, p.pad_left, p.dilation, bad_taps);

  /* The sums of (input + offset) * (w - w_zp): the driver folds (zp + offset) * sum_t (w - w_zp) into the bias. */
  int32_t* acc = exact_alloc(p.ow * CP * sizeof(int32_t));
  dwconv->ukernel(p.ow, CP, KH, GROUPS, p.column_step, group_step, (const void* const*)rows, packed, acc);
  int bad = 0;
  for (size_t ox = 0; ox < p.ow; ox++) {
    for (size_t c = 0; c < CP; c++) {
      int64_t sum = 0;
      for (size_t ky = 0; ky < KH && c < C; ky++) {
        for (size_t kx = 0; kx < KW; kx++) {
          const long x = (long)(ox * p.column_step + kx * p.dilation);
          sum += (int64_t)(pair_value(in[ky], in_w, p.pad_left, C, a_zp, x, c, p.a_signed) + x_offset) *
                 (value_of(w[(c * KH + ky) * KW + kx], p.w_signed) - w_zp[c]);
        }
      }
      const int32_t got = acc[ox * CP + c];
      if (sum != got && bad++ == 0) {
        CHECK(0, "%s ow=%zu channels=%zu %zux%zu step=%zu dilation=%zu a_signed=%d w_signed=%d extremes=%d "
              "symmetric=%d: acc[%zu][%zu] = %d, expected %lld",
              sel.name, p.ow, C, KH, KW, p.column_step, p.dilation, p.a_signed, p.w_signed, p.extremes, p.symmetric,
              ox, c, got, (long long)sum);
      }
    }
  }
  CHECK(bad == 0, "%s dwconv: %d wrong outputs", sel.name, bad);
  dwconv_fp32_plain_test(&p, sel, CP, GROUPS, (const void* const*)rows, packed, acc, 0);

  /* Output pairs (dwconv.h) where the config has them: tap rows of every other column, the same sums requantized. */
  if (qw_dwconv_output_pairs(dwconv, 0, KW, p.column_step, p.dilation)) {
    const size_t pair_columns = qw_dwconv_pair_columns(p.ow);
    int bad_pair_taps = 0;
    for (size_t ky = 0; ky < KH; ky++) {
      free(rows[ky]);
      rows[ky] = exact_alloc(pair_columns * CP * 4);
      dwconv->tap_row[p.a_signed](pair_columns, 2, C, CP, in[ky], in_w, p.pad_left, 1, a_zp, rows[ky]);
      bad_pair_taps += tap_row_errors(dwconv, rows[ky], pair_columns, 2, 1, in[ky], in_w, p.pad_left, C, CP, a_zp,
                                      p.a_signed);
    }
    CHECK(bad_pair_taps == 0, "%s dwconv tap rows of output pairs C=%zu columns=%zu: %d wrong taps", sel.name, C,
          pair_columns, bad_pair_taps);
    dwconv_fp32_plain_test(&p, sel, CP, GROUPS, (const void* const*)rows, packed, acc, 1);
  }

  for (size_t ky = 0; ky < KH; ky++) {
    free(in[ky]);
    free(rows[ky]);
  }
  free(in);
  free(rows);
  free(acc);
  free(w_zp);
  free(w);
  free(packed);
}

/* A tap row built with a step stores only every step-th column, contiguously, and writes nothing past its
 * columns (the driver builds only the columns the kernels read). */
static void dwconv_tap_row_step(struct kernel_table sel) {
  const struct qw_dwconv_config* dwconv = &sel.kernels->dwconv;
  const size_t C = 11, CP = qw_round_up(C, dwconv->cr), columns = 5, room = 9;
  uint8_t in[5 * 11];
  for (size_t i = 0; i < sizeof in; i++) in[i] = (uint8_t)rng_u32();
  uint8_t* row = exact_alloc(room * CP * 4);
  memset(row, 0xA5, room * CP * 4);
  dwconv->tap_row[0](columns, 2, C, CP, in, 5, 1, 1, 7, row);
  int bad = 0;
  for (size_t i = columns * CP * 4; i < room * CP * 4; i++) {
    bad += row[i] != 0xA5;
  }
  bad += tap_row_errors(dwconv, row, columns, 2, 1, in, 5, 1, C, CP, 7, 0);
  CHECK(bad == 0, "%s dwconv tap row with step 2: %d wrong entries", sel.name, bad);
  free(row);
}

static void test_dwconv(struct kernel_table sel) {
  unsigned v = 0;
  for (int a_signed = 0; a_signed < 2; a_signed++) {
    for (size_t C = 1; C <= 40; C += 1 + (C > 12) * 2) {
      for (size_t kh = 1; kh <= 5; kh++) {
        for (size_t kw = 1; kw <= 5; kw++, v++) {
          dwconv_test((struct dwconv_params){.ow = 1 + rng_u32() % 9, .channels = C, .kh = kh, .kw = kw,
                                             .column_step = 1 + v % 3, .dilation = 1 + (v / 3) % 2,
                                             .pad_left = v % 3, .a_signed = a_signed, .w_signed = (int)(v / 6 % 2),
                                             .extremes = v % 4 == 3},
                      sel);
        }
      }
    }
  }
  /* 3x3 at strides 1 and 2 (the SIMD kernels' own paths: 4 outputs per step, their tails; the quad kernels' for
   * symmetric weights) at the extremes, channels past 16 and not a multiple of 4 (the quad rows' 16-channel steps
   * and their byte-by-byte rest). */
  for (int a_signed = 0; a_signed < 2; a_signed++) {
    for (size_t ow = 1; ow <= 11; ow++) {
      for (size_t step = 1; step <= 3; step++) {
        dwconv_test((struct dwconv_params){.ow = ow, .channels = 4 + ow * 3, .kh = 3, .kw = 3, .column_step = step,
                                           .dilation = 1, .pad_left = 1, .a_signed = a_signed, .w_signed = 1,
                                           .extremes = 1, .symmetric = (int)(ow % 2)},
                    sel);
        dwconv_test((struct dwconv_params){.ow = ow, .channels = 32 + ow % 4, .kh = 3, .kw = 3, .column_step = step,
                                           .dilation = 1, .pad_left = 1, .a_signed = a_signed,
                                           .w_signed = (int)(ow % 2), .extremes = ow % 3 == 0, .symmetric = 1},
                    sel);
      }
    }
    dwconv_test((struct dwconv_params){.ow = 7, .channels = 64, .kh = 5, .kw = 5, .column_step = 1, .dilation = 1,
                                       .pad_left = 2, .a_signed = a_signed, .w_signed = 0, .extremes = 1},
                sel);
  }
  dwconv_tap_row_step(sel);
}

/* qw_gemm with the fp32 (ONNX) output stage, whose full row blocks read quint8 A in place where the table has
 * fp32_plain_direct kernels (the relaxed usdot table): every byte equal to the scalar table's, over row counts with
 * partial blocks, row strides, K with and without a multiple of 4, both activation types and asymmetric per-channel
 * weights (the kernels' own row sums). */
static void test_direct_driver(struct kernel_table sel) {
  const struct qw_kernels* kernels = sel.kernels;
  for (int iter = 0; iter < 120; iter++) {
    const size_t m = 1 + rng_u32() % 13, n = 1 + rng_u32() % 40;
    const size_t k = iter % 4 == 3 ? 1 + rng_u32() % 90 : 4 * (1 + rng_u32() % 60);
    const size_t a_stride = k + (iter % 3 == 0 ? 0 : rng_u32() % 9);
    const int a_signed = iter % 5 == 4, y_signed = iter % 2;
    const qw_dtype a_dtype = a_signed ? QW_QINT8 : QW_QUINT8;
    const int32_t a_zp = (a_signed ? -128 : 0) + (int32_t)(rng_u32() % 256);
    int32_t* w_zp = exact_alloc(n * sizeof(int32_t));
    double* w_scales = exact_alloc(n * sizeof(double));
    int32_t* bias = exact_alloc(n * sizeof(int32_t));
    for (size_t j = 0; j < n; j++) {
      w_zp[j] = iter % 2 ? (int32_t)(rng_u32() % 256) - 128 : 0;
      w_scales[j] = 0.0005 + (double)(rng_u32() % 1000) * 1e-6;
      bias[j] = (int32_t)(rng_u32() % 20001) - 10000;
    }
    uint8_t* w = exact_alloc(n * k);
    for (size_t i = 0; i < n * k; i++) w[i] = (uint8_t)rng_u32();
    const size_t a_bytes = (m - 1) * a_stride + k;
    uint8_t* a = exact_alloc(a_bytes);
    for (size_t i = 0; i < a_bytes; i++) a[i] = (uint8_t)rng_u32();
    void* blob = exact_alloc(qw_requantization_size(n));
    CHECK(qw_requantization_init(blob, n, QW_REQUANT_ONNX, 0.02, w_scales, n, w_zp, QW_QINT8, NULL, bias, 0.7,
                                 y_signed ? -3 : 125, y_signed ? QW_QINT8 : QW_QUINT8, -INFINITY, INFINITY, 1) == QW_OK,
          "blob");
    uint8_t* y[2];
    for (int t = 0; t < 2; t++) {
      const struct qw_kernels* table = t == 0 ? kernels : &qw_scalar_kernels;
      void* packed = exact_alloc(qw_gemm_pack_size_with(table, n, k));
      CHECK(qw_gemm_pack_with(table, n, k, w, QW_QINT8, k, 1, w_zp, n, packed) == QW_OK, "pack");
      void* ws = exact_alloc(qw_gemm_workspace_size_with(table, n, k));
      y[t] = exact_alloc(m * n);
      const qw_status st = qw_gemm_with(table, m, n, k, a, a_stride, a_dtype, a_zp, packed, blob, y[t], n, ws);
      CHECK(st == QW_OK, "qw_gemm status %d", st);
      free(packed);
      free(ws);
    }
    CHECK(memcmp(y[0], y[1], m * n) == 0, "%s qw_gemm (fp32 output) m=%zu n=%zu k=%zu a_stride=%zu a_signed=%d: differs "
          "from the scalar table", sel.name, m, n, k, a_stride, a_signed);
    free(w_zp), free(w_scales), free(bias), free(w), free(a), free(blob), free(y[0]), free(y[1]);
  }
}

int main(void) {
  struct kernel_table tables[KERNEL_TABLES_MAX];
  const size_t count = kernel_tables(tables);
  for (size_t t = 0; t < count; t++) {
    test_gemm_microkernels(tables[t]);
    test_dwconv(tables[t]);
    test_qw_gemm_driver(tables[t]);
    test_direct_driver(tables[t]);
  }
  test_qw_gemm_arguments();
#if QW_SIMD && QW_RELAXED
  CHECK(directs_tested > 20, "the fp32_plain_direct kernels ran %zu times", directs_tested);
#endif
  printf("isa: %s\n", qw_isa());
  return check_summary("test_gemm");
}
