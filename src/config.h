/* The kernel table: the single place where a build's kernels, and the layouts they need, are chosen.
 * The GEMM, depthwise and float GEMM entries are configurations (gemm/gemm.h, dwconv/dwconv.h,
 * f32/gemm.h): tile sizes and packing functions travel with their kernels, and the drivers read them
 * from here, so a kernel with another tile is one entry in src/config.c. */
#ifndef QWASM_CONFIG_H
#define QWASM_CONFIG_H

#include "dwconv/dwconv.h"
#include "elementwise/lut.h"
#include "elementwise/vadd.h"
#include "f32/dwconv.h"
#include "f32/gemm.h"
#include "f32/layernorm.h"
#include "f32/range.h"
#include "f32/relu.h"
#include "f32/softmax.h"
#include "f32/vbinary.h"
#include "f32/vgelu.h"
#include "f32/vunary.h"
#include "gemm/gemm.h"
#include "layout/transpose.h"
#include "pooling/maxpool.h"
#include "quantize/quantize.h"
#include "requantization/requantization.h"
#include "qwasm.h"

struct qw_kernels {
  const char* isa;
  qw_quantize_ukernel quantize[4][3]; /* [qw_rounding][qw_dtype] */
  qw_quantize_ukernel quantize_dynamic; /* DynamicQuantizeLinear's (quantize.h) */
  qw_dequantize_ukernel dequantize[3]; /* [qw_dtype] */
  qw_dequantize_f64_ukernel dequantize_f64scale[3]; /* [qw_dtype] */
  struct qw_gemm_config gemm;                        /* int8 GEMM: layout, packing, kernels for 1..mr rows */
  qw_requantization_ukernel requantize[4][2];        /* [QW_REQUANT_KERNEL_* but F32][output signed] */
  struct qw_dwconv_config dwconv;                    /* depthwise convolution: layout, packing, kernels */
  qw_maxpool_ukernel maxpool[2];                     /* [signed] */
  qw_x8_transpose_ukernel transpose_x8;
  qw_vadd_onnx_ukernel vadd_onnx[2];                 /* [signed] */
  qw_u8_lut_ukernel lut;                             /* 8-bit table lookup (unary ops) */
  struct qw_f32_gemm_config f32_gemm;                /* float GEMM: tile, packing, kernels for 1..mr rows */
  qw_f32_dwconv_ukernel f32_dwconv;                  /* float depthwise convolution over the f32_gemm packing */
  qw_f32_relu_ukernel f32_relu;                      /* float ReLU (a float Conv's fused Relu) */
  /* Transformers' float operators, onnxruntime's arithmetic (src/f32/mlas.h): */
  qw_f32_vunary_ukernel f32_vunary[4];               /* [qw_f32_unary_op]: exp, erf, tanh, sqrt */
  qw_f32_vgelu_ukernel f32_vgelu[2];                 /* [qw_gelu_form]: erf, tanh; optional bias */
  qw_f32_vbinary_ukernel f32_vbinary[5][3];          /* [qw_f32_binary_op][vv, vs, sv] */
  qw_f32_softmax_ukernel f32_softmax;                /* one row */
  qw_f32_layernorm_ukernel f32_layernorm;            /* one row, optional skip / bias / beta */
  qw_f32_layernorm4_ukernel f32_layernorm4;          /* four rows at once, the same arithmetic per row */
  qw_f32_layernorm4_ukernel f32_layernorm8;          /* eight rows at once, the same arithmetic per row */
  qw_f32_layernorm4_ukernel f32_layernorm16;         /* sixteen rows at once, the same arithmetic per row */
  qw_f32_range_ukernel f32_range;                    /* min / max with 0, finiteness (dynamic quantization) */
  qw_requantization_ukernel scale_output[2];         /* int32 -> float (dynamic matmul): [with bias] */
};

/* The kernels of this build: wasmsimd when compiled with QW_SIMD=1, scalar otherwise; in the relaxed build, a
 * relaxed table once qw_use_relaxed_simd (qwasm.h) chose one. */
const struct qw_kernels* qw_kernels(void);

#if QW_SIMD && QW_RELAXED
/* The relaxed-SIMD table for an exact semantics of i32x4.relaxed_dot_i8x16_i7x16_add_s (the tests run both). */
const struct qw_kernels* qw_relaxed_kernels(qw_relaxed_semantics semantics);
#endif

/* The scalar baseline, always compiled: tests compare the selected kernels against it. */
extern const struct qw_kernels qw_scalar_kernels;

/* 1 when the kernels' contract asserts are compiled in (the native Debug test build), 0 under NDEBUG
 * (the release wasm). */
extern const int qw_kernel_asserts;

#endif /* QWASM_CONFIG_H */
