/*
 * int8 GEMM microkernels, two layouts of the packed weights:
 *
 * c2 (int16, for M >= 4; convolutions always): the zero points are subtracted while packing, so
 *   C[m][n] = sum_k (A[m][k] - a_zp) * (W[k][n] - w_zp[n]) comes out exact, no correction terms.
 *   W: columns in tiles of 8, K padded to even; per tile, K/2 blocks of 16 int16:
 *   [c0k0 c0k1 c1k0 c1k1 c2k0 c2k1 c3k0 c3k1][c4k0 ... c7k1]. A: a panel of MR rows packed per call
 *   as int16 (a - a_zp), K padded to even with zeros. One 32-bit splat of an A pair times the two
 *   weight vectors with i32x4.dot_i16x8_s gives 8 columns of 2 products each: 2 ALU operations per
 *   16 multiply-adds, no widening in the loop.
 *
 * c8 (int8, for M < 4: a GEMV reads the weights once, so half the bytes beat fewer operations):
 *   raw weights (uint8 packed as w - 128), columns in tiles of 4, K padded to a multiple of 8 with
 *   zeros; per tile, K/8 blocks of [4 columns][8 k]. The kernel sums raw A * raw W; the requantization
 *   stage subtracts w_zp[n] * sum_k A[m][k] and adds -a_zp * sum_k (W[k][n] - w_zp[n]) (the column
 *   sums stored after the weights) through the bias.
 *
 * Contract: A rows are read for exactly K bytes; the sums fit int32 for K < 2^16.
 */
#ifndef QWASM_GEMM_H
#define QWASM_GEMM_H

#include <stddef.h>
#include <stdint.h>

static inline size_t qw_round_up(size_t x, size_t q) {
  return (x + q - 1) / q * q;
}

#define QW_GEMM_C8_NR 4
#define QW_GEMM_C8_KR 8
#define QW_GEMM_C2_NR 8
#define QW_GEMM_C2_KR 2

/* Bytes of the c8 weights (then n int32 column sums). */
static inline size_t qw_gemm_c8_size(size_t n, size_t k) {
  return qw_round_up(n, QW_GEMM_C8_NR) * qw_round_up(k, QW_GEMM_C8_KR) + qw_round_up(n, 4) * sizeof(int32_t);
}

/* Bytes of the c2 weights. */
static inline size_t qw_gemm_c2_size(size_t n, size_t k) {
  return qw_round_up(n, QW_GEMM_C2_NR) * qw_round_up(k, QW_GEMM_C2_KR) * sizeof(int16_t);
}

/* Index of weight (column j, depth kk) in the c2 layout for depth K. */
static inline size_t qw_gemm_c2_index(size_t k, size_t j, size_t kk) {
  const size_t lane = j % QW_GEMM_C2_NR;
  return (j / QW_GEMM_C2_NR) * QW_GEMM_C2_NR * qw_round_up(k, QW_GEMM_C2_KR) + (kk / 2) * 16 + (lane / 4) * 8 +
         (lane % 4) * 2 + kk % 2;
}

/* W[n][k] = w[n * n_stride + k * k_stride] (element strides); flip = 0x80 for uint8 weights; zero
 * points per column (zp_count 1 or n). */
void qw_pack_gemm_c8(size_t n, size_t k, const uint8_t* w, size_t n_stride, size_t k_stride, uint8_t flip,
                     const int32_t* w_zero_points, size_t zp_count, int8_t* packed);
void qw_pack_gemm_c2(size_t n, size_t k, const uint8_t* w, size_t n_stride, size_t k_stride, int is_signed,
                     const int32_t* w_zero_points, size_t zp_count, int16_t* packed);

/* c8: mr rows of raw 8-bit A (a_stride bytes apart) x nc columns; C int32 rows c_stride apart. */
typedef void (*qw_gemm_c8_ukernel)(size_t mr, size_t nc, size_t k, const uint8_t* a, size_t a_stride,
                                   const int8_t* w, int32_t* c, size_t c_stride);
/* c2: mr rows of the packed int16 A panel (rows kc = round_up(K, 2) apart) x nc columns. */
typedef void (*qw_gemm_c2_ukernel)(size_t mr, size_t nc, size_t kc, const int16_t* a, const int16_t* w, int32_t* c,
                                   size_t c_stride);

#define QW_DECLARE_GEMM_C8_UKERNEL(name)                                                                          \
  void name(size_t mr, size_t nc, size_t k, const uint8_t* a, size_t a_stride, const int8_t* w, int32_t* c, \
            size_t c_stride)
#define QW_DECLARE_GEMM_C2_UKERNEL(name) \
  void name(size_t mr, size_t nc, size_t kc, const int16_t* a, const int16_t* w, int32_t* c, size_t c_stride)

QW_DECLARE_GEMM_C8_UKERNEL(qw_qu8_qs8_gemm_ukernel_2x4c8__scalar);
QW_DECLARE_GEMM_C8_UKERNEL(qw_qs8_qs8_gemm_ukernel_2x4c8__scalar);
QW_DECLARE_GEMM_C2_UKERNEL(qw_qs16_gemm_ukernel_4x8c2__scalar);
#if QW_SIMD
QW_DECLARE_GEMM_C8_UKERNEL(qw_qu8_qs8_gemm_ukernel_1x4c8__wasmsimd_dot16x2);
QW_DECLARE_GEMM_C8_UKERNEL(qw_qu8_qs8_gemm_ukernel_2x4c8__wasmsimd_dot16x2);
QW_DECLARE_GEMM_C8_UKERNEL(qw_qs8_qs8_gemm_ukernel_1x4c8__wasmsimd_dot16x2);
QW_DECLARE_GEMM_C8_UKERNEL(qw_qs8_qs8_gemm_ukernel_2x4c8__wasmsimd_dot16x2);
QW_DECLARE_GEMM_C2_UKERNEL(qw_qs16_gemm_ukernel_1x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_C2_UKERNEL(qw_qs16_gemm_ukernel_2x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_C2_UKERNEL(qw_qs16_gemm_ukernel_4x8c2__wasmsimd_dot16x2);
#endif

/* Packs mr rows of raw 8-bit A into the c2 panel: int16 (a - a_zp), K padded to even with zeros. */
void qw_pack_gemm_a(size_t mr, size_t k, const uint8_t* a, size_t a_stride, int is_signed, int32_t a_zero_point,
                    int16_t* panel);

#endif /* QWASM_GEMM_H */
