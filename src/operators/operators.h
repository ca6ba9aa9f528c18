/* Operator drivers: loops over microkernels, no allocation (workspaces come from the caller). */
#ifndef QWASM_OPERATORS_H
#define QWASM_OPERATORS_H

#include <stddef.h>
#include <stdint.h>

#include "gemm/gemm.h"
#include "requantization/requantization.h"

/* The largest MR of any GEMM microkernel: workspace rows. */
#define QW_GEMM_MR_MAX 4

enum { QW_REQUANT_KERNEL_FP32 = 0, QW_REQUANT_KERNEL_FIXEDPOINT = 1 };

/* int32 bytes of GEMM workspace for N output columns. */
size_t qw_gemm_workspace_size(size_t n);

/* y[m][n] = requantize(sum_k (a[m][k] - a_zp) * W[k][n]) for packed W. */
void qw_gemm_run(size_t m, size_t n, size_t k, const uint8_t* a, size_t a_stride, int a_signed, int32_t a_zero_point,
                 const int8_t* packed, const struct qw_requantization_params* rq, int requant_mode, int y_signed,
                 uint8_t* y, size_t y_stride, int32_t* workspace);

/* The params of a blob made by qw_requantization_init for n channels, or NULL if it is not one. */
const struct qw_requantization_params* qw_requantization_params_of(const void* blob, size_t n, int* kernel,
                                                                   int* output_signed);

#endif /* QWASM_OPERATORS_H */
