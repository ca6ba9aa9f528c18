/* GEMM microkernels on the relaxed-SIMD dot product i32x4.relaxed_dot_i8x16_i7x16_add_s, over the X8_C4 layout
 * of gemm.h: one instruction adds 16 products (4 depth steps of 4 columns), where SIMD128's
 * i32x4.dot_i16x8_s + i32x4.add add 8. The instruction's result is implementation-defined unless the second
 * operand is in [0, 127]; js/runtime/relaxed.js probes the engine and picks these kernels only where it
 * multiplies full bytes exactly (usdot: unsigned second operand, as vpdpbusd on AVX-VNNI hosts; sdot: signed, as
 * ARM's sdot and vpdpbssd), with the A packing that puts the activations in that range. On engines that lower the
 * instruction to vpmaddubsw (saturating pairs of products) the probe fails and these kernels never run.
 * onnxruntime's MLAS (HasUSDot) and XNNPACK's hardware config probe the same way. */
#include "gemm/gemm-wasmsimd.h"

#if defined(__wasm_relaxed_simd__)
#define USDOT(a, b, c) \
  ((v128_t)__builtin_wasm_relaxed_dot_i8x16_i7x16_add_s_i32x4((__i8x16)(a), (__i8x16)(b), (__i32x4)(c)))
#define SDOT USDOT
#else
/* The native tests: the instruction as each exact semantics computes it (a signed; b unsigned or signed). */
static inline v128_t relaxed_dot(v128_t a, v128_t b, v128_t c, int b_signed) {
  int8_t av[16];
  uint8_t bv[16];
  int32_t cv[4];
  wasm_v128_store(av, a);
  wasm_v128_store(bv, b);
  wasm_v128_store(cv, c);
  for (int lane = 0; lane < 4; lane++) {
    uint32_t sum = (uint32_t)cv[lane];
    for (int i = 4 * lane; i < 4 * lane + 4; i++) {
      sum += (uint32_t)((int32_t)av[i] * (b_signed ? (int32_t)(int8_t)bv[i] : (int32_t)bv[i]));
    }
    cv[lane] = (int32_t)sum;
  }
  return wasm_v128_load(cv);
}
#define USDOT(a, b, c) relaxed_dot(a, b, c, 0)
#define SDOT(a, b, c) relaxed_dot(a, b, c, 1)
#endif

#define NR 8

/* The panel header: the depth K and za = a_zp + offset. */
struct panel_header {
  int32_t k, za, reserved[2];
};

/* Rows of MR (aliased beyond mr) x 8 columns, 4 depth steps per relaxed dot; then the zero-point terms. */
#define QW_GEMM_WASMRELAXED(name, MR, DOT)                                                                   \
  QW_DECLARE_GEMM_UKERNEL(name) {                                                                            \
    QW_ASSERT_GEMM_UKERNEL(MR, 4);                                                                           \
    const struct panel_header* header = (const struct panel_header*)a;                                       \
    const v128_t vk = wasm_i32x4_splat(header->k), vza = wasm_i32x4_splat(header->za);                       \
    QW_GEMM_ROW_POINTERS(MR, uint8_t, (const uint8_t*)a + sizeof(struct panel_header), kc + 4)              \
    const uint8_t* wt = (const uint8_t*)w;                                                                    \
    for (size_t n0 = 0; n0 < nc; n0 += NR) {                                                                  \
      QW_GEMM_ZEROED_ACCUMULATORS(MR)                                                                         \
      for (size_t kk = 0; kk < kc; kk += 4, wt += 32) {                                                       \
        const v128_t wl = wasm_v128_load(wt);                                                                 \
        const v128_t wh = wasm_v128_load(wt + 16);                                                            \
        for (size_t r = 0; r < MR; r++) {                                                                     \
          const v128_t vb = wasm_v128_load32_splat(ap[r] + kk);                                               \
          lo[r] = DOT(wl, vb, lo[r]);                                                                         \
          hi[r] = DOT(wh, vb, hi[r]);                                                                         \
        }                                                                                                     \
      }                                                                                                       \
      /* - za sum_k w8 + K za z, per column; then - z sum_k b per row */                                     \
      const v128_t zl = wasm_v128_load(wt + 32), zh = wasm_v128_load(wt + 48);                               \
      const v128_t tl = wasm_i32x4_sub(wasm_i32x4_mul(wasm_i32x4_mul(vk, vza), zl),                          \
                                       wasm_i32x4_mul(vza, wasm_v128_load(wt)));                             \
      const v128_t th = wasm_i32x4_sub(wasm_i32x4_mul(wasm_i32x4_mul(vk, vza), zh),                          \
                                       wasm_i32x4_mul(vza, wasm_v128_load(wt + 16)));                        \
      wt += 64;                                                                                               \
      const size_t columns = nc - n0 < NR ? nc - n0 : NR;                                                     \
      /* Highest row first: aliased rows hold the values of the rows they alias. */                          \
      for (size_t r = MR; r-- > 0;) {                                                                         \
        const v128_t rowsum = wasm_v128_load32_splat(ap[r] + kc);                                             \
        const v128_t l = wasm_i32x4_sub(wasm_i32x4_add(lo[r], tl), wasm_i32x4_mul(zl, rowsum));              \
        const v128_t h = wasm_i32x4_sub(wasm_i32x4_add(hi[r], th), wasm_i32x4_mul(zh, rowsum));              \
        qw_store_i32_row8(cp[r] + n0, l, h, columns);                                                         \
      }                                                                                                       \
    }                                                                                                         \
  }

QW_GEMM_WASMRELAXED(qw_qs8_gemm_ukernel_1x8c4__wasmrelaxed_usdot, 1, USDOT)
QW_GEMM_WASMRELAXED(qw_qs8_gemm_ukernel_4x8c4__wasmrelaxed_usdot, 4, USDOT)
QW_GEMM_WASMRELAXED(qw_qs8_gemm_ukernel_1x8c4__wasmrelaxed_sdot, 1, SDOT)
QW_GEMM_WASMRELAXED(qw_qs8_gemm_ukernel_4x8c4__wasmrelaxed_sdot, 4, SDOT)

/* A panel rows as bytes b = a ^ FLIP (0: a copy; 0x80: a - 128 for quint8, a + 128 for qint8, read as the other
 * signedness), zero-padded to kc, each followed by its sum of b as the kernels' dot reads b (B_SIGNED); the
 * header holds K and za = a_zp + OFFSET, OFFSET what the flip adds. usdot multiplies unsigned b exactly, so
 * quint8 is copied and qint8 flipped; sdot the reverse. */
#define QW_PACK_A_C4(name, FLIP, OFFSET, B_SIGNED)                                                       \
  QW_DECLARE_GEMM_PACK_A_UKERNEL(name) {                                                                 \
    QW_ASSERT_GEMM_PACK_A_UKERNEL();                                                                     \
    struct panel_header* header = (struct panel_header*)panel;                                           \
    header->k = (int32_t)k;                                                                              \
    header->za = a_zero_point + (OFFSET);                                                                \
    header->reserved[0] = header->reserved[1] = 0;                                                       \
    const v128_t vflip = wasm_i8x16_splat((int8_t)(FLIP));                                               \
    uint8_t* out = (uint8_t*)panel + sizeof(struct panel_header);                                        \
    for (size_t r = 0; r < mr; r++, a += a_stride, out += kc + 4) {                                      \
      v128_t vsum = wasm_i32x4_const(0, 0, 0, 0);                                                        \
      size_t kk = 0;                                                                                     \
      for (; kk + 16 <= k; kk += 16) {                                                                   \
        const v128_t b = wasm_v128_xor(wasm_v128_load(a + kk), vflip);                                   \
        wasm_v128_store(out + kk, b);                                                                    \
        vsum = wasm_i32x4_add(vsum, B_SIGNED ? wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_extadd_pairwise_i8x16(b)) \
                                             : wasm_i32x4_extadd_pairwise_i16x8(wasm_u16x8_extadd_pairwise_u8x16(b))); \
      }                                                                                                  \
      uint32_t sum = (uint32_t)(wasm_i32x4_extract_lane(vsum, 0) + wasm_i32x4_extract_lane(vsum, 1) +    \
                                wasm_i32x4_extract_lane(vsum, 2) + wasm_i32x4_extract_lane(vsum, 3));    \
      for (; kk < k; kk++) {                                                                             \
        out[kk] = (uint8_t)(a[kk] ^ (FLIP));                                                             \
        sum += (uint32_t)(B_SIGNED ? (int32_t)(int8_t)out[kk] : (int32_t)out[kk]);                       \
      }                                                                                                  \
      for (; kk < kc; kk++) out[kk] = 0;                                                                 \
      memcpy(out + kc, &sum, sizeof sum);                                                                \
    }                                                                                                    \
  }

QW_PACK_A_C4(qw_qu8_gemm_pack_a_ukernel_c4__wasmrelaxed_usdot, 0, 0, 0)
QW_PACK_A_C4(qw_qs8_gemm_pack_a_ukernel_c4__wasmrelaxed_usdot, 0x80, 128, 0)
QW_PACK_A_C4(qw_qu8_gemm_pack_a_ukernel_c4__wasmrelaxed_sdot, 0x80, -128, 1)
QW_PACK_A_C4(qw_qs8_gemm_pack_a_ukernel_c4__wasmrelaxed_sdot, 0, 0, 1)
