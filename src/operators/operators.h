/* Operator drivers: loops over microkernels, no allocation (workspaces come from the caller). Every
 * tile size and packing comes from a kernel table (config.h); the public entry points pass the build's
 * table, qw_kernels(), and the C tests pass others through the *_with functions below. */
#ifndef QWASM_OPERATORS_H
#define QWASM_OPERATORS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "qwasm.h"

/* K limit of the int32 sums (|a - a_zp|, |w - w_zp| <= 255). */
#define QW_GEMM_K_MAX 32768

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

/* y[m][n] = requantize(sum_k (a[m][k] - a_zp) * (W[k][n] - w_zp[n])) for W packed by kernels->gemm (no
 * header); y_stride in bytes; workspace of qw_gemm_thread_workspace_size bytes. One thread. panels: A's row
 * blocks packed by qw_gemm_pack_panels (then a is not read), or NULL to pack them here. */
void qw_gemm_run(const struct qw_kernels* kernels, size_t m, size_t n, size_t k, const uint8_t* a, size_t a_stride,
                 int a_signed, int32_t a_zero_point, const void* panels, const void* w,
                 const struct qw_output_stage* out, uint8_t* y, size_t y_stride, void* workspace);

/* qw_gemm_run split into tiles over the thread pool (threadpool.h); workspace of qw_gemm_workspace_size_with
 * bytes: one qw_gemm_thread_workspace_size slice per thread. */
void qw_gemm_parallel(const struct qw_kernels* kernels, size_t m, size_t n, size_t k, const uint8_t* a,
                      size_t a_stride, int a_signed, int32_t a_zero_point, const void* panels, const void* w,
                      const struct qw_output_stage* out, uint8_t* y, size_t y_stride, void* workspace);

/* Every row block of A packed once, for GEMMs whose rows would otherwise be packed again for each block of
 * columns (more columns than one L2 block, or threads splitting the columns; several GEMMs over one A):
 * ceil(m / mr) panels qw_gemm_panel_stride apart, qw_gemm_panels_size bytes (0 when too large), packed over the
 * thread pool. */
size_t qw_gemm_panel_stride(const struct qw_gemm_config* gemm, size_t k);
size_t qw_gemm_panels_size(const struct qw_kernels* kernels, size_t m, size_t k);
void qw_gemm_pack_panels(const struct qw_kernels* kernels, size_t m, size_t k, const uint8_t* a, size_t a_stride,
                         int a_signed, int32_t a_zero_point, void* panels);

/* The range of n floats widened to include 0 (lo = hi = 0 on entry), split over the thread pool: the build's
 * f32_range kernel per tile (f32/range.h), the tiles' ranges then combined. Min and max of finite values do not
 * depend on the order, so the result is the kernel's over all n. 0 when a value is NaN or infinite. */
int qw_f32_range_parallel(size_t n, const float* x, float* lo, float* hi);

/* A quantize kernel over n elements split over the thread pool (elementwise tiles: any split gives the same bytes). */
void qw_quantize_parallel(qw_quantize_ukernel quantize, const struct qw_quantize_params* params, size_t n,
                          const float* x, void* y, size_t element_size);

/* DynamicQuantizeLinear's quantize (the ONNX rule to quint8) of n finite floats x with the scale and zero point
 * chosen from their own range (lo <= x <= hi, lo <= 0 <= hi, scale (hi - lo) / 255 or 1 when hi == lo): the
 * quantize_dynamic kernel over the thread pool, qw_quantize's for a scale below the normal range. */
qw_status qw_quantize_own_range(size_t n, const float* x, uint8_t* y, float scale, int32_t zero_point);

/* The workspace of one thread's qw_gemm_run (a multiple of 16 bytes). */
size_t qw_gemm_thread_workspace_size(const struct qw_kernels* kernels, size_t n, size_t k);

/* The weights inside a qw_gemm_pack buffer for n columns of depth k in kernels->gemm's layout, or NULL when it
 * is not one. */
const void* qw_gemm_packed_weights(const struct qw_kernels* kernels, const void* packed, size_t n, size_t k);

/* The output stage of a blob made by qw_requantization_init for n channels; 0 if it is not one. */
int qw_output_stage_of(const void* blob, size_t n, struct qw_output_stage* out);

/* The kernel of a table that applies an output stage. */
qw_requantization_ukernel qw_output_kernel(const struct qw_kernels* kernels, const struct qw_output_stage* out);

/* The public GEMM and convolution entry points (qwasm.h) with the kernel table given. */
size_t qw_gemm_pack_size_with(const struct qw_kernels* kernels, size_t n, size_t k);
qw_status qw_gemm_pack_with(const struct qw_kernels* kernels, size_t n, size_t k, const void* w, qw_dtype w_dtype,
                            size_t n_stride, size_t k_stride, const int32_t* w_zero_points, size_t zp_count,
                            void* packed);
size_t qw_gemm_workspace_size_with(const struct qw_kernels* kernels, size_t n, size_t k);
qw_status qw_gemm_with(const struct qw_kernels* kernels, size_t m, size_t n, size_t k, const void* a, size_t a_stride,
                       qw_dtype a_dtype, int32_t a_zero_point, const void* packed, const void* requantization, void* y,
                       size_t y_stride, void* workspace);

/* 1 when a convolution geometry is consistent and its sizes fit (the checks of qw_conv2d_output_size but the
 * input's and output's element counts, which the packing does not depend on); its output size in *oh, *ow. */
int qw_conv2d_geometry(const qw_conv2d_shape* shape, int64_t* oh, int64_t* ow);

size_t qw_conv2d_pack_size_with(const struct qw_kernels* kernels, const qw_conv2d_shape* shape);
qw_status qw_conv2d_pack_with(const struct qw_kernels* kernels, const qw_conv2d_shape* shape, const void* w,
                              qw_dtype w_dtype, const int32_t* w_zero_points, size_t w_zp_count, void* packed);
size_t qw_conv2d_workspace_size_with(const struct qw_kernels* kernels, const qw_conv2d_shape* shape);
qw_status qw_conv2d_with(const struct qw_kernels* kernels, const qw_conv2d_shape* shape, const void* x,
                         qw_dtype x_dtype, int32_t x_zero_point, const void* packed, const void* requantization,
                         void* y, void* workspace);

size_t qw_f32_conv2d_pack_size_with(const struct qw_kernels* kernels, const qw_conv2d_shape* shape);
qw_status qw_f32_conv2d_pack_with(const struct qw_kernels* kernels, const qw_conv2d_shape* shape, const float* w,
                                  const float* bias, float* packed);
size_t qw_f32_conv2d_workspace_size_with(const struct qw_kernels* kernels, const qw_conv2d_shape* shape);
qw_status qw_f32_conv2d_with(const struct qw_kernels* kernels, const qw_conv2d_shape* shape, const float* x,
                             const float* packed, float* y, void* workspace);

#endif /* QWASM_OPERATORS_H */
