#!/usr/bin/env bash
# Installs what building and testing qwasm need on Debian 12, and nothing when it is already there:
# Debian packages (apt, as root) and the npm packages of package-lock.json (npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-torch / -torchvision / -onnx: tools/golden/torch_models.py exports the torchvision models npm test runs.
# clang-14 + libclang-rt-14-dev: the libFuzzer harness of the C API (tools/fuzz/c/run.sh, -fsanitize=fuzzer).
APT_PACKAGES=(emscripten cmake make gcc libc6-dev libsimde-dev binaryen nodejs chromium python3-torch python3-torchvision python3-onnx python3-numpy
  clang-14 libclang-rt-14-dev)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "qwasm setup: missing Debian packages: ${missing[*]}; install them as root (apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "qwasm setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm packages from the lockfile, reinstalled only when the lockfile changed.
stamp=node_modules/.qwasm-lock-hash
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  npm ci --ignore-scripts --no-audit --no-fund
  echo "$want" > "$stamp"
fi
