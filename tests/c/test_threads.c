/* The thread pool (src/threadpool.h) with pthreads standing in for the wasm workers: every parallel
 * driver (GEMM rows and columns, convolution as GEMM with and without im2col, grouped, depthwise, max and
 * average pooling, QLinearAdd, DynamicQuantizeLinear's range, the dynamic matmul, strided copies) gives the same bytes with 2, 3 and 4 threads as with one, and the int32
 * sums equal plain-loop references (so the comparison is not of the code with itself only); so do the float
 * operators of transformers (MatMul over several K blocks, Softmax, LayerNorm with skip, GELU). Buffers are
 * allocated with their exact sizes, so AddressSanitizer catches a tile that writes outside its own part. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "config.h"
#include "qwasm.h"
#include "threadpool.h"

#define WORKERS 3 /* pthreads; a pool of T threads uses the first T - 1 */

static void* worker(void* arg) {
  qw_thread_main((size_t)arg);
  return NULL;
}

static int32_t value_of(uint8_t byte, int is_signed) {
  return is_signed ? (int32_t)(int8_t)byte : (int32_t)byte;
}

static uint8_t* random_bytes(size_t n) {
  uint8_t* p = exact_alloc(n);
  for (size_t i = 0; i < n; i++) {
    p[i] = (uint8_t)rng_u32();
  }
  return p;
}

/* ---- the pool ---------------------------------------------------------------------------------- */

#define POOL_RANGE 997
static unsigned char ran_by[POOL_RANGE];
static _Atomic int ran_count[POOL_RANGE];

static void record_task(const void* context, size_t thread, size_t start, size_t count) {
  (void)context;
  for (size_t i = start; i < start + count; i++) {
    volatile uint64_t spin = 0;
    for (int j = 0; j < 20000; j++) {
      spin += (uint64_t)j; /* long enough for every worker to claim tiles */
    }
    ran_by[i] = (unsigned char)thread;
    ran_count[i]++;
  }
}

/* Every element runs exactly once, on a thread of the pool, the first tile on the caller's. That workers take part
 * is checked over up to 50 jobs: on a loaded machine the system may not schedule a worker while the caller runs one job's tiles alone. */
static void test_pool(void) {
  for (size_t threads = 1; threads <= WORKERS + 1; threads++) {
    CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
    for (size_t tile = 1; tile <= 10; tile += 9) {
      int most = 0;
      for (int job = 0; job < 50 && most < (threads > 1 ? 2 : 1); job++) {
        memset(ran_by, 0xFF, sizeof ran_by);
        for (size_t i = 0; i < POOL_RANGE; i++) ran_count[i] = 0;
        qw_parallelize(record_task, NULL, POOL_RANGE, tile);
        int used[WORKERS + 1] = {0}, once = 1;
        for (size_t i = 0; i < POOL_RANGE; i++) {
          once &= ran_count[i] == 1;
          if (ran_by[i] < threads) used[ran_by[i]] = 1;
        }
        int distinct = 0;
        for (size_t t = 0; t < WORKERS + 1; t++) distinct += used[t];
        CHECK(once, "%zu threads, tile %zu: an element ran other than once", threads, tile);
        /* the first tile is the caller's (src/threadpool.c: consecutive layers split alike keep their parts) */
        CHECK(ran_by[0] == 0 && ran_by[tile - 1] == 0, "%zu threads, tile %zu: the first tile ran on thread %d", threads,
              tile, ran_by[0]);
        CHECK(distinct >= 1 && distinct <= (int)threads, "%zu threads, tile %zu: tiles ran on %d threads", threads, tile, distinct);
        most = distinct > most ? distinct : most;
      }
      CHECK(most >= (threads > 1 ? 2 : 1), "%zu threads, tile %zu: no worker took a tile in 50 jobs", threads, tile);
    }
  }
}

/* ---- GEMM --------------------------------------------------------------------------------------- */

/* Runs qw_gemm with `threads` threads into a fresh buffer (int32 sums, or uint8 through fp32 requantization). */
static void* run_gemm(size_t threads, size_t m, size_t n, size_t k, const uint8_t* a, int32_t a_zp, const void* packed,
                      const void* blob, size_t out_bytes) {
  CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads %zu", threads);
  void* ws = exact_alloc(qw_gemm_workspace_size(n, k));
  uint8_t* y = exact_alloc(m * n * out_bytes);
  memset(y, 0x5A, m * n * out_bytes);
  const qw_status st = qw_gemm(m, n, k, a, k, QW_QUINT8, a_zp, packed, blob, y, n * out_bytes, ws);
  CHECK(st == QW_OK, "qw_gemm status %d", st);
  free(ws);
  return y;
}

static void test_gemm(void) {
  static const size_t shapes[][3] = {{1, 1000, 300}, {1, 17, 4000}, {3, 260, 200}, {5, 64, 512}, {17, 33, 77},
                                     {64, 100, 150}, {200, 8, 300}, {333, 97, 40}, {1000, 24, 20}};
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
    const size_t m = shapes[c][0], n = shapes[c][1], k = shapes[c][2];
    uint8_t* a = random_bytes(m * k);
    uint8_t* w = random_bytes(n * k);
    int32_t* w_zp = exact_alloc(n * sizeof(int32_t));
    int32_t* bias = exact_alloc(n * sizeof(int32_t));
    double* w_scales = exact_alloc(n * sizeof(double));
    for (size_t j = 0; j < n; j++) {
      w_zp[j] = (int32_t)(rng_u32() % 256) - 128;
      bias[j] = (int32_t)(rng_u32() % 20001) - 10000;
      w_scales[j] = 0.001 + (double)(rng_u32() % 1000) * 1e-5;
    }
    const int32_t a_zp = (int32_t)(rng_u32() % 256);
    void* packed = exact_alloc(qw_gemm_pack_size(n, k));
    CHECK(qw_gemm_pack(n, k, w, QW_QINT8, k, 1, w_zp, n, packed) == QW_OK, "pack");
    void* sums = exact_alloc(qw_requantization_size(n));
    void* bytes = exact_alloc(qw_requantization_size(n));
    const double one = 1.0;
    CHECK(qw_requantization_init(sums, n, QW_REQUANT_NONE, 1.0, &one, 1, w_zp, QW_QINT8, NULL, bias, 1.0, 0, QW_QINT32,
                                 -INFINITY, INFINITY, 0) == QW_OK, "blob");
    CHECK(qw_requantization_init(bytes, n, QW_REQUANT_ONNX, 0.02, w_scales, n, w_zp, QW_QINT8, NULL, bias, 0.5, 128,
                                 QW_QUINT8, -INFINITY, INFINITY, 1) == QW_OK, "blob");
    int32_t* ref = run_gemm(1, m, n, k, a, a_zp, packed, sums, 4);
    uint8_t* ref8 = run_gemm(1, m, n, k, a, a_zp, packed, bytes, 1);
    int bad = 0;
    for (size_t r = 0; r < m; r++) {
      for (size_t j = 0; j < n; j++) {
        int32_t sum = bias[j];
        for (size_t kk = 0; kk < k; kk++) {
          sum += (a[r * k + kk] - a_zp) * (value_of(w[j * k + kk], 1) - w_zp[j]);
        }
        bad += ref[r * n + j] != sum;
      }
    }
    CHECK(bad == 0, "gemm %zux%zux%zu, one thread: %d sums differ from the plain loop", m, n, k, bad);
    for (size_t threads = 2; threads <= WORKERS + 1; threads++) {
      int32_t* y = run_gemm(threads, m, n, k, a, a_zp, packed, sums, 4);
      uint8_t* y8 = run_gemm(threads, m, n, k, a, a_zp, packed, bytes, 1);
      CHECK(memcmp(y, ref, m * n * 4) == 0, "gemm %zux%zux%zu int32, %zu threads differ from one", m, n, k, threads);
      CHECK(memcmp(y8, ref8, m * n) == 0, "gemm %zux%zux%zu uint8, %zu threads differ from one", m, n, k, threads);
      free(y);
      free(y8);
    }
    free(a), free(w), free(w_zp), free(bias), free(w_scales), free(packed), free(sums), free(bytes), free(ref), free(ref8);
  }
}

/* The dynamic matmul's float output (MatMulIntegerToFloat) over row blocks packed once (qw_gemm_pack_panels): every
 * float equals (float)acc * (a_scale * b_scale) + bias from a plain loop, on 1 to 4 threads. The shapes take several
 * L2 column blocks (k 1536: the weights of a few hundred columns fill one), a partial last row block, and a single
 * row block. */
static void test_dynamic_matmul(void) {
  static const size_t shapes[][3] = {{3, 500, 3000}, {9, 1000, 300}, {37, 300, 1536}, {130, 100, 40}};
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
    const size_t m = shapes[c][0], n = shapes[c][1], k = shapes[c][2];
    uint8_t* a = random_bytes(m * k);
    uint8_t* w = random_bytes(n * k);
    float* b_scales = exact_alloc(n * sizeof(float));
    float* bias = exact_alloc(n * sizeof(float));
    for (size_t j = 0; j < n; j++) {
      b_scales[j] = 0.001f + (float)(rng_u32() % 1000) * 1e-5f;
      bias[j] = (float)((int32_t)(rng_u32() % 2001) - 1000) * 0.01f;
    }
    const int32_t a_zp = (int32_t)(rng_u32() % 256), w_zp = 0;
    const float a_scale = 0.0173f;
    void* packed = exact_alloc(qw_gemm_pack_size(n, k));
    CHECK(qw_gemm_pack(n, k, w, QW_QINT8, k, 1, &w_zp, 1, packed) == QW_OK, "pack");
    float* expected = exact_alloc(m * n * sizeof(float));
    for (size_t r = 0; r < m; r++) {
      for (size_t j = 0; j < n; j++) {
        int32_t acc = 0;
        for (size_t kk = 0; kk < k; kk++) {
          acc += (a[r * k + kk] - a_zp) * value_of(w[j * k + kk], 1);
        }
        expected[r * n + j] = (float)acc * (a_scale * b_scales[j]) + bias[j];
      }
    }
    for (size_t threads = 1; threads <= WORKERS + 1; threads++) {
      CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads %zu", threads);
      void* ws = exact_alloc(qw_dynamic_matmul_workspace_size(m, n, k));
      float* y = exact_alloc(m * n * sizeof(float));
      const qw_status st = qw_matmul_integer_to_float(m, n, k, a, a_zp, a_scale, packed, b_scales, n, bias, y, ws);
      CHECK(st == QW_OK, "dynamic matmul %zux%zux%zu: status %d", m, n, k, st);
      CHECK(memcmp(y, expected, m * n * sizeof(float)) == 0, "dynamic matmul %zux%zux%zu, %zu threads: floats differ from the plain loop", m, n, k, threads);
      free(ws);
      free(y);
    }
    free(a), free(w), free(b_scales), free(bias), free(packed), free(expected);
  }
}

/* ---- convolution -------------------------------------------------------------------------------- */

static int32_t* run_conv(size_t threads, const qw_conv2d_shape* s, const uint8_t* x, int32_t x_zp, const void* packed,
                         const void* blob, size_t out_elems) {
  CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
  void* ws = exact_alloc(qw_conv2d_workspace_size(s));
  int32_t* y = exact_alloc(out_elems * 4);
  const qw_status st = qw_conv2d(s, x, QW_QUINT8, x_zp, packed, blob, y, ws);
  CHECK(st == QW_OK, "qw_conv2d status %d", st);
  free(ws);
  return y;
}

static void test_conv(void) {
  /* batch, h, w, in_c, out_c, kernel, stride, pad, dilation, groups */
  static const int32_t shapes[][10] = {
      {1, 20, 20, 64, 96, 1, 1, 0, 1, 1},  {2, 9, 11, 24, 40, 1, 1, 0, 1, 1},  {1, 15, 17, 16, 24, 3, 1, 1, 1, 1},
      {1, 33, 33, 3, 32, 3, 2, 1, 1, 1},   {1, 7, 7, 64, 200, 3, 1, 1, 1, 1},  {1, 14, 13, 16, 16, 3, 1, 1, 1, 4},
      {2, 18, 18, 40, 40, 3, 1, 1, 1, 40}, {1, 19, 21, 48, 48, 3, 2, 1, 1, 48}, {1, 12, 12, 24, 24, 5, 1, 4, 2, 24},
      {1, 7, 7, 960, 960, 3, 1, 1, 1, 960}};
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
    const int32_t* v = shapes[c];
    const qw_conv2d_shape s = {v[0], v[1], v[2], v[3], v[4], v[5], v[5], v[6], v[6], v[7], v[7], v[7], v[7], v[8], v[8], v[9]};
    int32_t oh, ow;
    CHECK(qw_conv2d_output_size(&s, &oh, &ow) == QW_OK, "output size");
    const size_t cin_g = (size_t)(s.in_c / s.groups), cout_g = (size_t)(s.out_c / s.groups);
    const size_t taps = (size_t)s.kernel_h * s.kernel_w;
    const size_t x_elems = (size_t)s.batch * s.in_h * s.in_w * s.in_c;
    const size_t out_elems = (size_t)s.batch * oh * ow * s.out_c;
    uint8_t* x = random_bytes(x_elems);
    uint8_t* w = random_bytes((size_t)s.out_c * cin_g * taps);
    int32_t* w_zp = exact_alloc((size_t)s.out_c * sizeof(int32_t));
    int32_t* bias = exact_alloc((size_t)s.out_c * sizeof(int32_t));
    for (int32_t j = 0; j < s.out_c; j++) {
      w_zp[j] = (int32_t)(rng_u32() % 256) - 128;
      bias[j] = (int32_t)(rng_u32() % 20001) - 10000;
    }
    const int32_t x_zp = (int32_t)(rng_u32() % 256);
    CHECK(qw_threadpool_set_threads(1) == QW_OK, "set_threads");
    void* packed = exact_alloc(qw_conv2d_pack_size(&s));
    CHECK(qw_conv2d_pack(&s, w, QW_QINT8, w_zp, (size_t)s.out_c, packed) == QW_OK, "pack");
    void* blob = exact_alloc(qw_requantization_size((size_t)s.out_c));
    const double one = 1.0;
    CHECK(qw_requantization_init(blob, (size_t)s.out_c, QW_REQUANT_NONE, 1.0, &one, 1, w_zp, QW_QINT8, NULL, bias, 1.0,
                                 0, QW_QINT32, -INFINITY, INFINITY, 0) == QW_OK, "blob");
    int32_t* ref = run_conv(1, &s, x, x_zp, packed, blob, out_elems);
    int bad = 0;
    for (int32_t b = 0; b < s.batch; b++) {
      for (int32_t oy = 0; oy < oh; oy++) {
        for (int32_t ox = 0; ox < ow; ox++) {
          for (int32_t co = 0; co < s.out_c; co++) {
            const int32_t g = co / (int32_t)cout_g;
            int32_t sum = bias[co];
            for (int32_t ci = 0; ci < (int32_t)cin_g; ci++) {
              for (int32_t ky = 0; ky < s.kernel_h; ky++) {
                for (int32_t kx = 0; kx < s.kernel_w; kx++) {
                  const int32_t iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
                  const int32_t ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
                  const int32_t xv = iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w
                                         ? x_zp
                                         : x[(((size_t)b * s.in_h + iy) * s.in_w + ix) * s.in_c + g * cin_g + ci];
                  const int32_t wv = value_of(w[(((size_t)co * cin_g + ci) * s.kernel_h + ky) * s.kernel_w + kx], 1);
                  sum += (xv - x_zp) * (wv - w_zp[co]);
                }
              }
            }
            bad += ref[(((size_t)b * oh + oy) * ow + ox) * s.out_c + co] != sum;
          }
        }
      }
    }
    CHECK(bad == 0, "conv case %zu, one thread: %d sums differ from the plain loop", c, bad);
    for (size_t threads = 2; threads <= WORKERS + 1; threads++) {
      int32_t* y = run_conv(threads, &s, x, x_zp, packed, blob, out_elems);
      CHECK(memcmp(y, ref, out_elems * 4) == 0, "conv case %zu: %zu threads differ from one", c, threads);
      free(y);
    }
    /* 8-bit outputs by the fp32 rule (the output stage the kernels may fuse): the same bytes on every thread count. */
    const double w_scale = 0.004, out_scale = 0.5;
    void* blob8 = exact_alloc(qw_requantization_size((size_t)s.out_c));
    CHECK(qw_requantization_init(blob8, (size_t)s.out_c, QW_REQUANT_QNNPACK, 0.02, &w_scale, 1, w_zp, QW_QINT8, NULL,
                                 bias, out_scale, 100, QW_QUINT8, -INFINITY, INFINITY, 0) == QW_OK, "blob8");
    uint8_t* ref8 = (uint8_t*)run_conv(1, &s, x, x_zp, packed, blob8, out_elems);
    for (size_t threads = 2; threads <= WORKERS + 1; threads++) {
      uint8_t* y8 = (uint8_t*)run_conv(threads, &s, x, x_zp, packed, blob8, out_elems);
      CHECK(memcmp(y8, ref8, out_elems) == 0, "conv case %zu uint8: %zu threads differ from one", c, threads);
      free(y8);
    }
    free(blob8), free(ref8);
    free(x), free(w), free(w_zp), free(bias), free(packed), free(blob), free(ref);
  }
}

/* ---- pooling and add ---------------------------------------------------------------------------- */

static void test_pooling(void) {
  /* batch, h, w, channels, out_h, out_w, kernel, stride, pad */
  static const int32_t shapes[][9] = {{1, 112, 112, 24, 56, 56, 3, 2, 1}, {2, 7, 7, 1280, 1, 1, 7, 7, 0},
                                      {1, 1, 1, 1280, 1, 1, 1, 1, 0}, {3, 15, 9, 17, 7, 4, 3, 2, 0}};
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
    const int32_t* v = shapes[c];
    const qw_pool2d_shape s = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[6], v[7], v[7], v[8], v[8], 1, 1};
    const size_t x_elems = (size_t)s.batch * s.in_h * s.in_w * s.channels;
    const size_t y_elems = (size_t)s.batch * s.out_h * s.out_w * s.channels;
    uint8_t* x = random_bytes(x_elems);
    uint8_t* ref_max = NULL;
    uint8_t* ref_avg[4] = {NULL, NULL, NULL, NULL};
    uint8_t* ref_global = NULL;
    for (size_t threads = 1; threads <= WORKERS + 1; threads++) {
      CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
      void* ws = exact_alloc(qw_max_pool2d_workspace_size(&s));
      uint8_t* y = exact_alloc(y_elems);
      CHECK(qw_max_pool2d(&s, x, QW_QUINT8, y, ws, 0) == QW_OK, "max pool");
      if (threads == 1) {
        ref_max = y;
        int bad = 0; /* the plain loop */
        for (int32_t b = 0; b < s.batch; b++)
          for (int32_t oy = 0; oy < s.out_h; oy++)
            for (int32_t ox = 0; ox < s.out_w; ox++)
              for (int32_t ch = 0; ch < s.channels; ch++) {
                int32_t m = -1;
                for (int32_t ky = 0; ky < s.kernel_h; ky++)
                  for (int32_t kx = 0; kx < s.kernel_w; kx++) {
                    const int32_t iy = oy * s.stride_h - s.pad_top + ky, ix = ox * s.stride_w - s.pad_left + kx;
                    if (iy >= 0 && iy < s.in_h && ix >= 0 && ix < s.in_w) {
                      const int32_t xv = x[(((size_t)b * s.in_h + iy) * s.in_w + ix) * s.channels + ch];
                      m = xv > m ? xv : m;
                    }
                  }
                bad += y[(((size_t)b * s.out_h + oy) * s.out_w + ox) * s.channels + ch] != m;
              }
        CHECK(bad == 0, "max pool case %zu, one thread: %d outputs differ from the plain loop", c, bad);
      } else {
        CHECK(memcmp(y, ref_max, y_elems) == 0, "max pool case %zu: %zu threads differ from one", c, threads);
        free(y);
      }
      free(ws);
      /* the FBGEMM forms round channels below vector_channels (16) as their vector loops: tiles split channels */
      const int forms[4] = {QW_AVG_POOL_QNNPACK, QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST,
                            QW_AVG_POOL_GENERIC_CHANNELS_LAST_FBGEMM, QW_AVG_POOL_ADAPTIVE_CHANNELS_LAST_FBGEMM};
      for (int f = 0; f < 4; f++) {
        uint8_t* avg = exact_alloc(y_elems);
        CHECK(qw_avg_pool2d(&s, x, QW_QUINT8, 0.1f, 3, avg, forms[f], 1, 0, 16) == QW_OK, "avg pool");
        if (threads == 1) {
          ref_avg[f] = avg;
        } else {
          CHECK(memcmp(avg, ref_avg[f], y_elems) == 0, "avg pool case %zu form %d: %zu threads differ", c, forms[f],
                threads);
          free(avg);
        }
      }
      /* onnxruntime's global average pool: tiles are channel blocks of an image */
      uint8_t* global = exact_alloc((size_t)s.batch * s.channels);
      CHECK(qw_global_avg_pool_ort((size_t)s.batch, (size_t)s.in_h * s.in_w, (size_t)s.channels, x, QW_QUINT8, 3, 0.013f, 7,
                                   global) == QW_OK, "global avg pool");
      if (threads == 1) {
        ref_global = global;
      } else {
        CHECK(memcmp(global, ref_global, (size_t)s.batch * s.channels) == 0, "global avg pool case %zu: %zu threads differ",
              c, threads);
        free(global);
      }
    }
    free(x), free(ref_max), free(ref_global);
    for (int f = 0; f < 4; f++) free(ref_avg[f]);
  }
  /* the global pool's refusals: no pixels, no input, a zero point or multiplier out of range */
  uint8_t px[4] = {0}, py[4];
  CHECK(qw_global_avg_pool_ort(1, 0, 4, px, QW_QUINT8, 0, 0.5f, 0, py) == QW_INVALID_ARGUMENT, "global pool: no pixels");
  CHECK(qw_global_avg_pool_ort(1, 1, 4, NULL, QW_QUINT8, 0, 0.5f, 0, py) == QW_INVALID_ARGUMENT, "global pool: no x");
  CHECK(qw_global_avg_pool_ort(1, 1, 4, px, QW_QINT8, 200, 0.5f, 0, py) == QW_INVALID_QPARAMS, "global pool: x zp");
  CHECK(qw_global_avg_pool_ort(1, 1, 4, px, QW_QUINT8, 0, 0.5f, -1, py) == QW_INVALID_QPARAMS, "global pool: y zp");
  CHECK(qw_global_avg_pool_ort(1, 1, 4, px, QW_QUINT8, 0, INFINITY, 0, py) == QW_INVALID_QPARAMS, "global pool: scale");
  CHECK(qw_global_avg_pool_ort(1, 1, 4, px, QW_QUINT8, 0, -0.5f, 0, py) == QW_INVALID_QPARAMS, "global pool: sign");
}

static float* random_floats(size_t n, float lo, float hi) {
  float* p = exact_alloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) {
    p[i] = rng_uniform(lo, hi);
  }
  return p;
}

/* Quantize (every rounding rule) and dequantize, split in blocks of 64 elements. */
static void test_quantize(void) {
  const size_t n = 200003;
  float* x = random_floats(n, -3, 3);
  uint8_t* ref = exact_alloc(n);
  uint8_t* y = exact_alloc(n);
  float* dref = exact_alloc(n * sizeof(float));
  float* dy = exact_alloc(n * sizeof(float));
  for (int rounding = QW_ROUND_TORCH; rounding <= QW_ROUND_FBGEMM_SCALAR; rounding++) {
    CHECK(qw_threadpool_set_threads(1) == QW_OK, "set_threads");
    CHECK(qw_quantize(n, x, ref, QW_QUINT8, (qw_rounding)rounding, 0.0237f, 131) == QW_OK, "quantize");
    CHECK(qw_dequantize(n, ref, dref, QW_QUINT8, 0.0237f, 131) == QW_OK, "dequantize");
    for (size_t threads = 2; threads <= WORKERS + 1; threads++) {
      CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
      CHECK(qw_quantize(n, x, y, QW_QUINT8, (qw_rounding)rounding, 0.0237f, 131) == QW_OK, "quantize");
      CHECK(qw_dequantize(n, ref, dy, QW_QUINT8, 0.0237f, 131) == QW_OK, "dequantize");
      CHECK(memcmp(y, ref, n) == 0, "quantize rounding %d: %zu threads differ from one", rounding, threads);
      CHECK(memcmp(dy, dref, n * sizeof(float)) == 0, "dequantize: %zu threads differ from one", threads);
    }
  }
  free(x), free(ref), free(y), free(dref), free(dy);
}

/* DynamicQuantizeLinear, whose range pass is split over the threads: the same qparams and bytes with 2 to 4 threads
 * as with one, the qparams those of the extremes planted in the last tiles (a plain loop's range, so not the code
 * compared with itself only), and a NaN or an infinity in any tile refused. */
static void test_dynamic_quantize(void) {
  const size_t n = 200003;
  float* x = random_floats(n, -3, 2.5f);
  x[n - 5] = -7.5f;
  x[n / 2 + 3] = 6.25f;
  uint8_t* ref = exact_alloc(n);
  uint8_t* y = exact_alloc(n);
  float ref_scale = 0, scale = 0;
  int32_t ref_zp = -1, zp = -1;
  CHECK(qw_threadpool_set_threads(1) == QW_OK, "set_threads");
  CHECK(qw_dynamic_quantize(n, x, ref, &ref_scale, &ref_zp) == QW_OK, "dynamic quantize");
  CHECK(ref_scale == (6.25f - -7.5f) / 255.0f, "dynamic quantize: scale %.9g from the range", (double)ref_scale);
  CHECK(ref_zp == (int32_t)nearbyintf(0.0f - -7.5f / ref_scale), "dynamic quantize: zero point %d", ref_zp);
  for (size_t threads = 1; threads <= WORKERS + 1; threads++) {
    CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
    CHECK(qw_dynamic_quantize(n, x, y, &scale, &zp) == QW_OK, "dynamic quantize");
    CHECK(scale == ref_scale && zp == ref_zp && memcmp(y, ref, n) == 0, "dynamic quantize: %zu threads differ from one",
          threads);
    const size_t spots[] = {7, n / 2, n - 2};
    for (size_t i = 0; i < 3; i++) {
      const float kept = x[spots[i]];
      x[spots[i]] = i == 1 ? INFINITY : NAN;
      CHECK(qw_dynamic_quantize(n, x, y, &scale, &zp) == QW_INVALID_ARGUMENT,
            "dynamic quantize: a non-finite value at %zu accepted with %zu threads", spots[i], threads);
      x[spots[i]] = kept;
    }
  }
  free(x), free(ref), free(y);
}

/* Strided copies split over the threads by their outer iterations: attention's head transpose (float runs of 32),
 * an 8-bit NCHW -> channels-last transpose (the blocked transpose per iteration) and an element-by-element
 * permutation, each equal to a plain loop's copy with 1 to 4 threads. */
static void test_copy_strided(void) {
  const struct { size_t elem; int32_t shape[4], perm[4]; } cases[] = {
      {4, {1, 12, 128, 32}, {0, 2, 1, 3}}, /* [1, 12, 128, 32] -> [1, 128, 12, 32] */
      {1, {2, 64, 28, 28}, {0, 2, 3, 1}},  /* NCHW -> NHWC */
      {2, {40, 30, 50, 1}, {2, 0, 1, 3}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const int32_t* shape = cases[c].shape;
    const size_t elem = cases[c].elem, n = (size_t)shape[0] * shape[1] * shape[2] * shape[3];
    int32_t src_strides[4], out_shape[4], out_strides[4], strides[4];
    for (int k = 3, st = 1; k >= 0; st *= shape[k--]) strides[k] = st;
    for (int k = 0; k < 4; k++) out_shape[k] = shape[cases[c].perm[k]];
    for (int k = 3, st = 1; k >= 0; st *= out_shape[k--]) out_strides[k] = st;
    for (int k = 0; k < 4; k++) src_strides[k] = strides[cases[c].perm[k]];
    uint8_t* x = random_bytes(n * elem);
    uint8_t* ref = exact_alloc(n * elem);
    uint8_t* y = exact_alloc(n * elem);
    for (size_t i = 0; i < n; i++) { /* output element i at its index over out_shape */
      size_t rest = i, at = 0;
      for (int k = 3; k >= 0; k--) {
        at += rest % (size_t)out_shape[k] * (size_t)src_strides[k];
        rest /= (size_t)out_shape[k];
      }
      memcpy(ref + i * elem, x + at * elem, elem);
    }
    for (size_t threads = 1; threads <= WORKERS + 1; threads++) {
      CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
      memset(y, 0, n * elem);
      CHECK(qw_copy_strided(elem, 4, out_shape, x, src_strides, y, out_strides) == QW_OK, "copy_strided");
      CHECK(memcmp(y, ref, n * elem) == 0, "copy_strided case %zu: %zu threads differ from the plain copy", c, threads);
    }
    free(x), free(ref), free(y);
  }
}

static void test_add(void) {
  const size_t n = 200003;
  uint8_t* a = random_bytes(n);
  uint8_t* b = random_bytes(n);
  uint8_t* ref = exact_alloc(n);
  uint8_t* y = exact_alloc(n);
  CHECK(qw_threadpool_set_threads(1) == QW_OK, "set_threads");
  CHECK(qw_add_onnx(n, a, NULL, 0.03f, 120, b, NULL, 0.02f, 130, QW_QUINT8, ref, 0.04f, 125) == QW_OK, "add");
  for (size_t threads = 2; threads <= WORKERS + 1; threads++) {
    CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
    CHECK(qw_add_onnx(n, a, NULL, 0.03f, 120, b, NULL, 0.02f, 130, QW_QUINT8, y, 0.04f, 125) == QW_OK, "add");
    CHECK(memcmp(y, ref, n) == 0, "add_onnx: %zu threads differ from one", threads);
  }
  free(a), free(b), free(ref), free(y);
}


/* Runs qw_f32_matmul with `threads` threads (its workspace sized for them) into y, which holds `init` first. */
static void run_f32_matmul(size_t threads, size_t m, size_t n, size_t k, const float* a, const float* b, int transpose_b,
                           int prepacked, float alpha, int accumulate, const float* init, float* y) {
  CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
  const size_t ws_bytes = qw_f32_matmul_workspace_size(m, n, k);
  void* ws = exact_alloc(ws_bytes);
  memcpy(y, init, m * n * sizeof(float));
  CHECK(qw_f32_matmul(m, n, k, a, k, b, transpose_b ? k : n, transpose_b, prepacked, alpha, accumulate, y, n, ws) == QW_OK,
        "f32 matmul %zux%zux%zu", m, n, k);
  free(ws);
}

static void test_float_ops(void) {
  /* attention's two products, a product over two K blocks, a pre-packed B over three (256-deep blocks),
   * accumulating with alpha, and rows that leave a partial tile */
  const struct { size_t m, n, k; int transpose_b, prepacked, accumulate; float alpha; } products[] = {
      {128, 128, 32, 1, 0, 0, 1.0f}, {128, 32, 128, 0, 0, 0, 1.0f}, {37, 50, 300, 0, 0, 0, 1.0f},
      {61, 19, 600, 1, 1, 1, 0.5f},  {3, 70, 9, 0, 0, 0, 0.25f},
  };
  for (size_t c = 0; c < sizeof(products) / sizeof(products[0]); c++) {
    const size_t m = products[c].m, n = products[c].n, k = products[c].k;
    float* a = random_floats(m * k, -1, 1);
    float* b = random_floats(k * n, -1, 1);
    float* init = random_floats(m * n, -1, 1);
    float* ref = exact_alloc(m * n * sizeof(float));
    float* y = exact_alloc(m * n * sizeof(float));
    run_f32_matmul(1, m, n, k, a, b, products[c].transpose_b, products[c].prepacked, products[c].alpha,
                   products[c].accumulate, init, ref);
    double worst = 0; /* against a plain double-precision loop: the product is a product */
    for (size_t i = 0; i < m; i++) {
      for (size_t j = 0; j < n; j++) {
        double sum = 0;
        for (size_t kk = 0; kk < k; kk++) {
          sum += (double)a[i * k + kk] * (products[c].transpose_b ? b[j * k + kk] : b[kk * n + j]);
        }
        sum = sum * products[c].alpha + (products[c].accumulate ? init[i * n + j] : 0);
        worst = fmax(worst, fabs(sum - ref[i * n + j]));
      }
    }
    CHECK(worst < 1e-4, "f32 matmul case %zu: %g from the double product", c, worst);
    for (size_t threads = 2; threads <= WORKERS + 1; threads++) {
      run_f32_matmul(threads, m, n, k, a, b, products[c].transpose_b, products[c].prepacked, products[c].alpha,
                     products[c].accumulate, init, y);
      CHECK(memcmp(y, ref, m * n * sizeof(float)) == 0, "f32 matmul case %zu: %zu threads differ from one", c, threads);
    }
    free(a), free(b), free(init), free(ref), free(y);
  }

  const size_t rows = 203, cols = 384, len = 128, outer = 700, gelu_n = 100003;
  float* x = random_floats(rows * cols, -4, 4);
  float* skip = random_floats(rows * cols, -1, 1);
  float* gamma = random_floats(cols, 0.5f, 1.5f);
  float* beta = random_floats(cols, -0.5f, 0.5f);
  float* scores = random_floats(outer * len, -8, 8);
  float* g = random_floats(gelu_n, -6, 6);
  float* ref[5];
  float* y[5];
  const size_t sizes[5] = {rows * cols, rows * cols, outer * len, gelu_n, gelu_n};
  for (size_t threads = 1; threads <= WORKERS + 1; threads++) {
    float** out = threads == 1 ? ref : y;
    for (int i = 0; i < 5; i++) {
      out[i] = exact_alloc(sizes[i] * sizeof(float));
    }
    CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
    CHECK(qw_f32_layer_norm(rows, cols, x, skip, rows, beta, gamma, beta, 1e-5f, out[0], out[1]) == QW_OK, "layer norm");
    CHECK(qw_f32_softmax(outer, len, 1, scores, out[2], NULL) == QW_OK, "softmax");
    CHECK(qw_f32_gelu(QW_GELU_ERF, 1, gelu_n, g, NULL, out[3]) == QW_OK, "gelu");
    CHECK(qw_f32_gelu(QW_GELU_TANH, 1, gelu_n, g, NULL, out[4]) == QW_OK, "gelu tanh");
    if (threads == 1) {
      double worst = 0; /* every softmax row sums to 1 */
      for (size_t r = 0; r < outer; r++) {
        double sum = 0;
        for (size_t i = 0; i < len; i++) sum += ref[2][r * len + i];
        worst = fmax(worst, fabs(sum - 1));
      }
      CHECK(worst < 1e-5, "softmax rows sum to 1 within %g", worst);
      continue;
    }
    const char* names[5] = {"layer norm", "layer norm sum", "softmax", "gelu", "gelu tanh"};
    for (int i = 0; i < 5; i++) {
      CHECK(memcmp(y[i], ref[i], sizes[i] * sizeof(float)) == 0, "%s: %zu threads differ from one", names[i], threads);
      free(y[i]);
    }
  }
  /* rows of no columns: nothing to write (found by the libFuzzer harness: the tile size divided by cols) */
  CHECK(qw_f32_layer_norm(rows, 0, x, NULL, 0, NULL, gamma, NULL, 1e-5f, ref[0], NULL) == QW_OK, "layer norm of 0 columns");
  for (int i = 0; i < 5; i++) free(ref[i]);
  free(x), free(skip), free(gamma), free(beta), free(scores), free(g);
}

/* qw_f32_matmul_batch against one qw_f32_matmul per product on one thread, bit for bit: whole products per thread
 * (count >= threads), row tiles (count < threads), single rows (MLAS's GEMV), K = 0, products at scattered offsets
 * (each product's A, B and y apart, with gaps), and the refused arguments. */
static void test_f32_matmul_batch(void) {
  const struct { size_t count, m, n, k; int transpose_b, prepacked, accumulate; float alpha; } batches[] = {
      {5, 64, 64, 32, 1, 0, 0, 0.125f}, {6, 64, 32, 64, 0, 0, 0, 1.0f}, {1, 37, 20, 300, 0, 0, 1, 0.5f},
      {4, 1, 40, 70, 0, 0, 0, 1.0f},    {3, 9, 17, 0, 0, 0, 0, 1.0f},     {3, 13, 24, 600, 1, 1, 1, 0.5f},
  };
  for (size_t c = 0; c < sizeof(batches) / sizeof(batches[0]); c++) {
    const size_t count = batches[c].count, m = batches[c].m, n = batches[c].n, k = batches[c].k;
    const size_t a_step = m * k + 7, b_step = k * n + 5, y_step = m * n + 3; /* gaps between the products */
    float* a = random_floats(count * a_step, -1, 1);
    float* b = random_floats(count * b_step, -1, 1);
    float* init = random_floats(count * y_step, -1, 1);
    float* ref = exact_alloc(count * y_step * sizeof(float));
    float* y = exact_alloc(count * y_step * sizeof(float));
    int32_t* offsets = exact_alloc(3 * count * sizeof(int32_t));
    for (size_t i = 0; i < count; i++) { /* the products in reverse order of memory */
      const size_t at = count - 1 - i;
      offsets[3 * i] = (int32_t)(at * a_step), offsets[3 * i + 1] = (int32_t)(at * b_step);
      offsets[3 * i + 2] = (int32_t)(at * y_step);
    }
    memcpy(ref, init, count * y_step * sizeof(float));
    CHECK(qw_threadpool_set_threads(1) == QW_OK, "set_threads");
    void* ws1 = exact_alloc(qw_f32_matmul_workspace_size(m, n, k));
    for (size_t i = 0; i < count; i++) {
      CHECK(qw_f32_matmul(m, n, k, a + offsets[3 * i], k, b + offsets[3 * i + 1], batches[c].transpose_b ? k : n,
                          batches[c].transpose_b, batches[c].prepacked, batches[c].alpha, batches[c].accumulate,
                          ref + offsets[3 * i + 2],
                          n, ws1) == QW_OK,
            "batch case %zu: product %zu alone", c, i);
    }
    free(ws1);
    for (size_t threads = 1; threads <= WORKERS + 1; threads++) {
      CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
      const size_t ws_bytes = qw_f32_matmul_batch_workspace_size(m, n, k);
      void* ws = exact_alloc(ws_bytes);
      memcpy(y, init, count * y_step * sizeof(float));
      CHECK(qw_f32_matmul_batch(count, offsets, m, n, k, a, k, b, batches[c].transpose_b ? k : n,
                                batches[c].transpose_b, batches[c].prepacked, batches[c].alpha, batches[c].accumulate, y,
                                n, ws) == QW_OK,
            "batch case %zu", c);
      CHECK(memcmp(y, ref, count * y_step * sizeof(float)) == 0, "batch case %zu on %zu threads: not the products' bits",
            c, threads);
      free(ws);
    }
    free(a), free(b), free(init), free(ref), free(y), free(offsets);
  }
  static float dummy[64];
  static int32_t negative[3] = {0, -1, 0};
  CHECK(qw_threadpool_set_threads(2) == QW_OK, "set_threads");
  CHECK(qw_f32_matmul_batch(1, negative, 2, 2, 2, dummy, 2, dummy, 2, 0, 0, 1.0f, 0, dummy, 2, dummy) ==
            QW_INVALID_ARGUMENT, "batch: a negative offset");
  CHECK(qw_f32_matmul_batch(1, NULL, 2, 2, 2, dummy, 2, dummy, 2, 0, 0, 1.0f, 0, dummy, 2, dummy) == QW_INVALID_ARGUMENT,
        "batch: no offsets");
  CHECK(qw_f32_matmul_batch(0, NULL, 2, 2, 2, NULL, 2, NULL, 2, 0, 0, 1.0f, 0, NULL, 2, NULL) == QW_OK,
        "batch: no products");
}

/* Workspaces have a slice per thread: a size that fits one thread's slice but not 64 of them is refused (0) by the
 * size function, in 64 bits, and the entry point refuses the call (here with an empty batch: no buffer is read). */
static void test_workspace_limits(void) {
  static uint8_t dummy[64] __attribute__((aligned(16)));
  const qw_pool2d_shape pool = {.batch = 0, .in_h = 1 << 13, .in_w = 1 << 12, .channels = 1, .out_h = 1, .out_w = 1,
                                .kernel_h = 1 << 13, .kernel_w = 1 << 12, .stride_h = 1, .stride_w = 1,
                                .dilation_h = 1, .dilation_w = 1}; /* 2^25 taps: 256 MiB of pointers per thread */
  qw_conv2d_shape depthwise = {.batch = 0, .in_h = 1, .in_w = 1 << 14, .in_c = 256, .out_c = 256, .kernel_h = 1,
                               .kernel_w = 1, .stride_h = 1, .stride_w = 1, .dilation_h = 1, .dilation_w = 1,
                               .groups = 256}; /* 32 MiB of pair and accumulator rows per thread */
  for (size_t threads = 1; threads <= 64; threads += 63) {
    CHECK(qw_threadpool_set_threads(threads) == QW_OK, "set_threads");
    const int fits = threads == 1;
    CHECK((qw_gemm_workspace_size((size_t)1 << 24, 16) != 0) == fits, "gemm workspace on %zu threads", threads);
    CHECK((qw_max_pool2d_workspace_size(&pool) != 0) == fits, "max pool workspace on %zu threads", threads);
    CHECK((qw_max_pool2d(&pool, dummy, QW_QUINT8, dummy, dummy, 0) == QW_OK) == fits, "max pool on %zu threads", threads);
    CHECK((qw_conv2d_workspace_size(&depthwise) != 0) == fits, "depthwise workspace on %zu threads", threads);
  }
  /* pair rows of 2^16 columns x 2^16 channels (16 GiB): refused on one thread too, and by qw_conv2d */
  depthwise.in_w = depthwise.in_c = depthwise.out_c = depthwise.groups = 1 << 16;
  CHECK(qw_threadpool_set_threads(1) == QW_OK, "set_threads");
  CHECK(qw_conv2d_pack_size(&depthwise) != 0 && qw_conv2d_workspace_size(&depthwise) == 0, "16 GiB depthwise workspace");
  CHECK(qw_conv2d(&depthwise, dummy, QW_QUINT8, 0, dummy, dummy, dummy, dummy) == QW_INVALID_ARGUMENT, "depthwise refused");
}

int main(void) {
  CHECK(qw_threadpool_set_threads(0) == QW_INVALID_ARGUMENT, "0 threads accepted");
  CHECK(qw_threadpool_set_threads(QW_MAX_THREADS + 1) == QW_INVALID_ARGUMENT, "too many threads accepted");
  pthread_t workers[WORKERS];
  for (size_t i = 0; i < WORKERS; i++) {
    pthread_create(&workers[i], NULL, worker, (void*)(i + 1));
  }
  test_pool();
  test_gemm();
  test_dynamic_matmul();
  test_conv();
  test_pooling();
  test_add();
  test_quantize();
  test_dynamic_quantize();
  test_copy_strided();
  test_float_ops();
  test_f32_matmul_batch();
  test_workspace_limits();
  qw_threadpool_shutdown();
  for (size_t i = 0; i < WORKERS; i++) {
    pthread_join(workers[i], NULL);
  }
  return check_summary("test_threads");
}
