/*
 * int8 GEMM microkernels: C[m][n] = sum_k (A[m][k] - a_zp) * (W[k][n] - w_zp[n]), int32, exact.
 *
 * A GEMM configuration (struct qw_gemm_config below, one per kernel set in src/config.c; XNNPACK's
 * src/configs/gemm-config.c is the model) carries the layout together with the functions that write
 * and read it:
 *   mr      rows of A per kernel call: gemm[r - 1] computes r <= mr rows,
 *   nr      columns per packed weight tile; a kernel call sweeps every tile of its nc columns,
 *   kr      K is zero-padded to kc = round_up(k, kr), in the packed weights and in the A panel,
 *   pack_w  writes the weights once (any n, k, strides), pack_a the A panel of up to mr rows per call.
 * The drivers (src/operators/gemm.c, conv2d.c) take every size from the config. Packed weights record
 * (packing, nr, kr) in their header, so weights packed with one layout are refused by a config with
 * another; configs sharing a layout share packed weights.
 *
 * The layout of today's configs, QW_GEMM_PACKING_X16_C2 (nr 8, kr 4): weights as int16 with their zero
 * points subtracted; per tile of nr columns, kc / 2 blocks of 2 * nr int16 in which column j's pair
 * (k, k + 1) sits at 2 * j:
 *   [c0k0 c0k1 c1k0 c1k1 c2k0 c2k1 c3k0 c3k1][c4k0 c4k1 ... c7k0 c7k1]   (nr 8: two vectors per pair)
 * The A panel holds int16 (a - a_zp). One 32-bit splat of a row's (k, k + 1) pair times a tile vector
 * with i32x4.dot_i16x8_s gives 4 columns of two products each: two ALU operations per 8 multiply-adds,
 * no widening in the loop. kr 4 lets the one-row SIMD kernels take two pairs per step. The scalar config
 * stores the panel row after row, kc apart; the SIMD128 config (a_interleaved) interleaves its rows by
 * k pair, so that a kernel finds all its rows' pairs of one step at fixed offsets from one pointer:
 *   [r0k0 r0k1 r1k0 r1k1 r2k0 r2k1 r3k0 r3k1][r0k2 r0k3 r1k2 ...]   (4 rows)
 * for qw_gemm_panel_rows(mr) rows, the rows past mr copies of row mr - 1. Rows kc apart cost V8 an
 * address computation per row and step: 84% of the dot peak for 256x1024x1024 in Node 20, 92% interleaved.
 *
 * Why int16 weights: on these machines the wasm dot loop is bound by SIMD ALU operations, not by
 * memory; widening int8 weights in the loop costs more than reading twice the bytes, even for a
 * single row. Measured again (Node 20, AMD EPYC, 1 MiB L2 and 32 MiB L3 per core / shared) with an
 * int8 layout of the same order read by i16x8.load8x8_s (one pmovsxbw with a memory operand, which
 * takes a SIMD ALU slot the loop needs for its dots and adds), min of 21 interleaved runs:
 * 1x1024x1024 (2 MiB as int16) 28.5 us int16 against 35.4 us int8; 1x2048x2048 (8 MiB) 113 against
 * 140 us; 1x1024x128 (in L2 either way) 3.4 against 4.5 us; MobileNetV2-sized GEMMs (M 49..12544,
 * K 16..960) and 64..256x1024x1024 0.6-10% slower. int8 won only where the int16 weights outgrow
 * about half the L3 (memory-bound): 1x4096x2048 (16 MiB) 284 against 317 us, 1x4096x4096 (32 MiB)
 * 717 against 1075 us (4 rows 2443 against 3173, 16 rows 7743 against 8257), 1x8192x4096 1468
 * against 2192 us. No matrix of the models qwasm runs is that large (BERT-base's biggest, 768 x 3072,
 * is 4.5 MiB as int16). Such a layout for huge matrices would need qw_gemm_pack_size to know the
 * weights' dtype and zero points: int8 holds every w - w_zp for qint8 with zero points 0 or quint8
 * with zero points 128, other weights only by their data.
 * Contract: sums fit int32 for K < 2^15 (|a - a_zp| and |w - w_zp| <= 255).
 */
#ifndef QWASM_GEMM_H
#define QWASM_GEMM_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

static inline size_t qw_round_up(size_t x, size_t q) {
  return (x + q - 1) / q * q;
}

/* The most rows a GEMM config may run per kernel call. */
#define QW_GEMM_MR_LIMIT 8

/* What a config's pack_w writes (recorded in packed weights' headers). */
enum { QW_GEMM_PACKING_X16_C2 = 1, QW_GEMM_PACKING_X8_C4 = 2 };

/* Weights to pack: W[j][kk] = w[j * n_stride + (kk % k_inner) * k_stride + (kk / k_inner) * k_outer_stride]
 * (element strides) for j < n, kk < k, minus zero_points[zp_per_column ? j : 0]. A matrix has
 * k_inner = k; a convolution's [out][in][kernel_h * kernel_w] weights read in (tap, in) order have
 * k_inner = in, k_stride = taps, k_outer_stride = 1. */
struct qw_gemm_weights {
  const uint8_t* w;
  int is_signed;
  size_t n_stride, k_stride, k_inner, k_outer_stride;
  const int32_t* zero_points;
  int zp_per_column;
};

/* Packs n columns of depth k into round_up(n, nr) * round_up(k, kr) elements, padding zero. */
typedef void (*qw_gemm_pack_w_fn)(size_t nr, size_t kr, size_t n, size_t k, const struct qw_gemm_weights* weights,
                                  void* packed);

/* Packs mr rows of 8-bit A (a_stride bytes apart) into the panel: (a - a_zp), rows kc apart, zero-padded
 * from k to kc. */
typedef void (*qw_gemm_pack_a_ukernel)(size_t mr, size_t k, size_t kc, const uint8_t* a, size_t a_stride,
                                       int32_t a_zero_point, void* panel);

/* mr rows of the panel x nc columns (every tile) of the packed weights; C int32 rows c_stride apart. */
typedef void (*qw_gemm_ukernel)(size_t mr, size_t nc, size_t kc, const void* a, const void* w, int32_t* c,
                                size_t c_stride);

struct qw_requantization_params;

/* The same sums straight to 8-bit outputs: requantized by the fp32 rule for fp32_plain parameters
 * (requantization/requantization.h), whose arrays hold the nc columns' entries; y rows y_stride bytes apart.
 * The same bytes as the ukernel followed by the fp32 requantization kernel, without the int32 block between. */
typedef void (*qw_gemm_requantizing_ukernel)(size_t mr, size_t nc, size_t kc, const void* a, const void* w,
                                             const struct qw_requantization_params* params, void* y,
                                             size_t y_stride);

struct qw_gemm_config {
  uint8_t mr, nr, kr;
  uint8_t packing;        /* QW_GEMM_PACKING_*: the layout pack_w writes and the kernels read */
  uint8_t a_element_size; /* bytes per A panel element */
  uint8_t w_element_size; /* bytes per packed weight */
  uint8_t a_row_extra;    /* bytes after each A panel row (X8_C4: the row's sum) */
  uint8_t a_header;       /* bytes before the A panel's rows (X8_C4: the depth and the zero-point term) */
  uint8_t a_interleaved;  /* 1: the A panel's rows interleaved by k pair (qw_gemm_panel_rows); 0: row after row */
  uint8_t w_column_extra; /* bytes per column after each tile's weights (X8_C4: column sum, zero point) */
  qw_gemm_ukernel gemm[QW_GEMM_MR_LIMIT]; /* [rows - 1], rows 1..mr */
  /* [output signed][rows - 1]: gemm with the fp32_plain output stage fused, or NULL (the driver then runs gemm and
   * the requantization kernel; the SIMD128 config leaves one row there, src/config.c says why). */
  qw_gemm_requantizing_ukernel fp32_plain[2][QW_GEMM_MR_LIMIT];
  /* [rows - 1]: gemm with the dynamic matmul's float output stage fused (float y, requantization params'
   * multiplier and optional bias_f32, scale_output's rule), or NULL (gemm, then the scale_output kernel) */
  qw_gemm_requantizing_ukernel f32_output[QW_GEMM_MR_LIMIT];
  /* [output signed]: fp32_plain kernels that read quint8 A's rows in place (their `a` a struct qw_gemm_direct_a,
   * not a panel) for K a multiple of kr, or NULL: any number of rows (their mr), in blocks of the config's mr, the
   * last block's missing rows aliasing its last. The relaxed usdot table only, whose panels hold quint8 A unchanged:
   * there packing A took a tenth of MobileNetV2's time, mostly for its 1x1 convolutions. */
  qw_gemm_requantizing_ukernel fp32_plain_direct[2];
  qw_gemm_pack_a_ukernel pack_a[2];       /* [activations signed] */
  qw_gemm_pack_w_fn pack_w;
};

/* A's rows for the fp32_plain_direct kernels: za = the zero point of quint8 A, row r's K bytes at a + r a_stride. The
 * kernels compute each row's sum of bytes themselves when a weight zero point needs it. */
struct qw_gemm_direct_a {
  int32_t za;
  const uint8_t* a;
  size_t a_stride;
};

/* Bytes of packed weights per column of depth k, in 64 bits: column n0 (a multiple of nr) starts n0 times this in. */
static inline uint64_t qw_gemm_column_bytes(const struct qw_gemm_config* config, size_t k) {
  return (uint64_t)qw_round_up(k, config->kr) * config->w_element_size + config->w_column_extra;
}

/* Bytes of packed weights for n columns of depth k (no header), in 64 bits: the size functions check it. */
static inline uint64_t qw_gemm_packed_bytes(const struct qw_gemm_config* config, size_t n, size_t k) {
  return (uint64_t)qw_round_up(n, config->nr) * qw_gemm_column_bytes(config, k);
}

/* The rows an interleaved A panel of mr rows holds: mr rounded up to a power of two, the rows of the kernel that runs
 * them (kernels for 1, 2 and 4 rows; 3 rows run on the 4-row kernel, the fourth a copy of the third). */
static inline size_t qw_gemm_panel_rows(size_t mr) {
  return mr <= 2 ? mr : mr <= 4 ? 4 : 8;
}

/* Bytes of an A panel of mr rows of depth k, in 64 bits. */
static inline uint64_t qw_gemm_panel_bytes(const struct qw_gemm_config* config, size_t mr, size_t k) {
  const size_t rows = config->a_interleaved ? qw_gemm_panel_rows(mr) : mr;
  return config->a_header + (uint64_t)rows * ((uint64_t)qw_round_up(k, config->kr) * config->a_element_size + config->a_row_extra);
}

/* The layout word packed-weight headers record: weights with another word were packed for another layout. */
static inline uint32_t qw_gemm_layout(const struct qw_gemm_config* config) {
  return (uint32_t)config->packing | (uint32_t)config->nr << 8 | (uint32_t)config->kr << 16;
}

/* Index of weight (column j, depth kk) in QW_GEMM_PACKING_X16_C2 for depth k. */
static inline size_t qw_gemm_x16c2_index(size_t nr, size_t kr, size_t k, size_t j, size_t kk) {
  return (j / nr) * nr * qw_round_up(k, kr) + (kk / 2) * 2 * nr + (j % nr) * 2 + kk % 2;
}

void qw_pack_x16c2_gemm_weights(size_t nr, size_t kr, size_t n, size_t k, const struct qw_gemm_weights* weights,
                                void* packed);

/*
 * QW_GEMM_PACKING_X8_C4 (relaxed SIMD, i32x4.relaxed_dot_i8x16_i7x16_add_s): 4 depth steps of a column per
 * 32-bit lane, so one relaxed dot of a tile vector with a row's 4 activation bytes (splat) adds 16 products.
 * Weights as int8 w8 = w - c (c = 0 for qint8, 128 for quint8: always in range), per tile of nr columns:
 * kc / 4 blocks of nr * 4 bytes (column j's bytes k..k+3 at 4 * j), then per column the int32 column term
 * K z - sum_k w8 and int32 z = w_zp - c. The A panel holds b = a + offset as bytes (offset 0 or +-128, the operand
 * range the engine's relaxed dot multiplies exactly: unsigned for vpdpbusd, signed for ARM's sdot) behind a header
 * of {za = a_zp + offset}, its rows = qw_gemm_panel_rows(mr) rows interleaved by groups of 4 depth steps (rows
 * past mr copies of row mr - 1), then each row's int32 sum_k b:
 *   [r0k0..k3 r1k0..k3 r2k0..k3 r3k0..k3][r0k4..k7 ...] ... [sum r0][sum r1][sum r2][sum r3]   (4 rows)
 * The kernels then add
 *   sum_k b w8 + za (K z - sum_k w8) - z sum_k b = sum_k (a - a_zp)(w - w_zp)
 * in wrapping int32 (the exact result fits; the terms need not), the last term skipped for a tile whose z are 0.
 */
void qw_pack_x8c4_gemm_weights(size_t nr, size_t kr, size_t n, size_t k, const struct qw_gemm_weights* weights,
                               void* packed);

/* Index of weight (column j, depth kk) in QW_GEMM_PACKING_X8_C4 (bytes) for depth k. */
static inline size_t qw_gemm_x8c4_index(size_t nr, size_t kr, size_t k, size_t j, size_t kk) {
  return (j / nr) * nr * (qw_round_up(k, kr) + 8) + (kk / 4) * 4 * nr + (j % nr) * 4 + kk % 4;
}

/* The contract a GEMM microkernel of at most MR rows stepping K by KC_STEP asserts on entry. */
#define QW_ASSERT_GEMM_UKERNEL(MR, KC_STEP)                                      \
  assert(mr >= 1 && mr <= (MR) && nc != 0 && kc != 0 && kc % (KC_STEP) == 0); \
  assert(a != NULL && w != NULL && c != NULL && (mr == 1 || c_stride >= nc))

/* The contract an A packing kernel asserts on entry. */
#define QW_ASSERT_GEMM_PACK_A_UKERNEL() \
  assert(mr != 0 && k != 0 && kc >= k && a != NULL && panel != NULL && (mr == 1 || a_stride >= k))

#define QW_DECLARE_GEMM_UKERNEL(name) \
  void name(size_t mr, size_t nc, size_t kc, const void* a, const void* w, int32_t* c, size_t c_stride)
#define QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(name)                                                    \
  void name(size_t mr, size_t nc, size_t kc, const void* a, const void* w,                              \
            const struct qw_requantization_params* params, void* y, size_t y_stride)
#define QW_DECLARE_GEMM_PACK_A_UKERNEL(name) \
  void name(size_t mr, size_t k, size_t kc, const uint8_t* a, size_t a_stride, int32_t a_zero_point, void* panel)

QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_4x8c2__scalar);
QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_4x16c2__scalar);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qu8_gemm_pack_a_ukernel__scalar);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qs8_gemm_pack_a_ukernel__scalar);
/* Relaxed-dot kernels for the two exact semantics (gemm-wasmrelaxed.c): usdot (b unsigned: x86 AVX-VNNI's
 * vpdpbusd), sdot (b signed: ARM's sdot, AVX-VNNI-INT8's vpdpbssd); the same instruction in wasm, emulated per
 * semantics in the native tests. pack_a: b = a (copy) or a ^ 0x80 (a -+ 128) for [activations signed]. */
#if QW_SIMD && QW_RELAXED
#define QW_DECLARE_RELAXED_GEMM_UKERNELS(SEMANTICS)                                                   \
  QW_DECLARE_GEMM_UKERNEL(qw_qs8_gemm_ukernel_1x8c4__wasmrelaxed_##SEMANTICS);                          \
  QW_DECLARE_GEMM_UKERNEL(qw_qs8_gemm_ukernel_2x8c4__wasmrelaxed_##SEMANTICS);                          \
  QW_DECLARE_GEMM_UKERNEL(qw_qs8_gemm_ukernel_4x8c4__wasmrelaxed_##SEMANTICS);                          \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs8_qu8_gemm_fp32_plain_ukernel_2x8c4__wasmrelaxed_##SEMANTICS); \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs8_qu8_gemm_fp32_plain_ukernel_4x8c4__wasmrelaxed_##SEMANTICS); \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs8_qs8_gemm_fp32_plain_ukernel_2x8c4__wasmrelaxed_##SEMANTICS); \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs8_qs8_gemm_fp32_plain_ukernel_4x8c4__wasmrelaxed_##SEMANTICS); \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs8_f32_gemm_ukernel_2x8c4__wasmrelaxed_##SEMANTICS);          \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs8_f32_gemm_ukernel_4x8c4__wasmrelaxed_##SEMANTICS);
QW_DECLARE_RELAXED_GEMM_UKERNELS(usdot)
QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs8_qu8_gemm_fp32_plain_direct_ukernel_4x8c4__wasmrelaxed_usdot);
QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs8_qs8_gemm_fp32_plain_direct_ukernel_4x8c4__wasmrelaxed_usdot);
QW_DECLARE_RELAXED_GEMM_UKERNELS(sdot) /* native builds only: in wasm the sdot table takes the usdot kernels */
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qu8_gemm_pack_a_ukernel_c4__wasmrelaxed_usdot);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qs8_gemm_pack_a_ukernel_c4__wasmrelaxed_usdot);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qu8_gemm_pack_a_ukernel_c4__wasmrelaxed_sdot);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qs8_gemm_pack_a_ukernel_c4__wasmrelaxed_sdot);
#endif
#if QW_SIMD
QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_1x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_2x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_UKERNEL(qw_qs16_gemm_ukernel_4x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs16_qu8_gemm_fp32_plain_ukernel_2x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs16_qu8_gemm_fp32_plain_ukernel_4x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs16_qs8_gemm_fp32_plain_ukernel_2x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs16_qs8_gemm_fp32_plain_ukernel_4x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs16_f32_gemm_ukernel_2x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(qw_qs16_f32_gemm_ukernel_4x8c2__wasmsimd_dot16x2);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qu8_gemm_pack_a_ukernel__wasmsimd);
QW_DECLARE_GEMM_PACK_A_UKERNEL(qw_qs8_gemm_pack_a_ukernel__wasmsimd);
#endif

#endif /* QWASM_GEMM_H */
