// Run by tests/js/threads.test.js in a child process (init() is once per process): initializes qwasm with
// the options given as JSON in argv[2] after the environment changes of argv[3] (e.g. no SharedArrayBuffer),
// runs operators large enough to be split over threads and, when given, a model file (argv[4]; a transformer's with
// its recorded inputs, argv[5]), and prints
// { info, warnings, checksums, model } as JSON.
import { readFileSync } from 'node:fs';
import * as qwasm from '../../js/index.js';
import { setRelaxedProbeForTests } from '../../js/runtime/wasm.js';

const options = JSON.parse(process.argv[2] ?? '{}');
const env = process.argv[3] ?? '';
const modelPath = process.argv[4];
const feedsPath = process.argv[5]; // a transformer's recorded int64 inputs (tests/fixtures/transformer/tiny-bert.json)
if (env.includes('noSharedArrayBuffer')) delete globalThis.SharedArrayBuffer;
// forceUsdot: the relaxed kernels' usdot semantics taken as given (tests/js/relaxed.test.js runs them on 7-bit
// activations, which every semantics of the instruction multiplies exactly).
if (env.includes('forceUsdot')) setRelaxedProbeForTests(() => ({ semantics: 'usdot' }));
const activationMask = env.includes('sevenBit') ? 127 : 255;
if (options.wasmBinaryFile) {
  options.wasmBinary = readFileSync(new URL(`../../dist/${options.wasmBinaryFile}`, import.meta.url));
  delete options.wasmBinaryFile;
}
const warnings = [];
console.warn = (...args) => warnings.push(args.join(' '));

function checksum(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 16777619) >>> 0;
  return h;
}
const ints = (n, f) => Int8Array.from({ length: n }, (_, i) => f(i));
const uints = (n, f) => Uint8Array.from({ length: n }, (_, i) => f(i));
const bytesOf = (t) => new Uint8Array(t.intRepr().buffer.slice(0));

function operators() {
  const out = {};
  const run = (name, fn) => {
    const made = [];
    const keep = (t) => (made.push(t), t);
    try {
      out[name] = checksum(bytesOf(fn(keep)));
    } finally {
      for (const t of made) t.dispose();
    }
  };
  const q = (data, shape, scale, zp, dtype) => qwasm.fromIntRepr(data, shape, scale, zp, dtype);
  const onnx = { scale: 0.05, zeroPoint: 128, mode: 'onnx' };
  for (const [m, k, n] of [[1, 1024, 1000], [7, 300, 260], [196, 576, 64], [300, 40, 30]]) {
    run(`matmul ${m}x${k}x${n}`, (keep) => {
      const a = keep(q(uints(m * k, (i) => (i * 7 + (i >> 7)) & activationMask), [m, k], 0.02, 61, 'quint8'));
      const b = keep(q(ints(k * n, (i) => ((i * 13 + (i >> 9)) & 255) - 128), [k, n], 0.01, 0, 'qint8'));
      return keep(qwasm.matmul(a, keep(qwasm.packMatMul(b, { mode: 'onnx' })), onnx));
    });
  }
  const convs = [
    ['conv 1x1 64->96 28x28', 64, 96, 28, 1, 1, 0, 1],
    ['conv 3x3 16->24 33x31', 16, 24, 33, 3, 1, 1, 1],
    ['conv 3x3 s2 3->32 65x65', 3, 32, 65, 3, 2, 1, 1],
    ['conv 3x3 grouped 32->32 15x15', 32, 32, 15, 3, 1, 1, 4],
    ['depthwise 3x3 96 29x29', 96, 96, 29, 3, 1, 1, 96],
    ['depthwise 3x3 s2 144 56x56', 144, 144, 56, 3, 2, 1, 144],
    ['depthwise 5x5 40 7x7', 40, 40, 7, 5, 1, 2, 40],
  ];
  for (const [name, cin, cout, hw, kk, stride, pad, groups] of convs) {
    run(name, (keep) => {
      const x = keep(q(uints(cin * hw * hw, (i) => (i * 11 + (i >> 6)) & activationMask), [1, cin, hw, hw], 0.02, 7, 'quint8'));
      const w = keep(q(ints(cout * (cin / groups) * kk * kk, (i) => ((i * 29 + (i >> 4)) & 255) - 128),
        [cout, cin / groups, kk, kk], 0.01, 0, 'qint8'));
      const bias = Int32Array.from({ length: cout }, (_, i) => (i * 97) % 2001 - 1000);
      const packed = keep(qwasm.packConv2d(w, bias, { stride, padding: pad, groups, mode: 'onnx' }));
      return keep(qwasm.conv2d(x, packed, { scale: 0.2, zeroPoint: 100, mode: 'onnx' }));
    });
  }
  run('maxPool2d 3x3 s2 64 112x112', (keep) => {
    const x = keep(q(uints(64 * 112 * 112, (i) => (i * 5 + (i >> 8)) & 255), [1, 64, 112, 112], 0.1, 3, 'quint8'));
    return keep(qwasm.maxPool2d(x, { kernelSize: 3, stride: 2, padding: 1 }));
  });
  run('avgPool2d 3x3 s2 24 56x56', (keep) => {
    const x = keep(q(uints(24 * 56 * 56, (i) => (i * 3 + (i >> 5)) & 255), [1, 24, 56, 56], 0.1, 3, 'quint8'));
    return keep(qwasm.avgPool2d(x, { kernelSize: 3, stride: 2, padding: 1 }));
  });
  run('adaptiveAvgPool2d 1280 7x7', (keep) => {
    const x = keep(q(uints(1280 * 49, (i) => (i * 3 + (i >> 5)) & 255), [1, 1280, 7, 7], 0.1, 3, 'quint8'));
    return keep(qwasm.adaptiveAvgPool2d(x, [1, 1]));
  });
  return out;
}

const info = await qwasm.init(options);
const result = { info, warnings, checksums: operators() };
if (modelPath) {
  const model = await qwasm.loadModel(new Uint8Array(readFileSync(modelPath)));
  let feeds;
  if (feedsPath) {
    const record = JSON.parse(readFileSync(feedsPath, 'utf8')).inputs.at(-1);
    feeds = Object.fromEntries(Object.entries(record).map(([name, t]) => [name, { data: BigInt64Array.from(t.data, BigInt), dims: t.dims }]));
  } else {
    const [input] = model.inputs;
    const dims = input.dims.map((d) => (typeof d === 'number' ? d : 1));
    feeds = { [input.name]: { data: Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, (_, i) => Math.sin(i * 0.37) * 2), dims } };
  }
  const { intermediates, ...outputs } = await model.run(feeds, { intermediates: true });
  const bytes = (t) => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  result.model = Object.fromEntries(Object.entries({ ...intermediates, ...outputs }).map(([name, t]) => [name, checksum(bytes(t))]));
  model.dispose();
}
result.liveBytes = qwasm.memoryStats().liveBytes;
console.log(JSON.stringify(result));
