/* Strided copies between tensor layouts: dimensions are coalesced first, and an 8-bit copy whose
 * two innermost dimensions swap (NCHW <-> channels-last) becomes a blocked SIMD transpose. */
#include <string.h>

#include "config.h"
#include "qtypes.h"
#include "threadpool.h"

/* A coalesced copy: dims, strides in elements; iterations over the outer_rank outer dimensions. */
struct copy_job {
  size_t elem_size, r, outer_rank;
  size_t dims[QW_MAX_RANK], ss[QW_MAX_RANK], ds[QW_MAX_RANK];
  int transpose; /* 8-bit, the two innermost dimensions swapped: a blocked transpose per iteration */
  qw_x8_transpose_ukernel transpose_ukernel;
  const char* s;
  char* d;
};

/* Outer iterations [start, start + count): the odometer starts from start's index. */
static void copy_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)thread;
  const struct copy_job* job = (const struct copy_job*)context;
  const size_t r = job->r, outer_rank = job->outer_rank, elem_size = job->elem_size;
  const size_t *dims = job->dims, *ss = job->ss, *ds = job->ds;
  size_t index[QW_MAX_RANK] = {0};
  for (size_t k = outer_rank, rest = start; k-- > 0;) {
    index[k] = rest % dims[k];
    rest /= dims[k];
  }
  for (size_t done = 0; done < count; done++) {
    size_t s_off = 0, d_off = 0;
    for (size_t k = 0; k < outer_rank; k++) {
      s_off += index[k] * ss[k];
      d_off += index[k] * ds[k];
    }
    const char* sp = job->s + s_off * elem_size;
    char* dp = job->d + d_off * elem_size;
    if (job->transpose) {
      /* dst[a * ds[r-2] + b] = src[a + b * ss[r-1]] */
      job->transpose_ukernel(dims[r - 1], dims[r - 2], (const uint8_t*)sp, ss[r - 1], (uint8_t*)dp, ds[r - 2]);
    } else if (ss[r - 1] == 1 && ds[r - 1] == 1) {
      memcpy(dp, sp, dims[r - 1] * elem_size);
    } else {
      for (size_t i = 0; i < dims[r - 1]; i++) {
        memcpy(dp + i * ds[r - 1] * elem_size, sp + i * ss[r - 1] * elem_size, elem_size);
      }
    }
    for (size_t k = outer_rank; k-- > 0;) {
      if (++index[k] < dims[k]) {
        break;
      }
      index[k] = 0;
    }
  }
}

qw_status qw_copy_strided(size_t elem_size, size_t rank, const int32_t* shape, const void* src,
                          const int32_t* src_strides, void* dst, const int32_t* dst_strides) {
  if (src == NULL || dst == NULL || rank > QW_MAX_RANK ||
      (rank != 0 && (shape == NULL || src_strides == NULL || dst_strides == NULL)) ||
      !(elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8)) {
    return QW_INVALID_ARGUMENT;
  }
  /* Sizes in 64 bits: the element count, and the span of each layout's largest offset, fit in QW_MAX_BYTES. */
  uint64_t count_all = 1, src_span = 0, dst_span = 0;
  for (size_t k = 0; k < rank; k++) {
    if (shape[k] < 0 || src_strides[k] < 0 || dst_strides[k] < 0) {
      return QW_INVALID_ARGUMENT;
    }
    if (shape[k] == 0) {
      return QW_OK;
    }
    count_all *= (uint64_t)shape[k];
    src_span += (uint64_t)(shape[k] - 1) * (uint64_t)src_strides[k];
    dst_span += (uint64_t)(shape[k] - 1) * (uint64_t)dst_strides[k];
    if (count_all > QW_MAX_BYTES || src_span > QW_MAX_BYTES || dst_span > QW_MAX_BYTES) {
      return QW_INVALID_ARGUMENT;
    }
  }
  if (!qw_count_fits((size_t)(src_span + 1), elem_size) || !qw_count_fits((size_t)(dst_span + 1), elem_size)) {
    return QW_INVALID_ARGUMENT;
  }
  /* Coalesce: drop size-1 dimensions, merge a dimension into the previous one when both layouts
   * continue contiguously across them. */
  struct copy_job job = {.elem_size = elem_size, .s = (const char*)src, .d = (char*)dst,
                         .transpose_ukernel = qw_kernels()->transpose_x8};
  size_t *dims = job.dims, *ss = job.ss, *ds = job.ds;
  size_t r = 0;
  for (size_t k = 0; k < rank; k++) {
    if (shape[k] == 1) {
      continue;
    }
    const size_t n = (size_t)shape[k], sk = (size_t)src_strides[k], dk = (size_t)dst_strides[k];
    if (r > 0 && ss[r - 1] == sk * n && ds[r - 1] == dk * n) {
      dims[r - 1] *= n;
      ss[r - 1] = sk;
      ds[r - 1] = dk;
    } else {
      dims[r] = n;
      ss[r] = sk;
      ds[r] = dk;
      r++;
    }
  }
  if (r == 0) {
    memcpy(dst, src, elem_size);
    return QW_OK;
  }
  /* The innermost dimension is walked by a run (memcpy, strided loop or transpose); the others by
   * an odometer, its iterations split over the thread pool. */
  job.r = r;
  job.transpose = elem_size == 1 && r >= 2 && ss[r - 2] == 1 && ds[r - 1] == 1 && ss[r - 1] != 1;
  job.outer_rank = job.transpose ? r - 2 : r - 1;
  size_t count = 1;
  for (size_t k = 0; k < job.outer_rank; k++) {
    count *= dims[k];
  }
  qw_parallelize(copy_task, &job, count, qw_row_tile(count, count_all / count, 2));
  return QW_OK;
}

qw_status qw_gather(size_t outer, size_t axis_size, size_t row_bytes, const void* data, size_t count,
                    const int32_t* indices, void* y) {
  size_t table_bytes, y_bytes;
  if (!qw_size3(outer, axis_size, row_bytes, &table_bytes) || !qw_size3(outer, count, row_bytes, &y_bytes) ||
      (count != 0 && indices == NULL) || (table_bytes != 0 && data == NULL) || (y_bytes != 0 && y == NULL)) {
    return QW_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < count; i++) {
    const int64_t j = indices[i] < 0 ? (int64_t)indices[i] + (int64_t)axis_size : (int64_t)indices[i];
    if (j < 0 || (uint64_t)j >= axis_size) {
      return QW_INVALID_ARGUMENT;
    }
  }
  for (size_t o = 0; o < outer; o++) {
    for (size_t i = 0; i < count; i++) {
      const size_t j = (size_t)(indices[i] < 0 ? (int64_t)indices[i] + (int64_t)axis_size : indices[i]);
      memcpy((char*)y + (o * count + i) * row_bytes, (const char*)data + (o * axis_size + j) * row_bytes, row_bytes);
    }
  }
  return QW_OK;
}
