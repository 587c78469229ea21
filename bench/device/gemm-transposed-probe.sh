#!/usr/bin/env bash
# CUTLASS's cooperative kernel on the transposed problem (t-192x192, t-192x192-c2, t-320x64-c4: weights as the
# MMA's M operand, two warpgroups splitting the tokens, as cuBLASLt's nvjet kernels) against braid's pick and
# cuBLASLt on the shapes where braid's row-major tilings trail: GPT-3 W1 (T = 384-1536), W2, and the QKV GEMM at
# S = 512. Each checked against the reference (err column); no activation.
#   BIN=/tmp/new OUT=dir BRAID_COMMIT=<hash> bash bench/device/gemm-transposed-probe.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
mkdir -p "$OUT"
log="$OUT/gemm-transposed-probe.log"
log_header "$log" "BIN=$BIN bash bench/device/gemm-transposed-probe.sh"
T="t-192x192,t-192x192-c2,t-320x64-c4"
timeout 150 "$BIN/braid-gemm" --m 384,768,1536 --n 6144 --k 12288 --reps 20 --configs 192x192,192x96,128x192 --cutlass-shapes $T >> "$log" 2>&1
timeout 120 "$BIN/braid-gemm" --m 384,768 --n 12288 --k 6144 --reps 20 --configs 192x192,192x128-staged --cutlass-shapes $T >> "$log" 2>&1
timeout 100 "$BIN/braid-gemm" --m 512 --n 4608 --k 12288 --reps 20 --configs 128x192 --cutlass-shapes $T >> "$log" 2>&1
grep -E "M=|rror|skipped" "$log" | cut -c1-120
