#!/usr/bin/env bash
# Stream-K's owner reduction (the tile's first segment waits for the others and reads their partials;
# WorkSchedule::owner_reduces, the default) against the last-arrival reduction
# (BRAID_STREAMK_LAST_ARRIVAL=1), same binary, alternating per shape, each with per-unit trace
# summaries (braid-gemm --unit-trace). Optionally the GPU tests first (TESTS=<gtest filter>).
#   BIN=.carry/bin OUT=dir BRAID_COMMIT=<hash> [TESTS='*'] bash bench/device/gemm-streamk-owner-ab.sh
set -uo pipefail
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/gemm-owner}
mkdir -p "$OUT/traces"
log="$OUT/gemm-streamk-owner-ab.log"
{
  echo "# device: $(nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  commit: ${BRAID_COMMIT:-unknown}"
  echo "# command: BIN=$BIN bash bench/device/gemm-streamk-owner-ab.sh"
} > "$log"
if [ -n "${TESTS:-}" ] && [ -x "$BIN/braid_gpu_tests" ]; then
  timeout ${TEST_LIMIT:-200} "$BIN/braid_gpu_tests" --gtest_filter="$TESTS" > "$OUT/gpu-tests.log" 2>&1
  echo "# gpu tests ($TESTS): exit $? -- $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gpu-tests.log" | tr '\n' ' ')" | tee -a "$log"
fi
SHAPES=${SHAPES:-"gpt3-qkv 512,1024 4608 12288 128x192-g4-streamk,128x192-g8-streamk,128x256-g4-streamk,128x128-g4-streamk;gpt3-out 512,1024 12288 1536 128x192-streamk,128x128-streamk,128x256-streamk;llama-qkv 512,1024 3072 8192 128x128-g4-streamk,128x128-g8-streamk,128x192-g8-streamk;gpt3-w1 256,512 6144 12288 128x128-mc2-streamk,128x192-g2-streamk,128x128-g4-streamk"}
IFS=';' read -ra list <<< "$SHAPES"
for shape in "${list[@]}"; do
  set -- $shape
  for mode in owner last-arrival; do
    echo "== $1 M=$2 N=$3 K=$4 reduction=$mode" | tee -a "$log"
    if [ $mode = last-arrival ]; then export BRAID_STREAMK_LAST_ARRIVAL=1; else unset BRAID_STREAMK_LAST_ARRIVAL; fi
    timeout ${SHAPE_LIMIT:-60} "$BIN/braid-gemm" --m "$2" --n "$3" --k "$4" --configs "$5" --reps ${REPS:-15} \
      --unit-trace "$OUT/traces/$1-$mode" $( [ $mode = last-arrival ] && echo --no-cublas ) 2>&1 | tee -a "$log"
  done
  unset BRAID_STREAMK_LAST_ARRIVAL
done
