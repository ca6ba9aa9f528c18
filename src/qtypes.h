/*
 * Quantized dtypes: their ranges and sizes, and the checks every entry point makes on scales and zero
 * points (the conventions of qwasm.h: quint8 [0, 255], qint8 [-128, 127], qint32 [-2^31, 2^31 - 1]).
 * One copy here; the entry points in api.c, operators/ and observers/ call these instead of
 * re-deriving -128 / 255 and the scale tests.
 */
#ifndef QWASM_QTYPES_H
#define QWASM_QTYPES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "qwasm.h"

/* Any of the three dtypes. */
static inline int qw_dtype_valid(qw_dtype dtype) {
  return (unsigned)dtype <= QW_QINT32;
}

/* quint8 or qint8: the dtypes of activations and weights. */
static inline int qw_dtype_is_8bit(qw_dtype dtype) {
  return dtype == QW_QUINT8 || dtype == QW_QINT8;
}

/* The range of a valid dtype. */
static inline int32_t qw_dtype_min(qw_dtype dtype) {
  return dtype == QW_QUINT8 ? 0 : dtype == QW_QINT8 ? -128 : INT32_MIN;
}

static inline int32_t qw_dtype_max(qw_dtype dtype) {
  return dtype == QW_QUINT8 ? 255 : dtype == QW_QINT8 ? 127 : INT32_MAX;
}

/* Bytes per element of a valid dtype. */
static inline size_t qw_dtype_size(qw_dtype dtype) {
  return dtype == QW_QINT32 ? 4 : 1;
}

static inline int qw_zero_point_valid(qw_dtype dtype, int32_t zero_point) {
  return zero_point >= qw_dtype_min(dtype) && zero_point <= qw_dtype_max(dtype);
}

/* A scale used only as a factor (an input's scale in a product): finite and > 0. */
static inline int qw_scale_positive(float scale) {
  return isfinite(scale) && scale > 0.0f;
}

/* A scale values are quantized with: also a finite float reciprocal, since the torch rule multiplies by
 * 1.0f / scale (it overflows below about 2.9e-39). qwasm.h's QW_INVALID_QPARAMS. */
static inline int qw_scale_valid(float scale) {
  return qw_scale_positive(scale) && isfinite(1.0f / scale);
}

static inline int qw_qparams_valid(qw_dtype dtype, float scale, int32_t zero_point) {
  return qw_scale_valid(scale) && qw_zero_point_valid(dtype, zero_point);
}

/* ---- sizes (qwasm.h: every buffer and element count is at most QW_MAX_BYTES) ---- */

/* *out = a * b * c computed in 64 bits; 1 when it is at most QW_MAX_BYTES, else 0 (and *out untouched). */
static inline int qw_size3(uint64_t a, uint64_t b, uint64_t c, size_t* out) {
  uint64_t p;
  if (__builtin_mul_overflow(a, b, &p) || __builtin_mul_overflow(p, c, &p) || p > QW_MAX_BYTES) {
    return 0;
  }
  *out = (size_t)p;
  return 1;
}

/* 1 when a * b * c * d (64-bit) is at most QW_MAX_BYTES. */
static inline int qw_size_fits4(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t p;
  return !__builtin_mul_overflow(a, b, &p) && !__builtin_mul_overflow(p, c, &p) && !__builtin_mul_overflow(p, d, &p) &&
         p <= QW_MAX_BYTES;
}

/* What a *_size function returns for a total computed in 64 bits: the total, or 0 when it passes QW_MAX_BYTES. */
static inline size_t qw_size_or_zero(uint64_t total) {
  return total <= QW_MAX_BYTES ? (size_t)total : 0;
}

/* n elements of a dtype fit in one buffer. */
static inline int qw_count_fits(size_t n, size_t elem_size) {
  size_t bytes;
  return qw_size3(n, elem_size, 1, &bytes);
}

/* p is aligned for elements of elem_size bytes (int32 data is read and written as int32_t). */
static inline int qw_aligned(const void* p, size_t elem_size) {
  return ((uintptr_t)p & (elem_size - 1)) == 0;
}

/* Element i of 8-bit data as its dtype's integer. */
static inline int32_t qw_load_q8(const void* data, size_t i, qw_dtype dtype) {
  return dtype == QW_QINT8 ? (int32_t)((const int8_t*)data)[i] : (int32_t)((const uint8_t*)data)[i];
}

/* An 8-bit integer already in its dtype's range stored as element i (its low byte). */
static inline void qw_store_q8(void* data, size_t i, int32_t v) {
  ((uint8_t*)data)[i] = (uint8_t)v;
}

/* v saturated to an 8-bit dtype and stored as element i. */
static inline void qw_store_q8_saturated(void* data, size_t i, int32_t v, qw_dtype dtype) {
  const int32_t lo = qw_dtype_min(dtype), hi = qw_dtype_max(dtype);
  ((uint8_t*)data)[i] = (uint8_t)(v < lo ? lo : v > hi ? hi : v);
}

#endif /* QWASM_QTYPES_H */
