/* The kernel table: the single place where a build's kernels are chosen. */
#ifndef QWASM_CONFIG_H
#define QWASM_CONFIG_H

#include "dwconv/dwconv.h"
#include "gemm/gemm.h"
#include "quantize/quantize.h"
#include "requantization/requantization.h"

/* GEMM microkernels for one activation signedness: the main MR-row kernel and a 1-row kernel. */
struct qw_gemm_config {
  qw_gemm_ukernel ukernel;
  qw_gemm_ukernel ukernel_1;
  size_t mr;
};

struct qw_kernels {
  const char* isa;
  qw_quantize_ukernel quantize[2][3]; /* [qw_rounding][qw_dtype] */
  qw_dequantize_ukernel dequantize[3]; /* [qw_dtype] */
  qw_dequantize_f64_ukernel dequantize_f64scale[3]; /* [qw_dtype] */
  struct qw_gemm_config gemm[2];                     /* [activations signed] */
  qw_requantization_ukernel requantize[2][2];        /* [fp32, fixedpoint][output signed] */
  qw_dwconv_ukernel dwconv[2];                       /* [activations signed] */
};

/* The kernels of this build: wasmsimd when compiled with QW_SIMD=1, scalar otherwise. */
const struct qw_kernels* qw_kernels(void);

/* The scalar baseline, always compiled: tests compare the selected kernels against it. */
extern const struct qw_kernels qw_scalar_kernels;

#endif /* QWASM_CONFIG_H */
