#include "config.h"

#include "qwasm.h"

/* The layouts both builds use (the wasmsimd kernels read the scalar build's packing): weights packed by
 * either are the same bytes. Another tile is a config with its own layout and kernels. */
#define GEMM_X16C2_NR8_KR4                                                                   \
  .nr = 8, .kr = 4, .packing = QW_GEMM_PACKING_X16_C2, .a_element_size = 2, .w_element_size = 2, \
  .pack_w = qw_pack_x16c2_gemm_weights
#define DWCONV_X16_ROW_PAIRS_CR4 \
  .cr = 4, .packing = QW_DWCONV_PACKING_X16_ROW_PAIRS, .taps = 2, .pack = qw_pack_x16_row_pairs_dwconv_weights
#define F32_GEMM_MR4_NR8 .mr = 4, .nr = 8, .pack = qw_pack_f32_gemm_weights

/* Zero, in a file of its own as far as the kernels' compiler knows (src/f32/mlas-wasmsimd.h says why). */
const uint32_t qw_opaque_zero = 0;

#ifdef NDEBUG
const int qw_kernel_asserts = 0;
#else
const int qw_kernel_asserts = 1;
#endif

/* The output stages every build runs as scalar code: fixedpoint and oneDNN cost per output and their
 * per-channel parameters have no wasm SIMD counterpart; 'none' is a copy. */
#define SCALAR_ONLY_OUTPUT_STAGES                                                                              \
  [QW_REQUANT_KERNEL_FIXEDPOINT] = {qw_qs32_qu8_requantize_fixedpoint_ukernel__scalar,                         \
                                    qw_qs32_qs8_requantize_fixedpoint_ukernel__scalar},                        \
  [QW_REQUANT_KERNEL_ONEDNN] = {qw_qs32_qu8_requantize_onednn_ukernel__scalar,                                 \
                                qw_qs32_qs8_requantize_onednn_ukernel__scalar},                                \
  [QW_REQUANT_KERNEL_NONE] = {qw_qs32_qs32_requantize_none_ukernel__scalar, qw_qs32_qs32_requantize_none_ukernel__scalar}

const struct qw_kernels qw_scalar_kernels = {
    .isa = "scalar",
    .quantize = {
        [QW_ROUND_TORCH] = {qw_f32_qu8_quantize_torch_ukernel__scalar, qw_f32_qs8_quantize_torch_ukernel__scalar,
                            qw_f32_qs32_quantize_torch_ukernel__scalar},
        [QW_ROUND_ONNX] = {qw_f32_qu8_quantize_onnx_ukernel__scalar, qw_f32_qs8_quantize_onnx_ukernel__scalar,
                           qw_f32_qs32_quantize_onnx_ukernel__scalar},
        /* FBGEMM's rules use fmaf and are scalar in every build (PyTorch 2.x models quantize once per input). */
        [QW_ROUND_FBGEMM] = {qw_f32_qu8_quantize_fbgemm_ukernel__scalar, qw_f32_qs8_quantize_fbgemm_ukernel__scalar,
                             qw_f32_qs32_quantize_fbgemm_scalar_ukernel__scalar},
        [QW_ROUND_FBGEMM_SCALAR] = {qw_f32_qu8_quantize_fbgemm_scalar_ukernel__scalar,
                                    qw_f32_qs8_quantize_fbgemm_scalar_ukernel__scalar,
                                    qw_f32_qs32_quantize_fbgemm_scalar_ukernel__scalar},
    },
    .quantize_dynamic = qw_f32_qu8_quantize_onnx_ukernel__scalar,
    .dequantize = {qw_qu8_f32_dequantize_ukernel__scalar, qw_qs8_f32_dequantize_ukernel__scalar,
                   qw_qs32_f32_dequantize_ukernel__scalar},
    .dequantize_f64scale = {qw_qu8_f32_dequantize_f64scale_ukernel__scalar,
                            qw_qs8_f32_dequantize_f64scale_ukernel__scalar,
                            qw_qs32_f32_dequantize_f64scale_ukernel__scalar},
    .gemm = {
        .mr = 4,
        GEMM_X16C2_NR8_KR4,
        .gemm = {qw_qs16_gemm_ukernel_4x8c2__scalar, qw_qs16_gemm_ukernel_4x8c2__scalar,
                 qw_qs16_gemm_ukernel_4x8c2__scalar, qw_qs16_gemm_ukernel_4x8c2__scalar},
        .pack_a = {qw_qu8_gemm_pack_a_ukernel__scalar, qw_qs8_gemm_pack_a_ukernel__scalar},
    },
    .requantize = {
        [QW_REQUANT_KERNEL_FP32] = {qw_qs32_qu8_requantize_fp32_ukernel__scalar,
                                    qw_qs32_qs8_requantize_fp32_ukernel__scalar},
        SCALAR_ONLY_OUTPUT_STAGES,
    },
    .dwconv = {DWCONV_X16_ROW_PAIRS_CR4,
               .ukernel = qw_qs16_dwconv_ukernel_c4__scalar,
               .tap_row = {qw_qu8_dwconv_pair_row_ukernel_c4__scalar, qw_qs8_dwconv_pair_row_ukernel_c4__scalar}},
    .maxpool = {qw_u8_maxpool_ukernel__scalar, qw_s8_maxpool_ukernel__scalar},
    .transpose_x8 = qw_x8_transpose_ukernel__scalar,
    .vadd_onnx = {qw_qu8_vadd_onnx_ukernel__scalar, qw_qs8_vadd_onnx_ukernel__scalar},
    .lut = qw_u8_lut_ukernel__scalar,
    .f32_gemm = {F32_GEMM_MR4_NR8,
                 .gemm = {qw_f32_gemm_ukernel_4x8__scalar, qw_f32_gemm_ukernel_4x8__scalar,
                          qw_f32_gemm_ukernel_4x8__scalar, qw_f32_gemm_ukernel_4x8__scalar},
                 .gemm_rows = {qw_f32_gemm_rows_ukernel_4x8__scalar, qw_f32_gemm_rows_ukernel_4x8__scalar,
                               qw_f32_gemm_rows_ukernel_4x8__scalar, qw_f32_gemm_rows_ukernel_4x8__scalar},
                 .packx = qw_x32_packx_ukernel__scalar},
    .f32_dwconv = qw_f32_dwconv_ukernel__scalar,
    .f32_relu = qw_f32_relu_ukernel__scalar,
    .f32_vunary = {qw_f32_vexp_ukernel__scalar, qw_f32_verf_ukernel__scalar, qw_f32_vtanh_ukernel__scalar,
                   qw_f32_vsqrt_ukernel__scalar},
    .f32_vgelu = {qw_f32_vgelu_erf_ukernel__scalar, qw_f32_vgelu_tanh_ukernel__scalar},
    .f32_vbinary = {{qw_f32_vadd_ukernel__scalar, qw_f32_vaddc_ukernel__scalar, qw_f32_vraddc_ukernel__scalar},
                    {qw_f32_vsub_ukernel__scalar, qw_f32_vsubc_ukernel__scalar, qw_f32_vrsubc_ukernel__scalar},
                    {qw_f32_vmul_ukernel__scalar, qw_f32_vmulc_ukernel__scalar, qw_f32_vrmulc_ukernel__scalar},
                    {qw_f32_vdiv_ukernel__scalar, qw_f32_vdivc_ukernel__scalar, qw_f32_vrdivc_ukernel__scalar},
                    {qw_f32_vpow_ukernel__scalar, qw_f32_vpowc_ukernel__scalar, qw_f32_vrpowc_ukernel__scalar}},
    .f32_softmax = qw_f32_softmax_ukernel__scalar,
    .f32_layernorm = qw_f32_layernorm_ukernel__scalar,
    .f32_layernorm4 = qw_f32_layernorm4_ukernel__scalar,
    .f32_layernorm8 = qw_f32_layernorm8_ukernel__scalar,
    .f32_layernorm16 = qw_f32_layernorm16_ukernel__scalar,
    .f32_range = qw_f32_range_ukernel__scalar,
    .scale_output = {qw_qs32_f32_scale_ukernel__scalar, qw_qs32_f32_scale_bias_ukernel__scalar},
};

#if QW_SIMD
static const struct qw_kernels wasmsimd_kernels = {
    .isa = "wasmsimd",
    .quantize = {
        [QW_ROUND_TORCH] = {qw_f32_qu8_quantize_torch_ukernel__wasmsimd, qw_f32_qs8_quantize_torch_ukernel__wasmsimd,
                            qw_f32_qs32_quantize_torch_ukernel__wasmsimd},
        [QW_ROUND_ONNX] = {qw_f32_qu8_quantize_onnx_ukernel__wasmsimd, qw_f32_qs8_quantize_onnx_ukernel__wasmsimd,
                           qw_f32_qs32_quantize_onnx_ukernel__wasmsimd},
        [QW_ROUND_FBGEMM] = {qw_f32_qu8_quantize_fbgemm_ukernel__scalar, qw_f32_qs8_quantize_fbgemm_ukernel__scalar,
                             qw_f32_qs32_quantize_fbgemm_scalar_ukernel__scalar},
        [QW_ROUND_FBGEMM_SCALAR] = {qw_f32_qu8_quantize_fbgemm_scalar_ukernel__scalar,
                                    qw_f32_qs8_quantize_fbgemm_scalar_ukernel__scalar,
                                    qw_f32_qs32_quantize_fbgemm_scalar_ukernel__scalar},
    },
    .quantize_dynamic = qw_f32_qu8_quantize_dynamic_ukernel__wasmsimd,
    .dequantize = {qw_qu8_f32_dequantize_ukernel__wasmsimd, qw_qs8_f32_dequantize_ukernel__wasmsimd,
                   qw_qs32_f32_dequantize_ukernel__wasmsimd},
    .dequantize_f64scale = {qw_qu8_f32_dequantize_f64scale_ukernel__wasmsimd,
                            qw_qs8_f32_dequantize_f64scale_ukernel__wasmsimd,
                            qw_qs32_f32_dequantize_f64scale_ukernel__wasmsimd},
    .gemm = {
        .mr = 4,
        GEMM_X16C2_NR8_KR4,
        .a_interleaved = 1,
        .gemm = {qw_qs16_gemm_ukernel_1x8c2__wasmsimd_dot16x2, qw_qs16_gemm_ukernel_2x8c2__wasmsimd_dot16x2,
                 qw_qs16_gemm_ukernel_4x8c2__wasmsimd_dot16x2, qw_qs16_gemm_ukernel_4x8c2__wasmsimd_dot16x2},
        /* none for one row (a multi-row GEMM's last): the 1-row kernel's wide passes beat a 2-row kernel computing
         * its row twice, by 2-5% of MobileNetV2's 7x7 layers (49 rows) */
        .fp32_plain = {{NULL, qw_qs16_qu8_gemm_fp32_plain_ukernel_2x8c2__wasmsimd_dot16x2,
                        qw_qs16_qu8_gemm_fp32_plain_ukernel_4x8c2__wasmsimd_dot16x2,
                        qw_qs16_qu8_gemm_fp32_plain_ukernel_4x8c2__wasmsimd_dot16x2},
                       {NULL, qw_qs16_qs8_gemm_fp32_plain_ukernel_2x8c2__wasmsimd_dot16x2,
                        qw_qs16_qs8_gemm_fp32_plain_ukernel_4x8c2__wasmsimd_dot16x2,
                        qw_qs16_qs8_gemm_fp32_plain_ukernel_4x8c2__wasmsimd_dot16x2}},
        .f32_output = {NULL, qw_qs16_f32_gemm_ukernel_2x8c2__wasmsimd_dot16x2, qw_qs16_f32_gemm_ukernel_4x8c2__wasmsimd_dot16x2,
                       qw_qs16_f32_gemm_ukernel_4x8c2__wasmsimd_dot16x2},
        .pack_a = {qw_qu8_gemm_pack_a_ukernel__wasmsimd, qw_qs8_gemm_pack_a_ukernel__wasmsimd},
    },
    .requantize = {
        [QW_REQUANT_KERNEL_FP32] = {qw_qs32_qu8_requantize_fp32_ukernel__wasmsimd,
                                    qw_qs32_qs8_requantize_fp32_ukernel__wasmsimd},
        SCALAR_ONLY_OUTPUT_STAGES,
    },
    .dwconv = {DWCONV_X16_ROW_PAIRS_CR4,
               .ukernel = qw_qs16_dwconv_ukernel_c4__wasmsimd_dot16x2,
               .fp32_plain = {qw_qs16_qu8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2,
                              qw_qs16_qs8_dwconv_fp32_plain_ukernel_c4__wasmsimd_dot16x2},
               .tap_row = {qw_qu8_dwconv_pair_row_ukernel_c4__wasmsimd, qw_qs8_dwconv_pair_row_ukernel_c4__wasmsimd}},
    .maxpool = {qw_u8_maxpool_ukernel_c16__wasmsimd, qw_s8_maxpool_ukernel_c16__wasmsimd},
    .transpose_x8 = qw_x8_transpose_ukernel_16x16__wasmsimd,
    .vadd_onnx = {qw_qu8_vadd_onnx_ukernel__wasmsimd, qw_qs8_vadd_onnx_ukernel__wasmsimd},
    .lut = qw_u8_lut_ukernel__scalar,
    .f32_gemm = {F32_GEMM_MR4_NR8,
                 .gemm = {qw_f32_gemm_ukernel_1x8__wasmsimd, qw_f32_gemm_ukernel_2x8__wasmsimd,
                          qw_f32_gemm_ukernel_4x8__wasmsimd, qw_f32_gemm_ukernel_4x8__wasmsimd},
                 .gemm_rows = {qw_f32_gemm_rows_ukernel_1x8__wasmsimd, qw_f32_gemm_rows_ukernel_2x8__wasmsimd,
                               qw_f32_gemm_rows_ukernel_4x8__wasmsimd, qw_f32_gemm_rows_ukernel_4x8__wasmsimd},
                 .packx = qw_x32_packx_ukernel_4x__wasmsimd},
    .f32_dwconv = qw_f32_dwconv_ukernel_16__wasmsimd,
    .f32_relu = qw_f32_relu_ukernel_16__wasmsimd,
    .f32_vunary = {qw_f32_vexp_ukernel_16__wasmsimd, qw_f32_verf_ukernel_16__wasmsimd,
                   qw_f32_vtanh_ukernel_16__wasmsimd, qw_f32_vsqrt_ukernel_8__wasmsimd},
    .f32_vgelu = {qw_f32_vgelu_erf_ukernel_16__wasmsimd, qw_f32_vgelu_tanh_ukernel_16__wasmsimd},
    .f32_vbinary = {{qw_f32_vadd_ukernel__wasmsimd, qw_f32_vaddc_ukernel__wasmsimd, qw_f32_vraddc_ukernel__wasmsimd},
                    {qw_f32_vsub_ukernel__wasmsimd, qw_f32_vsubc_ukernel__wasmsimd, qw_f32_vrsubc_ukernel__wasmsimd},
                    {qw_f32_vmul_ukernel__wasmsimd, qw_f32_vmulc_ukernel__wasmsimd, qw_f32_vrmulc_ukernel__wasmsimd},
                    {qw_f32_vdiv_ukernel__wasmsimd, qw_f32_vdivc_ukernel__wasmsimd, qw_f32_vrdivc_ukernel__wasmsimd},
                    /* powf has no SIMD form */
                    {qw_f32_vpow_ukernel__scalar, qw_f32_vpowc_ukernel__scalar, qw_f32_vrpowc_ukernel__scalar}},
    .f32_softmax = qw_f32_softmax_ukernel_16__wasmsimd,
    .f32_layernorm = qw_f32_layernorm_ukernel_4__wasmsimd,
    .f32_layernorm4 = qw_f32_layernorm4_ukernel__wasmsimd,
    .f32_layernorm8 = qw_f32_layernorm8_ukernel__wasmsimd,
    .f32_layernorm16 = qw_f32_layernorm16_ukernel__wasmsimd,
    .f32_range = qw_f32_range_ukernel_16__wasmsimd,
    .scale_output = {qw_qs32_f32_scale_ukernel__wasmsimd, qw_qs32_f32_scale_bias_ukernel__wasmsimd},
};
#endif

#if QW_SIMD && QW_RELAXED
/* The relaxed-SIMD tables: the wasmsimd table with the GEMM and the depthwise convolution on relaxed dot products
 * (gemm/gemm.h X8_C4, dwconv/dwconv.h quad rows), one per exact semantics of the instruction (js/runtime/relaxed.js
 * finds the engine's); built on first use. The activations enter both as bytes in the operand range the semantics
 * multiplies exactly: usdot (unsigned) copies quint8 and flips qint8 (+128), sdot the reverse (quint8 - 128). */
/* The kernels of a semantics (S) are the same wasm code for both (one instruction; only the native tests' emulation
 * tells them apart), so the sdot table takes the usdot kernels there (KERNELS_SDOT); the A packings (P) differ. */
#if defined(__wasm_relaxed_simd__)
#define KERNELS_SDOT usdot
#else
#define KERNELS_SDOT sdot
#endif
#define RELAXED_GEMM_(S, P)                                                                                    \
  {                                                                                                           \
    .mr = 4, .nr = 8, .kr = 4, .packing = QW_GEMM_PACKING_X8_C4, .a_element_size = 1, .w_element_size = 1,    \
    .a_row_extra = 4, .a_header = 16, .a_interleaved = 1, .w_column_extra = 8,                                \
    .pack_w = qw_pack_x8c4_gemm_weights,                                                                      \
    .gemm = {qw_qs8_gemm_ukernel_1x8c4__wasmrelaxed_##S, qw_qs8_gemm_ukernel_2x8c4__wasmrelaxed_##S,          \
             qw_qs8_gemm_ukernel_4x8c4__wasmrelaxed_##S, qw_qs8_gemm_ukernel_4x8c4__wasmrelaxed_##S},         \
    /* none for one row, as in the SIMD128 table */                                                           \
    .fp32_plain = {{NULL, qw_qs8_qu8_gemm_fp32_plain_ukernel_2x8c4__wasmrelaxed_##S,                          \
                    qw_qs8_qu8_gemm_fp32_plain_ukernel_4x8c4__wasmrelaxed_##S,                                \
                    qw_qs8_qu8_gemm_fp32_plain_ukernel_4x8c4__wasmrelaxed_##S},                               \
                   {NULL, qw_qs8_qs8_gemm_fp32_plain_ukernel_2x8c4__wasmrelaxed_##S,                          \
                    qw_qs8_qs8_gemm_fp32_plain_ukernel_4x8c4__wasmrelaxed_##S,                                \
                    qw_qs8_qs8_gemm_fp32_plain_ukernel_4x8c4__wasmrelaxed_##S}},                              \
    .f32_output = {NULL, qw_qs8_f32_gemm_ukernel_2x8c4__wasmrelaxed_##S, qw_qs8_f32_gemm_ukernel_4x8c4__wasmrelaxed_##S, \
                   qw_qs8_f32_gemm_ukernel_4x8c4__wasmrelaxed_##S},                                           \
    .pack_a = {qw_qu8_gemm_pack_a_ukernel_c4__wasmrelaxed_##P, qw_qs8_gemm_pack_a_ukernel_c4__wasmrelaxed_##P}, \
  }

#define RELAXED_DWCONV_(S, QU8_OFFSET, QU8_ROW, QS8_OFFSET, QS8_ROW)                                          \
  {                                                                                                           \
    .cr = 4, .packing = QW_DWCONV_PACKING_X8_ROW_QUADS, .taps = 4, .x_offset = {QU8_OFFSET, QS8_OFFSET},      \
    .ukernel = qw_qs8_dwconv_ukernel_c4__wasmrelaxed_##S,                                                     \
    .fp32_plain = {qw_qs8_qu8_dwconv_fp32_plain_ukernel_c4__wasmrelaxed_##S,                                  \
                   qw_qs8_qs8_dwconv_fp32_plain_ukernel_c4__wasmrelaxed_##S},                                 \
    .fp32_plain_pairs = {qw_qs8_qu8_dwconv_fp32_plain_pairs_ukernel_c4__wasmrelaxed_##S,                      \
                         qw_qs8_qs8_dwconv_fp32_plain_pairs_ukernel_c4__wasmrelaxed_##S},                     \
    .tap_row = {QU8_ROW, QS8_ROW}, .pack = qw_pack_x8_row_quads_dwconv_weights,                               \
  }

/* (one more expansion, so that KERNELS_SDOT is replaced before the names are pasted) */
#define RELAXED_GEMM(S, P) RELAXED_GEMM_(S, P)
#define RELAXED_DWCONV(S, ...) RELAXED_DWCONV_(S, __VA_ARGS__)

const struct qw_kernels* qw_relaxed_kernels(qw_relaxed_semantics semantics) {
  static struct qw_kernels usdot, sdot;
  if (usdot.isa == NULL) {
    usdot = sdot = wasmsimd_kernels;
    usdot.isa = sdot.isa = "wasmrelaxed";
    usdot.gemm = (struct qw_gemm_config)RELAXED_GEMM(usdot, usdot);
    /* quint8 A read in place (the sdot table flips it: none there) */
    usdot.gemm.fp32_plain_direct[0] = qw_qs8_qu8_gemm_fp32_plain_direct_ukernel_4x8c4__wasmrelaxed_usdot;
    usdot.gemm.fp32_plain_direct[1] = qw_qs8_qs8_gemm_fp32_plain_direct_ukernel_4x8c4__wasmrelaxed_usdot;
    sdot.gemm = (struct qw_gemm_config)RELAXED_GEMM(KERNELS_SDOT, sdot);
    usdot.dwconv = (struct qw_dwconv_config)RELAXED_DWCONV(usdot, 0, qw_x8_dwconv_quad_row_ukernel_c4__wasmsimd, 128,
                                                            qw_x8_flip_dwconv_quad_row_ukernel_c4__wasmsimd);
    sdot.dwconv = (struct qw_dwconv_config)RELAXED_DWCONV(KERNELS_SDOT, -128, qw_x8_flip_dwconv_quad_row_ukernel_c4__wasmsimd,
                                                           0, qw_x8_dwconv_quad_row_ukernel_c4__wasmsimd);
  }
  return semantics == QW_RELAXED_USDOT ? &usdot : semantics == QW_RELAXED_SDOT ? &sdot : NULL;
}
#endif

static const struct qw_kernels* selected = NULL;

const struct qw_kernels* qw_kernels(void) {
  if (selected != NULL) {
    return selected;
  }
#if QW_SIMD
  return &wasmsimd_kernels;
#else
  return &qw_scalar_kernels;
#endif
}

qw_status qw_use_relaxed_simd(qw_relaxed_semantics semantics) {
#if QW_SIMD && QW_RELAXED
  if (semantics != QW_RELAXED_USDOT && semantics != QW_RELAXED_SDOT) {
    return QW_INVALID_ARGUMENT;
  }
  selected = qw_relaxed_kernels(semantics);
  return QW_OK;
#else
  return semantics == QW_RELAXED_USDOT || semantics == QW_RELAXED_SDOT ? QW_UNSUPPORTED : QW_INVALID_ARGUMENT;
#endif
}
