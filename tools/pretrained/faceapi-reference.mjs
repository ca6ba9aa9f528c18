// face-api itself (npm @vladmandic/face-api 1.7.15, its bundled tfjs 4.22 on the cpu backend) as the reference
// for tools/pretrained/faces.py:
//
//   node tools/pretrained/faceapi-reference.mjs detect   request.json response.json
//   node tools/pretrained/faceapi-reference.mjs classify request.json response.json
//
// detect:   request {images: [{name, width, height, rgb}]} (rgb: base64 of height*width*3 bytes, row-major RGB)
//           -> {images: [{name, boxes: [{x, y, width, height, score}]}]} from face-api's TinyFaceDetector
//           (inputSize 416, scoreThreshold 0.5), in the image's pixels.
// classify: request {crops: [{name, rgb}]} (112*112*3 bytes each)
//           -> {crops: [{name, logits: [7], probabilities: [7]}]}: FaceExpressionNet's runNet (the fully
//           connected layer's output) and forward (its softmax), float32 values as JS numbers.
//
// No DOM and no tfjs-node: the crops go in as int32 tensors, which face-api takes as they are (a 112x112 input
// is neither padded nor resized by NetInput.toBatchTensor). The weights are read from the package's model/
// folder with tfjs's own decodeWeights, which dequantizes the uint8 weights (min + scale * q).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// The ESM bundle picks tfjs's Node platform when process.versions.node is set, and that platform needs the
// `util` module the bundle does not include; hide it while the module initializes and set a platform below.
const nodeVersion = process.versions.node;
Object.defineProperty(process.versions, 'node', { value: undefined, configurable: true });
const faceapi = await import('@vladmandic/face-api/dist/face-api.esm.js');
Object.defineProperty(process.versions, 'node', { value: nodeVersion, configurable: true });

const tf = faceapi.tf;
tf.setPlatform('qwasm-tools', {
  fetch: () => { throw new Error('faceapi-reference: no fetch'); },
  now: () => performance.now(),
  encode: (s) => new TextEncoder().encode(s),
  decode: (bytes, encoding) => new TextDecoder(encoding).decode(bytes),
  isTypedArray: (a) => ArrayBuffer.isView(a) && !(a instanceof DataView),
});
await tf.setBackend('cpu');
const unavailable = (what) => () => { throw new Error(`faceapi-reference: no ${what} in Node`); };
class Absent {}
faceapi.env.setEnv({
  Canvas: Absent, CanvasRenderingContext2D: Absent, Image: Absent, ImageData: Absent, Video: Absent,
  createCanvasElement: unavailable('canvas'), createImageElement: unavailable('image'),
  createVideoElement: unavailable('video'), fetch: unavailable('fetch'), readFile: unavailable('readFile'),
});

const modelDir = join(dirname(createRequire(import.meta.url).resolve('@vladmandic/face-api/package.json')), 'model');

function load(net, name) {
  const [group] = JSON.parse(readFileSync(join(modelDir, `${name}-weights_manifest.json`), 'utf8'));
  const bin = readFileSync(join(modelDir, group.paths[0]));
  net.loadFromWeightMap(tf.io.decodeWeights(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.length), group.weights));
}

function rgbTensor(entry, height, width) {
  const bytes = Buffer.from(entry.rgb, 'base64');
  if (bytes.length !== height * width * 3) throw new RangeError(`${entry.name}: ${bytes.length} bytes, expected ${height * width * 3}`);
  return tf.tensor3d(Int32Array.from(bytes), [height, width, 3], 'int32');
}

const [mode, requestPath, responsePath] = process.argv.slice(2);
const request = JSON.parse(readFileSync(requestPath, 'utf8'));
let response;
if (mode === 'detect') {
  load(faceapi.nets.tinyFaceDetector, 'tiny_face_detector_model');
  const options = new faceapi.TinyFaceDetectorOptions({ inputSize: 416, scoreThreshold: 0.5 });
  response = { images: [] };
  for (const image of request.images) {
    const x = rgbTensor(image, image.height, image.width);
    const detections = await faceapi.detectAllFaces(x, options);
    x.dispose();
    response.images.push({
      name: image.name,
      boxes: detections.map((d) => ({ x: d.box.x, y: d.box.y, width: d.box.width, height: d.box.height, score: d.score })),
    });
  }
} else if (mode === 'classify') {
  const net = faceapi.nets.faceExpressionNet;
  load(net, 'face_expression_model');
  response = { crops: [] };
  for (const crop of request.crops) {
    const x = rgbTensor(crop, 112, 112);
    const netInput = await faceapi.toNetInput(x);
    const logits = net.runNet(netInput);
    const probabilities = await net.forward(x);
    response.crops.push({ name: crop.name, logits: Array.from(logits.dataSync()), probabilities: Array.from(probabilities.dataSync()) });
    tf.dispose([x, logits, probabilities]);
  }
} else {
  throw new TypeError(`faceapi-reference: mode must be detect or classify, not ${mode}`);
}
response.faceapi = faceapi.version;
response.tfjs = tf.version_core;
writeFileSync(responsePath, JSON.stringify(response));
