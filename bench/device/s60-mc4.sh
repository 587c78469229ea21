#!/usr/bin/env bash
# Session 60's fourth device call: 128x320-t-mc4 (GPT-3's QKV tiling at S = 1024 in clusters of four sharing the weight
# tile, as cuBLASLt's 320x128 kernel runs it). Every GPU test as the gate; the QKV GEMM alone (M = 1024, N = 4608,
# K = 12288) with and without the clusters, cuBLASLt in the same process, two rounds; then the prompt record
# (attn-run.sh: PyTorch before and after braid, both models).
#   SET=.carry/S60m OUT=$OUT COMMIT=<hash> bash bench/device/s60-mc4.sh
# SET holds new/{braid_gpu_tests,braid-gemm,braid-bench-attn}.xz.
set -uo pipefail
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
TEST_LIMIT=${TEST_LIMIT:-240} start_gated_run "${SET:-.carry/S60m}"
log="$OUT/r/qkv-1024.log"
log_header "$log" "braid-gemm --m 1024 --n 4608 --k 12288 --configs 128x320-t,128x320-t-mc4,64x320-t-mc4 --reps 30 (2 rounds)"
for round in 1 2; do
  echo "== round $round" >> "$log"
  timeout 100 $B/braid-gemm --m 1024 --n 4608 --k 12288 --configs 128x320-t,128x320-t-mc4,64x320-t-mc4 --reps 30 >> "$log" 2>&1
done
grep -E "^==| us " "$log"
BIN=$B OUT="$OUT/r/attn-prompt" CASES=prompt LIMIT=300 BRAID_COMMIT=$BRAID_COMMIT bash bench/device/attn-run.sh | tail -12
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
