#!/usr/bin/env bash
# Session 60's second device call: braid's wide and multicast tiles against cuBLASLt on GPT-3's GEMMs at M = 1024 and
# 2048, where cuBLASLt's W1 kernel (256x128 tiles, clusters of two sharing the weight tile) runs ~14% faster than
# braid's pick and its W2 ~20% slower. Two rounds, each config timed after the others (sustained load).
#   SET=.carry/S60 OUT=$OUT COMMIT=<hash> bash bench/device/s60-wide.sh
set -uo pipefail
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
start_run "${SET:-.carry/S60}"
log="$OUT/gemm-wide.log"
log_header "$log" "braid-gemm --m 1024,2048 (GPT-3 W1 gelu N=6144 K=12288; W2 none N=12288 K=6144) --configs C --reps 30, 2 rounds"
C=128x256-mc2,128x256,128x256-staged,256x128-t,128x128-staged-pp,128x128-mc2,128x128,192x128-staged
for round in 1 2; do
  echo "== round $round W1" >> "$log"
  timeout 120 $B/braid-gemm --m 1024,2048 --n 6144 --k 12288 --act gelu --configs $C --reps 30 >> "$log" 2>&1
  echo "== round $round W2" >> "$log"
  timeout 120 $B/braid-gemm --m 1024,2048 --n 12288 --k 6144 --configs $C --reps 30 >> "$log" 2>&1
done
grep -E "^==| us " "$log"
