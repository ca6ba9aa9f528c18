/*
 * float32 layer normalization of one row of n, as onnxruntime 1.30's CPU kernels compute it
 * (core/providers/cpu/nn/layer_norm_impl.cc for LayerNormalization, contrib_ops/cpu/skip_layer_norm.cc for
 * SkipLayerNormalization; they replaced the E[v^2] - E[v]^2 formula, which cancels catastrophically, by
 * Welford's running mean and sum of squared deviations, onnxruntime pull request 28743), float32 throughout:
 *   v[h]   = x[h] (+ skip[h]) (+ bias[h])          added in that order; stored in sum (if not NULL)
 *   mean = 0, m2 = 0; for h = 0, 1, ...: d = v[h] - mean; mean = mean + d / (h + 1); m2 = m2 + d * (v[h] - mean)
 *   std    = sqrtf(m2 / n + epsilon)
 *   y[h]   = (v[h] - mean) / std * gamma[h] (+ beta[h])
 * (Found against onnxruntime-web 1.30 outputs: the sequential E[v^2] - E[v]^2, double sums and centered
 * two-pass forms all disagree with it; this one agrees on every element, large offsets included.)
 * The statistics of a row are one dependency chain; the four-row kernel runs four rows' chains in the four
 * lanes of a vector (lane r: row r's operations, in the same order), the eight-row kernel two such vectors. Every operation is one IEEE rounding, so
 * the SIMD and scalar kernels agree. x == y allowed.
 */
#ifndef QWASM_F32_LAYERNORM_H
#define QWASM_F32_LAYERNORM_H

#include <stddef.h>

typedef void (*qw_f32_layernorm_ukernel)(size_t n, const float* x, const float* skip, const float* bias,
                                         const float* gamma, const float* beta, float epsilon, float* y, float* sum);

#define QW_DECLARE_F32_LAYERNORM_UKERNEL(name)                                                                   \
  void name(size_t n, const float* x, const float* skip, const float* bias, const float* gamma, const float* beta, \
            float epsilon, float* y, float* sum)

/* Four rows at once: x[r], y[r] (and skip[r], sum[r] when skip / sum are not NULL) for r < 4; the eight- and
 * sixteen-row kernels (the same type) for r < 8 and r < 16. */
typedef void (*qw_f32_layernorm4_ukernel)(size_t n, const float* const* x, const float* const* skip, const float* bias,
                                          const float* gamma, const float* beta, float epsilon, float* const* y,
                                          float* const* sum);

#define QW_DECLARE_F32_LAYERNORM4_UKERNEL(name)                                                                   \
  void name(size_t n, const float* const* x, const float* const* skip, const float* bias, const float* gamma,      \
            const float* beta, float epsilon, float* const* y, float* const* sum)

QW_DECLARE_F32_LAYERNORM_UKERNEL(qw_f32_layernorm_ukernel__scalar);
QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm4_ukernel__scalar);
QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm8_ukernel__scalar);
QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm16_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_F32_LAYERNORM_UKERNEL(qw_f32_layernorm_ukernel_4__wasmsimd);
QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm4_ukernel__wasmsimd);
QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm8_ukernel__wasmsimd);
QW_DECLARE_F32_LAYERNORM4_UKERNEL(qw_f32_layernorm16_ukernel__wasmsimd);
#endif

/* v[h] = x[h] (+ skip[h]) (+ bias[h]), stored in y (and sum). */
static inline float qw_layernorm_input(size_t h, const float* x, const float* skip, const float* bias, float* y, float* sum) {
  float v = x[h];
  if (skip != NULL) {
    v = v + skip[h];
  }
  if (bias != NULL) {
    v = v + bias[h];
  }
  if (sum != NULL) {
    sum[h] = v;
  }
  y[h] = v;
  return v;
}

/* The statistics pass shared by the one-row kernels: writes v into y (and sum), returns mean and std. */
static inline void qw_layernorm_statistics(size_t n, const float* x, const float* skip, const float* bias,
                                           float epsilon, float* y, float* sum, float* mean_out, float* std_out) {
  float mean = 0.0f, m2 = 0.0f;
  for (size_t h = 0; h < n; h++) {
    const float v = qw_layernorm_input(h, x, skip, bias, y, sum);
    const float d = v - mean;
    mean = mean + d / (float)(h + 1);
    m2 = m2 + d * (v - mean);
  }
  *mean_out = mean;
  *std_out = __builtin_sqrtf(m2 / (float)n + epsilon);
}

#endif /* QWASM_F32_LAYERNORM_H */
