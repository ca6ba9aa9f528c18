/*
 * int8 GEMM microkernels: C[m][n] = sum_k (A[m][k] - a_zp) * W[k][n], int32.
 *
 * A: 8-bit activations (quint8 or qint8 rows, any row stride); the kernel subtracts a_zp while
 * widening to int16. W: int8 weights packed once by qw_pack_gemm_weights; uint8 weights are packed
 * as (w - 128) with their zero point moved by -128, so W is always int8 here. The weight zero
 * point, the bias and the requantization are applied by the requantization stage.
 *
 * Packed layout (XNNPACK's "c8"): columns in tiles of QW_GEMM_NR = 4 (the last zero-padded); K
 * padded to kc = round_up(K, 8) with zeros; per tile, kc / 8 blocks of [4 columns][8 k] int8.
 * A 8-k block of the tile is 32 bytes: two v128 loads widened into four int16x8 column vectors,
 * each multiplied against the row's 8 widened activations with i32x4.dot_i16x8_s.
 *
 * Contract: rows are read for exactly K bytes (the K tail is copied, never over-read); the
 * products fit int32 for K < 2^16.
 */
#ifndef QWASM_GEMM_H
#define QWASM_GEMM_H

#include <stddef.h>
#include <stdint.h>

#define QW_GEMM_NR 4
#define QW_GEMM_KR 8

static inline size_t qw_round_up(size_t x, size_t q) {
  return (x + q - 1) / q * q;
}

/* Bytes of packed weights for N columns of K. */
static inline size_t qw_gemm_packed_size(size_t n, size_t k) {
  return qw_round_up(n, QW_GEMM_NR) * qw_round_up(k, QW_GEMM_KR);
}

/* Packs W[n][k] = w[n * n_stride + k * k_stride] (element strides). flip = 0x80 turns uint8 weights
 * into int8 (w - 128). */
void qw_pack_gemm_weights(size_t n, size_t k, const uint8_t* w, size_t n_stride, size_t k_stride, uint8_t flip,
                          int8_t* packed);

struct qw_gemm_params {
  int16_t a_zero_point;
};

/* mr rows (1..MR of the kernel) x nc columns (all tiles, nc <= packed N) x K. c rows of stride
 * c_stride int32 elements. */
typedef void (*qw_gemm_ukernel)(size_t mr, size_t nc, size_t k, const uint8_t* a, size_t a_stride,
                                const int8_t* w, int32_t* c, size_t c_stride, const struct qw_gemm_params* params);

#define QW_DECLARE_GEMM_UKERNEL(name)                                                                            \
  void name(size_t mr, size_t nc, size_t k, const uint8_t* a, size_t a_stride, const int8_t* w, int32_t* c, \
            size_t c_stride, const struct qw_gemm_params* params)

QW_DECLARE_GEMM_UKERNEL(qw_qu8_qs8_gemm_ukernel_2x4c8__scalar);
QW_DECLARE_GEMM_UKERNEL(qw_qs8_qs8_gemm_ukernel_2x4c8__scalar);
#if QW_SIMD
QW_DECLARE_GEMM_UKERNEL(qw_qu8_qs8_gemm_ukernel_1x4c8__wasmsimd_dot16x2);
QW_DECLARE_GEMM_UKERNEL(qw_qu8_qs8_gemm_ukernel_2x4c8__wasmsimd_dot16x2);
QW_DECLARE_GEMM_UKERNEL(qw_qu8_qs8_gemm_ukernel_3x4c8__wasmsimd_dot16x2);
QW_DECLARE_GEMM_UKERNEL(qw_qu8_qs8_gemm_ukernel_4x4c8__wasmsimd_dot16x2);
QW_DECLARE_GEMM_UKERNEL(qw_qs8_qs8_gemm_ukernel_2x4c8__wasmsimd_dot16x2);
#endif

#endif /* QWASM_GEMM_H */
