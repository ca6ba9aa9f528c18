/* Observers (torch.ao.quantization.observer, PyTorch 1.13) and fake quantization: internal helpers.
 * The exported functions are declared in qwasm.h ("observers and fake quantization"). */
#ifndef QWASM_OBSERVERS_H
#define QWASM_OBSERVERS_H

#include <stddef.h>
#include <stdint.h>

#include "qwasm.h"

/* Lanes of ATen's Vectorized<float> in the AVX2 build torch 1.13 dispatches to on x86-64: the
 * float32 sum below reproduces its cascade_sum for that width. */
#define QW_TORCH_SUM_LANES 8

/* torch.sum of a contiguous float32 vector (ATen SumKernel.cpp cascade_sum / vectorized_inner_sum /
 * row_sum / multi_row_sum with 8-lane float accumulators), operation for operation. */
float qw_torch_sum_f32(const float* x, size_t n);

/* c10::div_floor_floating in float32 (torch.div(a, b, rounding_mode='floor')). */
float qw_div_floor_f32(float a, float b);

#endif
