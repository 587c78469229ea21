#!/usr/bin/env bash
# The staged pingpong epilogue (-staged-pp, session 37) on the GPU machine: the GPU tests, then
# braid-gemm on the attention's output GEMMs (short K) and the MLP / QKV shapes with braid's 128x128
# stores (cooperative default and TMA-staged, pingpong direct and staged), 128x256-staged, cuBLASLt and
# CUTLASS's pingpong 128x128, two rounds. Everything under $OUT/r, packed as one tarball.
#   BIN=/tmp/new BRAID_COMMIT=<hash> OUT=out bash bench/device/pp-staged.sh
set -uo pipefail
BIN=${BIN:-build/tools}
mkdir -p "$OUT/r"
. "$(dirname "$0")/common.sh"
log=$OUT/r/gemm.log
log_header "$log" "BIN=$BIN bash bench/device/pp-staged.sh"
if [ -x "$BIN/braid_gpu_tests" ]; then
  { echo "# braid_gpu_tests on $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%H:%MZ), commit ${BRAID_COMMIT:-unknown}"; timeout ${TEST_LIMIT:-300} "$BIN/braid_gpu_tests"; echo "exit $?"; } > "$OUT/r/gpu-tests.log" 2>&1
  grep -E "^\[  (PASSED|FAILED)|^exit" "$OUT/r/gpu-tests.log"
fi
CONFIGS=128x128,128x128-staged,128x128-pp,128x128-staged-pp,128x256-staged
for round in 1 2; do
  for shape in "out-gpt3 512,1024,2048 12288 1536 none" "out-llama 512,1024,2048 8192 1024 none" \
               "qkv-gpt3 512,1024,2048 4608 12288 none" "qkv-llama 512,1024,2048 3072 8192 none" \
               "w1-gpt3 256,512,1024,2048 6144 12288 gelu" "w2-gpt3 256,512,1024,2048 12288 6144 none" \
               "w2-llama 256,512,1024,2048 8192 2752 none"; do
    set -- $shape
    echo "== round $round $1" >> "$log"
    extra=(); [ $round = 1 ] && extra=(--cutlass-shapes pp-128x128) || extra=(--no-cublas)
    timeout 120 "$BIN/braid-gemm" --m $2 --n $3 --k $4 --act $5 --configs $CONFIGS --reps 30 "${extra[@]}" >> "$log" 2>&1
  done
done
grep -c "CHECK FAILED" "$log"
cd "$OUT" && tar czf all.tgz r && rm -rf r
