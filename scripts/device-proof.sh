#!/usr/bin/env bash
# Runs on a GPU machine (the `device` tool or any CUDA box): GPU proof tests, compute-sanitizer on
# the small cases, and the demo benchmark. Writes logs and the CSV to $OUT (default ./out).
# Usage: scripts/device-proof.sh [build-dir]
set -uo pipefail
B=${1:-build}; shift $(( $# > 0 ? 1 : 0 ))
OUT=${OUT:-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/device.txt"
echo "== GPU tests"
"$B/tests/braid_gpu_tests" --gtest_output=xml:"$OUT/gpu_tests.xml" 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^\[  (PASSED|FAILED)|FAILED|OK \]"
for tool in memcheck racecheck synccheck; do
  echo "== compute-sanitizer --tool $tool (small cases)"
  compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/braid_gpu_tests" --gtest_filter='*Small*' \
    > "$OUT/sanitizer-$tool.log" 2>&1
  echo "exit $? ; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
done
echo "== demo"
"$B/tools/braid-demo" --csv "$OUT/gemm-chain-$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -oiE 'h100|h200' | tr A-Z a-z | head -1)-$(date +%Y%m%d).csv" "$@" 2>&1 | tee "$OUT/demo.log"
