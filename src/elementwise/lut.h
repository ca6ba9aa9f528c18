/* 8-bit table lookup: y[i] = table[x[i]] (quint8 indexes 0..255; qint8 indexes q + 128). Every
 * unary quantized op on 8-bit data (relu, relu6, hardtanh, hardswish, sigmoid, leaky relu, ...) is
 * a table of 256 outputs computed once per call from the op's exact per-value formula. */
#ifndef QWASM_LUT_H
#define QWASM_LUT_H

#include <stddef.h>
#include <stdint.h>

typedef void (*qw_u8_lut_ukernel)(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y);

#define QW_DECLARE_U8_LUT_UKERNEL(name) void name(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y)

QW_DECLARE_U8_LUT_UKERNEL(qw_u8_lut_ukernel__scalar);

#endif /* QWASM_LUT_H */
