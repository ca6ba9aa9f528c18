/*
 * float32 GEMM microkernels for the float convolution (src/operators/conv2d-f32.c) and the float matrix product
 * (src/operators/f32-matmul.c):
 *   C[m][j] = (bias[m] + sum_k W[m][k] * A[k][j]) * alpha   for m < mr, j < nc
 * accumulated in float32 in the order bias, k = 0, 1, ..., one rounding per multiply and per add
 * (no FMA), then one multiply by alpha unless alpha is 1, so the scalar and the SIMD kernels give the same bits.
 *
 * A float GEMM configuration (struct qw_f32_gemm_config, chosen in src/config.c) carries the layout
 * with the kernels and the packing: weights are packed once per tile of mr output channels (mr biases,
 * then kc groups of mr weights [k][m], channels past the end zeros); A holds nr consecutive columns
 * per k, a_stride floats apart: an im2col panel [k][nr] (a_stride nr, columns past the end zeros), or,
 * for a 1x1 stride-1 unpadded convolution, the NCHW input itself (a_stride the plane size, nc == nr).
 * Kernels read nr columns of each k whatever nc is; they write nc. A kernel's tile (4x8: mr 4, nr 8)
 * is the config's. Packed weights record (mr, nr) in their header.
 */
#ifndef QWASM_F32_GEMM_H
#define QWASM_F32_GEMM_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

/* The largest tile a float GEMM config may have. */
#define QW_F32_GEMM_MR_LIMIT 8
#define QW_F32_GEMM_NR_LIMIT 16

typedef void (*qw_f32_gemm_ukernel)(size_t mr, size_t nc, size_t kc, const float* w, const float* a, size_t a_stride,
                                    float* c, size_t c_stride, float alpha);

/* The same sums with the mr rows of weights read in place, row m at x + m * x_stride (k contiguous), from +0 (no
 * bias): C[m][j] = (sum_k x[m][k] * A[k][j]) * alpha. The float matrix product takes the rows of A so, where packing
 * them cost as much as a fifth of attention's products (K 128 against 32 columns). */
typedef void (*qw_f32_gemm_rows_ukernel)(size_t mr, size_t nc, size_t kc, const float* x, size_t x_stride,
                                         const float* a, size_t a_stride, float* c, size_t c_stride, float alpha);

/* Transposing pack of up to `lanes` rows of x (rows ldx floats apart) for kc values of k, lane-interleaved:
 *   out[k * lanes + r] = r < rows ? x[r * ldx + k] : 0   for k < kc, r < lanes (rows <= lanes <= 16)
 * The float matrix product packs rows of A into a tile with it (lanes mr) and a transposed B into a panel (lanes
 * nr). */
typedef void (*qw_x32_packx_ukernel)(size_t rows, size_t lanes, size_t kc, const float* x, size_t ldx, float* out);

/* Packs n output channels (w[n][k], bias[n] or NULL for zeros) into ceil(n / mr) tiles. */
typedef void (*qw_f32_gemm_pack_fn)(size_t mr, size_t n, size_t k, const float* w, const float* bias, float* packed);

struct qw_f32_gemm_config {
  uint8_t mr, nr;
  qw_f32_gemm_ukernel gemm[QW_F32_GEMM_MR_LIMIT]; /* [rows - 1], rows 1..mr */
  qw_f32_gemm_rows_ukernel gemm_rows[QW_F32_GEMM_MR_LIMIT]; /* [rows - 1], or NULL: pack the rows for gemm */
  qw_f32_gemm_pack_fn pack;
  qw_x32_packx_ukernel packx;
};

/* Floats of one packed tile of mr output channels with depth kc (biases included). */
static inline uint64_t qw_f32_gemm_tile_size(const struct qw_f32_gemm_config* config, size_t kc) {
  return (uint64_t)config->mr * ((uint64_t)kc + 1);
}

/* The layout word packed-weight headers record. */
static inline uint32_t qw_f32_gemm_layout(const struct qw_f32_gemm_config* config) {
  return (uint32_t)config->mr | (uint32_t)config->nr << 8;
}

void qw_pack_f32_gemm_weights(size_t mr, size_t n, size_t k, const float* w, const float* bias, float* packed);

/* The contract a float GEMM microkernel with an MR x NR tile asserts on entry (it reads NR columns of A). */
#define QW_ASSERT_F32_GEMM_UKERNEL(MR, NR)                                      \
  assert(mr >= 1 && mr <= (MR) && nc >= 1 && nc <= (NR) && kc != 0);           \
  assert(w != NULL && a != NULL && c != NULL && a_stride >= (NR) && (mr == 1 || c_stride >= nc))

#define QW_ASSERT_X32_PACKX_UKERNEL() \
  assert(rows <= lanes && lanes != 0 && lanes <= 16 && (kc == 0 || rows == 0 || (x != NULL && ldx >= kc)) && out != NULL)

#define QW_DECLARE_X32_PACKX_UKERNEL(name) \
  void name(size_t rows, size_t lanes, size_t kc, const float* x, size_t ldx, float* out)

#define QW_DECLARE_F32_GEMM_UKERNEL(name)                                                                   \
  void name(size_t mr, size_t nc, size_t kc, const float* w, const float* a, size_t a_stride, float* c, size_t c_stride, \
            float alpha)

#define QW_DECLARE_F32_GEMM_ROWS_UKERNEL(name)                                                                    \
  void name(size_t mr, size_t nc, size_t kc, const float* x, size_t x_stride, const float* a, size_t a_stride, float* c, \
            size_t c_stride, float alpha)

QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_4x8__scalar);
QW_DECLARE_F32_GEMM_ROWS_UKERNEL(qw_f32_gemm_rows_ukernel_4x8__scalar);
QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_2x16__scalar);
QW_DECLARE_X32_PACKX_UKERNEL(qw_x32_packx_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_X32_PACKX_UKERNEL(qw_x32_packx_ukernel_4x__wasmsimd);
QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_1x8__wasmsimd);
QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_2x8__wasmsimd);
QW_DECLARE_F32_GEMM_UKERNEL(qw_f32_gemm_ukernel_4x8__wasmsimd);
QW_DECLARE_F32_GEMM_ROWS_UKERNEL(qw_f32_gemm_rows_ukernel_1x8__wasmsimd);
QW_DECLARE_F32_GEMM_ROWS_UKERNEL(qw_f32_gemm_rows_ukernel_2x8__wasmsimd);
QW_DECLARE_F32_GEMM_ROWS_UKERNEL(qw_f32_gemm_rows_ukernel_4x8__wasmsimd);
#endif

#endif /* QWASM_F32_GEMM_H */
