// MobileNetV2's convolution shapes alone, through qwasm's conv2d: the 3x3 stride-2 stem, the pointwise (1x1) layers
// and the depthwise 3x3 layers, NCHW-shaped inputs stored channels-last (as a model's layers receive them), the
// ONNX requantization, random data of fixed seeds. For measuring a kernel change layer by layer: run it with each
// build (--wasm-paths DIR/ of a build's .wasm files) in turn, a few times alternating, and compare the times; the
// checksums must not change.
//   node tools/bench/layers.mjs [--threads N] [--wasm-paths DIR/] [--filter TEXT] [--min-ms MS]
import { init, backendInfo, fromIntRepr, packConv2d, conv2d } from '../../js/index.js';
import { QPARAMS as Q, checksum, mulberry32, randI32, randI8, randU8 } from './cases.mjs';
import { timeIt } from './ort.mjs';

const argv = process.argv.slice(2);
const arg = (name, def) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : def);
const threads = Number(arg('--threads', 1));
const wasmPaths = arg('--wasm-paths', undefined);
const filter = arg('--filter', '');
const minMs = Number(arg('--min-ms', 300));

// [in channels, out channels, input size, kernel, stride, groups]
const LAYERS = [
  [3, 32, 224, 3, 2, 1],
  [32, 16, 112, 1, 1, 1], [16, 96, 112, 1, 1, 1], [96, 24, 56, 1, 1, 1], [24, 144, 56, 1, 1, 1], [144, 24, 56, 1, 1, 1],
  [144, 32, 28, 1, 1, 1], [32, 192, 28, 1, 1, 1], [192, 32, 28, 1, 1, 1], [192, 64, 14, 1, 1, 1], [64, 384, 14, 1, 1, 1],
  [384, 64, 14, 1, 1, 1], [384, 96, 14, 1, 1, 1], [96, 576, 14, 1, 1, 1], [576, 96, 14, 1, 1, 1], [576, 160, 7, 1, 1, 1],
  [160, 960, 7, 1, 1, 1], [960, 160, 7, 1, 1, 1], [960, 320, 7, 1, 1, 1], [320, 1280, 7, 1, 1, 1],
  [32, 32, 112, 3, 1, 32], [96, 96, 112, 3, 2, 96], [144, 144, 56, 3, 1, 144], [144, 144, 56, 3, 2, 144],
  [192, 192, 28, 3, 1, 192], [192, 192, 28, 3, 2, 192], [384, 384, 14, 3, 1, 384], [576, 576, 14, 3, 1, 576],
  [576, 576, 14, 3, 2, 576], [960, 960, 7, 3, 1, 960],
];

await init({ numThreads: threads, ...(wasmPaths ? { wasmPaths } : {}) });
const info = backendInfo();
console.log(`qwasm ${info.isa}, ${info.threads} thread(s), ${info.source}`);
let total = 0;
for (const [cin, cout, size, k, stride, groups] of LAYERS) {
  const name = `${groups > 1 ? 'dw' : 'conv'} ${cin}->${cout} k${k} s${stride} ${size}x${size}`;
  if (!name.includes(filter)) continue;
  const rng = mulberry32(cin * 7919 + cout * 31 + size + stride);
  const x = fromIntRepr(randU8(rng, cin * size * size), [1, size, size, cin], Q.xScale, Q.xZp, 'quint8').permute([0, 3, 1, 2]);
  const w = fromIntRepr(randI8(rng, cout * (cin / groups) * k * k), [cout, cin / groups, k, k], Q.wScale, Q.wZp, 'qint8');
  const packed = packConv2d(w, randI32(rng, cout), { stride, padding: (k - 1) / 2, groups, mode: 'onnx' });
  const options = Object.freeze({ scale: Q.yScale, zeroPoint: Q.yZp, mode: 'onnx' });
  const y = conv2d(x, packed, options);
  const sum = checksum(y.intRepr());
  const macs = y.shape[1] * y.shape[2] * y.shape[3] * (cin / groups) * k * k;
  y.dispose();
  const t = await timeIt(() => conv2d(x, packed, options).dispose(), { minMs });
  total += t.medianMs;
  console.log(`${name.padEnd(30)} ${t.medianMs.toFixed(4).padStart(8)} ms ${(macs / (t.medianMs * 1e6)).toFixed(1).padStart(6)} GMAC/s  ${sum}`);
  for (const v of [x, w, packed]) v.dispose();
}
console.log(`total ${total.toFixed(3)} ms`);
