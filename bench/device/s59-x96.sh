#!/usr/bin/env bash
# Session 59's device call: the 64x96 and 128x96 tiles (128 tiles of GPT-3's W1 at T = 128 / 256, a sixth to an eighth
# less intake per CTA than the x128 twins). The Hopper GEMM tests as the gate, then braid-gemm on GPT-3's two weights
# (the new tiles beside the picks they would replace, cuBLASLt in the same process), then both MLP records.
#   SET=.carry/S59 OUT=$OUT COMMIT=<hash> bash bench/device/s59-x96.sh
# SET holds new/{braid_gpu_tests,braid-gemm,braid-bench-mlp}.xz.
set -uo pipefail
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
start_filtered_run "${SET:-.carry/S59}"
G="$OUT/gemm-x96.log"
log_header "$G" "braid-gemm --m 64,128,256 --n 6144 --k 12288 --act gelu ...; --n 12288 --k 6144 ... --reps 30"
timeout 120 $B/braid-gemm --m 64,128,256 --n 6144 --k 12288 --act gelu --reps 30 \
  --configs 64x96,64x128-staged,64x128,64x64-staged-f8,64x192-staged,128x96,128x128,128x96-sk2 >> "$G" 2>&1
timeout 120 $B/braid-gemm --m 64,128,256 --n 12288 --k 6144 --reps 30 \
  --configs 64x96,64x192-staged,64x128-staged,128x96,128x192-t,128x128 >> "$G" 2>&1
echo "exit $?" >> "$G"
grep -vE "^\s*$" "$G" | tail -60
BIN=$B OUT="$OUT/mlp" LIMIT=200 bash bench/device/mlp-run.sh --show-configs | tail -70
(cd "$OUT" && tar czf mlp.tgz mlp && rm -rf mlp)
