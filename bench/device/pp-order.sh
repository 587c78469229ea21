#!/usr/bin/env bash
# Tile order against CUTLASS's pingpong (session 37): braid's 128x128 cooperative and staged-pingpong kernels
# in column-major (default) and row-major order next to CUTLASS's pp-128x128 on the attention output GEMMs
# and GPT-3's W2, two rounds (cuBLASLt and CUTLASS in the first).
#   BIN=/tmp/new OUT=out bash bench/device/pp-order.sh
set -uo pipefail
BIN=${BIN:-build/tools}
source "$(dirname "$0")/common.sh"
mkdir -p "$OUT/r"
log=$OUT/r/pp-order.log
log_header "$log" "BIN=$BIN bash bench/device/pp-order.sh"
for round in 1 2; do
  for shape in "out-gpt3 512,1024,2048 12288 1536" "out-llama 1024,2048 8192 1024" "w2-gpt3 512,1024 12288 6144"; do
    set -- $shape
    echo "== round $round $1" >> "$log"
    extra=(--no-cublas); [ $round = 1 ] && extra=(--cutlass-shapes pp-128x128)
    timeout 120 "$BIN/braid-gemm" --m $2 --n $3 --k $4 --reps 30 "${extra[@]}" \
      --configs 128x128,128x128-rowmajor,128x128-staged-pp,128x128-staged-pp-rowmajor >> "$log" 2>&1
  done
done
cd "$OUT" && tar czf all.tgz r && rm -rf r
