// The QTensor byte format (docs/qtensor-format.md): little-endian, self-describing, exact.
//
//   offset  size        field
//   0       4           magic "QWT1"
//   4       1           dtype code (0 quint8, 1 qint8, 2 qint32)
//   5       1           qscheme (0 per_tensor_affine, 1 per_channel_affine)
//   6       1           rank (0..8)
//   7       1           axis (per-channel; 0 otherwise)
//   8       4 * rank    shape, uint32 each
//   ...     per tensor:  float64 scale, int32 zero_point
//           per channel: float64 scales[C], int32 zero_points[C]   (C = shape[axis])
//   ...     element data, row-major, dtype-sized little-endian integers
import { DTYPE_BY_CODE } from './dtype.js';
import { MAX_RANK } from './check.js';

const MAGIC = [0x51, 0x57, 0x54, 0x31]; // "QWT1"
const QSCHEME_CODES = { per_tensor_affine: 0, per_channel_affine: 1 };

/** Encodes { dtype, shape, quant, ints } (ints: contiguous typed array of the dtype). */
export function encode({ dtype, shape, quant, ints }) {
  const perChannel = quant.scheme === 'per_channel_affine';
  const channels = perChannel ? quant.scales.length : 1;
  const headerBytes = 8 + 4 * shape.length + 12 * channels;
  const out = new Uint8Array(headerBytes + ints.byteLength);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  view.setUint8(4, dtype.code);
  view.setUint8(5, QSCHEME_CODES[quant.scheme]);
  view.setUint8(6, shape.length);
  view.setUint8(7, perChannel ? quant.axis : 0);
  let at = 8;
  for (const d of shape) {
    view.setUint32(at, d, true);
    at += 4;
  }
  const scales = perChannel ? quant.scales : [quant.scale];
  const zeroPoints = perChannel ? quant.zeroPoints : [quant.zeroPoint];
  for (const s of scales) {
    view.setFloat64(at, s, true);
    at += 8;
  }
  for (const z of zeroPoints) {
    view.setInt32(at, z, true);
    at += 4;
  }
  const data = new DataView(ints.buffer, ints.byteOffset, ints.byteLength);
  for (let i = 0; i < ints.length; i++) {
    if (dtype.bytes === 1) out[at + i] = data.getUint8(i);
    else view.setInt32(at + 4 * i, data.getInt32(4 * i, true), true);
  }
  return out;
}

/** Decodes bytes into { dtype, shape, quant, ints }; qparams are validated by the caller. */
export function decode(bytes) {
  const where = 'QTensor.fromBytes';
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  if (!(bytes instanceof Uint8Array)) {
    throw new TypeError(`${where}: expected a Uint8Array or an ArrayBuffer`);
  }
  const fail = (what) => {
    throw new RangeError(`${where}: ${what}`);
  };
  if (bytes.length < 8) fail(`truncated header: ${bytes.length} bytes, at least 8 needed`);
  if (!MAGIC.every((m, i) => bytes[i] === m)) fail('bad magic at offset 0: not a QTensor byte string ("QWT1")');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dtype = DTYPE_BY_CODE[view.getUint8(4)];
  if (dtype === undefined) fail(`unknown dtype code ${view.getUint8(4)} at offset 4`);
  const schemeCode = view.getUint8(5);
  if (schemeCode > 1) fail(`unknown qscheme code ${schemeCode} at offset 5`);
  const rank = view.getUint8(6);
  if (rank > MAX_RANK) fail(`rank ${rank} at offset 6 exceeds ${MAX_RANK}`);
  const axis = view.getUint8(7);
  if (bytes.length < 8 + 4 * rank) fail(`truncated shape: ${bytes.length} bytes`);
  const shape = [];
  let numel = 1;
  for (let k = 0; k < rank; k++) {
    shape.push(view.getUint32(8 + 4 * k, true));
    numel *= shape[k];
  }
  if (numel > 2 ** 31 - 1) fail(`shape [${shape}] has ${numel} elements, too many`);
  let at = 8 + 4 * rank;
  const perChannel = schemeCode === 1;
  if (perChannel && axis >= rank) fail(`axis ${axis} at offset 7 is not a dimension of a rank-${rank} tensor`);
  if (!perChannel && axis !== 0) fail(`axis byte at offset 7 must be 0 for a per-tensor tensor, got ${axis}`);
  const channels = perChannel ? shape[axis] : 1;
  const expected = at + 12 * channels + numel * dtype.bytes;
  if (bytes.length !== expected) fail(`length ${bytes.length} does not match the header, which describes ${expected} bytes`);
  const scales = new Float64Array(channels);
  const zeroPoints = new Int32Array(channels);
  for (let c = 0; c < channels; c++, at += 8) scales[c] = view.getFloat64(at, true);
  for (let c = 0; c < channels; c++, at += 4) zeroPoints[c] = view.getInt32(at, true);
  const ints = new dtype.IntArray(numel);
  if (dtype.bytes === 1) ints.set(new dtype.IntArray(bytes.buffer, bytes.byteOffset + at, numel));
  else for (let i = 0; i < numel; i++) ints[i] = view.getInt32(at + 4 * i, true);
  const quant = perChannel
    ? { scheme: 'per_channel_affine', scales, zeroPoints, axis }
    : { scheme: 'per_tensor_affine', scale: scales[0], zeroPoint: zeroPoints[0] };
  return { dtype, shape, quant, ints };
}
