#!/usr/bin/env bash
# Runs on a GPU machine (the `device` tool or any CUDA box): the GPU proof tests, compute-sanitizer
# (memcheck, racecheck, synccheck) on the small cases, the demo benchmark with one traced run per
# variant, and timeline plots. Results go to $OUT (default ./out): the CSV, timeline PNGs, and all
# logs in proof-logs.tgz. Usage: scripts/device-proof.sh [build-dir] [extra braid-demo args]
set -uo pipefail
B=${1:-build}; shift $(( $# > 0 ? 1 : 0 ))
OUT=${OUT:-out}
HERE=$(cd "$(dirname "$0")/.." && pwd)
W="$OUT/work"
mkdir -p "$W/traces"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z' | head -1)
day=$(date +%Y%m%d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$W/device.txt"
echo "== GPU tests"
"$B/tests/braid_gpu_tests" --gtest_output=xml:"$W/gpu_tests.xml" 2>&1 | tee "$W/gpu_tests.log" | grep -E "^\[  (PASSED|FAILED)|FAILED|OK \]"
for tool in memcheck racecheck synccheck; do
  echo "== compute-sanitizer --tool $tool (small cases)"
  compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/braid_gpu_tests" --gtest_filter='*Small*:Generated*' \
    > "$W/sanitizer-$tool.log" 2>&1
  echo "exit $? ; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$W/sanitizer-$tool.log" | tr '\n' ' ')"
done
echo "== demo"
csv="$OUT/gemm-chain-$gpu-$day.csv"
"$B/tools/braid-demo" --csv "$csv" --trace "$W/traces" "$@" 2>&1 | tee "$W/demo.log"
if python3 -c "import matplotlib" 2>/dev/null; then
  for shape in 512x12288x6144x12288 2000x1024x3000x1000; do
    python3 "$HERE/bench/plot_timeline.py" "$W/traces/trace-$shape-stream.csv" "$W/traces/trace-$shape-rowsync-pdl.csv" \
      -o "$OUT/gemm-chain-$gpu-$day-timeline-$shape.png"
  done
fi
tar czf "$OUT/proof-logs.tgz" -C "$W" .
rm -rf "$W"
