#!/usr/bin/env bash
# Same-call A/B of two builds of braid's Hopper GEMM on the GEMMs where the time between two work units
# shows (short K: the attention output projections, many tiles per CTA) and on long-K ones, plain,
# interleaved OLD, NEW, OLD, NEW so drift shows; then per-unit traces of both builds' short-K GEMMs.
# Optionally the GPU tests of NEW first (TESTS=1).
#   OLD=dir NEW=dir (each holding braid-gemm; NEW also braid_gpu_tests) OUT=dir [TESTS=1] bash bench/device/unit-gap-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
OUT=${OUT:-/tmp/unit-gap-ab}
mkdir -p "$OUT/traces"
log="$OUT/unit-gap-ab.log"
{ echo "# device: $(nvidia-smi --query-gpu=name --format=csv,noheader), date: $(date -u +%FT%H:%MZ)"
  echo "# old: ${OLD_COMMIT:-?} new: ${NEW_COMMIT:-?}; command: OLD=$OLD NEW=$NEW TESTS=${TESTS:-0} bash bench/device/unit-gap-ab.sh"; } > "$log"
if [ "${TESTS:-0}" = 1 ]; then
  { timeout 150 "$NEW/braid_gpu_tests"; echo "exit $?"; } > "$OUT/gpu-tests.log" 2>&1
  tail -3 "$OUT/gpu-tests.log"
  if grep -q "^\[  FAILED  \]" "$OUT/gpu-tests.log" || ! grep -q "^\[  PASSED  \]" "$OUT/gpu-tests.log"; then
    grep -E "FAILED|Failure" "$OUT/gpu-tests.log" | head -20; exit 1
  fi
fi
# (name M N K configs)
cases=("gpt3-out 512,2048 12288 1536 128x128,128x256-staged,128x192"
       "llama-out 1024,2048 8192 1024 128x128,128x256-staged"
       "gpt3-w2 1024 12288 6144 128x128,128x256-staged"
       "gpt3-w1 768 6144 12288 192x192,192x192-staged")
CUBLAS_FIRST=1 ROUNDS=2 gemm_ab_rounds "$log" "${cases[@]}"
for build in OLD NEW; do
  bin=${!build}
  echo "== traces $build" >> "$log"
  timeout 120 "$bin/braid-gemm" --m 2048 --n 12288 --k 1536 --configs 128x128,128x256-staged --reps 15 --no-cublas \
    --unit-trace "$OUT/traces/$build-gpt3-out" >> "$log" 2>&1
done
grep -E "^==|M=" "$log" | grep -v "cutlass" | head -120
