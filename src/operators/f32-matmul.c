/* Float matrix product with onnxruntime's SGEMM summation order (MLAS sgemm.cpp MlasSgemmOperation /
 * MlasSgemmPackedOperation and the wasm kernel SgemmKernelWasmSimd.cpp), on qwasm's float GEMM
 * microkernels (src/f32/gemm.h). Per output element and K block the microkernel sums from +0 in k order,
 * one rounding per product and per sum, exactly as MLAS's kernel; the blocks are then combined as MLAS
 * does: y = block0 * alpha, y = block_i * alpha + y.
 *
 * Single rows take MLAS's GEMV path instead (gemv below).
 *
 * Mapping: the microkernel's "weights" are rows of A (read in place by the config's gemm_rows kernels, else packed
 * here per K block: four rows interleaved per k after a zero bias), its panel is eight columns of B per k: a constant B's panels packed once
 * (qw_f32_matmul_pack), else B itself when they are contiguous, else a copy (the last columns, or B
 * transposed). The kernel scales the sums by alpha; the first block goes straight into y. */
#include <string.h>

#include "config.h"
#include "qtypes.h"
#include "threadpool.h"

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

/* Workspace: the packed rows of A for one K block (shared: each row tile is packed by the task that computes
 * it), then per thread a B panel and an output tile. */
size_t qw_f32_matmul_workspace_size(size_t m, size_t n, size_t k) {
  (void)n;
  const struct qw_f32_gemm_config* gemm = &qw_kernels()->f32_gemm;
  if (m > QW_MAX_BYTES || k > QW_MAX_BYTES) {
    return 0;
  }
  const size_t kc = k == 0 ? 1 : k;
  const uint64_t tiles = (m + (size_t)gemm->mr - 1) / (size_t)gemm->mr;
  /* 64-bit: each factor is below 2^32 */
  const uint64_t tile = qw_f32_gemm_tile_size(gemm, kc);
  if (tile > QW_MAX_BYTES) {
    return 0;
  }
  const uint64_t per_thread = (uint64_t)kc * gemm->nr + (uint64_t)gemm->mr * gemm->nr;
  return qw_size_or_zero((tiles * tile + qw_threads() * per_thread) * sizeof(float));
}

/* The kernel's panel from B when B's rows do not hold its columns contiguously (the last columns, or B transposed):
 * nc (<= nr) columns for kc values of k, [k][nr], the columns past nc zero. b is at B[k0][j0], or transposed
 * (B[n][k]) at B[j0][k0], where the columns are rows ldb apart: the config's transposing pack. */
static void copy_panel(const struct qw_f32_gemm_config* gemm, float* panel, size_t nc, size_t kc, const float* b,
                       size_t ldb, int transpose_b) {
  const size_t nr = (size_t)gemm->nr;
  if (transpose_b) {
    gemm->packx(nc, nr, kc, b, ldb, panel);
    return;
  }
  for (size_t kk = 0; kk < kc; kk++) {
    for (size_t jj = 0; jj < nr; jj++) {
      panel[kk * nr + jj] = jj < nc ? b[kk * ldb + jj] : 0.0f;
    }
  }
}

/* Row tiles [start, start + count) of a product, all K blocks in order: each output element sees the same
 * kernel calls in the same order whichever thread computes its tile, so threads change no bit. */
struct matmul_job {
  const struct qw_f32_gemm_config* gemm;
  size_t m, n, k, kb, lda, ldb, ldy;
  size_t slot_floats;   /* a row tile's slot in packed_a, the longest K block's size: tasks run their blocks independently */
  size_t thread_floats; /* a thread's B panel and output tile */
  const float* a;
  const float* b;
  const float* packed_b; /* qw_f32_matmul_pack's panels (then b is unused), or NULL */
  int transpose_b, accumulate;
  float alpha;
  float* y;
  float* packed_a;
  float* per_thread;
};

static void matmul_task(const void* context, size_t thread, size_t start, size_t count) {
  const struct matmul_job* job = (const struct matmul_job*)context;
  const struct qw_f32_gemm_config* gemm = job->gemm;
  const size_t mr_max = (size_t)gemm->mr, nr = (size_t)gemm->nr, m = job->m, n = job->n, ldb = job->ldb;
  const float* b = job->b;
  float* panel = job->per_thread + thread * job->thread_floats;
  float* tile = panel + (job->kb < job->k ? job->kb : job->k) * nr;
  /* A's rows read in place where the config has the kernels and a row tile meets few column tiles (attention's
   * probabilities times V, 32 columns: 128x32x128 19.9 -> 19.3 us alone in Node 24, MiniLM's six MatMuls 1.65 ->
   * 1.53 ms); else packed per row tile and K block, which pays across more columns (64: 38.0 packed, 38.6 in place) */
  const int rows_in_place = gemm->gemm_rows[mr_max - 1] != NULL && n <= 4 * nr;
  for (size_t k0 = 0; k0 < job->k; k0 += job->kb) {
    const size_t kc = job->k - k0 < job->kb ? job->k - k0 : job->kb;
    /* rows of A, mr at a time: [0 x mr][a[r][k0] x mr][a[r][k0 + 1] x mr]... (rows past m are zeros) */
    for (size_t t = start; t < start + count && !rows_in_place; t++) {
      float* w = job->packed_a + t * job->slot_floats;
      const size_t rows = m - t * mr_max < mr_max ? m - t * mr_max : mr_max;
      memset(w, 0, mr_max * sizeof(float));
      gemm->packx(rows, mr_max, kc, job->a + t * mr_max * job->lda + k0, job->lda, w + mr_max);
    }
    for (size_t j0 = 0; j0 < n; j0 += nr) {
      const size_t nc = n - j0 < nr ? n - j0 : nr;
      const float* columns;
      size_t columns_stride;
      if (job->packed_b != NULL) {
        columns = job->packed_b + j0 * job->k + k0 * nr; /* panel j0 / nr, row k0 */
        columns_stride = nr;
      } else if (!job->transpose_b && nc == nr) {
        columns = b + k0 * ldb + j0;
        columns_stride = ldb;
      } else {
        copy_panel(gemm, panel, nc, kc, job->transpose_b ? b + j0 * ldb + k0 : b + k0 * ldb + j0, ldb, job->transpose_b);
        columns = panel;
        columns_stride = nr;
      }
      for (size_t t = start; t < start + count; t++) {
        const size_t mr = m - t * mr_max < mr_max ? m - t * mr_max : mr_max;
        const float* packed = job->packed_a + t * job->slot_floats;
        const float* rows = job->a + t * mr_max * job->lda + k0;
        float* y = job->y + t * mr_max * job->ldy + j0;
        /* the first block straight into y (y = sum * alpha), later ones through the tile: y = sum * alpha + y, the
         * product rounded first as MLAS does */
        const int direct = k0 == 0 && !job->accumulate;
        float* out = direct ? y : tile;
        const size_t out_stride = direct ? job->ldy : nr;
        if (rows_in_place) {
          gemm->gemm_rows[mr - 1](mr, nc, kc, rows, job->lda, columns, columns_stride, out, out_stride, job->alpha);
        } else {
          gemm->gemm[mr - 1](mr, nc, kc, packed, columns, columns_stride, out, out_stride, job->alpha);
        }
        if (direct) {
          continue;
        }
        for (size_t r = 0; r < mr; r++) {
          float* yr = y + r * job->ldy;
          const float* sr = tile + r * nr;
          for (size_t jj = 0; jj < nc; jj++) {
            yr[jj] = sr[jj] + yr[jj];
          }
        }
      }
    }
  }
}

/* The cases MLAS does not run through its GEMM: K = 0 (no block to store: onnxruntime's MatMul fills zeros itself)
 * and a single row (MLAS's GEMV). Returns 1 when it computed the product. */
static int run_special(size_t m, size_t n, size_t k, const float* a, const float* b, size_t ldb, int transpose_b,
                       int b_prepacked, float alpha, int accumulate, float* y, size_t ldy) {
  if (k == 0) {
    for (size_t i = 0; i < m && !accumulate; i++) {
      memset(y + i * ldy, 0, n * sizeof(float));
    }
    return 1;
  }
  if (m == 1 && alpha == 1.0f && !transpose_b && !b_prepacked) {
    gemv(n, k, a, b, ldb, accumulate, y);
    return 1;
  }
  return 0;
}

/* Row tiles of a product (k > 0): packed_a the tiles' slots, then per_thread the threads' panels and tiles. */
static struct matmul_job matmul_job_for(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b,
                                        size_t ldb, int transpose_b, const float* packed_b, int b_prepacked,
                                        float alpha, int accumulate, float* y, size_t ldy, float* packed_a) {
  const struct qw_f32_gemm_config* gemm = &qw_kernels()->f32_gemm;
  const size_t tiles = (m + (size_t)gemm->mr - 1) / (size_t)gemm->mr;
  const size_t kb = k_block(n, k, b_prepacked);
  const size_t kc_max = kb < k ? kb : k;
  return (struct matmul_job){
      .gemm = gemm, .m = m, .n = n, .k = k, .kb = kb, .lda = lda, .ldb = ldb, .ldy = ldy,
      .slot_floats = qw_f32_gemm_tile_size(gemm, kc_max),
      .thread_floats = kc_max * (size_t)gemm->nr + (size_t)gemm->mr * gemm->nr, .a = a, .b = b, .packed_b = packed_b,
      .transpose_b = transpose_b, .accumulate = accumulate, .alpha = alpha, .y = y, .packed_a = packed_a,
      .per_thread = packed_a + tiles * qw_f32_gemm_tile_size(gemm, kc_max),
  };
}

/* The product over qw_f32_matmul's checked arguments (b NULL when packed_b holds B's panels). */
static void run_matmul(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b, size_t ldb,
                       int transpose_b, const float* packed_b, int b_prepacked, float alpha, int accumulate, float* y,
                       size_t ldy, void* workspace) {
  if (run_special(m, n, k, a, b, ldb, transpose_b, b_prepacked, alpha, accumulate, y, ldy)) {
    return;
  }
  const struct matmul_job job = matmul_job_for(m, n, k, a, lda, b, ldb, transpose_b, packed_b, b_prepacked, alpha,
                                               accumulate, y, ldy, (float*)workspace);
  const size_t tiles = (m + (size_t)job.gemm->mr - 1) / (size_t)job.gemm->mr;
  /* one task on one thread; else one share of the row tiles per thread: every task gathers the B panels it needs
   * again (transposed B: a strided copy), so fewer, larger tasks pay (measured on attention's 128x128x32 products) */
  qw_parallelize(matmul_task, &job, tiles, qw_threads() == 1 ? tiles : qw_parallel_tile(tiles, 1, 1, 2));
}

/* Checks shared by both entry points: A, y and the workspace. */
static int matmul_arguments_valid(size_t m, size_t n, size_t k, const float* a, size_t lda, float* y, size_t ldy,
                                  const void* workspace) {
  return a != NULL && y != NULL && workspace != NULL && lda >= k && ldy >= n &&
         qw_f32_matmul_workspace_size(m, n, k) != 0 && qw_size_fits4(m, lda, sizeof(float), 1) &&
         qw_size_fits4(m, ldy, sizeof(float), 1);
}

qw_status qw_f32_matmul(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b, size_t ldb,
                        int transpose_b, int b_prepacked, float alpha, int accumulate, float* y, size_t ldy,
                        void* workspace) {
  if (m == 0 || n == 0) {
    return QW_OK;
  }
  if (!matmul_arguments_valid(m, n, k, a, lda, y, ldy, workspace) || b == NULL || ldb < (transpose_b ? k : n) ||
      !qw_size_fits4(transpose_b ? n : k, ldb, sizeof(float), 1)) {
    return QW_INVALID_ARGUMENT;
  }
  run_matmul(m, n, k, a, lda, b, ldb, transpose_b, NULL, b_prepacked, alpha, accumulate, y, ldy, workspace);
  return QW_OK;
}

/* One product's workspace floats when a thread computes it whole: its row tiles' slots, one panel and one tile, for
 * K blocks up to all of K (as qw_f32_matmul_workspace_size: whichever K block the call takes). */
static uint64_t batch_item_floats(size_t m, size_t k) {
  const struct qw_f32_gemm_config* gemm = &qw_kernels()->f32_gemm;
  const size_t kc = k == 0 ? 1 : k;
  const uint64_t tiles = (m + (size_t)gemm->mr - 1) / (size_t)gemm->mr;
  return tiles * qw_f32_gemm_tile_size(gemm, kc) + (uint64_t)kc * gemm->nr + (uint64_t)gemm->mr * gemm->nr;
}

size_t qw_f32_matmul_batch_workspace_size(size_t m, size_t n, size_t k) {
  if (qw_f32_matmul_workspace_size(m, n, k) == 0) {
    return 0;
  }
  /* whole products per thread; the row-tile split of a single product needs less (qw_f32_matmul_workspace_size) */
  return qw_size_or_zero(qw_threads() * batch_item_floats(m, k) * sizeof(float));
}

/* Products [start, start + count) of a batch, each computed whole by this thread in its own slice of the workspace. */
struct batch_job {
  size_t m, n, k, lda, ldb, ldy;
  const int32_t* offsets;
  const float* a;
  const float* b;
  int transpose_b, b_prepacked, accumulate;
  float alpha;
  float* y;
  float* workspace;
  size_t item_floats;
};

static void batch_task(const void* context, size_t thread, size_t start, size_t count) {
  const struct batch_job* bj = (const struct batch_job*)context;
  for (size_t i = start; i < start + count; i++) {
    const int32_t* o = bj->offsets + 3 * i;
    const float* a = bj->a + o[0];
    const float* b = bj->b + o[1];
    float* y = bj->y + o[2];
    if (run_special(bj->m, bj->n, bj->k, a, b, bj->ldb, bj->transpose_b, bj->b_prepacked, bj->alpha, bj->accumulate,
                    y, bj->ldy)) {
      continue;
    }
    const struct matmul_job job = matmul_job_for(bj->m, bj->n, bj->k, a, bj->lda, b, bj->ldb, bj->transpose_b, NULL,
                                                 bj->b_prepacked, bj->alpha, bj->accumulate, y, bj->ldy,
                                                 bj->workspace + thread * bj->item_floats);
    matmul_task(&job, 0, 0, (bj->m + (size_t)job.gemm->mr - 1) / (size_t)job.gemm->mr);
  }
}

qw_status qw_f32_matmul_batch(size_t count, const int32_t* offsets, size_t m, size_t n, size_t k, const float* a,
                              size_t lda, const float* b, size_t ldb, int transpose_b, int b_prepacked, float alpha,
                              int accumulate, float* y, size_t ldy, void* workspace) {
  if (count == 0 || m == 0 || n == 0) {
    return QW_OK;
  }
  if (offsets == NULL || !matmul_arguments_valid(m, n, k, a, lda, y, ldy, workspace) || b == NULL ||
      ldb < (transpose_b ? k : n) || !qw_size_fits4(transpose_b ? n : k, ldb, sizeof(float), 1) ||
      qw_f32_matmul_batch_workspace_size(m, n, k) == 0) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < 3 * count; i++) {
    if (offsets[i] < 0) {
      return QW_INVALID_ARGUMENT;
    }
  }
  if (count < qw_threads()) { /* fewer products than threads: each split by row tiles */
    for (size_t i = 0; i < count; i++) {
      const int32_t* o = offsets + 3 * i;
      run_matmul(m, n, k, a + o[0], lda, b + o[1], ldb, transpose_b, NULL, b_prepacked, alpha, accumulate, y + o[2],
                 ldy, workspace);
    }
    return QW_OK;
  }
  const struct batch_job job = {
      .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldy = ldy, .offsets = offsets, .a = a,
      .b = b, .transpose_b = transpose_b, .b_prepacked = b_prepacked, .accumulate = accumulate, .alpha = alpha,
      .y = y, .workspace = (float*)workspace, .item_floats = (size_t)batch_item_floats(m, k),
  };
  qw_parallelize(batch_task, &job, count, 1);
  return QW_OK;
}

/* Packed B: this header, then ceil(n / nr) panels of k rows of nr floats (the columns past n zero). */
struct f32_packed_header {
  uint32_t magic, n, k, nr;
};
#define F32_PACKED_MAGIC 0x42465751u /* "QWFB" */
#define F32_PACKED_HEADER_FLOATS 4

size_t qw_f32_matmul_pack_size(size_t n, size_t k) {
  const size_t nr = (size_t)qw_kernels()->f32_gemm.nr;
  if (n == 0 || k == 0 || n > UINT32_MAX || k > UINT32_MAX) {
    return 0;
  }
  return qw_size_or_zero(((uint64_t)F32_PACKED_HEADER_FLOATS + (uint64_t)qw_round_up(n, nr) * k) * sizeof(float));
}

qw_status qw_f32_matmul_pack(size_t n, size_t k, const float* b, size_t ldb, int transpose_b, void* packed) {
  const struct qw_f32_gemm_config* gemm = &qw_kernels()->f32_gemm;
  const size_t nr = (size_t)gemm->nr;
  if (b == NULL || packed == NULL || qw_f32_matmul_pack_size(n, k) == 0 || ldb < (transpose_b ? k : n) ||
      !qw_size_fits4(transpose_b ? n : k, ldb, sizeof(float), 1)) {
    return QW_INVALID_ARGUMENT;
  }
  *(struct f32_packed_header*)packed = (struct f32_packed_header){F32_PACKED_MAGIC, (uint32_t)n, (uint32_t)k, (uint32_t)nr};
  float* panels = (float*)packed + F32_PACKED_HEADER_FLOATS;
  for (size_t j0 = 0; j0 < n; j0 += nr) {
    const size_t nc = n - j0 < nr ? n - j0 : nr;
    copy_panel(gemm, panels + j0 * k, nc, k, transpose_b ? b + j0 * ldb : b + j0, ldb, transpose_b);
  }
  return QW_OK;
}

qw_status qw_f32_matmul_packed(size_t m, size_t n, size_t k, const float* a, size_t lda, const void* packed,
                               float alpha, int accumulate, float* y, size_t ldy, void* workspace) {
  const struct f32_packed_header* h = (const struct f32_packed_header*)packed;
  if (packed == NULL || h->magic != F32_PACKED_MAGIC || h->n != n || h->k != k ||
      h->nr != qw_kernels()->f32_gemm.nr) {
    return QW_INVALID_ARGUMENT;
  }
  if (m == 0) {
    return QW_OK;
  }
  if (!matmul_arguments_valid(m, n, k, a, lda, y, ldy, workspace)) {
    return QW_INVALID_ARGUMENT;
  }
  run_matmul(m, n, k, a, lda, NULL, 0, 0, (const float*)packed + F32_PACKED_HEADER_FLOATS, 1, alpha, accumulate, y,
             ldy, workspace);
  return QW_OK;
}
