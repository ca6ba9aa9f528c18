// torch.fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine (QAT's forward), bit for
// bit with PyTorch 1.13 for finite inputs: (clamp(zp + nearbyint(x * (1/scale)), qmin, qmax) - zp) * scale.
// NaN gives 0 and +-Inf saturate (torch 1.13 turns all three into quant_min through an int64 overflow).
import { backend } from '../runtime/runtime.js';
import { checkNumberArray, checkShape, numelOf, show } from '../tensor/check.js';

function asFloat32(data, where) {
  if (data instanceof Float32Array) return data;
  return Float32Array.from(checkNumberArray(data, undefined, where, 'data'));
}

function checkRange(zeroPoints, quantMin, quantMax, where) {
  for (const [k, v] of [['quantMin', quantMin], ['quantMax', quantMax]]) {
    if (!Number.isInteger(v) || v < -(2 ** 31) || v > 2 ** 31 - 1) {
      throw new RangeError(`${where}: ${k} must be a 32-bit integer, got ${show(v)}`);
    }
  }
  if (!(quantMin <= quantMax)) {
    throw new RangeError(`${where}: \`quant_min\` should be less than or equal to \`quant_max\`. Got [${quantMin}, ${quantMax}]`);
  }
  for (const z of zeroPoints) {
    if (!Number.isInteger(z)) throw new TypeError(`${where}: zero points must be integers, got ${show(z)}`);
    if (!(z >= quantMin && z <= quantMax)) {
      throw new RangeError(`${where}: \`zero_point\` must be between \`quant_min\` and \`quant_max\`. Got ${z} and [${quantMin}, ${quantMax}]`);
    }
  }
}

function checkScale(s, where) {
  const f = typeof s === 'number' ? Math.fround(s) : NaN;
  if (!Number.isFinite(f) || !(f > 0) || !Number.isFinite(Math.fround(1 / f))) {
    throw new RangeError(`${where}: scale must be finite and > 0 (with a finite float32 reciprocal), got ${show(s)}`);
  }
}

/** Returns a new Float32Array. */
export function fakeQuantize(data, scale, zeroPoint, quantMin, quantMax) {
  const where = 'fakeQuantize';
  const x = asFloat32(data, where);
  checkRange([zeroPoint], quantMin, quantMax, where);
  checkScale(scale, where);
  const b = backend();
  const n = x.length;
  return b.withBuffers([4 * n], (px) => {
    b.f32(px, n).set(x);
    b.call(where, 'qw_fake_quantize', n, px, px, Math.fround(scale), zeroPoint, quantMin, quantMax);
    return b.f32(px, n).slice();
  });
}

/** Per-channel along `axis` of `shape`; scales and zeroPoints have one entry per channel. */
export function fakeQuantizePerChannel(data, shape, scales, zeroPoints, axis, quantMin, quantMax) {
  const where = 'fakeQuantizePerChannel';
  const x = asFloat32(data, where);
  const dims = checkShape(shape, where);
  if (numelOf(dims) !== x.length) {
    throw new RangeError(`${where}: shape ${show(dims)} holds ${numelOf(dims)} elements but data has ${x.length}`);
  }
  const rank = dims.length;
  if (!Number.isInteger(axis) || axis < -rank || axis >= rank) {
    throw new RangeError(`${where}: Dimension out of range (expected to be in range of [${-rank}, ${rank - 1}], but got ${show(axis)})`);
  }
  const ax = axis < 0 ? axis + rank : axis;
  const channels = dims[ax];
  const s = Array.from(scales ?? []);
  const z = Array.from(zeroPoints ?? []);
  if (s.length !== channels || z.length !== channels) {
    throw new RangeError(`${where}: dimensions of scale and zero-point are not consistent with input tensor (${s.length} scales, ${z.length} zero points, ${channels} channels)`);
  }
  checkRange(z, quantMin, quantMax, where);
  s.forEach((v) => checkScale(v, where));
  const outer = numelOf(dims.slice(0, ax));
  const inner = numelOf(dims.slice(ax + 1));
  const n = x.length;
  const b = backend();
  return b.withBuffers([4 * n, 4 * channels, 4 * channels], (px, ps, pz) => {
    b.f32(px, n).set(x);
    b.f32(ps, channels).set(s);
    b.i32(pz, channels).set(z);
    b.call(where, 'qw_fake_quantize_per_channel', outer, channels, inner, px, px, ps, pz, quantMin, quantMax);
    return b.f32(px, n).slice();
  });
}
