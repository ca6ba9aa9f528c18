#!/usr/bin/python3
"""Write models/digits-data.json: scikit-learn's digits images, split as tools/train_digits.py splits them.

Run with Debian's system Python: /usr/bin/python3 tools/digits_data.py

The page and the tests calibrate digits-float.onnx with qwasm.quantizeStatic on the training split (the
images PyTorch calibrated models/digits.onnx with, in the same order and batches of 256) and measure the
result on the held-out split. Each image is 64 pixels k in 0..16 (the model's input is k / 16), written as
one 64-character string, pixel k as the character chr(ord('a') + k): 115 KB for all 1797 images.
"""
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from train_digits import MODELS, SEED, load_split  # noqa: E402


def encode(images):
    return ["".join(chr(ord("a") + int(round(float(v) * 16))) for v in img.reshape(-1)) for img in images]


def main():
    x, y, tr, te = load_split()
    doc = {
        "generator": "tools/digits_data.py",
        "dataset": "sklearn.datasets.load_digits",
        "split": {"test_size": 0.2, "stratify": True, "random_state": SEED, "as": "tools/train_digits.py load_split"},
        "encoding": "64 chars per image, row-major 8x8; pixel k in 0..16 is chr(97 + k); model input k / 16",
        "calibration_batch": 256,
        "train": {"labels": [int(v) for v in y[tr]], "images": encode(x[tr])},
        "test": {"labels": [int(v) for v in y[te]], "images": encode(x[te])},
    }
    for part in ("train", "test"):
        for s, idx in zip(doc[part]["images"], tr if part == "train" else te):
            assert [(ord(c) - 97) / 16 for c in s] == [float(v) for v in x[idx].reshape(-1)], "lossless"
    path = os.path.join(MODELS, "digits-data.json")
    with open(path, "w") as fh:
        json.dump(doc, fh, separators=(",", ":"))
        fh.write("\n")
    print("wrote %s: %d train, %d test images" % (path, len(tr), len(te)))


if __name__ == "__main__":
    main()
