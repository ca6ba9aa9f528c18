#!/usr/bin/env bash
# npm test: installs what is missing, builds, and runs every suite:
#   native C tests under AddressSanitizer + UBSan (scalar kernels, and the SIMD kernels through SIMDe),
#   the same C tests compiled to wasm and run under Node in both builds (the real SIMD128 kernels),
#   the node:test suites against BOTH wasm builds (SIMD128 and scalar), the model and operator suites against
#   the threads build with 2 threads, a short libFuzzer run over the C API, and the TypeScript API check.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
bash tools/build.sh

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

echo "== native C tests (ASan + UBSan)"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Debug > "$log/cmake.txt" || { cat "$log/cmake.txt"; exit 1; }
cmake --build build/native -j"$(nproc)"
ctest --test-dir build/native --output-on-failure | tee "$log/ctest.txt"

echo "== a short libFuzzer run over the C entry points (ASan + UBSan; longer: bash tools/fuzz/c/run.sh 600)"
bash tools/fuzz/c/run.sh "${QWASM_C_FUZZ_SECONDS:-15}"

echo "== the same C tests as wasm under Node (SIMD128 and scalar builds)"
NODE_PATH=${NODE_PATH:-/usr/share/nodejs} cmake --build build/wasm --target wasm-tests -j"$(nproc)" > "$log/wasm-tests-build.txt" ||
  { cat "$log/wasm-tests-build.txt"; exit 1; }
wasm_passed=0
for t in build/wasm/tests/test_*.js; do
  if ! node "$t" > "$log/wasm-test.txt" 2>&1; then
    cat "$log/wasm-test.txt"
    echo "$t failed" >&2
    exit 1
  fi
  echo "$(basename "$t" .js): $(tail -1 "$log/wasm-test.txt")"
  wasm_passed=$((wasm_passed + 1))
done

echo "== torchvision models from PyTorch 1.13 (too big to commit; exported once into build/models/torchvision)"
tv=build/models/torchvision
if [[ ! -f $tv/done || -n $(find python/qwasm_export tools/export_torch.py tools/golden/torch_models.py -newer "$tv/done" -name '*.py') ]]; then
  mkdir -p "$tv"
  /usr/bin/python3 tools/golden/torch_models.py --torchvision "$tv" --torchvision-only 2>&1 | grep -E 'ok:|failed|Error' || true
  ls "$tv"/mobilenet_v2.json > /dev/null && touch "$tv/done"
fi

# PyTorch 2.13 (the venv): the CNN architectures quantized on its qnnpack, fbgemm and x86 engines, exported with
# every tensor (too big to commit; tests/js/model-torch2.test.js)
t2=build/models/torch2
PY=$(bash tools/setup-python.sh)
if [[ ! -f $t2/done || -n $(find python/qwasm_export tools/golden/torch2_models.py tools/golden/cnn_archs.py tools/golden/torch_models.py -newer "$t2/done" -name '*.py') ]]; then
  start=$SECONDS
  mkdir -p "$t2"
  "$PY" tools/golden/torch2_models.py --cnn "$t2" --cnn-only 2>&1 | grep -E 'ok:|Error' || true
  ls "$t2"/x86/shufflenet_v2_x1_0.json > /dev/null && touch "$t2/done"
  echo "PyTorch 2.13 models: $((SECONDS - start)) s"
fi

# MobileNetV2 float and QDQ (the bench's files): the float loader and quantizeStatic tests run them
if [[ ! -f build/models/mobilenet_v2_float.onnx || tools/bench/mobilenet_v2.py -nt build/models/mobilenet_v2_float.onnx ]]; then
  /usr/bin/python3 tools/bench/mobilenet_v2.py build/models/ 2>&1 | tail -1
fi

echo "== the pretrained MiniLM (tools/pretrained/make.sh: generated once into build/models/pretrained)"
bash tools/pretrained/make.sh
echo "== the face expression model again (tools/pretrained/faces.sh: build/models/faces, compared with models/faces)"
bash tools/pretrained/faces.sh

# node --test over $2 with the TAP report in $log/node-$1.txt; prints the failures and stops on any
run_node_tests() {
  node --test --test-reporter=tap "${@:2}" | tee "$log/node-$1.txt" | grep -E '^(not ok|# (tests|pass|fail))' || true
  if grep -q '^# fail [1-9]' "$log/node-$1.txt" || ! grep -q '^# pass' "$log/node-$1.txt"; then
    grep -B2 -A30 '^not ok' "$log/node-$1.txt" | head -150
    echo "node tests failed: $1" >&2
    exit 1
  fi
}

for simd in 1 0; do
  name=$([[ $simd == 1 ]] && echo "SIMD128" || echo "scalar")
  echo "== node --test against the $name build"
  QWASM_SIMD=$simd run_node_tests "$simd" tests/js/*.test.js
done

# The suites that compare operators and models with their references (PyTorch, ONNX, onnxruntime-web) bit for bit,
# run again on the threads build with 2 threads and under Node 24, so both are held to the same numbers.
REFERENCE_SUITES=(tests/js/golden-*.test.js tests/js/model-*.test.js tests/js/conv-reference.test.js tests/js/ort-*.test.js
  tests/js/requant-modes.test.js tests/js/output-range.test.js tests/js/transformer-ort.test.js tests/js/memory-plan.test.js)
echo "== node --test against the threads build (numThreads 2)"
QWASM_SIMD=1 QWASM_THREADS=2 run_node_tests threads "${REFERENCE_SUITES[@]}"

# Node 24 (tools/setup.sh puts it in build/node24) probes relaxed SIMD by default: the reference suites run there, on
# the relaxed kernels where this machine's probe passes (tests/js/node24.test.js also runs each V8 compiler alone).
if [[ -x build/node24/bin/node ]]; then
  probe=$(build/node24/bin/node --input-type=module -e \
    "import { relaxedDotSemantics as p } from '$PWD/js/runtime/relaxed.js'; const r = p(); console.log(r.semantics ?? r.reason)")
  relaxed=$([[ $probe == usdot || $probe == sdot ]] && echo 1 || echo 0)
  echo "== node --test under Node 24 ($(build/node24/bin/node --version); relaxed dot product: $probe)"
  PATH="$PWD/build/node24/bin:$PATH" QWASM_SIMD=1 QWASM_RELAXED=$relaxed run_node_tests node24 "${REFERENCE_SUITES[@]}"
fi

# Once, not per build: the pages run whichever build the browser picks.
echo "== the package as a user installs it (npm pack into fresh projects: Node, TypeScript, Vite 7 and 8, webpack 5, Worker)"
start=$SECONDS
run_node_tests package tests/package/*.test.js
echo "tests/package: $((SECONDS - start)) s"

echo "== TypeScript declarations"
npx --no-install tsc -p tests/types/tsconfig.json

passed=$(( $(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2-\1/p' "$log/ctest.txt") + wasm_passed ))
failed=0
for f in "$log"/node-*.txt; do
  passed=$((passed + $(sed -n 's/^# pass \([0-9]*\)/\1/p' "$f")))
  failed=$((failed + $(sed -n 's/^# fail \([0-9]*\)/\1/p' "$f")))
done
echo "qwasm: $passed passed, $failed failed"
