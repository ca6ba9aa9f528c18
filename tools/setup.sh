#!/usr/bin/env bash
# Installs what building and testing qwasm need on Debian 12, and nothing when it is already there:
# Debian packages (apt, as root) and the npm packages of package-lock.json (npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-torch / -torchvision / -onnx: tools/golden/torch_models.py exports the torchvision models npm test runs.
# clang-16 / lld-16: qwasm-relaxed-threads.wasm (Emscripten's clang 14 has no relaxed dot product builtins).
# clang-14 + libclang-rt-14-dev: the libFuzzer harness of the C API (tools/fuzz/c/run.sh, -fsanitize=fuzzer).
APT_PACKAGES=(emscripten cmake make gcc libc6-dev libsimde-dev binaryen nodejs chromium python3-torch python3-torchvision python3-onnx python3-numpy
  clang-16 lld-16 clang-14 libclang-rt-14-dev)

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

# Node 24 (V8 13) beside Debian's Node 20, for tests/js/node24.test.js: qwasm probes relaxed SIMD by default there.
# The npm registry's node-linux-<arch> package is the official binary; cached under build/.
NODE24_VERSION=24.22.3
case $(uname -m) in x86_64) node24_arch=x64 ;; aarch64) node24_arch=arm64 ;; *) node24_arch= ;; esac
if [[ -n $node24_arch && ! -x build/node24/bin/node ]]; then
  rm -rf build/node24 build/node24.tmp
  mkdir -p build/node24.tmp
  npm pack --silent "node-linux-$node24_arch@$NODE24_VERSION" --pack-destination build/node24.tmp > /dev/null
  tar -xzf build/node24.tmp/node-linux-"$node24_arch"-"$NODE24_VERSION".tgz -C build/node24.tmp
  mv build/node24.tmp/package build/node24
  rm -rf build/node24.tmp
fi
