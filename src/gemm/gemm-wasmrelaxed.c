/* GEMM microkernels on the relaxed-SIMD dot product i32x4.relaxed_dot_i8x16_i7x16_add_s, over the X8_C4 layout
 * of gemm.h: one instruction adds 16 products (4 depth steps of 4 columns), where SIMD128's
 * i32x4.dot_i16x8_s + i32x4.add add 8. The instruction's result is implementation-defined unless the second
 * operand is in [0, 127]; js/runtime/relaxed.js probes the engine and picks these kernels only where it
 * multiplies full bytes exactly (usdot: unsigned second operand, as vpdpbusd on AVX-VNNI hosts; sdot: signed, as
 * ARM's sdot and vpdpbssd), with the A packing that puts the activations in that range. On engines that lower the
 * instruction to vpmaddubsw (saturating pairs of products) the probe fails and these kernels never run.
 * onnxruntime's MLAS (HasUSDot) and XNNPACK's hardware config probe the same way. */
#include "gemm/gemm-wasmsimd.h"

#define NR 8

/* The panel header: za = a_zp + offset, padded to 16 bytes. */
struct panel_header {
  int32_t za, reserved[3];
};

/* The sums of one tile, MR rows (aliased beyond mr) x 8 columns, into lo[r] / hi[r], started from init_lo / init_hi
 * plus the tile's column term za (K z - sum_k w8) (gemm.h), ending with each row's term - z sum_k b unless every z
 * of the tile is 0 (symmetric weights). Per step 2 weight loads, MR splat loads and 2 MR dots (8 sums, 2 weights and a
 * splat: 11 of the 15 xmm registers V8 allocates). Where A comes from: STEPS(MR) the loop header over the depth steps,
 * SPLAT_AT(r) row r's 4 bytes of the step, ROWSUMS_READY() what makes ROWSUM(r), row r's splatted sum, readable.
 * Advances wt past the tile and its trailer. */
#define QW_GEMM_RELAXED_TILE_SUMS_(MR, DOT, init_lo, init_hi, STEPS, SPLAT_AT, ROWSUMS_READY, ROWSUM)         \
  v128_t lo[MR], hi[MR];                                                                                      \
  {                                                                                                           \
    const v128_t l0 = wasm_i32x4_add(init_lo, wasm_i32x4_mul(vza, wasm_v128_load(wt + NR * kc)));             \
    const v128_t h0 = wasm_i32x4_add(init_hi, wasm_i32x4_mul(vza, wasm_v128_load(wt + NR * kc + 16)));        \
    for (size_t r = 0; r < MR; r++) {                                                                         \
      lo[r] = l0;                                                                                             \
      hi[r] = h0;                                                                                             \
    }                                                                                                         \
  }                                                                                                           \
  STEPS(MR) {                                                                                                 \
    const v128_t wl = wasm_v128_load(wt);                                                                     \
    const v128_t wh = wasm_v128_load(wt + 16);                                                                \
    for (size_t r = 0; r < MR; r++) {                                                                         \
      const v128_t vb = wasm_v128_load32_splat(SPLAT_AT(r));                                                  \
      lo[r] = DOT(wl, vb, lo[r]);                                                                             \
      hi[r] = DOT(wh, vb, hi[r]);                                                                             \
    }                                                                                                         \
  }                                                                                                           \
  const v128_t zl = wasm_v128_load(wt + 32), zh = wasm_v128_load(wt + 48);                                    \
  wt += 64;                                                                                                   \
  if (wasm_v128_any_true(wasm_v128_or(zl, zh))) {                                                             \
    ROWSUMS_READY()                                                                                           \
    for (size_t r = 0; r < MR; r++) {                                                                         \
      const v128_t rowsum = ROWSUM(r);                                                                        \
      lo[r] = wasm_i32x4_sub(lo[r], wasm_i32x4_mul(zl, rowsum));                                              \
      hi[r] = wasm_i32x4_sub(hi[r], wasm_i32x4_mul(zh, rowsum));                                              \
    }                                                                                                         \
  }

/* From the panel (below), interleaved by 4-byte groups (gemm.h): every row's group of one step at a fixed offset from
 * one pointer, the rows' sums stored after the groups. */
#define QW_GEMM_RELAXED_PANEL_STEPS(MR) for (const uint8_t* ak = a8; ak != a8_end; ak += 4 * (MR), wt += 32)
#define QW_GEMM_RELAXED_PANEL_SPLAT(r) (ak + 4 * (r))
#define QW_GEMM_RELAXED_PANEL_SUMS_READY()
#define QW_GEMM_RELAXED_PANEL_ROWSUM(r) wasm_v128_load32_splat(rowsums + (r))
#define QW_GEMM_RELAXED_TILE_SUMS(MR, DOT, init_lo, init_hi)                                                 \
  QW_GEMM_RELAXED_TILE_SUMS_(MR, DOT, init_lo, init_hi, QW_GEMM_RELAXED_PANEL_STEPS, QW_GEMM_RELAXED_PANEL_SPLAT, \
                             QW_GEMM_RELAXED_PANEL_SUMS_READY, QW_GEMM_RELAXED_PANEL_ROWSUM)

/* The panel of an MR-row kernel: its 4-byte groups (start, end), the rows' sums after them, and za. */
#define QW_GEMM_RELAXED_PANEL(MR)                                                                            \
  const struct panel_header* header = (const struct panel_header*)a;                                        \
  const v128_t vza = wasm_i32x4_splat(header->za);                                                          \
  const uint8_t* a8 = (const uint8_t*)a + sizeof(struct panel_header);                                      \
  const uint8_t* a8_end = a8 + (MR) * kc;                                                                   \
  int32_t rowsums[MR];                                                                                      \
  memcpy(rowsums, a8_end, sizeof rowsums);                                                                  \
  const uint8_t* wt = (const uint8_t*)w;

#define QW_GEMM_WASMRELAXED(name, MR, DOT)                                                                   \
  QW_DECLARE_GEMM_UKERNEL(name) {                                                                            \
    QW_ASSERT_GEMM_UKERNEL(MR, 4);                                                                           \
    QW_GEMM_RELAXED_PANEL(MR)                                                                                \
    QW_GEMM_OUTPUT_ROWS(MR, int32_t, cp, c, c_stride)                                                        \
    const v128_t zero = wasm_i32x4_const(0, 0, 0, 0);                                                        \
    for (size_t n0 = 0; n0 < nc; n0 += NR) {                                                                 \
      QW_GEMM_RELAXED_TILE_SUMS(MR, DOT, zero, zero)                                                         \
      const size_t columns = nc - n0 < NR ? nc - n0 : NR;                                                    \
      /* Highest row first: aliased rows hold the values of the rows they alias. */                         \
      for (size_t r = MR; r-- > 0;) {                                                                        \
        qw_store_i32_row8(cp[r] + n0, lo[r], hi[r], columns);                                                \
      }                                                                                                      \
    }                                                                                                        \
  }

#define GEMV_TILES 4 /* tiles per pass of the one-row kernel: 32 columns, 8 accumulators */

/* One row (GEMV), the int32 sums: four weight tiles per pass share each step's A splat (per 4 depth steps of 32
 * columns 1 splat, 8 weight loads and 8 dots, where one tile at a time takes a splat per 2 dots); the compiler barrier
 * between tiles keeps each tile's loads next to their dots (the SIMD128 GEMV's reason: gemm-wasmsimd.c). The columns
 * after the last four-tile pass take one tile at a time. */
#define QW_GEMM_GEMV_WASMRELAXED(name, DOT)                                                                  \
  QW_DECLARE_GEMM_UKERNEL(name) {                                                                            \
    QW_ASSERT_GEMM_UKERNEL(1, 4);                                                                            \
    (void)mr;                                                                                                \
    (void)c_stride;                                                                                          \
    QW_GEMM_RELAXED_PANEL(1)                                                                                 \
    const size_t tile_bytes = NR * kc + 64, trailer = NR * kc;                                               \
    const v128_t zero = wasm_i32x4_const(0, 0, 0, 0);                                                        \
    size_t n0 = 0;                                                                                           \
    for (; n0 + (GEMV_TILES - 1) * NR < nc; n0 += GEMV_TILES * NR, wt += GEMV_TILES * tile_bytes) {          \
      v128_t lo[GEMV_TILES], hi[GEMV_TILES];                                                                 \
      for (size_t t = 0; t < GEMV_TILES; t++) {                                                              \
        lo[t] = wasm_i32x4_mul(vza, wasm_v128_load(wt + t * tile_bytes + trailer));                          \
        hi[t] = wasm_i32x4_mul(vza, wasm_v128_load(wt + t * tile_bytes + trailer + 16));                     \
      }                                                                                                      \
      const uint8_t* wk = wt;                                                                                \
      for (const uint8_t* ak = a8; ak != a8_end; ak += 4, wk += 32) {                                        \
        const v128_t vb = wasm_v128_load32_splat(ak);                                                        \
        for (size_t t = 0; t < GEMV_TILES; t++) {                                                            \
          __asm__ __volatile__("" ::: "memory");                                                             \
          lo[t] = DOT(wasm_v128_load(wk + t * tile_bytes), vb, lo[t]);                                       \
          hi[t] = DOT(wasm_v128_load(wk + t * tile_bytes + 16), vb, hi[t]);                                  \
        }                                                                                                    \
      }                                                                                                      \
      const v128_t rowsum = wasm_v128_load32_splat(rowsums);                                                 \
      for (size_t t = 0; t < GEMV_TILES; t++) {                                                              \
        const v128_t zl = wasm_v128_load(wt + t * tile_bytes + trailer + 32);                                \
        const v128_t zh = wasm_v128_load(wt + t * tile_bytes + trailer + 48);                                \
        const size_t left = nc - n0 - t * NR;                                                                \
        qw_store_i32_row8(c + n0 + t * NR, wasm_i32x4_sub(lo[t], wasm_i32x4_mul(zl, rowsum)),                \
                          wasm_i32x4_sub(hi[t], wasm_i32x4_mul(zh, rowsum)), left < NR ? left : NR);         \
      }                                                                                                      \
    }                                                                                                        \
    for (; n0 < nc; n0 += NR) {                                                                              \
      QW_GEMM_RELAXED_TILE_SUMS(1, DOT, zero, zero)                                                          \
      qw_store_i32_row8(c + n0, lo[0], hi[0], nc - n0 < NR ? nc - n0 : NR);                                  \
    }                                                                                                        \
  }

/* The same with the fp32_plain output stage fused (gemm-wasmsimd.h), the sums started from the bias: without it the
 * relaxed kernels wrote every sum to an int32 block that the requantization kernel read back, and MobileNetV2's
 * K 16 layer (16 -> 96 at 112x112) ran slower than on SIMD128 in Chromium 156 (0.665 against 0.555 ms). */
#define QW_GEMM_FP32_PLAIN_WASMRELAXED_(name, MR, DOT, Y_SIGNED, A_SOURCE, TILE_SUMS)                      \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(name) {                                                               \
    assert(mr >= 1 && nc != 0 && kc != 0 && kc % 4 == 0 && a != NULL && w != NULL);                         \
    QW_GEMM_FP32_BEGIN()                                                                                     \
    /* blocks of MR rows: one from a panel (mr <= MR), any number from A's rows in place */                 \
    for (size_t m0 = 0; m0 < mr; m0 += (MR)) {                                                               \
      const size_t block_rows = mr - m0 < (MR) ? mr - m0 : (MR);                                             \
      A_SOURCE(MR)                                                                                           \
      QW_GEMM_OUTPUT_ROWS_OF(MR, uint8_t, yp, y + m0 * y_stride, y_stride, block_rows)                       \
      for (size_t n0 = 0; n0 < nc; n0 += NR) {                                                               \
        const size_t columns = nc - n0 < NR ? nc - n0 : NR;                                                  \
        QW_GEMM_FP32_TILE_PARAMS(n0, columns)                                                                \
        TILE_SUMS(MR, DOT, wasm_v128_load(bias), wasm_v128_load(bias + 4))                                   \
        QW_GEMM_FP32_STORE_ROWS(MR, yp, n0, columns, Y_SIGNED)                                               \
      }                                                                                                      \
    }                                                                                                        \
  }
#define QW_GEMM_RELAXED_ONE_PANEL(MR) \
  assert(mr <= (MR));                 \
  QW_GEMM_RELAXED_PANEL(MR)
#define QW_GEMM_FP32_PLAIN_WASMRELAXED(name, MR, DOT, Y_SIGNED) \
  QW_GEMM_FP32_PLAIN_WASMRELAXED_(name, MR, DOT, Y_SIGNED, QW_GEMM_RELAXED_ONE_PANEL, QW_GEMM_RELAXED_TILE_SUMS)

/* The dynamic matmul's float output (gemm-wasmsimd.h's QW_GEMM_F32_STORE_ROWS) fused: without it every sum went
 * through an int32 block that qw_qs32_f32_scale_bias_ukernel read back. */
#define QW_GEMM_F32_WASMRELAXED(name, MR, DOT)                                                               \
  QW_DECLARE_GEMM_REQUANTIZING_UKERNEL(name) {                                                               \
    assert(mr >= 1 && mr <= (MR) && nc != 0 && kc != 0 && kc % 4 == 0 && a != NULL && w != NULL);           \
    QW_GEMM_F32_BEGIN(MR)                                                                                    \
    QW_GEMM_RELAXED_PANEL(MR)                                                                                \
    const v128_t zero = wasm_i32x4_const(0, 0, 0, 0);                                                        \
    for (size_t n0 = 0; n0 < nc; n0 += NR) {                                                                 \
      const size_t columns = nc - n0 < NR ? nc - n0 : NR;                                                    \
      QW_GEMM_RELAXED_TILE_SUMS(MR, DOT, zero, zero)                                                         \
      QW_GEMM_F32_STORE_ROWS(MR, n0, columns)                                                                \
    }                                                                                                        \
  }

/* The fp32_plain kernels with A's rows read in place (gemm.h struct qw_gemm_direct_a; quint8 A, usdot): per step
 * the same loads, splats and dots as from a panel, the splats from MR row pointers. The rows' sums of bytes, which
 * only weights with a zero point need, are computed once per row block when the first such tile comes. MobileNetV2 in
 * Chromium 156 (one page alternating the builds): 4.800 -> 4.485 ms, its 1x1 convolutions no longer packing A. All
 * row blocks in one call: a call per block of 4 rows spent a tenth of a K 16 layer in calls and set-up. */
#define QW_GEMM_RELAXED_ROWS(MR)                                                                             \
  const struct qw_gemm_direct_a* direct = (const struct qw_gemm_direct_a*)a;                                \
  const v128_t vza = wasm_i32x4_splat(direct->za);                                                          \
  const uint8_t* ar[MR];                                                                                    \
  for (size_t r = 0; r < (MR); r++) {                                                                       \
    ar[r] = direct->a + (m0 + (r < block_rows ? r : block_rows - 1)) * direct->a_stride;                    \
  }                                                                                                         \
  int32_t rowsums[MR];                                                                                      \
  int have_sums = 0;                                                                                        \
  const uint8_t* wt = (const uint8_t*)w;
#define QW_GEMM_RELAXED_ROWS_STEPS(MR) for (size_t k4 = 0; k4 < kc; k4 += 4, wt += 32)
#define QW_GEMM_RELAXED_ROWS_SPLAT(r) (ar[r] + k4)
#define QW_GEMM_RELAXED_ROWS_SUMS_READY()                                                                    \
  if (!have_sums) {                                                                                         \
    for (size_t r = 0; r < sizeof rowsums / sizeof rowsums[0]; r++) {                                       \
      int32_t sum = 0;                                                                                      \
      for (size_t kk = 0; kk < kc; kk++) sum += ar[r][kk];                                                  \
      rowsums[r] = sum;                                                                                     \
    }                                                                                                       \
    have_sums = 1;                                                                                          \
  }
#define QW_GEMM_RELAXED_ROWS_ROWSUM(r) wasm_i32x4_splat(rowsums[r])
#define QW_GEMM_RELAXED_ROWS_TILE_SUMS(MR, DOT, init_lo, init_hi)                                            \
  QW_GEMM_RELAXED_TILE_SUMS_(MR, DOT, init_lo, init_hi, QW_GEMM_RELAXED_ROWS_STEPS, QW_GEMM_RELAXED_ROWS_SPLAT, \
                             QW_GEMM_RELAXED_ROWS_SUMS_READY, QW_GEMM_RELAXED_ROWS_ROWSUM)
#define QW_GEMM_FP32_PLAIN_DIRECT_WASMRELAXED(name, MR, DOT, Y_SIGNED) \
  QW_GEMM_FP32_PLAIN_WASMRELAXED_(name, MR, DOT, Y_SIGNED, QW_GEMM_RELAXED_ROWS, QW_GEMM_RELAXED_ROWS_TILE_SUMS)

QW_GEMM_FP32_PLAIN_DIRECT_WASMRELAXED(qw_qs8_qu8_gemm_fp32_plain_direct_ukernel_4x8c4__wasmrelaxed_usdot, 4,
                                      QW_RELAXED_USDOT, 0)
QW_GEMM_FP32_PLAIN_DIRECT_WASMRELAXED(qw_qs8_qs8_gemm_fp32_plain_direct_ukernel_4x8c4__wasmrelaxed_usdot, 4,
                                      QW_RELAXED_USDOT, 1)

#define QW_RELAXED_KERNELS(SEMANTICS, DOT)                                                                   \
  QW_GEMM_GEMV_WASMRELAXED(qw_qs8_gemm_ukernel_1x8c4__wasmrelaxed_##SEMANTICS, DOT)                           \
  QW_GEMM_WASMRELAXED(qw_qs8_gemm_ukernel_2x8c4__wasmrelaxed_##SEMANTICS, 2, DOT)                            \
  QW_GEMM_WASMRELAXED(qw_qs8_gemm_ukernel_4x8c4__wasmrelaxed_##SEMANTICS, 4, DOT)                            \
  QW_GEMM_FP32_PLAIN_WASMRELAXED(qw_qs8_qu8_gemm_fp32_plain_ukernel_2x8c4__wasmrelaxed_##SEMANTICS, 2, DOT, 0) \
  QW_GEMM_FP32_PLAIN_WASMRELAXED(qw_qs8_qu8_gemm_fp32_plain_ukernel_4x8c4__wasmrelaxed_##SEMANTICS, 4, DOT, 0) \
  QW_GEMM_FP32_PLAIN_WASMRELAXED(qw_qs8_qs8_gemm_fp32_plain_ukernel_2x8c4__wasmrelaxed_##SEMANTICS, 2, DOT, 1) \
  QW_GEMM_FP32_PLAIN_WASMRELAXED(qw_qs8_qs8_gemm_fp32_plain_ukernel_4x8c4__wasmrelaxed_##SEMANTICS, 4, DOT, 1) \
  QW_GEMM_F32_WASMRELAXED(qw_qs8_f32_gemm_ukernel_2x8c4__wasmrelaxed_##SEMANTICS, 2, DOT)                    \
  QW_GEMM_F32_WASMRELAXED(qw_qs8_f32_gemm_ukernel_4x8c4__wasmrelaxed_##SEMANTICS, 4, DOT)

QW_RELAXED_KERNELS(usdot, QW_RELAXED_USDOT)
#if !defined(__wasm_relaxed_simd__) /* in wasm both are the one instruction: the sdot table takes the usdot kernels */
QW_RELAXED_KERNELS(sdot, QW_RELAXED_SDOT)
#endif

/* 16 depth steps of `rows` (1, 2 or 4) panel rows (b[r]: 16 bytes each) to the interleaved panel at out: 4 groups of
 * each row to each group of the rows (a copy, a 2x2 or a 4x4 transpose of 32-bit lanes). */
QW_ALWAYS_INLINE void store_groups(uint8_t* out, size_t rows, v128_t b[4]) {
  if (rows == 1) {
    wasm_v128_store(out, b[0]);
  } else if (rows == 2) {
    wasm_v128_store(out, wasm_i32x4_shuffle(b[0], b[1], 0, 4, 1, 5));
    wasm_v128_store(out + 16, wasm_i32x4_shuffle(b[0], b[1], 2, 6, 3, 7));
  } else {
    qw_transpose_i32x4(b);
    for (size_t i = 0; i < 4; i++) wasm_v128_store(out + 16 * i, b[i]);
  }
}

/* len (1 to 15) bytes at p in the low lanes of a vector whose other lanes are fill's: one lane load per byte (a
 * memset and a memcpy call per row before: the stem convolution's K of 27 ends every row with 11; the stem 0.41 ->
 * about 0.31 ms in Node 24). */
static inline v128_t load_partial(const uint8_t* p, size_t len, v128_t fill) {
  v128_t v = fill;
  switch (len) {
    case 15: v = wasm_v128_load8_lane(p + 14, v, 14); /* fall through */
    case 14: v = wasm_v128_load8_lane(p + 13, v, 13); /* fall through */
    case 13: v = wasm_v128_load8_lane(p + 12, v, 12); /* fall through */
    case 12: v = wasm_v128_load8_lane(p + 11, v, 11); /* fall through */
    case 11: v = wasm_v128_load8_lane(p + 10, v, 10); /* fall through */
    case 10: v = wasm_v128_load8_lane(p + 9, v, 9); /* fall through */
    case 9: v = wasm_v128_load8_lane(p + 8, v, 8); /* fall through */
    case 8: v = wasm_v128_load8_lane(p + 7, v, 7); /* fall through */
    case 7: v = wasm_v128_load8_lane(p + 6, v, 6); /* fall through */
    case 6: v = wasm_v128_load8_lane(p + 5, v, 5); /* fall through */
    case 5: v = wasm_v128_load8_lane(p + 4, v, 4); /* fall through */
    case 4: v = wasm_v128_load8_lane(p + 3, v, 3); /* fall through */
    case 3: v = wasm_v128_load8_lane(p + 2, v, 2); /* fall through */
    case 2: v = wasm_v128_load8_lane(p + 1, v, 1); /* fall through */
    default: v = wasm_v128_load8_lane(p, v, 0);
  }
  return v;
}

/* The interleaved A panel (gemm.h): rows = qw_gemm_panel_rows(mr) rows (rows past mr copies of row mr - 1) of bytes
 * b = a ^ FLIP (0: a copy; 0x80: a - 128 for quint8, a + 128 for qint8, read as the other signedness), row r's group
 * of depth steps 4g..4g+3 at 4 (g rows + r), zero-padded to kc, then each row's sum of b as the kernels' dot reads b
 * (B_SIGNED); the header holds za = a_zp + OFFSET, OFFSET what the flip adds. usdot multiplies unsigned b
 * exactly, so quint8 is copied and qint8 flipped; sdot the reverse. 16 depth steps of every row at a time; the last
 * 1 to 15 loaded into a vector filled with FLIP (so that the padding becomes b = 0), of which the groups up to kc are
 * kept (byte by byte, the last 11 steps of the stem convolution's K of 27 took a tenth of its time). The rows' sums come
 * from the dot product itself against ones (one instruction per 16 bytes of a row, where two widening pairwise adds
 * and an add took three) and, for four rows, leave as one vector transposed and added: MobileNetV2's convolutions
 * 4.61 -> 4.35 ms in Node 24, where packing A had been 11% of the model's time (a V8 profile); in Chromium 156, one
 * page alternating the builds, MobileNetV2 4.945 -> 4.857 ms, and 4.795 with the tails loaded lane by lane. */
#define QW_PACK_A_C4(name, FLIP, OFFSET, B_SIGNED)                                                        \
  QW_DECLARE_GEMM_PACK_A_UKERNEL(name) {                                                                  \
    QW_ASSERT_GEMM_PACK_A_UKERNEL();                                                                      \
    struct panel_header* header = (struct panel_header*)panel;                                            \
    header->za = a_zero_point + (OFFSET);                                                                 \
    header->reserved[0] = header->reserved[1] = header->reserved[2] = 0;                                  \
    const v128_t vflip = wasm_i8x16_splat((int8_t)(FLIP));                                                \
    const v128_t vones = wasm_i8x16_splat(1);                                                             \
    const size_t rows = qw_gemm_panel_rows(mr);                                                           \
    uint8_t* out = (uint8_t*)panel + sizeof(struct panel_header);                                         \
    const uint8_t* src[4];                                                                                \
    v128_t vsum[4];                                                                                       \
    for (size_t r = 0; r < rows; r++) {                                                                   \
      src[r] = a + (r < mr ? r : mr - 1) * a_stride;                                                      \
      vsum[r] = wasm_i32x4_const(0, 0, 0, 0);                                                             \
    }                                                                                                     \
    for (size_t kk = 0; kk < k; kk += 16) {                                                               \
      v128_t b[4];                                                                                        \
      for (size_t r = 0; r < rows; r++) {                                                                 \
        if (kk + 16 <= k) {                                                                               \
          b[r] = wasm_v128_load(src[r] + kk);                                                             \
        } else {                                                                                          \
          b[r] = load_partial(src[r] + kk, k - kk, vflip);                                                \
        }                                                                                                 \
        b[r] = wasm_v128_xor(b[r], vflip);                                                                \
        /* the row's sum by the dot product itself, with ones: one instruction for three */                  \
        vsum[r] = B_SIGNED ? QW_RELAXED_SDOT(vones, b[r], vsum[r]) : QW_RELAXED_USDOT(vones, b[r], vsum[r]);  \
      }                                                                                                   \
      if (kk + 16 <= kc) {                                                                                \
        store_groups(out + rows * kk, rows, b);                                                           \
      } else if (rows == 4) { /* a vector per group of the four rows: the first (kc - kk) / 4 */            \
        qw_transpose_i32x4(b);                                                                            \
        for (size_t g = 0; g < (kc - kk) / 4; g++) wasm_v128_store(out + rows * kk + 16 * g, b[g]);       \
      } else {                                                                                            \
        uint8_t groups[64];                                                                               \
        store_groups(groups, rows, b);                                                                    \
        memcpy(out + rows * kk, groups, rows * (kc - kk));                                                \
      }                                                                                                   \
    }                                                                                                     \
    if (rows == 4) { /* the four rows' lanes transposed and added: the sums in one vector */               \
      qw_transpose_i32x4(vsum);                                                                           \
      wasm_v128_store(out + rows * kc, wasm_i32x4_add(wasm_i32x4_add(vsum[0], vsum[1]),                   \
                                                      wasm_i32x4_add(vsum[2], vsum[3])));                 \
    } else {                                                                                              \
      uint32_t sums[4];                                                                                   \
      for (size_t r = 0; r < rows; r++) {                                                                 \
        sums[r] = (uint32_t)(wasm_i32x4_extract_lane(vsum[r], 0) + wasm_i32x4_extract_lane(vsum[r], 1) +  \
                             wasm_i32x4_extract_lane(vsum[r], 2) + wasm_i32x4_extract_lane(vsum[r], 3));  \
      }                                                                                                   \
      memcpy(out + rows * kc, sums, rows * sizeof(uint32_t));                                             \
    }                                                                                                     \
  }

QW_PACK_A_C4(qw_qu8_gemm_pack_a_ukernel_c4__wasmrelaxed_usdot, 0, 0, 0)
QW_PACK_A_C4(qw_qs8_gemm_pack_a_ukernel_c4__wasmrelaxed_usdot, 0x80, 128, 0)
QW_PACK_A_C4(qw_qu8_gemm_pack_a_ukernel_c4__wasmrelaxed_sdot, 0x80, -128, 1)
QW_PACK_A_C4(qw_qs8_gemm_pack_a_ukernel_c4__wasmrelaxed_sdot, 0, 0, 1)
