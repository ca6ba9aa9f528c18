/* Operator drivers: loops over microkernels, no allocation (workspaces come from the caller). */
#ifndef QWASM_OPERATORS_H
#define QWASM_OPERATORS_H

#include <stddef.h>
#include <stdint.h>

#include "gemm/gemm.h"
#include "requantization/requantization.h"

/* K limit of the int32 sums (|a - a_zp|, |w - w_zp| <= 255). */
#define QW_GEMM_K_MAX 32768

/* QW_REQUANT_KERNEL_F32: float outputs, (float)acc * multiplier (+ bias_f32 when not NULL). */
enum {
  QW_REQUANT_KERNEL_FP32 = 0,
  QW_REQUANT_KERNEL_FIXEDPOINT = 1,
  QW_REQUANT_KERNEL_ONEDNN = 2,
  QW_REQUANT_KERNEL_NONE = 3,
  QW_REQUANT_KERNEL_F32 = 4,
};

/* The requantization params of channels n0... */
struct qw_requantization_params qw_requantization_params_at(const struct qw_requantization_params* rq, size_t n0);

/* How a requantization blob turns int32 sums into outputs. */
struct qw_output_stage {
  const struct qw_requantization_params* params;
  int kernel;        /* QW_REQUANT_KERNEL_* */
  int mode;          /* qw_requant_mode: which engine's arithmetic (FBGEMM's depthwise sums saturate) */
  int y_signed;      /* 8-bit outputs: qint8 */
  size_t elem_size;  /* 1, or 4 for int32 outputs */
};

/* y[m][n] = requantize(sum_k (a[m][k] - a_zp) * (W[k][n] - w_zp[n])) for packed W (gemm.h); y_stride in
 * bytes. */
void qw_gemm_run(size_t m, size_t n, size_t k, const uint8_t* a, size_t a_stride, int a_signed, int32_t a_zero_point,
                 const int16_t* w, const struct qw_output_stage* out, uint8_t* y, size_t y_stride, int32_t* workspace);

/* The weights inside a qw_gemm_pack buffer for n columns of depth k, or NULL when it is not one. */
const int16_t* qw_gemm_packed_weights(const void* packed, size_t n, size_t k);

/* The output stage of a blob made by qw_requantization_init for n channels; 0 if it is not one. */
int qw_output_stage_of(const void* blob, size_t n, struct qw_output_stage* out);

/* The kernel that applies an output stage. */
qw_requantization_ukernel qw_output_kernel(const struct qw_output_stage* out);


#endif /* QWASM_OPERATORS_H */
