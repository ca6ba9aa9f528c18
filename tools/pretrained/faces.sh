#!/usr/bin/env bash
# Runs tools/pretrained/faces.py again into build/models/faces/ (and its fixture into build/models/faces/fixture/)
# when the script, the reference script or the venv's package list changed since the last run (the stamp: done).
# tests/js/model-faces.test.js compares what it writes with the committed models/faces/ and
# tests/fixtures/faces/: the committed files are what the scripts make. Needs the venv of tools/setup-python.sh
# (torch 2.13, onnxruntime, Pillow, scikit-image's photo) and node with the devDependency @vladmandic/face-api.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=build/models/faces
newer() { for f in tools/pretrained/faces.py tools/pretrained/faceapi-reference.mjs tools/setup-python.sh; do [[ $f -nt $out/done ]] && return 0; done; return 1; }
[[ -f $out/done ]] && ! newer && exit 0
if ! python=$(bash tools/setup-python.sh); then
  echo "faces: the Python venv (tools/setup-python.sh) could not be made, so $out/ is not generated" >&2
  exit 1
fi
rm -f "$out/done"
"$python" -W ignore tools/pretrained/faces.py --out "$out" --fixture "$out/fixture" 2>&1 | grep -v 'pre-processing before quantization' >&2
touch "$out/done"
