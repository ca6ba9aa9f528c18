/* Transformers' float operators and the dynamic int8 matmul against onnxruntime-web, bit for bit:
 * replays onnxruntime-web 1.30's single-node cases (ort_ops_cases.h, which CMake derives from
 * tests/fixtures/ort_ops/cases.json with tools/transformer/ort_ops_c_fixture.mjs) with every buffer exactly sized (ASan catches over-reads); checks the
 * selected microkernels against the scalar table over odd lengths, tails and hostile values; in-place use;
 * argument checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "ort_ops_cases.h"
#include "qwasm.h"

enum {
  KIND_UNARY = 0,
  KIND_GELU = 1,
  KIND_SOFTMAX = 2,
  KIND_LAYER_NORM = 3,
  KIND_BINARY = 4,
  KIND_WHERE = 5,
  KIND_CAST = 6,
  KIND_MATMUL = 7,
  KIND_DYNAMIC_MATMUL = 8,
  KIND_MATMUL_INTEGER_TO_FLOAT = 9,
};

/* Whether matmul steps with a pre-packed B (onnxruntime packs a constant 2-D B) go through qw_f32_matmul_pack and
 * qw_f32_matmul_packed; the fixture is replayed both ways. */
static int pack_constant_b;

/* Runs one step; buffers[i] is tensor i (NULL when absent). */
static qw_status run_step(const struct ort_step* s, const struct ort_tensor* tensors, void* const* buffers) {
  const int32_t* I = s->ints;
  void* in[5];
  for (int i = 0; i < 5; i++) {
    in[i] = s->inputs[i] < 0 ? NULL : buffers[s->inputs[i]];
  }
  void* out = buffers[s->output];
  switch (s->kind) {
    case KIND_UNARY:
      return qw_f32_unary((qw_f32_unary_op)I[0], (size_t)I[1], in[0], out);
    case KIND_GELU:
      return qw_f32_gelu((qw_gelu_form)I[0], (size_t)I[1], (size_t)I[2], in[0], in[1], out);
    case KIND_SOFTMAX: {
      const size_t bytes = qw_f32_softmax_workspace_size((size_t)I[1], (size_t)I[2]);
      void* ws = bytes ? exact_alloc(bytes) : NULL;
      const qw_status st = qw_f32_softmax((size_t)I[0], (size_t)I[1], (size_t)I[2], in[0], out, ws);
      free(ws);
      return st;
    }
    case KIND_LAYER_NORM:
      return qw_f32_layer_norm((size_t)I[0], (size_t)I[1], in[0], in[1], (size_t)I[2], in[2], in[3], in[4], s->floats[0],
                               out, NULL);
    case KIND_BINARY:
      return qw_f32_binary((qw_f32_binary_op)I[0], (size_t)I[1], I + 2, in[0], I + 2 + I[1], in[1], I + 2 + 2 * I[1], out);
    case KIND_WHERE:
      return qw_where((size_t)I[0], (size_t)I[1], I + 2, in[0], I + 2 + I[1], in[1], I + 2 + 2 * I[1], in[2],
                      I + 2 + 3 * I[1], out);
    case KIND_CAST:
      return qw_cast((size_t)I[0], in[0], (qw_tensor_type)I[1], out, (qw_tensor_type)I[2]);
    case KIND_MATMUL: {
      const size_t m = (size_t)I[0], n = (size_t)I[1], k = (size_t)I[2];
      float* y = (float*)out + I[10];
      if (in[2] != NULL) { /* Gemm's C: y = C * beta, broadcast over [m, n], then accumulated onto */
        const int32_t dims[2] = {I[0], I[1]}, zero[2] = {0, 0};
        const qw_status st = qw_f32_binary(QW_F32_MUL, 2, dims, in[2], I + 11, &s->floats[1], zero, y);
        if (st != QW_OK) {
          return st;
        }
      }
      void* ws = exact_alloc(qw_f32_matmul_workspace_size(m, n, k));
      const float* a = (const float*)in[0] + I[8];
      const float* b = (const float*)in[1] + I[9];
      qw_status st;
      if (pack_constant_b && I[6] && n * k != 0) { /* the constant B packed once, as the model loader does */
        void* packed = exact_alloc(qw_f32_matmul_pack_size(n, k));
        st = qw_f32_matmul_pack(n, k, b, (size_t)I[4], I[5], packed);
        if (st == QW_OK) {
          st = qw_f32_matmul_packed(m, n, k, a, (size_t)I[3], packed, s->floats[0], in[2] != NULL, y, (size_t)I[7], ws);
        }
        free(packed);
      } else {
        st = qw_f32_matmul(m, n, k, a, (size_t)I[3], b, (size_t)I[4], I[5], I[6], s->floats[0], in[2] != NULL, y,
                           (size_t)I[7], ws);
      }
      free(ws);
      return st;
    }
    case KIND_DYNAMIC_MATMUL:
    case KIND_MATMUL_INTEGER_TO_FLOAT: {
      const size_t m = (size_t)I[0], n = (size_t)I[1], k = (size_t)I[2];
      const int32_t w_zero_point = I[4];
      void* packed = exact_alloc(qw_gemm_pack_size(n, k));
      void* ws = exact_alloc(qw_dynamic_matmul_workspace_size(m, n, k));
      qw_status st = qw_gemm_pack(n, k, in[1], (qw_dtype)I[3], 1, n, &w_zero_point, 1, packed);
      const size_t scales = tensors[s->inputs[2]].count;
      if (st == QW_OK && s->kind == KIND_DYNAMIC_MATMUL) {
        st = qw_dynamic_matmul(m, n, k, in[0], packed, in[2], scales, in[3], out, ws);
      } else if (st == QW_OK) {
        st = qw_matmul_integer_to_float(m, n, k, in[0], I[5], s->floats[0], packed, in[2], scales, in[3], out, ws);
      }
      free(packed);
      free(ws);
      return st;
    }
    default:
      return QW_UNSUPPORTED;
  }
}

static void replay_fixture(void) {
  const size_t count = sizeof(ort_cases) / sizeof(ort_cases[0]);
  size_t outputs = 0;
  for (size_t c = 0; c < count; c++) {
    const struct ort_case* oc = &ort_cases[c];
    void* buffers[16] = {NULL};
    uint8_t* expected[16] = {NULL};
    for (int t = 0; t < oc->n_tensors; t++) {
      const struct ort_tensor* ot = &oc->tensors[t];
      if (ot->base64 == NULL) {
        continue;
      }
      const size_t bytes = ot->count * ort_dtype_size(ot->dtype);
      uint8_t* data = exact_alloc(bytes);
      CHECK(ort_base64_decode(ot->base64, data) == bytes, "%s: tensor %d decodes to %zu bytes", oc->name, t, bytes);
      if (ot->expected) {
        expected[t] = data;
        buffers[t] = exact_alloc(bytes);
        memset(buffers[t], 0, bytes);
      } else {
        buffers[t] = data;
      }
    }
    for (int s = 0; s < oc->n_steps; s++) {
      const qw_status st = run_step(&oc->steps[s], oc->tensors, buffers);
      CHECK(st == QW_OK, "%s: step %d returned %d", oc->name, s, (int)st);
    }
    for (int t = 0; t < oc->n_tensors; t++) {
      if (expected[t] == NULL) {
        continue;
      }
      outputs++;
      const size_t size = ort_dtype_size(oc->tensors[t].dtype);
      for (size_t i = 0; i < oc->tensors[t].count; i++) {
        if (memcmp((uint8_t*)buffers[t] + i * size, expected[t] + i * size, size) != 0) {
          uint32_t got = 0, want = 0;
          memcpy(&got, (uint8_t*)buffers[t] + i * size, size < 4 ? size : 4);
          memcpy(&want, expected[t] + i * size, size < 4 ? size : 4);
          CHECK(0, "%s: element %zu is 0x%08x, onnxruntime-web 0x%08x", oc->name, i, got, want);
          break;
        }
      }
    }
    for (int t = 0; t < oc->n_tensors; t++) {
      free(buffers[t]);
      free(expected[t]);
    }
  }
  CHECK(outputs >= count, "every case has an expected output");
}

/* Hostile floats: ordinary values over a range, exact specials, random bit patterns. */
static void fill(float* x, size_t n, float range) {
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.921875f, 3.925f, 9.0f, -9.0f, 88.7f, -104.0f, 1e-40f,
                            INFINITY, -INFINITY, 3.0e38f, -3.0e38f, NAN, -NAN};
  for (size_t i = 0; i < n; i++) {
    const uint32_t r = rng_u32() % 8;
    x[i] = r == 0 ? specials[rng_u32() % (sizeof specials / sizeof specials[0])]
           : r == 1 ? float_from_bits(rng_u32() & 0xFF7FFFFFu) /* finite */
                    : rng_uniform(-range, range);
  }
}

static int same_bits(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const int nan_a = a[i] != a[i], nan_b = b[i] != b[i];
    if (nan_a != nan_b || (!nan_a && bits_of(a[i]) != bits_of(b[i]))) {
      return 0;
    }
  }
  return 1;
}

/* The float GEMM's transposing pack (this build's and the scalar one) against its definition: every lane count the
 * drivers use and some they do not (6: the SIMD kernel's scalar fallback), rows 0..lanes, k tails 0..9, NaNs kept. */
static void packx_matches_definition(void) {
  const qw_x32_packx_ukernel kernels[2] = {qw_kernels()->f32_gemm.packx, qw_scalar_kernels.f32_gemm.packx};
  const size_t lane_counts[] = {2, 4, 6, 8, 16};
  enum { KC_MAX = 9, LDX = KC_MAX + 3 };
  float x[16 * LDX], out[16 * KC_MAX];
  fill(x, 16 * LDX, 10.0f);
  for (int kernel = 0; kernel < 2; kernel++) {
    for (size_t l = 0; l < sizeof lane_counts / sizeof lane_counts[0]; l++) {
      const size_t lanes = lane_counts[l];
      for (size_t rows = 0; rows <= lanes; rows++) {
        for (size_t kc = 1; kc <= KC_MAX; kc++) {
          memset(out, 0x5A, sizeof out);
          kernels[kernel](rows, lanes, kc, x, LDX, out);
          int ok = 1;
          for (size_t k = 0; k < kc; k++) {
            for (size_t r = 0; r < lanes; r++) {
              const float want = r < rows ? x[r * LDX + k] : 0.0f;
              ok &= bits_of(out[k * lanes + r]) == bits_of(want);
            }
          }
          ok &= kc * lanes == 16 * KC_MAX || bits_of(out[kc * lanes]) == 0x5A5A5A5Au; /* nothing past the panel */
          CHECK(ok, "packx kernel %d lanes %zu rows %zu kc %zu", kernel, lanes, rows, kc);
        }
      }
    }
  }
}

/* The float GEMM kernels that read the weight rows in place (gemm_rows, this build's and the scalar ones) against the
 * packed-row kernels over the same rows packed with a zero bias: the same bits for every row count, column count up to
 * 8, depths 1..70, alpha 1 and not, rows ldx apart and columns a_stride apart, nothing written past the tile. */
static void gemm_rows_match_packed(void) {
  const struct qw_f32_gemm_config* configs[2] = {&qw_kernels()->f32_gemm, &qw_scalar_kernels.f32_gemm};
  enum { KC_MAX = 70, LDX = KC_MAX + 5, A_STRIDE = 11 };
  float x[4 * LDX], a[KC_MAX * A_STRIDE], packed[4 * (KC_MAX + 1)], y0[4 * 9], y1[4 * 9];
  /* finite operands, so that every sum is compared bit for bit (with fill's infinities most sums would be NaN) */
  for (size_t i = 0; i < 4 * LDX; i++) x[i] = rng_uniform(-3.0f, 3.0f);
  for (size_t i = 0; i < KC_MAX * A_STRIDE; i++) a[i] = rng_uniform(-3.0f, 3.0f);
  for (int c = 0; c < 2; c++) {
    const struct qw_f32_gemm_config* gemm = configs[c];
    for (size_t mr = 1; mr <= gemm->mr; mr++) {
      for (size_t kc = 1; kc <= KC_MAX; kc += kc < 10 ? 1 : 13) {
        memset(packed, 0, sizeof packed);
        gemm->packx(mr, gemm->mr, kc, x, LDX, packed + gemm->mr);
        for (size_t nc = 1; nc <= 8; nc += 3) {
          for (int with_alpha = 0; with_alpha < 2; with_alpha++) {
            const float alpha = with_alpha ? 0.1767767f : 1.0f;
            memset(y0, 0x5A, sizeof y0);
            memset(y1, 0x5A, sizeof y1);
            gemm->gemm_rows[mr - 1](mr, nc, kc, x, LDX, a, A_STRIDE, y0, 9, alpha);
            gemm->gemm[mr - 1](mr, nc, kc, packed, a, A_STRIDE, y1, 9, alpha);
            CHECK(same_bits(y0, y1, 4 * 9), "config %d gemm_rows mr %zu nc %zu kc %zu alpha %g", c, mr, nc, kc, alpha);
          }
        }
      }
    }
  }
}

/* The selected kernels (wasmsimd in the SIMD builds) against the scalar ones: same bits (NaN payloads aside). */
static void simd_matches_scalar(void) {
  const struct qw_kernels* k = qw_kernels();
  const struct qw_kernels* s = &qw_scalar_kernels;
  enum { MAX = 83 };
  for (size_t n = 0; n <= MAX; n++) {
    float* x = exact_alloc((n + 1) * sizeof(float));
    float* b = exact_alloc((n + 1) * sizeof(float));
    float* y0 = exact_alloc((n + 1) * sizeof(float));
    float* y1 = exact_alloc((n + 1) * sizeof(float));
    float* g = exact_alloc((n + 1) * sizeof(float));
    fill(x, n + 1, 12.0f);
    fill(b, n + 1, 3.0f);
    for (size_t i = 0; i <= n; i++) {
      g[i] = rng_uniform(0.5f, 2.0f);
    }
    for (int op = 0; op < 4; op++) {
      k->f32_vunary[op](n, x, y0);
      s->f32_vunary[op](n, x, y1);
      CHECK(same_bits(y0, y1, n), "unary %d n=%zu", op, n);
    }
    for (int form = 0; form < 2; form++) {
      for (int with_bias = 0; with_bias < 2; with_bias++) {
        k->f32_vgelu[form](n, x, with_bias ? b : NULL, y0);
        s->f32_vgelu[form](n, x, with_bias ? b : NULL, y1);
        CHECK(same_bits(y0, y1, n), "gelu form %d bias %d n=%zu", form, with_bias, n);
      }
    }
    for (int op = 0; op < 5; op++) {
      for (int form = 0; form < 3; form++) {
        k->f32_vbinary[op][form](n, x, b, y0);
        s->f32_vbinary[op][form](n, x, b, y1);
        CHECK(same_bits(y0, y1, n), "binary %d form %d n=%zu", op, form, n);
      }
    }
    /* softmax and layer norm on finite rows (as in a model: masked logits are -FLT_MAX, not -inf) */
    for (size_t i = 0; i <= n; i++) {
      x[i] = rng_uniform(-30.0f, 30.0f);
      if (i % 7 == 3) {
        x[i] = -3.4028234663852886e38f;
      }
    }
    k->f32_softmax(n, x, y0);
    s->f32_softmax(n, x, y1);
    CHECK(same_bits(y0, y1, n), "softmax n=%zu", n);
    /* rows whose maximum is a zero (of either sign, or both), or that hold a NaN or an infinity: the SIMD kernel's
     * fast maximum gives way to the exact one there; in place too */
    float* row = exact_alloc((n + 1) * sizeof(float));
    for (int kind = 0; kind < 6 && n > 0; kind++) {
      for (size_t i = 0; i < n; i++) {
        row[i] = -rng_uniform(0.5f, 30.0f);
      }
      const size_t at = (size_t)rng_u32() % n, other = (size_t)rng_u32() % n;
      switch (kind) {
        case 0: row[at] = -0.0f; break;
        case 1: row[at] = 0.0f; row[other] = -0.0f; break;
        case 2: row[at] = -0.0f; row[other] = 0.0f; break;
        case 3: row[at] = NAN; break;
        case 4: row[at] = INFINITY; break;
        default: row[at] = -INFINITY; break;
      }
      k->f32_softmax(n, row, y0);
      s->f32_softmax(n, row, y1);
      CHECK(same_bits(y0, y1, n), "softmax n=%zu, row kind %d", n, kind);
      memcpy(y0, row, n * sizeof(float));
      k->f32_softmax(n, y0, y0);
      CHECK(same_bits(y0, y1, n), "softmax in place n=%zu, row kind %d", n, kind);
    }
    free(row);
    if (n > 0) {
      float sum0[MAX + 1], sum1[MAX + 1];
      k->f32_layernorm(n, x, b, g, g, b, 1e-5f, y0, sum0);
      s->f32_layernorm(n, x, b, g, g, b, 1e-5f, y1, sum1);
      CHECK(same_bits(y0, y1, n) && same_bits(sum0, sum1, n), "layer norm n=%zu", n);
      k->f32_layernorm(n, x, NULL, NULL, g, NULL, 1e-12f, y0, NULL);
      s->f32_layernorm(n, x, NULL, NULL, g, NULL, 1e-12f, y1, NULL);
      CHECK(same_bits(y0, y1, n), "layer norm (no skip, bias, beta) n=%zu", n);
      /* four, eight and sixteen rows at once (the statistics in SIMD lanes), this build's and the scalar ones, against scalar
       * one-row calls */
      float rows[16][MAX + 1], skips[16][MAX + 1], outg[16][MAX + 1], out1[16][MAX + 1], sumsg[16][MAX + 1], sums1[16][MAX + 1];
      for (size_t r = 0; r < 16; r++) {
        for (size_t i = 0; i < n; i++) {
          rows[r][i] = rng_uniform(-30.0f, 30.0f) + (float)r * 1000.0f;
          skips[r][i] = rng_uniform(-3.0f, 3.0f);
        }
      }
      const float* xs[16];
      const float* ss[16];
      float* ys[16];
      float* sums[16];
      for (size_t r = 0; r < 16; r++) {
        xs[r] = rows[r], ss[r] = skips[r], ys[r] = outg[r], sums[r] = sumsg[r];
      }
      const struct { qw_f32_layernorm4_ukernel kernel; size_t rows; const char* name; } groups[6] = {
          {k->f32_layernorm4, 4, "four-row"}, {k->f32_layernorm8, 8, "eight-row"}, {k->f32_layernorm16, 16, "sixteen-row"},
          {s->f32_layernorm4, 4, "scalar four-row"}, {s->f32_layernorm8, 8, "scalar eight-row"},
          {s->f32_layernorm16, 16, "scalar sixteen-row"},
      };
      for (int gi = 0; gi < 6; gi++) {
        for (int with_skip = 0; with_skip < 2; with_skip++) {
          groups[gi].kernel(n, xs, with_skip ? ss : NULL, with_skip ? b : NULL, g, with_skip ? b : NULL, 1e-5f, ys,
                            with_skip ? sums : NULL);
          for (size_t r = 0; r < groups[gi].rows; r++) {
            s->f32_layernorm(n, rows[r], with_skip ? skips[r] : NULL, with_skip ? b : NULL, g, with_skip ? b : NULL, 1e-5f,
                             out1[r], with_skip ? sums1[r] : NULL);
            CHECK(same_bits(outg[r], out1[r], n) && (!with_skip || same_bits(sumsg[r], sums1[r], n)),
                  "%s layer norm (skip %d) row %zu n=%zu", groups[gi].name, with_skip, r, n);
          }
        }
      }
    }
    /* range: the same min / max whatever the kernel; a NaN or infinity anywhere is refused */
    {
      float lo0 = 0.0f, hi0 = 0.0f, lo1 = 0.0f, hi1 = 0.0f;
      const int ok0 = k->f32_range(n, x, &lo0, &hi0), ok1 = s->f32_range(n, x, &lo1, &hi1);
      CHECK(ok0 && ok1 && same_bits(&lo0, &lo1, 1) && same_bits(&hi0, &hi1, 1), "range n=%zu", n);
      for (size_t i = 0; i < n; i++) {
        const float keep = x[i];
        x[i] = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY;
        CHECK(k->f32_range(n, x, &lo0, &hi0) == 0 && s->f32_range(n, x, &lo1, &hi1) == 0, "range refuses %g at %zu of %zu", (double)x[i], i, n);
        x[i] = keep;
      }
      float z[4] = {-0.0f, 0.0f, -0.0f, -0.0f};
      lo0 = hi0 = 0.0f;
      CHECK(k->f32_range(n < 4 ? n : 4, z, &lo0, &hi0) && bits_of(lo0) == 0 && bits_of(hi0) == 0, "range keeps +0 against -0");
    }
    int32_t* acc = exact_alloc((n + 1) * sizeof(int32_t));
    for (size_t i = 0; i <= n; i++) {
      acc[i] = (int32_t)rng_u32();
    }
    const struct qw_requantization_params p = {.multiplier = g, .bias_f32 = b};
    for (int with_bias = 0; with_bias < 2; with_bias++) {
      k->scale_output[with_bias](1, n, acc, n, &p, y0, n * sizeof(float));
      s->scale_output[with_bias](1, n, acc, n, &p, y1, n * sizeof(float));
      CHECK(same_bits(y0, y1, n), "int32 -> float output stage (bias %d) n=%zu", with_bias, n);
    }
    free(acc);
    free(x);
    free(b);
    free(y0);
    free(y1);
    free(g);
  }
}

/* x == y is allowed for the unary, GELU, softmax (last axis) and layer norm entry points. */
static void in_place(void) {
  enum { N = 45 };
  float x[N], y[N], z[N], gamma[N];
  for (size_t i = 0; i < N; i++) {
    x[i] = rng_uniform(-6.0f, 6.0f);
    gamma[i] = rng_uniform(0.5f, 1.5f);
  }
  for (int op = 0; op < 4; op++) {
    memcpy(z, x, sizeof z);
    CHECK(qw_f32_unary((qw_f32_unary_op)op, N, x, y) == QW_OK && qw_f32_unary((qw_f32_unary_op)op, N, z, z) == QW_OK &&
              memcmp(y, z, sizeof y) == 0,
          "unary %d in place", op);
  }
  for (int form = 0; form < 2; form++) {
    memcpy(z, x, sizeof z);
    CHECK(qw_f32_gelu((qw_gelu_form)form, 5, 9, x, gamma, y) == QW_OK &&
              qw_f32_gelu((qw_gelu_form)form, 5, 9, z, gamma, z) == QW_OK && memcmp(y, z, sizeof y) == 0,
          "gelu %d in place", form);
  }
  memcpy(z, x, sizeof z);
  CHECK(qw_f32_softmax(5, 9, 1, x, y, NULL) == QW_OK && qw_f32_softmax(5, 9, 1, z, z, NULL) == QW_OK &&
            memcmp(y, z, sizeof y) == 0,
        "softmax in place");
  memcpy(z, x, sizeof z);
  CHECK(qw_f32_layer_norm(5, 9, x, NULL, 0, NULL, gamma, NULL, 1e-5f, y, NULL) == QW_OK &&
            qw_f32_layer_norm(5, 9, z, NULL, 0, NULL, gamma, NULL, 1e-5f, z, NULL) == QW_OK && memcmp(y, z, sizeof y) == 0,
        "layer norm in place");
}

static void argument_checks(void) {
  float x[8] = {0}, y[8];
  const int32_t dims[2] = {2, 4}, strides[2] = {4, 1}, bad[2] = {4, -1};
  CHECK(qw_f32_unary(QW_F32_EXP, 8, NULL, y) == QW_INVALID_ARGUMENT, "unary NULL x");
  CHECK(qw_f32_unary((qw_f32_unary_op)9, 8, x, y) == QW_INVALID_ARGUMENT, "unary op");
  CHECK(qw_f32_unary(QW_F32_EXP, 0, NULL, NULL) == QW_OK, "unary empty");
  CHECK(qw_f32_gelu((qw_gelu_form)2, 1, 8, x, NULL, y) == QW_INVALID_ARGUMENT, "gelu form");
  CHECK(qw_f32_softmax(2, 2, 2, x, y, NULL) == QW_INVALID_ARGUMENT, "softmax other axis without workspace");
  CHECK(qw_f32_layer_norm(2, 4, x, NULL, 0, NULL, NULL, NULL, 1e-5f, y, NULL) == QW_INVALID_ARGUMENT, "layer norm gamma");
  CHECK(qw_f32_layer_norm(2, 4, x, x, 0, NULL, x, NULL, 1e-5f, y, NULL) == QW_INVALID_ARGUMENT, "layer norm skip rows");
  CHECK(qw_f32_layer_norm(2, 4, x, NULL, 0, NULL, x, NULL, NAN, y, NULL) == QW_INVALID_ARGUMENT, "layer norm epsilon");
  CHECK(qw_f32_binary(QW_F32_ADD, 2, dims, x, strides, x, bad, y) == QW_INVALID_ARGUMENT, "binary negative stride");
  CHECK(qw_f32_binary(QW_F32_ADD, QW_MAX_RANK + 1, dims, x, strides, x, strides, y) == QW_INVALID_ARGUMENT, "binary rank");
  CHECK(qw_f32_binary((qw_f32_binary_op)7, 2, dims, x, strides, x, strides, y) == QW_INVALID_ARGUMENT, "binary op");
  CHECK(qw_where(3, 2, dims, (const uint8_t*)x, strides, x, strides, x, strides, y) == QW_INVALID_ARGUMENT,
        "where element size");
  CHECK(qw_cast(8, x, QW_TYPE_FLOAT32, y, (qw_tensor_type)5) == QW_INVALID_ARGUMENT, "cast type");
  CHECK(qw_f32_matmul(2, 2, 2, x, 1, x, 2, 0, 0, 1.0f, 0, y, 2, y) == QW_INVALID_ARGUMENT, "matmul lda < k");
  CHECK(qw_f32_matmul(2, 2, 2, x, 2, x, 2, 0, 0, 1.0f, 0, y, 2, NULL) == QW_INVALID_ARGUMENT, "matmul workspace");
  float ws[64];
  CHECK(qw_dynamic_matmul(1, 2, 2, x, ws, x, 1, NULL, y, ws) == QW_INVALID_ARGUMENT, "dynamic matmul: not packed weights");
  CHECK(qw_f32_matmul_pack_size(0, 2) == 0 && qw_f32_matmul_pack(2, 2, x, 1, 0, ws) == QW_INVALID_ARGUMENT,
        "float pack: empty B, ldb < n");
  void* fpacked = exact_alloc(qw_f32_matmul_pack_size(2, 2));
  CHECK(qw_f32_matmul_pack(2, 2, x, 2, 0, fpacked) == QW_OK, "float pack");
  void* fwork = exact_alloc(qw_f32_matmul_workspace_size(2, 2, 2));
  CHECK(qw_f32_matmul_packed(2, 2, 2, x, 2, x, 1.0f, 0, y, 2, fwork) == QW_INVALID_ARGUMENT, "float packed: not packed");
  CHECK(qw_f32_matmul_packed(2, 2, 3, x, 3, fpacked, 1.0f, 0, y, 2, fwork) == QW_INVALID_ARGUMENT, "float packed: other K");
  CHECK(qw_f32_matmul_packed(2, 2, 2, x, 2, fpacked, 1.0f, 0, y, 2, NULL) == QW_INVALID_ARGUMENT, "float packed: workspace");
  free(fpacked);
  free(fwork);
  const int8_t w[4] = {1, -2, 3, -4};
  const int32_t zp = 0;
  void* packed = exact_alloc(qw_gemm_pack_size(2, 2));
  CHECK(qw_gemm_pack(2, 2, w, QW_QINT8, 1, 2, &zp, 1, packed) == QW_OK, "pack");
  void* work = exact_alloc(qw_dynamic_matmul_workspace_size(1, 2, 2));
  const float inf_x[2] = {1.0f, INFINITY}, scale = 0.5f;
  CHECK(qw_dynamic_matmul(1, 2, 2, inf_x, packed, &scale, 1, NULL, y, work) == QW_INVALID_ARGUMENT, "dynamic matmul: Inf");
  CHECK(qw_dynamic_matmul(1, 2, 2, x, packed, &scale, 3, NULL, y, work) == QW_INVALID_ARGUMENT, "dynamic matmul: scales");
  CHECK(qw_matmul_integer_to_float(1, 2, 2, (const uint8_t*)x, 256, 0.5f, packed, &scale, 1, NULL, y, work) ==
            QW_INVALID_QPARAMS,
        "matmul integer to float: zero point");
  /* An all-zero input: onnxruntime's scale 1, zero point 0, so y is the bias. */
  const float bias[2] = {0.25f, -0.5f};
  CHECK(qw_dynamic_matmul(1, 2, 2, x, packed, &scale, 1, bias, y, work) == QW_OK && y[0] == 0.25f && y[1] == -0.5f,
        "dynamic matmul: zeros");
  free(packed);
  free(work);
}

int main(void) {
  replay_fixture();
  pack_constant_b = 1;
  replay_fixture();
  simd_matches_scalar();
  packx_matches_definition();
  gemm_rows_match_packed();
  in_place();
  argument_checks();
  return check_summary("transformer_ops");
}
