#!/usr/bin/env bash
# Builds dist/qwasm-simd.wasm and dist/qwasm-scalar.wasm from src/ with Debian's Emscripten.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs} # Debian's emscripten JS optimizer finds its modules here
if [[ ! -f build/wasm/CMakeCache.txt ]]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release > build-wasm-configure.log 2>&1 || {
    cat build-wasm-configure.log >&2
    exit 1
  }
  rm -f build-wasm-configure.log
fi
cmake --build build/wasm -j"$(nproc)"
# The scalar build must run on engines without SIMD: no v128 instruction may reach it.
if wasm-dis dist/qwasm-scalar.wasm | grep -qE 'v128|[if](8x16|16x8|32x4|64x2)'; then
  echo "build: dist/qwasm-scalar.wasm contains SIMD instructions" >&2
  exit 1
fi
ls -l dist/*.wasm
