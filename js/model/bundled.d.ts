// qwasm/models: URLs of the models the package ships (file: URLs in Node, asset URLs in a bundled page).

/** The digits CNN of tools/train_digits.py. */
export declare const digits: {
  /** int8, PyTorch qnnpack post-training quantization (models/digits.onnx). */
  readonly model: URL;
  /** The same trained weights before quantization (models/digits-float.onnx). */
  readonly floatModel: URL;
  /** 20 held-out images with PyTorch's int8 and float results (models/digits.json). */
  readonly samples: URL;
};
