/* Elementwise float operators of transformers (unary, GELU, binary with broadcasting, Where, Cast), with
 * onnxruntime's arithmetic; the microkernels come from the kernel table. */
#include <math.h>
#include <string.h>

#include "config.h"
#include "f32/mlas.h"
#include "qtypes.h"
#include "threadpool.h"

qw_status qw_f32_unary(qw_f32_unary_op op, size_t n, const float* x, float* y) {
  if ((n != 0 && (x == NULL || y == NULL)) || (unsigned)op > QW_F32_SQRT || !qw_count_fits(n, sizeof(float))) {
    return QW_INVALID_ARGUMENT;
  }
  qw_kernels()->f32_vunary[op](n, x, y);
  return QW_OK;
}

/* GELU in blocks of a row (rows and blocks split over the threads), by the kernel table's GELU kernel. The
 * approximations give each element the same bits wherever it falls in a block, so the blocking (onnxruntime uses
 * rows of the bias, or chunks of 4096) and the threads change nothing. */
enum { GELU_BLOCK = 256 };

struct gelu_job {
  size_t cols, row_blocks;
  const float* x;
  const float* bias;
  float* y;
  qw_f32_vgelu_ukernel kernel;
};

static void gelu_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct gelu_job* job = (const struct gelu_job*)context;
  for (size_t block = start; block < start + count; block++) {
    const size_t r = block / job->row_blocks, c0 = block % job->row_blocks * GELU_BLOCK;
    const size_t len = job->cols - c0 < GELU_BLOCK ? job->cols - c0 : GELU_BLOCK;
    job->kernel(len, job->x + r * job->cols + c0, job->bias != NULL ? job->bias + c0 : NULL, job->y + r * job->cols + c0);
  }
}

qw_status qw_f32_gelu(qw_gelu_form form, size_t rows, size_t cols, const float* x, const float* bias, float* y) {
  size_t n;
  if (!qw_size3(rows, cols, sizeof(float), &n) || (n != 0 && (x == NULL || y == NULL)) || (unsigned)form > QW_GELU_TANH) {
    return QW_INVALID_ARGUMENT;
  }
  if (n == 0) {
    return QW_OK;
  }
  const struct gelu_job job = {
      .cols = cols, .row_blocks = (cols + GELU_BLOCK - 1) / GELU_BLOCK, .x = x, .bias = bias, .y = y,
      .kernel = qw_kernels()->f32_vgelu[form],
  };
  const size_t blocks = rows * job.row_blocks;
  qw_parallelize(gelu_task, &job, blocks, qw_parallel_tile(blocks, 1, 4, 8));
  return QW_OK;
}

/* A broadcast iteration space: the output shape with its size-1 dimensions dropped and dimensions merged
 * where every operand continues contiguously, walked by an odometer over all but the innermost dimension. */
struct broadcast {
  size_t rank;
  size_t dims[QW_MAX_RANK];
  size_t strides[3][QW_MAX_RANK]; /* per input operand, in elements; the output is contiguous */
  size_t outer;                    /* number of innermost rows */
};

static int broadcast_init(struct broadcast* bc, size_t rank, const int32_t* out_dims, size_t operands,
                          const int32_t* const* strides) {
  if (rank > QW_MAX_RANK || (rank != 0 && out_dims == NULL)) {
    return 0;
  }
  /* 64-bit sizes: the output's elements and each operand's span (largest offset + 1), 8 bytes each at most */
  uint64_t count = 1;
  for (size_t k = 0; k < rank; k++) {
    if (out_dims[k] < 0) {
      return 0;
    }
    count *= (uint64_t)out_dims[k];
    if (count > QW_MAX_BYTES) {
      return 0;
    }
  }
  for (size_t o = 0; o < operands; o++) {
    uint64_t span = 0;
    for (size_t k = 0; k < rank && count != 0; k++) {
      if (strides[o] == NULL || strides[o][k] < 0) {
        return 0;
      }
      span += (uint64_t)(out_dims[k] - 1) * (uint64_t)strides[o][k];
      if (span > QW_MAX_BYTES) {
        return 0;
      }
    }
  }
  bc->rank = 0;
  for (size_t k = 0; k < rank; k++) {
    for (size_t o = 0; o < operands; o++) {
      if (strides[o] == NULL || strides[o][k] < 0) {
        return 0;
      }
    }
    if (out_dims[k] < 0) {
      return 0;
    }
    if (out_dims[k] == 1) {
      continue;
    }
    const size_t n = (size_t)out_dims[k];
    int merge = bc->rank > 0;
    for (size_t o = 0; o < operands && merge; o++) {
      merge = bc->strides[o][bc->rank - 1] == (size_t)strides[o][k] * n;
    }
    if (merge) {
      bc->dims[bc->rank - 1] *= n;
      for (size_t o = 0; o < operands; o++) {
        bc->strides[o][bc->rank - 1] = (size_t)strides[o][k];
      }
    } else {
      bc->dims[bc->rank] = n;
      for (size_t o = 0; o < operands; o++) {
        bc->strides[o][bc->rank] = (size_t)strides[o][k];
      }
      bc->rank++;
    }
  }
  if (bc->rank == 0) { /* one element */
    bc->dims[0] = 1;
    for (size_t o = 0; o < operands; o++) {
      bc->strides[o][0] = 0;
    }
    bc->rank = 1;
  }
  bc->outer = 1;
  for (size_t k = 0; k + 1 < bc->rank; k++) {
    bc->outer *= bc->dims[k];
  }
  return 1;
}

/* Element offsets of operand o at the start of innermost row `row`. */
static size_t broadcast_offset(const struct broadcast* bc, size_t o, size_t row) {
  size_t offset = 0;
  for (size_t k = bc->rank - 1; k-- > 0;) {
    offset += (row % bc->dims[k]) * bc->strides[o][k];
    row /= bc->dims[k];
  }
  return offset;
}

struct binary_job {
  const struct broadcast* bc;
  const qw_f32_vbinary_ukernel* kernels;
  const float* a;
  const float* b;
  float* y;
};

/* Innermost rows [start, start + count) of a broadcast binary operation. */
static void binary_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct binary_job* job = (const struct binary_job*)context;
  const struct broadcast* bc = job->bc;
  const qw_f32_vbinary_ukernel* kernels = job->kernels;
  const size_t inner = bc->dims[bc->rank - 1];
  const size_t sa = bc->strides[0][bc->rank - 1], sb = bc->strides[1][bc->rank - 1];
  for (size_t row = start; row < start + count; row++) {
    const float* ar = job->a + broadcast_offset(bc, 0, row);
    const float* br = job->b + broadcast_offset(bc, 1, row);
    float* yr = job->y + row * inner;
    if (sa == 1 && sb == 1) {
      kernels[QW_F32_VBINARY_VV](inner, ar, br, yr);
    } else if (sa == 1 && sb == 0) {
      kernels[QW_F32_VBINARY_VS](inner, ar, br, yr);
    } else if (sa == 0) { /* a scalar over the span (one element too: onnxruntime's input-0-scalar case) */
      if (sb == 1) {
        kernels[QW_F32_VBINARY_SV](inner, ar, br, yr);
      } else {
        for (size_t i = 0; i < inner; i++) {
          kernels[QW_F32_VBINARY_SV](1, ar, br + i * sb, yr + i);
        }
      }
    } else {
      for (size_t i = 0; i < inner; i++) {
        kernels[sb == 0 ? QW_F32_VBINARY_VS : QW_F32_VBINARY_VV](1, ar + i * sa, br + i * sb, yr + i);
      }
    }
  }
}

qw_status qw_f32_binary(qw_f32_binary_op op, size_t rank, const int32_t* out_dims, const float* a,
                        const int32_t* a_strides, const float* b, const int32_t* b_strides, float* y) {
  struct broadcast bc;
  const int32_t* strides[2] = {a_strides, b_strides};
  if ((unsigned)op > QW_F32_POW || a == NULL || b == NULL || y == NULL || !broadcast_init(&bc, rank, out_dims, 2, strides)) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t k = 0; k < rank; k++) {
    if (out_dims[k] == 0) {
      return QW_OK;
    }
  }
  const struct binary_job job = {.bc = &bc, .kernels = qw_kernels()->f32_vbinary[op], .a = a, .b = b, .y = y};
  /* by innermost rows, one tile per thread: each element is one kernel call's arithmetic wherever its row runs */
  qw_parallelize(binary_task, &job, bc.outer, qw_row_tile(bc.outer, bc.dims[bc.rank - 1], 1));
  return QW_OK;
}

qw_status qw_where(size_t elem_size, size_t rank, const int32_t* out_dims, const uint8_t* cond,
                   const int32_t* cond_strides, const void* a, const int32_t* a_strides, const void* b,
                   const int32_t* b_strides, void* y) {
  struct broadcast bc;
  const int32_t* strides[3] = {cond_strides, a_strides, b_strides};
  if (!(elem_size == 1 || elem_size == 4 || elem_size == 8) || cond == NULL || a == NULL || b == NULL || y == NULL ||
      !broadcast_init(&bc, rank, out_dims, 3, strides)) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t k = 0; k < rank; k++) {
    if (out_dims[k] == 0) {
      return QW_OK;
    }
  }
  const size_t inner = bc.dims[bc.rank - 1];
  const size_t sc = bc.strides[0][bc.rank - 1], sa = bc.strides[1][bc.rank - 1], sb = bc.strides[2][bc.rank - 1];
  for (size_t row = 0; row < bc.outer; row++) {
    const uint8_t* cr = cond + broadcast_offset(&bc, 0, row);
    const char* ar = (const char*)a + broadcast_offset(&bc, 1, row) * elem_size;
    const char* br = (const char*)b + broadcast_offset(&bc, 2, row) * elem_size;
    char* yr = (char*)y + row * inner * elem_size;
    for (size_t i = 0; i < inner; i++) {
      memcpy(yr + i * elem_size, cr[i * sc] ? ar + i * sa * elem_size : br + i * sb * elem_size, elem_size);
    }
  }
  return QW_OK;
}

/* float -> a signed integer of `bits` bits as wasm's saturating truncations (i32.trunc_sat_f32_s,
 * i64.trunc_sat_f32_s): toward zero, NaN -> 0, out of range -> the nearest bound. */
static int64_t trunc_sat(float v, int bits) {
  const float limit = bits == 64 ? 9223372036854775808.0f : 2147483648.0f;
  const int64_t max = bits == 64 ? INT64_MAX : INT32_MAX;
  if (v != v) {
    return 0;
  }
  if (v >= limit) {
    return max;
  }
  return v < -limit ? -max - 1 : (int64_t)v;
}

static int cast_type_ok(qw_tensor_type t) {
  return t == QW_TYPE_FLOAT32 || t == QW_TYPE_UINT8 || t == QW_TYPE_INT8 || t == QW_TYPE_INT32 || t == QW_TYPE_INT64 ||
         t == QW_TYPE_BOOL;
}

qw_status qw_cast(size_t n, const void* x, qw_tensor_type x_type, void* y, qw_tensor_type y_type) {
  if ((n != 0 && (x == NULL || y == NULL)) || !cast_type_ok(x_type) || !cast_type_ok(y_type) || !qw_count_fits(n, 8)) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < n; i++) {
    /* Read as float or as a (sign-extended) integer. */
    float f = 0.0f;
    int64_t v = 0;
    switch (x_type) {
      case QW_TYPE_FLOAT32: f = ((const float*)x)[i]; break;
      case QW_TYPE_UINT8: v = ((const uint8_t*)x)[i]; break;
      case QW_TYPE_INT8: v = ((const int8_t*)x)[i]; break;
      case QW_TYPE_INT32: v = ((const int32_t*)x)[i]; break;
      case QW_TYPE_INT64: v = ((const int64_t*)x)[i]; break;
      case QW_TYPE_BOOL: v = ((const uint8_t*)x)[i] != 0; break;
    }
    const int from_float = x_type == QW_TYPE_FLOAT32;
    switch (y_type) {
      case QW_TYPE_FLOAT32: ((float*)y)[i] = from_float ? f : (float)v; break;
      case QW_TYPE_BOOL: ((uint8_t*)y)[i] = from_float ? f != 0.0f || f != f : v != 0; break;
      case QW_TYPE_INT64: ((int64_t*)y)[i] = from_float ? trunc_sat(f, 64) : v; break;
      case QW_TYPE_INT32: ((int32_t*)y)[i] = (int32_t)(uint32_t)(from_float ? trunc_sat(f, 32) : v); break;
      case QW_TYPE_INT8: ((int8_t*)y)[i] = (int8_t)(uint8_t)(from_float ? trunc_sat(f, 32) : v); break;
      case QW_TYPE_UINT8: ((uint8_t*)y)[i] = (uint8_t)(from_float ? trunc_sat(f, 32) : v); break;
    }
  }
  return QW_OK;
}
