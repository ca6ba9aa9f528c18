// The faces view's arithmetic, free of the DOM (Node tests import it): the expression model's input from a
// 112x112 face crop, as face-api computes it (FaceFeatureExtractor.ts: float32 rgb - mean RGB, then / 255, here in
// NCHW for the ONNX file), and the softmax that turns the 7 logits into face-api's probabilities. The model itself
// runs in qwasm (int8) or onnxruntime-web (the float file); nothing here is a model.

export const CLASSES = ['neutral', 'happy', 'sad', 'angry', 'fearful', 'disgusted', 'surprised'];
export const MEAN_RGB = [122.782, 117.001, 104.298];
export const SIZE = 112;
export const INPUT_DIMS = [1, 3, SIZE, SIZE];

/**
 * The model's input from SIZE x SIZE pixels, row-major, `stride` bytes per pixel (4 for canvas ImageData's RGBA,
 * 3 for RGB): Float32Array [1, 3, SIZE, SIZE], each value rounded to float32 after the subtraction and the division.
 */
export function faceInput(pixels, stride = 4) {
  if (pixels.length !== SIZE * SIZE * stride) throw new RangeError(`faceInput: expected ${SIZE}x${SIZE}x${stride} values, got ${pixels.length}`);
  const plane = SIZE * SIZE;
  const out = new Float32Array(3 * plane);
  const mean = MEAN_RGB.map(Math.fround);
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) out[c * plane + i] = Math.fround(Math.fround(pixels[i * stride + c] - mean[c]) / 255);
  }
  return out;
}

/**
 * Softmax of the logits (float64): the probabilities of CLASSES. (model-analysis.js has the same, but it imports
 * the demo's copy of qwasm, which the Node tests of this module do not have.)
 */
export function softmax(logits) {
  const max = logits.reduce((m, z) => Math.max(m, z), -Infinity);
  const e = Array.from(logits, (z) => Math.exp(z - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}
