"""MobileNetV2 for `npm run bench`: torchvision's quantizable architecture, qnnpack PTQ, torch.onnx.export.

    /usr/bin/python3 tools/bench/mobilenet_v2.py OUT_DIR

Pretrained weights cannot be downloaded here, so the weights are torchvision's random initialisation with
the BatchNorm statistics re-estimated on random inputs (train-mode forward passes), which keeps activations
from collapsing to a constant. Calibration: four random batches. Writes OUT_DIR/mobilenet_v2_int8_qdq.onnx
(the QDQ file torch.onnx.export writes for the converted model) and OUT_DIR/mobilenet_v2_float.onnx (the
same weights before quantization). Both take x: float32 [1, 3, 224, 224] and return y: [1, 1000].
"""
import os
import sys
import warnings

import torch
import torchvision
from torch.ao import quantization as tq

warnings.filterwarnings("ignore")


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model = torchvision.models.quantization.mobilenet_v2(weights=None, quantize=False)
    model.train()
    with torch.no_grad():  # BatchNorm running statistics from random images
        for _ in range(4):
            model(torch.randn(8, 3, 224, 224, generator=gen))
    model.eval()
    x = torch.randn(1, 3, 224, 224, generator=gen)
    torch.onnx.export(model, x, os.path.join(out_dir, "mobilenet_v2_float.onnx"), opset_version=13,
                      input_names=["x"], output_names=["y"])
    model.fuse_model()
    model.qconfig = tq.get_default_qconfig("qnnpack")
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(4, 3, 224, 224, generator=gen))
    tq.convert(model, inplace=True)
    torch.onnx.export(model, x, os.path.join(out_dir, "mobilenet_v2_int8_qdq.onnx"), opset_version=13,
                      input_names=["x"], output_names=["y"])


if __name__ == "__main__":
    main(sys.argv[1])
