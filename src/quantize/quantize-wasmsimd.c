/* wasm SIMD128 quantize kernels. Main loops handle 16 (8-bit) or 4 (qint32) elements; the tail
 * uses the per-element rule of quantize.h, which the vector code mirrors lane for lane. */
#include <assert.h>

#include "quantize.h"
#include "simd128.h"

/* One f32x4 through the rule, up to the int32 result. DIVIDE selects the ONNX rule (x / scale)
 * over PyTorch's (x * (1/scale)); for 8-bit outputs the float addition of zp is exact wherever
 * the result is not clamped, so both rules share the rest. SMALL (8-bit outputs): the clamped value is an integer of
 * magnitude at most 255, which adding 1.5 * 2^23 leaves in the low bits of the sum's representation: two
 * instructions instead of i32x4.trunc_sat_f32x4's five in V8 (a NaN lane is replaced by the zero point anyway). */
static inline v128_t quantize_f32x4(v128_t x, int divide, int small, const struct qw_quantize_params* p) {
  const v128_t scaled = divide ? wasm_f32x4_div(x, wasm_f32x4_splat(p->scale))
                               : wasm_f32x4_mul(x, wasm_f32x4_splat(p->inv_scale));
  const v128_t r = wasm_f32x4_nearest(scaled);
  const v128_t is_nan = wasm_f32x4_ne(r, r);
  v128_t t = wasm_f32x4_add(r, wasm_f32x4_splat(p->zero_point_f));
  t = wasm_f32x4_pmax(t, wasm_f32x4_splat(p->qmin_f)); /* t < qmin ? qmin : t */
  t = wasm_f32x4_pmin(t, wasm_f32x4_splat(p->qmax_f)); /* qmax < t ? qmax : t */
  const v128_t q = small ? wasm_i32x4_sub(wasm_f32x4_add(t, wasm_f32x4_splat(12582912.0f)), wasm_i32x4_splat(0x4B400000))
                         : wasm_i32x4_trunc_sat_f32x4(t);
  return wasm_v128_bitselect(wasm_i32x4_splat(p->zero_point), q, is_nan);
}

/* Sixteen floats to sixteen 8-bit lanes (values already inside the range, so the saturating
 * narrows only pack). */
static inline v128_t quantize_16(const float* x, int divide, int is_unsigned, const struct qw_quantize_params* p) {
  const v128_t q0 = quantize_f32x4(wasm_v128_load(x), divide, 1, p);
  const v128_t q1 = quantize_f32x4(wasm_v128_load(x + 4), divide, 1, p);
  const v128_t q2 = quantize_f32x4(wasm_v128_load(x + 8), divide, 1, p);
  const v128_t q3 = quantize_f32x4(wasm_v128_load(x + 12), divide, 1, p);
  const v128_t lo = wasm_i16x8_narrow_i32x4(q0, q1);
  const v128_t hi = wasm_i16x8_narrow_i32x4(q2, q3);
  return is_unsigned ? wasm_u8x16_narrow_i16x8(lo, hi) : wasm_i8x16_narrow_i16x8(lo, hi);
}

#define QW_QUANTIZE_8BIT_WASMSIMD(name, T, divide, is_unsigned, rule)              \
  QW_DECLARE_QUANTIZE_UKERNEL(name) {                                              \
    assert(n != 0 && x != NULL && y != NULL && params != NULL);                    \
    T* out = (T*)y;                                                                \
    for (; n >= 16; n -= 16, x += 16, out += 16) {                                 \
      wasm_v128_store(out, quantize_16(x, divide, is_unsigned, params));           \
    }                                                                              \
    for (size_t i = 0; i < n; i++) {                                               \
      out[i] = (T)rule(x[i], params);                                              \
    }                                                                              \
  }

QW_QUANTIZE_8BIT_WASMSIMD(qw_f32_qu8_quantize_torch_ukernel__wasmsimd, uint8_t, 0, 1, qw_quantize_torch)
QW_QUANTIZE_8BIT_WASMSIMD(qw_f32_qs8_quantize_torch_ukernel__wasmsimd, int8_t, 0, 0, qw_quantize_torch)
QW_QUANTIZE_8BIT_WASMSIMD(qw_f32_qu8_quantize_onnx_ukernel__wasmsimd, uint8_t, 1, 1, qw_quantize_onnx)
QW_QUANTIZE_8BIT_WASMSIMD(qw_f32_qs8_quantize_onnx_ukernel__wasmsimd, int8_t, 1, 0, qw_quantize_onnx)

/* The ONNX rule to quint8 for quotients below 2^22 in magnitude (quantize.h: DynamicQuantizeLinear's data): adding
 * 1.5 * 2^23 rounds the quotient half to even, as f32x4.nearest does, and leaves the integer in the low bits of the
 * sum; the zero point comes off with the sum's exponent as one integer subtraction, and the saturating narrows clamp
 * to [0, 255]. Neither NaN nor a huge quotient can occur, so three instructions replace eleven before the narrows
 * (0.30 -> 0.16 ns per element in Node 24 on MiniLM's activations, from CPU profiles). */
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qu8_quantize_dynamic_ukernel__wasmsimd) {
  assert(n != 0 && x != NULL && y != NULL && params != NULL);
  uint8_t* out = (uint8_t*)y;
  const v128_t vscale = wasm_f32x4_splat(params->scale);
  const v128_t vmagic = wasm_f32x4_splat(12582912.0f);
  const v128_t vbias = wasm_i32x4_splat(0x4B400000 - params->zero_point);
  for (; n >= 16; n -= 16, x += 16, out += 16) {
    v128_t q[4];
    for (size_t j = 0; j < 4; j++) {
      q[j] = wasm_i32x4_sub(wasm_f32x4_add(wasm_f32x4_div(wasm_v128_load(x + 4 * j), vscale), vmagic), vbias);
    }
    wasm_v128_store(out, wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q[0], q[1]), wasm_i16x8_narrow_i32x4(q[2], q[3])));
  }
  for (size_t i = 0; i < n; i++) {
    out[i] = (uint8_t)qw_quantize_onnx(x[i], params);
  }
}

/* qint32, PyTorch rule: trunc_sat performs the clamp to [-2^31, 2^31 - 1] (qmax_f is 2^31). */
QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs32_quantize_torch_ukernel__wasmsimd) {
  assert(n != 0 && x != NULL && y != NULL && params != NULL);
  int32_t* out = (int32_t*)y;
  for (; n >= 4; n -= 4, x += 4, out += 4) {
    wasm_v128_store(out, quantize_f32x4(wasm_v128_load(x), 0, 0, params));
  }
  for (size_t i = 0; i < n; i++) {
    out[i] = qw_quantize_torch(x[i], params);
  }
}

/* qint32, ONNX rule: the zero point is added exactly, in f64x2 lanes. */
static inline v128_t add_zero_point_f64(v128_t r, const struct qw_quantize_params* p) {
  const v128_t zp = wasm_f64x2_splat((double)p->zero_point);
  const v128_t lo = wasm_f64x2_add(wasm_f64x2_promote_low_f32x4(r), zp);
  const v128_t hi = wasm_f64x2_add(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(r, r, 2, 3, 2, 3)), zp);
  return wasm_i32x4_shuffle(wasm_i32x4_trunc_sat_f64x2_zero(lo), wasm_i32x4_trunc_sat_f64x2_zero(hi), 0, 1, 4, 5);
}

QW_DECLARE_QUANTIZE_UKERNEL(qw_f32_qs32_quantize_onnx_ukernel__wasmsimd) {
  assert(n != 0 && x != NULL && y != NULL && params != NULL);
  int32_t* out = (int32_t*)y;
  const v128_t vscale = wasm_f32x4_splat(params->scale);
  const v128_t vlimit = wasm_f32x4_splat(8589934592.0f);
  const v128_t vneg_limit = wasm_f32x4_splat(-8589934592.0f);
  const v128_t vzp = wasm_i32x4_splat(params->zero_point);
  for (; n >= 4; n -= 4, x += 4, out += 4) {
    v128_t r = wasm_f32x4_nearest(wasm_f32x4_div(wasm_v128_load(x), vscale));
    const v128_t is_nan = wasm_f32x4_ne(r, r);
    r = wasm_f32x4_pmin(wasm_f32x4_pmax(r, vneg_limit), vlimit);
    wasm_v128_store(out, wasm_v128_bitselect(vzp, add_zero_point_f64(r, params), is_nan));
  }
  for (size_t i = 0; i < n; i++) {
    out[i] = qw_quantize_onnx(x[i], params);
  }
}
