/* Float matrix product with onnxruntime's SGEMM summation order (MLAS sgemm.cpp MlasSgemmOperation /
 * MlasSgemmPackedOperation and the wasm kernel SgemmKernelWasmSimd.cpp), on qwasm's float GEMM
 * microkernels (src/f32/gemm.h). Per output element and K block the microkernel sums from +0 in k order,
 * one rounding per product and per sum, exactly as MLAS's kernel; the blocks are then combined as MLAS
 * does: y = block0 * alpha, y = block_i * alpha + y.
 *
 * Single rows take MLAS's GEMV path instead (gemv below).
 *
 * Mapping: the microkernel's "weights" are rows of A (packed here per K block: four rows interleaved
 * per k after a zero bias), its panel is eight columns of B per k (B itself when they are contiguous,
 * else a copy: the last columns, or B transposed). */
#include <string.h>

#include "config.h"
#include "qtypes.h"

/* MLAS's K block: MLAS_SGEMM_PACKED_STRIDEK for a pre-packed B, else the adaptive MLAS_SGEMM_STRIDEK. */
static size_t k_block(size_t n, size_t k, int b_prepacked) {
  if (b_prepacked) {
    return 256;
  }
  size_t stride_n = 128, stride_k = 128;
  if (n >= k) {
    while (stride_k / 2 >= k) {
      stride_n *= 2;
      stride_k /= 2;
    }
  } else {
    while (stride_n > 16 && stride_n / 2 >= n) {
      stride_k *= 2;
      stride_n /= 2;
    }
  }
  return stride_k;
}

/* MLAS's single-row product (MlasGemvFloatKernel, wasm_simd/SgemvKernelWasmSimd.cpp), which onnxruntime's
 * wasm build takes for M == 1, alpha 1, B neither transposed nor pre-packed, over all of K: y = p0 (or, when
 * accumulating, y as it is), then products four k at a time, added one by one to the columns its vector loop
 * covers (all but the last n % 4) and summed first, ((p1 + p2) + p3) + p4, for the last n % 4; the rest of K
 * one by one. */
static void gemv(size_t n, size_t k, const float* a, const float* b, size_t ldb, int accumulate, float* y) {
  const size_t vector_columns = n - n % 4;
  size_t kk = 0;
  if (!accumulate) {
    for (size_t j = 0; j < n; j++) {
      y[j] = a[0] * b[j];
    }
    kk = 1;
  }
  for (; k - kk >= 4; kk += 4) {
    const float* b0 = b + kk * ldb;
    for (size_t j = 0; j < vector_columns; j++) {
      float c = y[j];
      c = a[kk] * b0[j] + c;
      c = a[kk + 1] * b0[ldb + j] + c;
      c = a[kk + 2] * b0[2 * ldb + j] + c;
      c = a[kk + 3] * b0[3 * ldb + j] + c;
      y[j] = c;
    }
    for (size_t j = vector_columns; j < n; j++) {
      y[j] = y[j] + (((a[kk] * b0[j] + a[kk + 1] * b0[ldb + j]) + a[kk + 2] * b0[2 * ldb + j]) + a[kk + 3] * b0[3 * ldb + j]);
    }
  }
  for (; kk < k; kk++) {
    for (size_t j = 0; j < n; j++) {
      y[j] = a[kk] * b[kk * ldb + j] + y[j];
    }
  }
}

size_t qw_f32_matmul_workspace_size(size_t m, size_t n, size_t k) {
  (void)n;
  const struct qw_f32_gemm_config* gemm = &qw_kernels()->f32_gemm;
  if (m > QW_MAX_BYTES || k > QW_MAX_BYTES) {
    return 0;
  }
  const size_t kc = k == 0 ? 1 : k;
  const uint64_t tiles = (m + (size_t)gemm->mr - 1) / (size_t)gemm->mr;
  /* packed rows of A for one K block, one B panel, one output tile (64-bit: each factor is below 2^32) */
  const uint64_t tile = qw_f32_gemm_tile_size(gemm, kc);
  if (tile > QW_MAX_BYTES) {
    return 0;
  }
  return qw_size_or_zero((tiles * tile + (uint64_t)kc * gemm->nr + (uint64_t)gemm->mr * gemm->nr) * sizeof(float));
}

qw_status qw_f32_matmul(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b, size_t ldb,
                        int transpose_b, int b_prepacked, float alpha, int accumulate, float* y, size_t ldy,
                        void* workspace) {
  if (m == 0 || n == 0) {
    return QW_OK;
  }
  if (a == NULL || b == NULL || y == NULL || workspace == NULL || lda < k || ldy < n ||
      ldb < (transpose_b ? k : n) || qw_f32_matmul_workspace_size(m, n, k) == 0 || !qw_size_fits4(m, lda, sizeof(float), 1) ||
      !qw_size_fits4(m, ldy, sizeof(float), 1) || !qw_size_fits4(transpose_b ? n : k, ldb, sizeof(float), 1)) {
    return QW_INVALID_ARGUMENT;
  }
  if (k == 0) { /* MLAS has no block to store: onnxruntime's MatMul fills zeros itself */
    for (size_t i = 0; i < m && !accumulate; i++) {
      memset(y + i * ldy, 0, n * sizeof(float));
    }
    return QW_OK;
  }
  if (m == 1 && alpha == 1.0f && !transpose_b && !b_prepacked) {
    gemv(n, k, a, b, ldb, accumulate, y);
    return QW_OK;
  }
  const struct qw_f32_gemm_config* gemm = &qw_kernels()->f32_gemm;
  const size_t tiles = (m + (size_t)gemm->mr - 1) / (size_t)gemm->mr;
  const size_t kb = k_block(n, k, b_prepacked);
  const size_t kc_max = kb < k ? kb : k;
  float* packed_a = (float*)workspace;
  float* panel = packed_a + tiles * qw_f32_gemm_tile_size(gemm, kc_max);
  float* tile = panel + kc_max * (size_t)gemm->nr;
  for (size_t k0 = 0; k0 < k; k0 += kb) {
    const size_t kc = k - k0 < kb ? k - k0 : kb;
    /* rows of A, four at a time: [0 x4][a[r][k0] x4][a[r][k0 + 1] x4]... (rows past m are zeros) */
    for (size_t t = 0; t < tiles; t++) {
      float* w = packed_a + t * qw_f32_gemm_tile_size(gemm, kc);
      memset(w, 0, qw_f32_gemm_tile_size(gemm, kc) * sizeof(float));
      for (size_t r = 0; r < (size_t)gemm->mr && t * (size_t)gemm->mr + r < m; r++) {
        const float* ar = a + (t * (size_t)gemm->mr + r) * lda + k0;
        for (size_t kk = 0; kk < kc; kk++) {
          w[(size_t)gemm->mr * (kk + 1) + r] = ar[kk];
        }
      }
    }
    for (size_t j0 = 0; j0 < n; j0 += (size_t)gemm->nr) {
      const size_t nc = n - j0 < (size_t)gemm->nr ? n - j0 : (size_t)gemm->nr;
      const float* columns;
      size_t columns_stride;
      if (!transpose_b && nc == (size_t)gemm->nr) {
        columns = b + k0 * ldb + j0;
        columns_stride = ldb;
      } else {
        for (size_t kk = 0; kk < kc; kk++) {
          for (size_t jj = 0; jj < (size_t)gemm->nr; jj++) {
            panel[kk * (size_t)gemm->nr + jj] =
                jj >= nc ? 0.0f : transpose_b ? b[(j0 + jj) * ldb + k0 + kk] : b[(k0 + kk) * ldb + j0 + jj];
          }
        }
        columns = panel;
        columns_stride = (size_t)gemm->nr;
      }
      for (size_t t = 0; t < tiles; t++) {
        const size_t mr = m - t * (size_t)gemm->mr < (size_t)gemm->mr ? m - t * (size_t)gemm->mr : (size_t)gemm->mr;
        gemm->gemm[mr - 1](mr, nc, kc, packed_a + t * qw_f32_gemm_tile_size(gemm, kc), columns, columns_stride, tile,
                                  (size_t)gemm->nr);
        for (size_t r = 0; r < mr; r++) {
          float* yr = y + (t * (size_t)gemm->mr + r) * ldy + j0;
          const float* sr = tile + r * (size_t)gemm->nr;
          if (k0 == 0 && !accumulate) {
            for (size_t jj = 0; jj < nc; jj++) {
              yr[jj] = sr[jj] * alpha;
            }
          } else {
            for (size_t jj = 0; jj < nc; jj++) {
              yr[jj] = sr[jj] * alpha + yr[jj];
            }
          }
        }
      }
    }
  }
  return QW_OK;
}
