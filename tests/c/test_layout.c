/* qw_copy_strided: transposes, broadcasts (stride 0), slices, rank 0, and argument checks. qw_gather: rows picked by
 * positive and negative indices against a plain loop, and refused indices. */
#include <string.h>

#include "check.h"
#include "qwasm.h"

static const int32_t* contiguous_2d(const int32_t* shape) {
  static int32_t strides[2];
  strides[0] = shape[1];
  strides[1] = 1;
  return strides;
}

int main(void) {
  const int32_t dense_p[3] = {6, 3, 1}, dense_b[2] = {2, 1};
  /* A 3x4 int32 matrix read as its transpose (shape 4x3, strides 1, 4). */
  int32_t m[12];
  for (int i = 0; i < 12; i++) {
    m[i] = i;
  }
  int32_t t[12];
  const int32_t shape_t[2] = {4, 3}, strides_t[2] = {1, 4};
  CHECK(qw_copy_strided(4, 2, shape_t, m, strides_t, t, contiguous_2d(shape_t)) == QW_OK, "status");
  for (int r = 0; r < 4; r++) {
    for (int c = 0; c < 3; c++) {
      CHECK(t[r * 3 + c] == m[c * 4 + r], "transpose (%d,%d)", r, c);
    }
  }
  /* A 2x3x4 uint8 tensor permuted to (2, 0, 1): shape 4x2x3, strides 1, 12, 4. */
  uint8_t src[24], dst[24];
  for (int i = 0; i < 24; i++) {
    src[i] = (uint8_t)(i * 7);
  }
  const int32_t shape_p[3] = {4, 2, 3}, strides_p[3] = {1, 12, 4};
  CHECK(qw_copy_strided(1, 3, shape_p, src, strides_p, dst, dense_p) == QW_OK, "status");
  for (int a = 0; a < 4; a++) {
    for (int b = 0; b < 2; b++) {
      for (int c = 0; c < 3; c++) {
        CHECK(dst[(a * 2 + b) * 3 + c] == src[b * 12 + c * 4 + a], "permute (%d,%d,%d)", a, b, c);
      }
    }
  }
  /* Broadcast: stride 0 repeats. Rank 0: one element. Empty: nothing touched. */
  const int32_t shape_b[2] = {3, 2}, strides_b[2] = {0, 1};
  uint8_t row[2] = {5, 9}, rep[6];
  CHECK(qw_copy_strided(1, 2, shape_b, row, strides_b, rep, dense_b) == QW_OK, "status");
  CHECK(rep[0] == 5 && rep[1] == 9 && rep[4] == 5 && rep[5] == 9, "broadcast");
  int32_t one = 42, out = 0;
  CHECK(qw_copy_strided(4, 0, NULL, &one, NULL, &out, NULL) == QW_OK && out == 42, "rank 0");
  const int32_t shape_e[2] = {3, 0}, strides_e[2] = {0, 1};
  CHECK(qw_copy_strided(4, 2, shape_e, &one, strides_e, &out, strides_e) == QW_OK, "empty");
  /* Scatter: write a 2x2 block into column 1..2 of a 3x4 destination (strides 4, 1). */
  int32_t block[4] = {-1, -2, -3, -4}, canvas[12] = {0};
  const int32_t shape_s[2] = {2, 2}, dense_s[2] = {2, 1}, into[2] = {4, 1};
  CHECK(qw_copy_strided(4, 2, shape_s, block, dense_s, canvas + 1, into) == QW_OK, "status");
  CHECK(canvas[1] == -1 && canvas[2] == -2 && canvas[5] == -3 && canvas[6] == -4 && canvas[0] == 0 && canvas[3] == 0 &&
            canvas[4] == 0 && canvas[7] == 0,
        "scatter");
  /* NCHW <-> NHWC of 8-bit data (the transpose path) against a plain loop, odd sizes included. */
  /* three channels: the RGB interleave (16 columns per step, then the tail) */
  const int32_t sizes[6][4] = {{1, 3, 17, 19}, {2, 16, 16, 16}, {1, 64, 9, 7}, {3, 5, 1, 33}, {2, 3, 3, 48}, {1, 3, 2, 224}};
  for (int si = 0; si < 6; si++) {
    const int32_t n = sizes[si][0], c = sizes[si][1], h = sizes[si][2], w = sizes[si][3];
    const size_t total = (size_t)n * c * h * w;
    uint8_t* nchw = exact_alloc(total);
    uint8_t* nhwc = exact_alloc(total);
    uint8_t* back = exact_alloc(total);
    for (size_t i = 0; i < total; i++) nchw[i] = (uint8_t)rng_u32();
    /* NHWC destination, iterating (n, h, w, c) over the NCHW source */
    const int32_t shape4[4] = {n, h, w, c};
    const int32_t from_nchw[4] = {c * h * w, w, 1, h * w}, dense[4] = {h * w * c, w * c, c, 1};
    CHECK(qw_copy_strided(1, 4, shape4, nchw, from_nchw, nhwc, dense) == QW_OK, "status");
    int ok = 1;
    for (int32_t b = 0; b < n; b++)
      for (int32_t ci = 0; ci < c; ci++)
        for (int32_t y = 0; y < h; y++)
          for (int32_t x = 0; x < w; x++)
            ok &= nhwc[(((size_t)b * h + y) * w + x) * c + ci] == nchw[(((size_t)b * c + ci) * h + y) * w + x];
    CHECK(ok, "NCHW -> NHWC %dx%dx%dx%d", n, c, h, w);
    /* and back: NCHW destination, iterating (n, c, h, w) over the NHWC source */
    const int32_t shape_back[4] = {n, c, h, w};
    const int32_t from_nhwc[4] = {h * w * c, 1, w * c, c}, dense_back[4] = {c * h * w, h * w, w, 1};
    CHECK(qw_copy_strided(1, 4, shape_back, nhwc, from_nhwc, back, dense_back) == QW_OK, "status");
    CHECK(memcmp(back, nchw, total) == 0, "NHWC -> NCHW %dx%dx%dx%d", n, c, h, w);
    free(nchw);
    free(nhwc);
    free(back);
  }
  /* Bad arguments. */
  const int32_t neg[1] = {-1}, pos[1] = {1};
  CHECK(qw_copy_strided(4, 1, neg, m, pos, t, pos) == QW_INVALID_ARGUMENT, "negative dim");
  CHECK(qw_copy_strided(4, 1, pos, m, neg, t, pos) == QW_INVALID_ARGUMENT, "negative stride");
  CHECK(qw_copy_strided(3, 1, pos, m, pos, t, pos) == QW_INVALID_ARGUMENT, "element size 3");
  CHECK(qw_copy_strided(4, QW_MAX_RANK + 1, shape_t, m, strides_t, t, strides_t) == QW_INVALID_ARGUMENT, "rank too large");
  /* Gather: data [outer 3][axis 5][row 7 bytes], 6 indices (negative ones from the end), exact buffers. */
  {
    const size_t outer = 3, axis = 5, row_bytes = 7, count = 6;
    uint8_t* data = exact_alloc(outer * axis * row_bytes);
    uint8_t* y = exact_alloc(outer * count * row_bytes);
    for (size_t i = 0; i < outer * axis * row_bytes; i++) data[i] = (uint8_t)rng_u32();
    const int32_t indices[6] = {4, 0, -1, 2, -5, 2};
    CHECK(qw_gather(outer, axis, row_bytes, data, count, indices, y) == QW_OK, "gather status");
    int ok = 1;
    for (size_t o = 0; o < outer; o++) {
      for (size_t i = 0; i < count; i++) {
        const size_t j = (size_t)(indices[i] < 0 ? indices[i] + (int32_t)axis : indices[i]);
        ok &= memcmp(y + (o * count + i) * row_bytes, data + (o * axis + j) * row_bytes, row_bytes) == 0;
      }
    }
    CHECK(ok, "gather rows");
    /* an index outside [-axis, axis) is refused before anything is written */
    const int32_t bad_high[2] = {0, 5}, bad_low[2] = {1, -6};
    memset(y, 0xA5, outer * count * row_bytes);
    CHECK(qw_gather(outer, axis, row_bytes, data, 2, bad_high, y) == QW_INVALID_ARGUMENT, "gather index 5 of 5");
    CHECK(qw_gather(outer, axis, row_bytes, data, 2, bad_low, y) == QW_INVALID_ARGUMENT, "gather index -6 of 5");
    int untouched = 1;
    for (size_t i = 0; i < outer * count * row_bytes; i++) untouched &= y[i] == 0xA5;
    CHECK(untouched, "a refused gather wrote its output");
    CHECK(qw_gather(outer, axis, row_bytes, NULL, count, indices, y) == QW_INVALID_ARGUMENT, "gather without data");
    CHECK(qw_gather(outer, axis, row_bytes, data, count, NULL, y) == QW_INVALID_ARGUMENT, "gather without indices");
    CHECK(qw_gather(outer, axis, (size_t)1 << 31, data, count, indices, y) == QW_INVALID_ARGUMENT, "gather too large");
    CHECK(qw_gather(outer, axis, row_bytes, data, 0, NULL, NULL) == QW_OK, "gather of no index");
    free(data);
    free(y);
  }
  return check_summary("test_layout");
}
