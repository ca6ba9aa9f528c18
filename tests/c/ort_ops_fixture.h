/* The types of ort_ops_cases.h (onnxruntime-web's single-node cases, generated at build time by
 * tools/transformer/ort_ops_c_fixture.mjs) and a base64 decoder for its tensors. */
#ifndef QWASM_TEST_ORT_OPS_FIXTURE_H
#define QWASM_TEST_ORT_OPS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One tensor: ONNX element type (1 float, 2 uint8, 3 int8, 6 int32, 7 int64, 9 bool), element count,
 * expected (an output holding onnxruntime-web's values) or an input, base64 of its bytes. */
struct ort_tensor {
  int dtype;
  size_t count;
  int expected;
  const char* base64;
};

/* One call of tests/js/ort-ops-qwasm.js's plan: kind (its KIND), integer and float arguments, input tensor
 * indices (-1: absent), output tensor index. */
struct ort_step {
  int kind;
  int n_ints;
  int32_t ints[16];
  float floats[2];
  int inputs[5];
  int output;
};

struct ort_case {
  const char* name;
  int n_tensors;
  const struct ort_tensor* tensors;
  int n_steps;
  const struct ort_step* steps;
};

static inline size_t ort_dtype_size(int dtype) {
  return dtype == 7 ? 8 : dtype == 1 || dtype == 6 ? 4 : 1;
}

/* Decodes base64 into out (which holds exactly the decoded length); returns the number of bytes. */
static inline size_t ort_base64_decode(const char* in, uint8_t* out) {
  uint32_t acc = 0;
  int bits = 0;
  size_t n = 0;
  for (; *in != '\0' && *in != '='; in++) {
    const char c = *in;
    const int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
                  : c == '+' ? 62 : 63;
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (uint8_t)(acc >> bits);
    }
  }
  return n;
}

#endif /* QWASM_TEST_ORT_OPS_FIXTURE_H */
