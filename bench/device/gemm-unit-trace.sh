#!/usr/bin/env bash
# Where a persistent GEMM's time goes, unit by unit: braid-gemm --unit-trace on medium-M shapes with
# data-parallel, split-K and (grouped) stream-K configurations, each timed, checked against an fp32
# reference and run once more recording every work unit (summary line per configuration in the log,
# per-unit CSVs under traces/). Optionally the GPU tests first (TESTS=<gtest filter>, '*' for all).
#   BIN=.carry/bin OUT=dir BRAID_COMMIT=<hash> [TESTS='*'] bash bench/device/gemm-unit-trace.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/gemm-unit-trace}
mkdir -p "$OUT/traces"
log="$OUT/gemm-unit-trace.log"
log_header "$log" "BIN=$BIN bash bench/device/gemm-unit-trace.sh"
run_gpu_tests "$BIN" "$OUT" "$log" || exit $?
# (name M N K configs)
SHAPES=${SHAPES:-"gpt3-out 512 12288 1536 128x192,128x192-streamk,128x128-streamk,128x256-staged,128x256-streamk;gpt3-qkv 512 4608 12288 192x128-staged,128x256-g4-streamk,128x192-g4-streamk,128x192-streamk;llama-w1 256 5504 8192 128x192,128x192-g2-streamk,128x192-sk2,128x256-streamk;gpt3-w1 256 6144 12288 128x192,128x192-sk2,128x128-mc2-streamk,128x192-g2-streamk"}
IFS=';' read -ra list <<< "$SHAPES"
for shape in "${list[@]}"; do
  set -- $shape
  echo "== $1 M=$2 N=$3 K=$4" | tee -a "$log"
  timeout ${SHAPE_LIMIT:-90} "$BIN/braid-gemm" --m "$2" --n "$3" --k "$4" --configs "$5" --reps ${REPS:-15} \
    --unit-trace "$OUT/traces/$1" 2>&1 | tee -a "$log"
done
