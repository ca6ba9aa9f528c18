/*
 * int8 GEMM microkernels: C[m][n] = sum_k (A[m][k] - a_zp) * (W[k][n] - w_zp[n]), int32, exact.
 *
 * The weights are packed once as int16 with their zero points subtracted ("c2" layout): columns in
 * tiles of 8, K padded with zeros to a multiple of 4, per tile K/2 blocks of 16 int16
 *   [c0k0 c0k1 c1k0 c1k1 c2k0 c2k1 c3k0 c3k1][c4k0 c4k1 ... c7k0 c7k1].
 * The rows of A are packed per call into a panel of int16 (a - a_zp), rows kc apart. One 32-bit
 * splat of a row's (k, k+1) pair times the tile's two weight vectors with i32x4.dot_i16x8_s gives
 * 8 columns of two products each: two ALU operations per 16 multiply-adds, no widening in the loop.
 *
 * Why int16 weights: on these machines the wasm dot loop is bound by SIMD ALU operations, not by
 * memory; widening int8 weights in the loop costs more than reading twice the bytes, even for a
 * single row (measured: 1x1024x1024 in 34-36 us with int16 against 39-41 us with int8 + widening,
 * and int8 read by i16x8.load8x8_s was slower as well).
 * Contract: sums fit int32 for K < 2^15 (|a - a_zp| and |w - w_zp| <= 255).
 */
#ifndef QWASM_GEMM_H
#define QWASM_GEMM_H

#include <stddef.h>
#include <stdint.h>

static inline size_t qw_round_up(size_t x, size_t q) {
  return (x + q - 1) / q * q;
}

#define QW_GEMM_NR 8
#define QW_GEMM_KR 4 /* K padding; the kernels step K by 2 (one pair) or 4 */
#define QW_GEMM_MR_MAX 4

/* Bytes of packed weights for n columns of depth k. */
static inline size_t qw_gemm_packed_size(size_t n, size_t k) {
  return qw_round_up(n, QW_GEMM_NR) * qw_round_up(k, QW_GEMM_KR) * sizeof(int16_t);
}

/* Index of weight (column j, depth kk) in the packed layout for depth k. */
static inline size_t qw_gemm_packed_index(size_t k, size_t j, size_t kk) {
  const size_t lane = j % QW_GEMM_NR;
  return (j / QW_GEMM_NR) * QW_GEMM_NR * qw_round_up(k, QW_GEMM_KR) + (kk / 2) * 16 + (lane / 4) * 8 + (lane % 4) * 2 +
         kk % 2;
}

/* Packs W[n][k] = w[n * n_stride + k * k_stride] (element strides) minus its zero point (zp_count 1
 * or n). */
void qw_pack_gemm_weights(size_t n, size_t k, const uint8_t* w, size_t n_stride, size_t k_stride, int is_signed,
                          const int32_t* w_zero_points, size_t zp_count, int16_t* packed);

/* Packs mr rows of 8-bit A (a_stride bytes apart) into the panel: int16 (a - a_zp), rows kc apart,
 * zero-padded to kc. */
typedef void (*qw_gemm_pack_a_ukernel)(size_t mr, size_t k, const uint8_t* a, size_t a_stride, int32_t a_zero_point,
                                       int16_t* panel);

/* mr rows of the panel x nc columns (all tiles); C int32 rows c_stride apart. */
typedef void (*qw_gemm_ukernel)(size_t mr, size_t nc, size_t kc, const int16_t* a, const int16_t* w, int32_t* c,
                                size_t c_stride);

#define QW_DECLARE_GEMM_UKERNEL(name) \
  void name(size_t mr, size_t nc, size_t kc, const int16_t* a, const int16_t* w, int32_t* c, size_t c_stride)
#define QW_DECLARE_GEMM_PACK_A_UKERNEL(name) \
  void name(size_t mr, size_t k, const uint8_t* a, size_t a_stride, int32_t a_zero_point, int16_t* panel)

QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_4x8c2__scalar);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qu8_gemm_pack_a_ukernel__scalar);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qs8_gemm_pack_a_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_1x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_2x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_4x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qu8_gemm_pack_a_ukernel__wasmsimd);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qs8_gemm_pack_a_ukernel__wasmsimd);
#endif

#endif /* QWASM_GEMM_H */
