#!/usr/bin/env bash
# The libFuzzer harness over qwasm's C entry points (tools/fuzz/c/fuzz_api.c), built natively with clang-14's
# -fsanitize=fuzzer,address,undefined (Debian: clang-14 and libclang-rt-14-dev, in tools/setup.sh) against the
# library's sources, and run for a time budget:
#   bash tools/fuzz/c/run.sh [seconds=60] [scalar|simd|both=both]
# The scalar build compiles the scalar kernels; the SIMD build the wasm SIMD128 kernels through SIMDe (as the native
# C tests do). The corpus grows in build/fuzz/c/corpus-<variant>; a crash leaves its input in build/fuzz/c/ and fails.
set -euo pipefail
cd "$(dirname "$0")/../../.."
seconds=${1:-60}
variants=${2:-both}
[[ $variants == both ]] && variants="scalar simd"
out=build/fuzz/c
mkdir -p "$out"
simde=$(dirname "$(dirname "$(find /usr/include -path '*simde/wasm/simd128.h' -print -quit)")")
mapfile -t scalar_sources < <(find src -name '*.c' ! -name '*-wasmsimd.c' | sort)
mapfile -t simd_sources < <(find src -name '*-wasmsimd.c' | sort)
flags=(-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  -ffp-contract=off -Isrc/include -Isrc -Wall -Wextra -Werror -Wno-unused-parameter)
for variant in $variants; do
  exe=$out/fuzz_api_$variant
  if [[ $variant == simd ]]; then
    sources=("${scalar_sources[@]}" "${simd_sources[@]}")
    extra=(-DQW_SIMD=1 -msse4.1 -I"$simde")
  else
    sources=("${scalar_sources[@]}")
    extra=(-DQW_SIMD=0)
  fi
  newest=$(ls -t tools/fuzz/c/fuzz_api.c "${sources[@]}" src/*.h src/*/*.h src/include/qwasm.h | head -1)
  if [[ ! -x $exe || $newest -nt $exe ]]; then
    clang-14 "${flags[@]}" "${extra[@]}" tools/fuzz/c/fuzz_api.c "${sources[@]}" -lm -o "$exe"
  fi
  mkdir -p "$out/corpus-$variant"
  echo "== libFuzzer over the C entry points ($variant kernels, ASan + UBSan), $seconds s"
  (cd "$out" && "./fuzz_api_$variant" -max_total_time="$seconds" -max_len=1024 -len_control=20 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "corpus-$variant" 2>&1 | grep -E '^(#[0-9]+.*DONE|Done|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|.*runtime error)' || true)
  # libFuzzer exits non-zero and writes crash-*, leak-*, timeout-* or oom-* files on a finding
  if compgen -G "$out/crash-*" > /dev/null || compgen -G "$out/leak-*" > /dev/null || compgen -G "$out/timeout-*" > /dev/null || compgen -G "$out/oom-*" > /dev/null; then
    echo "libFuzzer found a failing input: $(ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* 2>/dev/null | head -3)" >&2
    exit 1
  fi
done
