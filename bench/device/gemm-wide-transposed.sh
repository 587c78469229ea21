#!/usr/bin/env bash
# braid's 320-wide transposed tile (128x320-t; session 42's logs also have 64x320-t, built three ways at
# 9a3d52f, 6bafe79/da625da and 18161fd, then removed) -- a width only the
# transposed kernels have -- on the shapes where it makes one wave of ~120 tiles, against braid's earlier
# picks and cuBLASLt in the same process; each variant checked against the reference (err column); no
# activation. Every GPU test first (common.sh gpu_tests_gate: no timing unless all pass).
#   BIN=/tmp/new OUT=dir BRAID_COMMIT=<hash> NEW_COMMIT=<hash> bash bench/device/gemm-wide-transposed.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
mkdir -p "$OUT"
gpu_tests_gate "$BIN" "$OUT" || { echo "GPU tests failed: no timing"; exit 1; }
log="$OUT/gemm-wide-transposed.log"
log_header "$log" "BIN=$BIN bash bench/device/gemm-wide-transposed.sh"
W="128x320-t"
run() { timeout ${GEMM_LIMIT:-100} "$BIN/braid-gemm" --reps 20 "$@" >> "$log" 2>&1; }
run --m 512,1024 --n 4608 --k 12288 --configs $W,128x192-t,192x192-t,128x192,64x192-staged          # GPT-3 QKV
run --m 384,768 --n 6144 --k 12288 --configs $W,128x192-t,192x192-t,192x128-staged,192x96           # GPT-3 W1
run --m 384,768 --n 5504 --k 8192 --configs $W,128x192-t,256x128-t,128x128-staged-pp,128x192        # LLaMA W1
run --m 256,512 --n 8192 --k 2752 --configs $W,128x256-t,256x128-t,128x128-staged-pp,128x128-direct # LLaMA W2
grep -E "M=|rror|skipped|FAILED" "$log" | cut -c1-120
