/* wasm SIMD128 float32 GEMM over the 4x8 layout of f32/gemm.h (weight tiles of 4 channels): MR <= 4
 * rows x 8 columns as 2 f32x4 vectors per row; per k, one panel row (2 loads) and MR splatted
 * weights, multiply then add (no FMA in SIMD128: the scalar kernel's bits); alpha applied in registers. */
#include "f32/gemm.h"
#include "simd128.h"

/* The sums (lo / hi: columns 0-3 / 4-7 of each row) times alpha unless it is 1, the first mr rows' nc columns
 * stored. */
#define QW_F32_GEMM_STORE(MR)                                                           \
    if (alpha != 1.0f) {                                                                \
      const v128_t valpha = wasm_f32x4_splat(alpha);                                    \
      for (size_t m = 0; m < MR; m++) {                                                 \
        lo[m] = wasm_f32x4_mul(lo[m], valpha);                                          \
        hi[m] = wasm_f32x4_mul(hi[m], valpha);                                          \
      }                                                                                 \
    }                                                                                   \
    if (nc == 8) {                                                                      \
      for (size_t m = 0; m < mr; m++) {                                                 \
        wasm_v128_store(c + m * c_stride, lo[m]);                                       \
        wasm_v128_store(c + m * c_stride + 4, hi[m]);                                   \
      }                                                                                 \
      return;                                                                           \
    }                                                                                   \
    for (size_t m = 0; m < mr; m++) {                                                   \
      float row[8];                                                                     \
      wasm_v128_store(row, lo[m]);                                                      \
      wasm_v128_store(row + 4, hi[m]);                                                  \
      for (size_t j = 0; j < nc; j++) {                                                 \
        c[m * c_stride + j] = row[j];                                                   \
      }                                                                                 \
    }

/* One depth step of the sums: the panel row's 8 columns (a, a + 4) times row m's weight at W_AT(m), added. */
#define QW_F32_GEMM_STEP(MR, W_AT)                                                      \
      const v128_t a0 = wasm_v128_load(a);                                              \
      const v128_t a1 = wasm_v128_load(a + 4);                                          \
      for (size_t m = 0; m < MR; m++) {                                                 \
        const v128_t wm = wasm_v128_load32_splat(W_AT(m));                              \
        lo[m] = wasm_f32x4_add(lo[m], wasm_f32x4_mul(wm, a0));                          \
        hi[m] = wasm_f32x4_add(hi[m], wasm_f32x4_mul(wm, a1));                          \
      }

#define QW_F32_GEMM_PACKED_W(m) (w + (m))
#define QW_F32_GEMM_ROW_W(m) (xr[m] + k)

#define QW_F32_GEMM_WASMSIMD(name, MR)                                                  \
  QW_DECLARE_F32_GEMM_UKERNEL(name) {                                                   \
    QW_ASSERT_F32_GEMM_UKERNEL(MR, 8);                                                  \
    v128_t lo[MR], hi[MR];                                                              \
    for (size_t m = 0; m < MR; m++) {                                                   \
      lo[m] = hi[m] = wasm_v128_load32_splat(w + m);                                    \
    }                                                                                   \
    w += 4;                                                                             \
    for (size_t k = 0; k < kc; k++, w += 4, a += a_stride) {                            \
      QW_F32_GEMM_STEP(MR, QW_F32_GEMM_PACKED_W)                                        \
    }                                                                                   \
    QW_F32_GEMM_STORE(MR)                                                               \
  }

QW_F32_GEMM_WASMSIMD(qw_f32_gemm_ukernel_1x8__wasmsimd, 1)
QW_F32_GEMM_WASMSIMD(qw_f32_gemm_ukernel_2x8__wasmsimd, 2)
QW_F32_GEMM_WASMSIMD(qw_f32_gemm_ukernel_4x8__wasmsimd, 4)

/* The rows read in place (gemm.h qw_f32_gemm_rows_ukernel): the same operations from +0, row m's weight at
 * x[m][k]; rows past mr read row 0 and are not stored. */
#define QW_F32_GEMM_ROWS_WASMSIMD(name, MR)                                             \
  QW_DECLARE_F32_GEMM_ROWS_UKERNEL(name) {                                              \
    assert(mr >= 1 && mr <= (MR) && nc >= 1 && nc <= 8 && kc != 0);                    \
    const float* xr[MR];                                                                \
    v128_t lo[MR], hi[MR];                                                              \
    for (size_t m = 0; m < MR; m++) {                                                   \
      xr[m] = m < mr ? x + m * x_stride : x;                                            \
      lo[m] = hi[m] = wasm_f32x4_const(0, 0, 0, 0);                                     \
    }                                                                                   \
    for (size_t k = 0; k < kc; k++, a += a_stride) {                                    \
      QW_F32_GEMM_STEP(MR, QW_F32_GEMM_ROW_W)                                           \
    }                                                                                   \
    QW_F32_GEMM_STORE(MR)                                                               \
  }

QW_F32_GEMM_ROWS_WASMSIMD(qw_f32_gemm_rows_ukernel_1x8__wasmsimd, 1)
QW_F32_GEMM_ROWS_WASMSIMD(qw_f32_gemm_rows_ukernel_2x8__wasmsimd, 2)
QW_F32_GEMM_ROWS_WASMSIMD(qw_f32_gemm_rows_ukernel_4x8__wasmsimd, 4)
