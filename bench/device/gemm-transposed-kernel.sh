#!/usr/bin/env bash
# braid's transposed kernels (GemmConfig::transposed, "-t": D^T = B^T A^T, weights as the MMA's M operand,
# two warpgroups splitting the tokens) against braid's row-major picks, CUTLASS's transposed probe and
# cuBLASLt, on the MLP and QKV shapes where braid's row-major tilings trail. Each variant checked against the
# reference (err column); no activation. The GPU tests first (TESTS narrows them), into gpu-tests.log.
#   BIN=/tmp/new OUT=dir BRAID_COMMIT=<hash> NEW_COMMIT=<hash> bash bench/device/gemm-transposed-kernel.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
mkdir -p "$OUT"
{ echo "# braid_gpu_tests (${NEW_COMMIT:-?}) on $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%H:%MZ)"
  timeout ${TEST_LIMIT:-240} "$BIN/braid_gpu_tests" ${TESTS:+--gtest_filter=$TESTS}; echo "exit $?"; } > "$OUT/gpu-tests.log" 2>&1
grep -E "^\[  (PASSED|FAILED) |Failure|exit" "$OUT/gpu-tests.log" | head -20
log="$OUT/gemm-transposed-kernel.log"
log_header "$log" "BIN=$BIN bash bench/device/gemm-transposed-kernel.sh"
TR="192x192-t,128x192-t,128x256-t,256x128-t"
CT="t-192x192,t-192x128,t-256x128,t-128x256"
run() { timeout ${GEMM_LIMIT:-100} "$BIN/braid-gemm" --reps 20 "$@" >> "$log" 2>&1; }
run --m 256,384,512,768,1024,1536,2048 --n 6144 --k 12288 --configs $TR,192x192,128x192,128x256-staged,192x128-staged,128x128-staged-pp --cutlass-shapes $CT
run --m 256,384,512,768,1024,1536,2048 --n 12288 --k 6144 --configs $TR,192x192,128x192,128x256-staged,192x128-staged,128x128-staged-pp --cutlass-shapes $CT
run --m 512,1024,2048 --n 4608 --k 12288 --configs $TR,128x192,192x128-staged,128x128-staged-pp --cutlass-shapes $CT
run --m 256,512,1024,2048 --n 5504 --k 8192 --configs $TR,128x192,128x256-staged,128x128-staged-pp
run --m 256,512,1024,2048 --n 8192 --k 2752 --configs $TR,128x128-direct,128x256-staged,128x128-staged-pp
grep -E "M=|rror|skipped|FAILED" "$log" | cut -c1-120
