/* A minimal test harness: CHECK records a failure with its location and keeps going; each test
 * binary ends with check_summary(), whose exit code ctest reads. */
#ifndef QWASM_TEST_CHECK_H
#define QWASM_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    check_count++;                                                        \
    if (!(cond)) {                                                        \
      if (check_failures++ < 20) {                                        \
        fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
        fprintf(stderr, __VA_ARGS__);                                     \
        fprintf(stderr, "\n");                                            \
      }                                                                   \
    }                                                                     \
  } while (0)

static int check_summary(const char* name) {
  printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures == 0 ? 0 : 1;
}

/* xorshift64*: deterministic test data. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static inline uint32_t rng_u32(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}
static inline float rng_uniform(float lo, float hi) {
  return lo + (hi - lo) * (float)(rng_u32() >> 8) * (1.0f / 16777216.0f);
}
static inline float float_from_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
static inline uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* Heap buffers of exactly the requested size, so AddressSanitizer flags any over-read or over-write. */
static inline void* exact_alloc(size_t bytes) {
  void* p = malloc(bytes == 0 ? 1 : bytes);
  if (p == NULL) {
    abort();
  }
  return p;
}

#endif /* QWASM_TEST_CHECK_H */
