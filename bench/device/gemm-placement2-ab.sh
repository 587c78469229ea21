#!/usr/bin/env bash
# Placement clusters of 2 (BRAID_PLACEMENT_CLUSTER=2) against the default (4, which fits only up to 120
# CTAs on an H100: launches of 121-132 CTAs go out plain) on the GEMMs of 121-132 CTAs, same binary,
# interleaved rounds: GPT-3's W1 (GeLU) and W2 at 384-1536 tokens in the one-wave tiles.
#   BIN=/tmp/new OUT=dir BRAID_COMMIT=<hash> [ROUNDS=2] bash bench/device/gemm-placement2-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
mkdir -p "$OUT"
log="$OUT/gemm-placement2-ab.log"
log_header "$log" "BIN=$BIN ROUNDS=${ROUNDS:-2} bash bench/device/gemm-placement2-ab.sh"
for r in $(seq 1 "${ROUNDS:-2}"); do
  for v in default 2; do
    if [ "$v" = default ]; then unset BRAID_PLACEMENT_CLUSTER; else export BRAID_PLACEMENT_CLUSTER=$v; fi
    echo "== round $r, placement $v" >> "$log"
    timeout 100 "$BIN/braid-gemm" --m 384,768,1536 --n 6144 --k 12288 --act gelu --reps 20 --no-cublas \
      --configs 192x192,192x96,128x192,128x128-staged-pp >> "$log" 2>&1
    timeout 100 "$BIN/braid-gemm" --m 384,768,1536 --n 12288 --k 6144 --reps 20 --no-cublas \
      --configs 192x192,192x128-staged,128x128-staged-pp,128x256-staged >> "$log" 2>&1
  done
done
unset BRAID_PLACEMENT_CLUSTER
grep -E "^==|us " "$log" | awk '{print}' | head -120
