/*
 * float32 range microkernels: the smallest and largest of n values together with lo and hi as given (the
 * dynamic quantizations widen their range to include 0: callers start from lo = hi = 0), compared as
 *   lo = x < lo ? x : lo,  hi = x > hi ? x : hi   (a -0 never replaces a +0)
 * Returns 0 when a value is NaN or infinite (lo and hi then undefined), 1 otherwise. min and max of finite values
 * do not depend on the order, so every kernel gives the same bits.
 */
#ifndef QWASM_F32_RANGE_H
#define QWASM_F32_RANGE_H

#include <stddef.h>

typedef int (*qw_f32_range_ukernel)(size_t n, const float* x, float* lo, float* hi);

#define QW_DECLARE_F32_RANGE_UKERNEL(name) int name(size_t n, const float* x, float* lo, float* hi)

QW_DECLARE_F32_RANGE_UKERNEL(qw_f32_range_ukernel__scalar);
#if QW_SIMD
QW_DECLARE_F32_RANGE_UKERNEL(qw_f32_range_ukernel_16__wasmsimd);
#endif

#endif /* QWASM_F32_RANGE_H */
