"""A real pretrained image model for the demo and the tests: face-api's facial expression classifier, int8.

    build/venv/bin/python tools/pretrained/faces.py [--out models/faces] [--fixture tests/fixtures/faces]

(the venv comes from `bash tools/setup-python.sh`; it needs node and the devDependency @vladmandic/face-api.)

The weights are FaceExpressionNet's from npm @vladmandic/face-api 1.7.15 (MIT; a fork of face-api.js by Vincent
Muehler, MIT): model/face_expression_model-weights_manifest.json and .bin. The network, read from the package's
src/faceFeatureExtractor/FaceFeatureExtractor.ts, denseBlock.ts, common/depthwiseSeparableConv.ts and
faceProcessor/FaceProcessor.ts: a 112x112 RGB face crop, minus the mean RGB (122.782, 117.001, 104.298), / 255;
four dense blocks (a first 3x3 stride-2 convolution, a plain one in block 0 and a depthwise-separable one after,
then three stride-1 depthwise-separable ones, each block summing the outputs before its ReLUs), channels 32, 64,
128, 256, spatial 56, 28, 14, 7; a 7x7 average pool; a 256 -> 7 fully connected layer; softmax over neutral, happy,
sad, angry, fearful, disgusted, surprised.

Steps, each checked (the script fails if a check does not hold):
 1. The manifest's weights are dequantized as tfjs's io.decodeWeights does (uint8 q -> q * scale + min, computed in
    double and stored as float32) and loaded into Expressions, a PyTorch module re-expressing the graph: TF's 'same'
    padding is 1 on each side for the stride-1 3x3 convolutions and (0, 1) at the bottom and right for the stride-2
    ones on even sizes, so those get the asymmetric pads in the exported file.
 2. Face crops: face-api's own TinyFaceDetector (tools/pretrained/faceapi-reference.mjs detect) finds the faces in
    the package's demo/sample1-6.jpg and in scikit-image's astronaut.png (NASA, public domain); each box is made
    square (side 1.2x the box's larger side, as face-api's rescaled boxes are a little wider than the face), cut out,
    resized to 112x112 (Pillow bilinear), and varied mildly for calibration (mirror, +-6% shift and scale,
    +-12% brightness; a fixed seed). The sample photos are read from node_modules at run time only: their license
    is not stated, so neither they nor crops of them are committed.
 3. face-api itself classifies every crop (tools/pretrained/faceapi-reference.mjs classify: tfjs 4.22, cpu backend)
    and the torch float model must give the same logits within 1e-3 (float sums in another order) and the same
    class on every crop.
 4. torch.onnx.export (TorchScript exporter, opset 13) writes the float model; every Pad is folded into the next
    Conv's pads; onnxruntime (CPU EP) must reproduce torch within 1e-4.
 5. onnxruntime.quantization.quantize_static (QDQ, MinMax, per-tensor uint8 activations, per-channel int8
    weights) calibrated on the crops writes the int8 model: the format the demo's model view, qwasm's loader and
    onnxruntime-web all read as is. Its classes are compared with face-api's on every crop (reported, and at least
    90% must agree).

Writes to --out: expression-float.onnx, expression-int8.onnx, astronaut-face.png (the demo's default photo: the
astronaut's face with a margin, 224x224), faces.json (classes, preprocessing, crop box in the PNG, the agreement
numbers). Writes to --fixture: faceapi-astronaut.json (the astronaut's 112x112 crop as face-api sees it, and
face-api's logits and probabilities for it). The same run again gives the same bytes (checked by
tests/js/pretrained-faces.test.js against a fresh run of this script into build/models/faces).
"""
import argparse
import base64
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx.reference import ReferenceEvaluator
from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
from PIL import Image

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FACEAPI = os.path.join(REPO, "node_modules", "@vladmandic", "face-api")
REFERENCE = os.path.join(REPO, "tools", "pretrained", "faceapi-reference.mjs")
CLASSES = ["neutral", "happy", "sad", "angry", "fearful", "disgusted", "surprised"]  # FaceExpressions.ts
MEAN_RGB = [122.782, 117.001, 104.298]  # FaceFeatureExtractor.ts
SIZE = 112
CHANNELS = [32, 64, 128, 256]
SAMPLES = [f"sample{i}.jpg" for i in range(1, 7)]
AUGMENTATIONS = 6  # calibration variants per face besides the crop itself
SEED = 15
DEMO_SIDE = 224  # the default photo of the demo


def read_manifest(name):
    """face-api's weights as float32 arrays in TF layouts, dequantized as tfjs's io.decodeWeights does."""
    with open(os.path.join(FACEAPI, "model", f"{name}-weights_manifest.json")) as fh:
        [group] = json.load(fh)
    with open(os.path.join(FACEAPI, "model", group["paths"][0]), "rb") as fh:
        data = fh.read()
    out, offset = {}, 0
    for w in group["weights"]:
        count = int(np.prod(w["shape"]))
        q = w.get("quantization")
        if q:
            assert q["dtype"] == "uint8" and w["dtype"] == "float32", w
            raw = np.frombuffer(data, np.uint8, count, offset)
            offset += count
            values = (raw.astype(np.float64) * q["scale"] + q["min"]).astype(np.float32)
        else:
            assert w["dtype"] == "float32", w
            values = np.frombuffer(data, "<f4", count, offset).copy()
            offset += 4 * count
        out[w["name"]] = values.reshape(w["shape"])
    if offset != len(data):
        raise ValueError(f"{name}: {len(data) - offset} bytes of the .bin not described by the manifest")
    return out


class SeparableConv(torch.nn.Module):
    """tf.separableConv2d (depthwise 3x3 without bias, pointwise 1x1) + bias, TF 'same' padding."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        self.depthwise = torch.nn.Conv2d(cin, cin, 3, stride, padding=1 if stride == 1 else 0, groups=cin, bias=False)
        self.pointwise = torch.nn.Conv2d(cin, cout, 1)

    def forward(self, x):
        if self.stride == 2:
            x = F.pad(x, (0, 1, 0, 1))  # TF 'same', stride 2, even size: the one pad row/column at the end
        return self.pointwise(self.depthwise(x))


class DenseBlock(torch.nn.Module):
    """denseBlock4 of face-api: the sums and ReLUs in its order (tf.add(out1, tf.add(out2, tf.add(out3, out4))))."""

    def __init__(self, cin, cout, first):
        super().__init__()
        self.first = first
        self.conv0 = torch.nn.Conv2d(cin, cout, 3, 2) if first else SeparableConv(cin, cout, 2)
        self.conv1 = SeparableConv(cout, cout, 1)
        self.conv2 = SeparableConv(cout, cout, 1)
        self.conv3 = SeparableConv(cout, cout, 1)

    def forward(self, x):
        out1 = torch.relu(self.conv0(F.pad(x, (0, 1, 0, 1)) if self.first else x))
        out2 = self.conv1(out1)
        out3 = self.conv2(torch.relu(out1 + out2))
        out4 = self.conv3(torch.relu(out1 + (out2 + out3)))
        return torch.relu(out1 + (out2 + (out3 + out4)))


class Expressions(torch.nn.Module):
    """FaceExpressionNet up to its logits; input NCHW, already (rgb - MEAN_RGB) / 255."""

    def __init__(self):
        super().__init__()
        cins = [3] + CHANNELS[:-1]
        self.dense = torch.nn.ModuleList(DenseBlock(cin, cout, i == 0) for i, (cin, cout) in enumerate(zip(cins, CHANNELS)))
        self.fc = torch.nn.Linear(CHANNELS[-1], len(CLASSES))

    def forward(self, x):
        for block in self.dense:
            x = block(x)
        x = F.avg_pool2d(x, 7)  # tf.avgPool [7, 7], stride 2, 'valid' over 7x7: one window
        return self.fc(torch.flatten(x, 1))


def load_expressions():
    w = read_manifest("face_expression_model")
    state = {}
    used = set()

    def take(name):
        used.add(name)
        return torch.from_numpy(w[name])

    for i in range(4):
        for j in range(4):
            tf_name, ours = f"dense{i}/conv{j}", f"dense.{i}.conv{j}"
            if i == 0 and j == 0:
                state[f"{ours}.weight"] = take(f"{tf_name}/filters").permute(3, 2, 0, 1)  # HWIO -> OIHW
                state[f"{ours}.bias"] = take(f"{tf_name}/bias")
            else:
                state[f"{ours}.depthwise.weight"] = take(f"{tf_name}/depthwise_filter").permute(2, 3, 0, 1)  # HWC1 -> C1HW
                state[f"{ours}.pointwise.weight"] = take(f"{tf_name}/pointwise_filter").permute(3, 2, 0, 1)
                state[f"{ours}.pointwise.bias"] = take(f"{tf_name}/bias")
    state["fc.weight"] = take("fc/weights").t()
    state["fc.bias"] = take("fc/bias")
    if used != set(w):
        raise ValueError(f"weights of the manifest not used: {sorted(set(w) - used)}")
    model = Expressions()
    model.load_state_dict({k: v.contiguous() for k, v in state.items()}, strict=True)
    return model.eval()


def normalize(crops):
    """uint8 NHWC RGB crops -> the model's float32 NCHW input, as face-api computes it (float32 sub, then div)."""
    x = crops.astype(np.float32) - np.array(MEAN_RGB, np.float32)
    return np.ascontiguousarray((x / np.float32(255)).transpose(0, 3, 1, 2))


def node_reference(mode, request):
    with tempfile.TemporaryDirectory() as tmp:
        req, res = os.path.join(tmp, "request.json"), os.path.join(tmp, "response.json")
        with open(req, "w") as fh:
            json.dump(request, fh)
        subprocess.run(["node", REFERENCE, mode, req, res], check=True, cwd=REPO)
        with open(res) as fh:
            return json.load(fh)


def b64(array):
    return base64.b64encode(np.ascontiguousarray(array, np.uint8).tobytes()).decode()


def astronaut_path():
    spec = importlib.util.find_spec("skimage")  # finds the package without importing it (it would need scipy)
    if spec is None:
        raise SystemExit("faces.py: scikit-image (its data/astronaut.png) is missing: run bash tools/setup-python.sh")
    return os.path.join(os.path.dirname(spec.origin), "data", "astronaut.png")


def load_images():
    images = {name: Image.open(os.path.join(FACEAPI, "demo", name)).convert("RGB") for name in SAMPLES}
    images["astronaut.png"] = Image.open(astronaut_path()).convert("RGB")
    return images


def square(box, factor=1.2, dx=0.0, dy=0.0):
    """The square of side factor * max(w, h) centred on the box (shifted by dx, dy of the side)."""
    side = factor * max(box["width"], box["height"])
    cx = box["x"] + box["width"] / 2 + dx * side
    cy = box["y"] + box["height"] / 2 + dy * side
    return (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)


def crop(image, region, size=SIZE):
    """The region (float corners) resized to size x size with Pillow's bilinear filter; outside the image is black."""
    return np.asarray(image.transform((size, size), Image.Transform.EXTENT, region, Image.Resampling.BILINEAR))


def faces_and_crops(images):
    detections = node_reference("detect", {"images": [
        {"name": n, "width": im.width, "height": im.height, "rgb": b64(np.asarray(im))} for n, im in images.items()]})
    boxes = {d["name"]: d["boxes"] for d in detections["images"]}
    if len(boxes["astronaut.png"]) != 1:
        raise AssertionError(f"face-api finds {len(boxes['astronaut.png'])} faces in the astronaut photo, not 1")
    rng = np.random.default_rng(SEED)
    names, crops, calibration = [], [], []
    for name, image in images.items():
        for k, box in enumerate(boxes[name]):
            face = crop(image, square(box))
            names.append(f"{name}#{k}")
            crops.append(face)
            calibration.append(face)
            for _ in range(AUGMENTATIONS):
                dx, dy = rng.uniform(-0.06, 0.06, 2)
                varied = crop(image, square(box, 1.2 * rng.uniform(0.94, 1.06), dx, dy))
                if rng.random() < 0.5:
                    varied = varied[:, ::-1]
                varied = np.clip(varied.astype(np.float32) * rng.uniform(0.88, 1.12), 0, 255).round().astype(np.uint8)
                calibration.append(varied)
    print(f"face-api's detector: {len(crops)} faces in {len(images)} photos "
          f"({', '.join(f'{n}: {len(b)}' for n, b in boxes.items())}); {len(calibration)} calibration crops")
    return boxes, names, np.stack(crops), np.stack(calibration)


def fold_pads(model, x):
    """Every Pad (constant zeros, spatial only) that feeds a Conv becomes that Conv's pads; the constants that
    computed its pads (the TorchScript exporter writes F.pad's tuple as a small subgraph) go with it."""
    graph = model.graph
    pads_nodes = [n for n in graph.node if n.op_type == "Pad"]
    wanted = [i for n in pads_nodes for i in n.input[1:] if i]
    values = dict(zip(wanted, ReferenceEvaluator(model).run(wanted, {"input": x}))) if wanted else {}
    consumers = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    for n in pads_nodes:
        [conv] = consumers[n.output[0]]
        assert conv.op_type == "Conv", conv.op_type
        pads = values[n.input[1]].tolist()  # [x1_begin, ..., x4_begin, x1_end, ..., x4_end]
        mode = next((a.s for a in n.attribute if a.name == "mode"), b"constant")
        value = float(values[n.input[2]]) if len(n.input) > 2 and n.input[2] else 0.0
        assert mode == b"constant" and value == 0.0 and pads[:2] == [0, 0] and pads[4:6] == [0, 0], (mode, value, pads)
        attr = next(a for a in conv.attribute if a.name == "pads")
        old = list(attr.ints)  # [top, left, bottom, right]
        attr.ints[:] = [old[0] + pads[2], old[1] + pads[3], old[2] + pads[6], old[3] + pads[7]]
        conv.input[0] = n.input[0]
        graph.node.remove(n)
    while True:  # drop what no longer feeds anything
        used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
        dead = [n for n in graph.node if not any(o in used for o in n.output)]
        if not dead:
            break
        for n in dead:
            graph.node.remove(n)
    for init in list(graph.initializer):
        if init.name not in used:
            graph.initializer.remove(init)
    return len(pads_nodes)


class Feeds(CalibrationDataReader):
    def __init__(self, inputs):
        self.it = iter(inputs)

    def get_next(self):
        x = next(self.it, None)
        return None if x is None else {"input": x[None]}


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def run(session, x):
    return np.concatenate([session.run(["logits"], {"input": x[i:i + 1]})[0] for i in range(len(x))])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(REPO, "models", "faces"))
    parser.add_argument("--fixture", default=os.path.join(REPO, "tests", "fixtures", "faces"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.fixture, exist_ok=True)
    torch.manual_seed(0)

    model = load_expressions()
    images = load_images()
    boxes, names, crops, calibration = faces_and_crops(images)
    reference = node_reference("classify", {"crops": [{"name": n, "rgb": b64(c)} for n, c in zip(names, crops)]})
    faceapi_logits = np.array([c["logits"] for c in reference["crops"]], np.float32)
    faceapi_probs = np.array([c["probabilities"] for c in reference["crops"]], np.float32)

    x = normalize(crops)
    with torch.no_grad():
        torch_logits = model(torch.from_numpy(x)).numpy()
    torch_err = float(np.abs(torch_logits - faceapi_logits).max())
    print(f"torch float vs face-api (tfjs {reference['tfjs']}): max |logit difference| {torch_err:.3g} over {len(x)} crops")
    if torch_err > 1e-3 or (torch_logits.argmax(1) != faceapi_logits.argmax(1)).any():
        raise AssertionError(f"the torch model does not reproduce face-api: {torch_err}")

    float_path = os.path.join(args.out, "expression-float.onnx")
    int8_path = os.path.join(args.out, "expression-int8.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        exported = os.path.join(tmp, "exported.onnx")
        torch.onnx.export(model, torch.from_numpy(x[:1]), exported, opset_version=13, input_names=["input"],
                          output_names=["logits"], do_constant_folding=True, dynamo=False)
        fm = onnx.load(exported)
    folded = fold_pads(fm, x[:1])
    fm.producer_name, fm.producer_version = "tools/pretrained/faces.py", ""
    fm.doc_string = "face-api FaceExpressionNet (npm @vladmandic/face-api 1.7.15, MIT); input (rgb - mean) / 255, NCHW"
    onnx.checker.check_model(fm)
    onnx.save(fm, float_path)
    float_session = ort.InferenceSession(float_path, providers=["CPUExecutionProvider"])
    onnx_logits = run(float_session, x)
    onnx_err = float(np.abs(onnx_logits - torch_logits).max())
    print(f"float ONNX ({folded} Pads folded into Convs) vs torch: max |difference| {onnx_err:.3g}")
    if onnx_err > 1e-4:
        raise AssertionError(f"the exported float ONNX differs from torch by {onnx_err}")

    quantize_static(float_path, int8_path, Feeds(list(normalize(calibration))), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax)
    qm = onnx.load(int8_path)
    qm.producer_name, qm.producer_version = "tools/pretrained/faces.py (onnxruntime.quantization.quantize_static)", ort.__version__
    onnx.save(qm, int8_path)
    int8_logits = run(ort.InferenceSession(int8_path, providers=["CPUExecutionProvider"]), x)
    int8_probs = softmax(int8_logits.astype(np.float64))
    agree = int((int8_logits.argmax(1) == faceapi_logits.argmax(1)).sum())
    prob_err = float(np.abs(int8_probs - faceapi_probs).max())
    print(f"int8 QDQ (onnxruntime CPU EP) vs face-api: same class on {agree}/{len(x)} crops, "
          f"max |probability difference| {prob_err:.3f}")
    if agree < 0.9 * len(x):
        raise AssertionError("the int8 model disagrees with face-api on more than 10% of the crops")

    # The demo's default photo and the test fixture: the astronaut
    [astro_box] = boxes["astronaut.png"]
    astronaut = images["astronaut.png"]
    demo_region = [round(v) for v in square(astro_box, 2.0)]
    demo_image = astronaut.crop(demo_region).resize((DEMO_SIDE, DEMO_SIDE), Image.Resampling.LANCZOS)
    demo_image.save(os.path.join(args.out, "astronaut-face.png"), optimize=True)
    scale = DEMO_SIDE / (demo_region[2] - demo_region[0])
    face_in_demo = [round((v - demo_region[i % 2]) * scale) for i, v in enumerate(square(astro_box))]
    i = names.index("astronaut.png#0")
    fixture = {
        "generator": "tools/pretrained/faces.py", "faceapi": reference["faceapi"], "tfjs": reference["tfjs"],
        "source": "scikit-image 0.25.2 data/astronaut.png (NASA, public domain); face box from face-api's "
                  "TinyFaceDetector, squared 1.2x, Pillow bilinear to 112x112",
        "box": astro_box, "classes": CLASSES, "mean_rgb": MEAN_RGB,
        "crop": {"dims": [SIZE, SIZE, 3], "layout": "HWC RGB uint8", "base64": b64(crops[i])},
        "faceapi_logits": faceapi_logits[i].tolist(), "faceapi_probabilities": faceapi_probs[i].tolist(),
    }
    with open(os.path.join(args.fixture, "faceapi-astronaut.json"), "w") as fh:
        json.dump(fixture, fh, indent=0)
        fh.write("\n")
    record = {
        "generator": "tools/pretrained/faces.py", "torch": torch.__version__, "onnxruntime": ort.__version__,
        "source": "npm @vladmandic/face-api 1.7.15 model/face_expression_model (MIT)",
        "classes": CLASSES, "input": {"name": "input", "dims": [1, 3, SIZE, SIZE], "layout": "NCHW",
                                      "preprocessing": "(rgb - mean_rgb) / 255, float32", "mean_rgb": MEAN_RGB},
        "output": "logits (softmax gives face-api's probabilities)",
        "quantization": "onnxruntime.quantization.quantize_static: QDQ, MinMax, uint8 activations, per-channel int8 weights",
        "calibration": f"{len(calibration)} face crops: {len(crops)} faces found by face-api's TinyFaceDetector in its "
                       f"demo/sample1-6.jpg and scikit-image's astronaut.png, {AUGMENTATIONS} mild variations each",
        "demo_image": {"file": "astronaut-face.png", "side": DEMO_SIDE, "face": face_in_demo},
        "checks": {
            "crops": len(x), "torch_vs_faceapi_max_logit_diff": torch_err, "onnx_float_vs_torch_max_diff": onnx_err,
            "int8_same_class_as_faceapi": agree, "int8_vs_faceapi_max_probability_diff": prob_err,
        },
        "sha256": {os.path.basename(p): hashlib.sha256(open(p, "rb").read()).hexdigest() for p in (float_path, int8_path)},
    }
    with open(os.path.join(args.out, "faces.json"), "w") as fh:
        json.dump(record, fh, indent=1)
        fh.write("\n")
    for p in (float_path, int8_path):
        print(f"{os.path.relpath(p, REPO)}: {os.path.getsize(p)} bytes")


if __name__ == "__main__":
    sys.exit(main())
