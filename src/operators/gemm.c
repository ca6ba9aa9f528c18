/* The GEMM driver: blocks the columns so a block of packed weights stays in L2 while the rows
 * stream past it; per block of up to mr rows it packs A (or hands a kernel that reads quint8 A in place its rows:
 * fp32_plain_direct in gemm.h), runs the microkernel for that row count
 * into an int32 row block, then the requantization microkernel (or, for the fp32 rule where the config
 * has them, a kernel that does both in registers). Shared by
 * fully-connected layers, matmuls and convolutions. Tile sizes and packing: the kernel table's GEMM
 * config (gemm/gemm.h). */
#include <string.h>

#include "operators/operators.h"
#include "qtypes.h"
#include "threadpool.h"

/* Packed weights: this header, then the config's packing. layout is qw_gemm_layout of the config
 * that packed them. */
struct packed_header {
  uint32_t magic;
  uint32_t n;
  uint32_t k;
  uint32_t layout;
};
#define PACKED_MAGIC 0x4B505751u /* "QWPK" */
#define HEADER_BYTES 16

/* Columns per cache block: about 256 KiB of packed weights (a quarter of these machines' L2), a
 * multiple of the tile. */
static size_t column_block(const struct qw_gemm_config* gemm, size_t k) {
  const size_t per_column = qw_gemm_column_bytes(gemm, k);
  const size_t nc = (256 * 1024 / per_column) / gemm->nr * gemm->nr;
  return nc < gemm->nr ? gemm->nr : nc;
}

size_t qw_gemm_pack_size_with(const struct qw_kernels* kernels, size_t n, size_t k) {
  if (n == 0 || k == 0 || k >= QW_GEMM_K_MAX || n > QW_MAX_BYTES) {
    return 0;
  }
  return qw_size_or_zero(HEADER_BYTES + qw_gemm_packed_bytes(&kernels->gemm, n, k));
}

size_t qw_gemm_pack_size(size_t n, size_t k) {
  return qw_gemm_pack_size_with(qw_kernels(), n, k);
}

qw_status qw_gemm_pack_with(const struct qw_kernels* kernels, size_t n, size_t k, const void* w, qw_dtype w_dtype,
                            size_t n_stride, size_t k_stride, const int32_t* w_zero_points, size_t zp_count,
                            void* packed) {
  if (w == NULL || packed == NULL || w_zero_points == NULL || qw_gemm_pack_size_with(kernels, n, k) == 0 ||
      (zp_count != 1 && zp_count != n) || !qw_dtype_is_8bit(w_dtype)) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t j = 0; j < zp_count; j++) {
    if (!qw_zero_point_valid(w_dtype, w_zero_points[j])) {
      return QW_INVALID_QPARAMS;
    }
  }
  const struct qw_gemm_config* gemm = &kernels->gemm;
  struct packed_header* h = (struct packed_header*)packed;
  *h = (struct packed_header){PACKED_MAGIC, (uint32_t)n, (uint32_t)k, qw_gemm_layout(gemm)};
  const struct qw_gemm_weights weights = {
      .w = (const uint8_t*)w,
      .is_signed = w_dtype == QW_QINT8,
      .n_stride = n_stride,
      .k_stride = k_stride,
      .k_inner = k,
      .k_outer_stride = 0,
      .zero_points = w_zero_points,
      .zp_per_column = zp_count != 1,
  };
  gemm->pack_w(gemm->nr, gemm->kr, n, k, &weights, (char*)packed + HEADER_BYTES);
  return QW_OK;
}

qw_status qw_gemm_pack(size_t n, size_t k, const void* w, qw_dtype w_dtype, size_t n_stride, size_t k_stride,
                       const int32_t* w_zero_points, size_t zp_count, void* packed) {
  return qw_gemm_pack_with(qw_kernels(), n, k, w, w_dtype, n_stride, k_stride, w_zero_points, zp_count, packed);
}

size_t qw_gemm_thread_workspace_size(const struct qw_kernels* kernels, size_t n, size_t k) {
  /* int32 rows of a block, the A panel; in 64 bits, 0 past QW_MAX_BYTES */
  const struct qw_gemm_config* gemm = &kernels->gemm;
  if (n > QW_MAX_BYTES || k > QW_MAX_BYTES) {
    return 0;
  }
  const uint64_t bytes = (uint64_t)gemm->mr * qw_round_up(n, gemm->nr) * sizeof(int32_t) +
                         qw_gemm_panel_bytes(gemm, gemm->mr, k);
  return qw_size_or_zero((bytes + 15) / 16 * 16);
}

/* One qw_gemm_thread_workspace_size slice per thread, 0 past QW_MAX_BYTES. */
size_t qw_gemm_workspace_size_with(const struct qw_kernels* kernels, size_t n, size_t k) {
  return qw_size_or_zero((uint64_t)qw_gemm_thread_workspace_size(kernels, n, k) * qw_threads());
}

const void* qw_gemm_packed_weights(const struct qw_kernels* kernels, const void* packed, size_t n, size_t k) {
  const struct packed_header* h = (const struct packed_header*)packed;
  if (packed == NULL || h->magic != PACKED_MAGIC || h->n != n || h->k != k || h->layout != qw_gemm_layout(&kernels->gemm)) {
    return NULL;
  }
  return (const char*)packed + HEADER_BYTES;
}

size_t qw_gemm_workspace_size(size_t n, size_t k) {
  return qw_gemm_workspace_size_with(qw_kernels(), n, k);
}

struct qw_requantization_params qw_requantization_params_at(const struct qw_requantization_params* rq, size_t n0) {
  struct qw_requantization_params r = *rq; /* every array present is allocated for all n */
  r.bias = r.bias != NULL ? r.bias + n0 : NULL;
  r.bias_f32 = r.bias_f32 != NULL ? r.bias_f32 + n0 : NULL;
  r.multiplier = r.multiplier != NULL ? r.multiplier + n0 : NULL;
  r.m0 = r.m0 != NULL ? r.m0 + n0 : NULL;
  r.shift = r.shift != NULL ? r.shift + n0 : NULL;
  return r;
}

qw_requantization_ukernel qw_output_kernel(const struct qw_kernels* kernels, const struct qw_output_stage* out) {
  if (out->kernel == QW_REQUANT_KERNEL_F32) {
    return kernels->scale_output[out->params->bias_f32 != NULL];
  }
  return kernels->requantize[out->kernel][out->y_signed];
}

/* Whether no sum of depth k can reach 2^22 once scaled (fp32_bounded, requantization.h):
 * |acc + bias| <= 255 * 255 * k + |bias| (A and W minus their zero points are within +-255). Every trained layer
 * passes; a multiplier far above 1 need not. */
static int fp32_bounded(const struct qw_requantization_params* p, size_t n, size_t k) {
  for (size_t j = 0; j < n; j++) {
    if (!qw_fp32_column_bounded(65025.0 * (double)k, p->bias[j], p->multiplier[j])) {
      return 0;
    }
  }
  return 1;
}

size_t qw_gemm_panel_stride(const struct qw_gemm_config* gemm, size_t k) {
  return qw_round_up((size_t)qw_gemm_panel_bytes(gemm, gemm->mr, k), 16);
}

size_t qw_gemm_panels_size(const struct qw_kernels* kernels, size_t m, size_t k) {
  const struct qw_gemm_config* gemm = &kernels->gemm;
  if (m > QW_MAX_BYTES || k > QW_MAX_BYTES) {
    return 0;
  }
  return qw_size_or_zero((uint64_t)((m + gemm->mr - 1) / gemm->mr) * qw_gemm_panel_stride(gemm, k));
}

struct pack_job {
  const struct qw_gemm_config* gemm;
  size_t m, k, a_stride, panel_stride;
  const uint8_t* a;
  int a_signed;
  int32_t a_zero_point;
  uint8_t* panels;
};

static void pack_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct pack_job* job = (const struct pack_job*)context;
  const size_t mr_max = job->gemm->mr, kc = qw_round_up(job->k, job->gemm->kr);
  for (size_t t = start; t < start + count; t++) {
    const size_t m0 = t * mr_max, mr = job->m - m0 < mr_max ? job->m - m0 : mr_max;
    job->gemm->pack_a[job->a_signed](mr, job->k, kc, job->a + m0 * job->a_stride, job->a_stride, job->a_zero_point,
                                     job->panels + t * job->panel_stride);
  }
}

void qw_gemm_pack_panels(const struct qw_kernels* kernels, size_t m, size_t k, const uint8_t* a, size_t a_stride,
                         int a_signed, int32_t a_zero_point, void* panels) {
  const struct qw_gemm_config* gemm = &kernels->gemm;
  const struct pack_job job = {
      .gemm = gemm, .m = m, .k = k, .a_stride = a_stride, .panel_stride = qw_gemm_panel_stride(gemm, k), .a = a,
      .a_signed = a_signed, .a_zero_point = a_zero_point, .panels = (uint8_t*)panels,
  };
  const size_t blocks = (m + gemm->mr - 1) / gemm->mr;
  qw_parallelize(pack_task, &job, blocks, qw_parallel_tile(blocks, 1, 1, 4));
}

void qw_gemm_run(const struct qw_kernels* kernels, size_t m, size_t n, size_t k, const uint8_t* a, size_t a_stride,
                 int a_signed, int32_t a_zero_point, const void* panels, const void* w,
                 const struct qw_output_stage* out, uint8_t* y, size_t y_stride, void* workspace) {
  const struct qw_gemm_config* gemm = &kernels->gemm;
  const qw_requantization_ukernel requantize = qw_output_kernel(kernels, out);
  const qw_gemm_pack_a_ukernel pack_a = gemm->pack_a[a_signed];
  const size_t mr_max = gemm->mr;
  const size_t kc = qw_round_up(k, gemm->kr);
  const size_t column_bytes = qw_gemm_column_bytes(gemm, k); /* of packed weights */
  int32_t* cblock = (int32_t*)workspace;
  void* own_panel = cblock + mr_max * qw_round_up(n, gemm->nr); /* packed here unless the caller packed every panel */
  const void* panel = own_panel;
  /* A single row block is packed once and sweeps all columns (the weights are read once anyway);
   * more rows are re-packed per column block, which keeps the weight block in cache (a few percent
   * of the multiply-adds' time), unless the caller packed every row block once (qw_gemm_pack_panels). */
  const int single_block = m <= mr_max && panels == NULL;
  const size_t panel_stride = qw_gemm_panel_stride(gemm, k);
  /* The fused kernels for the row counts the config has them for (src/config.c has none for one row: the 1-row
   * kernel sweeps the weights in wider passes, and one row's output stage is a small part of it). */
  const int fp32_fused = out->kernel == QW_REQUANT_KERNEL_FP32 && out->params->fp32_plain;
  const qw_gemm_requantizing_ukernel* fused = fp32_fused ? gemm->fp32_plain[out->y_signed]
                                              : out->kernel == QW_REQUANT_KERNEL_F32 ? gemm->f32_output
                                                                                     : NULL;
  struct qw_requantization_params params = *out->params;
  /* the bound (a pass over the n columns in double) serves only the fused fp32 kernels: skipped when none runs, as
   * for a single row (measured: about 1.5 us of a 1x1024x1024 GEMV's 36) */
  const int fused_rows = fp32_fused && ((m >= mr_max && fused[mr_max - 1] != NULL) ||
                                        (m % mr_max != 0 && fused[m % mr_max - 1] != NULL));
  params.fp32_bounded = fused_rows && fp32_bounded(out->params, n, k);
  /* quint8 A read in place by the whole row blocks of mr_max rows, all in one call, where the config has those
   * kernels (gemm.h fp32_plain_direct) and K needs no padding; the rows after them as below */
  const qw_gemm_requantizing_ukernel direct =
      fp32_fused && panels == NULL && !a_signed && k == kc ? gemm->fp32_plain_direct[out->y_signed] : NULL;
  const size_t m_direct = direct != NULL ? m / mr_max * mr_max : 0;
  const size_t nc_block = single_block ? n : column_block(gemm, k);
  if (single_block && m != m_direct) {
    pack_a(m, k, kc, a, a_stride, a_zero_point, own_panel);
  }
  for (size_t n0 = 0; n0 < n; n0 += nc_block) {
    const size_t nc = n - n0 < nc_block ? n - n0 : nc_block;
    const struct qw_requantization_params rq = qw_requantization_params_at(&params, n0);
    const void* wb = (const char*)w + n0 * column_bytes; /* n0 is a multiple of nr */
    if (m_direct != 0) {
      const struct qw_gemm_direct_a rows = {.za = a_zero_point, .a = a, .a_stride = a_stride};
      direct(m_direct, nc, kc, &rows, wb, &rq, y + n0 * out->elem_size, y_stride);
    }
    for (size_t m0 = m_direct; m0 < m; m0 += mr_max) {
      const size_t mr = m - m0 < mr_max ? m - m0 : mr_max;
      if (panels != NULL) {
        panel = (uint8_t*)panels + m0 / mr_max * panel_stride;
      } else if (!single_block) {
        pack_a(mr, k, kc, a + m0 * a_stride, a_stride, a_zero_point, own_panel);
      }
      uint8_t* yb = y + m0 * y_stride + n0 * out->elem_size;
      if (fused != NULL && fused[mr - 1] != NULL) {
        fused[mr - 1](mr, nc, kc, panel, wb, &rq, yb, y_stride);
      } else {
        gemm->gemm[mr - 1](mr, nc, kc, panel, wb, cblock, nc);
        requantize(mr, nc, cblock, nc, &rq, yb, y_stride);
      }
    }
  }
}

/* Below this many multiply-adds a GEMM runs on the calling thread: waking workers costs more. */
#define PARALLEL_MIN_MACS (64 * 1024)

struct gemm_job {
  const struct qw_kernels* kernels;
  size_t m, n, k, a_stride, y_stride, thread_bytes;
  const uint8_t* a;
  int a_signed;
  int32_t a_zero_point;
  const uint8_t* panels; /* qw_gemm_pack_panels's, or NULL */
  const void* w;
  const struct qw_output_stage* out;
  uint8_t* y;
  char* workspace;
  size_t rows, columns, column_tiles; /* a tile: `rows` rows x `columns` columns */
};

static void gemm_task(const void* context, size_t thread, size_t start, size_t count) {
  const struct gemm_job* job = (const struct gemm_job*)context;
  const size_t column_bytes = qw_gemm_column_bytes(&job->kernels->gemm, job->k);
  for (size_t t = start; t < start + count; t++) {
    const size_t m0 = t / job->column_tiles * job->rows, n0 = t % job->column_tiles * job->columns;
    const size_t mc = job->m - m0 < job->rows ? job->m - m0 : job->rows;
    const size_t nc = job->n - n0 < job->columns ? job->n - n0 : job->columns;
    const struct qw_requantization_params rq = qw_requantization_params_at(job->out->params, n0);
    struct qw_output_stage out = *job->out;
    out.params = &rq;
    const uint8_t* panels = job->panels != NULL
                                ? job->panels + m0 / job->kernels->gemm.mr * qw_gemm_panel_stride(&job->kernels->gemm, job->k)
                                : NULL;
    qw_gemm_run(job->kernels, mc, nc, job->k, job->a + m0 * job->a_stride, job->a_stride, job->a_signed,
                job->a_zero_point, panels, (const char*)job->w + n0 * column_bytes, &out,
                job->y + m0 * job->y_stride + n0 * job->out->elem_size, job->y_stride,
                job->workspace + thread * job->thread_bytes);
  }
}

void qw_gemm_parallel(const struct qw_kernels* kernels, size_t m, size_t n, size_t k, const uint8_t* a,
                      size_t a_stride, int a_signed, int32_t a_zero_point, const void* panels, const void* w,
                      const struct qw_output_stage* out, uint8_t* y, size_t y_stride, void* workspace) {
  const struct qw_gemm_config* gemm = &kernels->gemm;
  const size_t threads = qw_threads();
  if (threads == 1 || (uint64_t)m * n * k < PARALLEL_MIN_MACS) {
    qw_gemm_run(kernels, m, n, k, a, a_stride, a_signed, a_zero_point, panels, w, out, y, y_stride, workspace);
    return;
  }
  struct gemm_job job = {
      .kernels = kernels, .m = m, .n = n, .k = k, .a_stride = a_stride, .y_stride = y_stride,
      .thread_bytes = qw_gemm_thread_workspace_size(kernels, n, k), .a = a, .a_signed = a_signed,
      .a_zero_point = a_zero_point, .panels = (const uint8_t*)panels, .w = w, .out = out, .y = y,
      .workspace = (char*)workspace,
  };
  /* One tile per thread, by rows or by columns (whole weight tiles), whichever gives the busiest thread the smaller
   * share: every thread then finishes at about the same time. Finer tiles, claimed dynamically, left a thread with
   * one tile more than the other (MobileNetV2's 14x14 layers, 196 rows in 7 tiles of 28: 4 against 3, 1.75x at
   * best; its 7x7 layers 1.5x). By rows each thread streams all the weights (blocked for L2 as on one thread) past
   * its rows; by columns it reads only its weights but packs every row of A (a GEMV, a short matrix). */
  const size_t row_blocks = (m + gemm->mr - 1) / gemm->mr, column_tiles = (n + gemm->nr - 1) / gemm->nr;
  const size_t row_most = (row_blocks + threads - 1) / threads, column_most = (column_tiles + threads - 1) / threads;
  if (row_blocks >= threads && row_most * column_tiles <= column_most * row_blocks) {
    job.rows = row_most * gemm->mr;
    job.columns = n;
  } else {
    job.rows = m;
    job.columns = column_most * gemm->nr;
  }
  job.column_tiles = (n + job.columns - 1) / job.columns;
  const size_t tiles = (m + job.rows - 1) / job.rows * job.column_tiles;
  qw_parallelize(gemm_task, &job, tiles, 1);
}

qw_status qw_gemm_with(const struct qw_kernels* kernels, size_t m, size_t n, size_t k, const void* a, size_t a_stride,
                       qw_dtype a_dtype, int32_t a_zero_point, const void* packed, const void* requantization, void* y,
                       size_t y_stride, void* workspace) {
  struct qw_output_stage out;
  const struct packed_header* h = (const struct packed_header*)packed;
  if (!qw_output_stage_of(requantization, n, &out) || packed == NULL || h->magic != PACKED_MAGIC || h->n != n ||
      h->k != k || h->layout != qw_gemm_layout(&kernels->gemm) || workspace == NULL ||
      qw_gemm_workspace_size_with(kernels, n, k) == 0 ||
      (m != 0 && (a == NULL || y == NULL || a_stride < k || y_stride < n * out.elem_size)) ||
      !qw_count_fits(m, a_stride) || !qw_count_fits(m, y_stride) || !qw_dtype_is_8bit(a_dtype) ||
      !qw_aligned(y, out.elem_size) || y_stride % out.elem_size != 0) {
    return QW_INVALID_ARGUMENT;
  }
  if (!qw_zero_point_valid(a_dtype, a_zero_point)) {
    return QW_INVALID_QPARAMS;
  }
  qw_gemm_parallel(kernels, m, n, k, (const uint8_t*)a, a_stride, a_dtype == QW_QINT8, a_zero_point, NULL,
                   (const char*)packed + HEADER_BYTES, &out, (uint8_t*)y, y_stride, workspace);
  return QW_OK;
}

qw_status qw_gemm(size_t m, size_t n, size_t k, const void* a, size_t a_stride, qw_dtype a_dtype, int32_t a_zero_point,
                  const void* packed, const void* requantization, void* y, size_t y_stride, void* workspace) {
  return qw_gemm_with(qw_kernels(), m, n, k, a, a_stride, a_dtype, a_zero_point, packed, requantization, y, y_stride,
                      workspace);
}
