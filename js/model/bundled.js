// qwasm/models: the URLs of the models the package ships, for loadModel (a file: URL in Node, an http(s) URL in
// a page). Each is a literal new URL(..., import.meta.url), the form webpack 5, Vite and Rollup turn into an
// emitted asset with its final URL, so a bundled page gets the model file without any copying step.
import { packageFileUrl } from '../runtime/host.js';

/** The digits CNN (tools/train_digits.py): int8 (PyTorch qnnpack PTQ), its float export, 20 held-out images. */
export const digits = Object.freeze({
  model: packageFileUrl(new URL('../../models/digits.onnx', import.meta.url), 'models/digits.onnx'),
  floatModel: packageFileUrl(new URL('../../models/digits-float.onnx', import.meta.url), 'models/digits-float.onnx'),
  samples: packageFileUrl(new URL('../../models/digits.json', import.meta.url), 'models/digits.json'),
});
