/* Dynamic int8 matrix products writing float (onnxruntime's com.microsoft DynamicQuantizeMatMul and
 * MatMulIntegerToFloat, contrib_ops/cpu/quantization/dynamic_quantize_matmul.cc): the activations'
 * uint8 quantization chosen from their range on every call, the exact int32 GEMM against weights packed
 * once (qw_gemm_pack), and MLAS's float output stage (requantization.h: (float)acc * scale (+ bias)). */
#include <math.h>
#include <string.h>

#include "config.h"
#include "operators/operators.h"
#include "qtypes.h"

/* Workspace: the int8 GEMM's, then the per-column multipliers, then the quantized activations, then their
 * packed row blocks (packed once: a row block sweeps every L2 block of the weights, a thread every column tile). */
static size_t multipliers_offset(size_t n, size_t k) {
  return qw_round_up(qw_gemm_workspace_size(n, k), 16);
}

static size_t activations_offset(size_t n, size_t k) {
  return multipliers_offset(n, k) + qw_round_up(n * sizeof(float), 16);
}

/* (within a workspace qw_dynamic_matmul_workspace_size accepted: m * k fits) */
static size_t panels_offset(size_t m, size_t n, size_t k) {
  return activations_offset(n, k) + qw_round_up(m * k, 16);
}

size_t qw_dynamic_matmul_workspace_size(size_t m, size_t n, size_t k) {
  const size_t gemm = qw_gemm_workspace_size(n, k); /* 0 when n or k is too large */
  const size_t panels = qw_gemm_panels_size(qw_kernels(), m, k);
  if (gemm == 0 || m > QW_MAX_BYTES || k > QW_MAX_BYTES || (m != 0 && panels == 0)) {
    return 0;
  }
  return qw_size_or_zero((uint64_t)activations_offset(n, k) + ((uint64_t)m * k + 15) / 16 * 16 + panels);
}

qw_status qw_matmul_integer_to_float(size_t m, size_t n, size_t k, const uint8_t* a, int32_t a_zero_point,
                                     float a_scale, const void* packed, const float* b_scales, size_t b_scale_count,
                                     const float* bias, float* y, void* workspace) {
  const struct qw_kernels* kernels = qw_kernels();
  const void* weights = qw_gemm_packed_weights(kernels, packed, n, k);
  if (weights == NULL || workspace == NULL || b_scales == NULL || (b_scale_count != 1 && b_scale_count != n) ||
      (m != 0 && (a == NULL || y == NULL)) || qw_dynamic_matmul_workspace_size(m, n, k) == 0 ||
      !qw_size_fits4(m, n, sizeof(float), 1)) {
    return QW_INVALID_ARGUMENT;
  }
  if (a_zero_point < 0 || a_zero_point > 255) {
    return QW_INVALID_QPARAMS;
  }
  float* multipliers = (float*)((char*)workspace + multipliers_offset(n, k));
  for (size_t j = 0; j < n; j++) {
    multipliers[j] = a_scale * b_scales[b_scale_count == 1 ? 0 : j];
  }
  struct qw_requantization_params params;
  memset(&params, 0, sizeof params);
  params.multiplier = multipliers;
  params.bias_f32 = bias;
  const struct qw_output_stage out = {.params = &params, .kernel = QW_REQUANT_KERNEL_F32, .mode = QW_REQUANT_NONE, .y_signed = 0, .elem_size = sizeof(float)};
  void* panels = (char*)workspace + panels_offset(m, n, k);
  qw_gemm_pack_panels(kernels, m, k, a, k, 0, a_zero_point, panels);
  qw_gemm_parallel(kernels, m, n, k, a, k, 0, a_zero_point, panels, weights, &out, (uint8_t*)y, n * sizeof(float),
                   workspace);
  return QW_OK;
}

qw_status qw_dynamic_matmul(size_t m, size_t n, size_t k, const float* x, const void* packed, const float* b_scales,
                            size_t b_scale_count, const float* bias, float* y, void* workspace) {
  if (qw_gemm_packed_weights(qw_kernels(), packed, n, k) == NULL || workspace == NULL ||
      qw_dynamic_matmul_workspace_size(m, n, k) == 0 || !qw_size_fits4(m, k, sizeof(float), 1) ||
      (m * k != 0 && x == NULL)) {
    return QW_INVALID_ARGUMENT;
  }
  /* onnxruntime's GetQuantizationParameter: the range widened to include 0, scale 1 for an empty range. */
  float lo = 0.0f, hi = 0.0f;
  if (!qw_f32_range_parallel(m * k, x, &lo, &hi)) {
    return QW_INVALID_ARGUMENT;
  }
  const float a_scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  float zp = 0.0f - lo / a_scale;
  zp = zp < 0.0f ? 0.0f : zp > 255.0f ? 255.0f : zp;
  const int32_t a_zero_point = (int32_t)nearbyintf(zp);
  uint8_t* a = (uint8_t*)workspace + activations_offset(n, k);
  const qw_status status = qw_quantize_own_range(m * k, x, a, a_scale, a_zero_point);
  if (status != QW_OK) {
    return status;
  }
  return qw_matmul_integer_to_float(m, n, k, a, a_zero_point, a_scale, packed, b_scales, b_scale_count, bias, y,
                                    workspace);
}
