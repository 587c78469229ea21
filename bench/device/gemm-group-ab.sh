#!/usr/bin/env bash
# Stream-K over CTA groups walking one column block in step (GemmConfig::group, "-g<N>") against plain
# stream-K, data-parallel tiles, -mc2 stream-K, cuBLASLt and CUTLASS's own kernel, on the medium-M
# shapes of issues 3/4 (MLP GEMMs at T = 256-2048, the attention QKV and output GEMMs at S = 512-2048),
# in one call; every configuration checked against an fp32 reference (braid-gemm). Optionally the GPU
# tests first (TESTS=<gtest filter>; TESTS_GATE=1 stops on a failure).
#   BIN=.carry/bin OUT=dir BRAID_COMMIT=<hash> [TESTS='*Group*'] [CONFIGS=...] bash bench/device/gemm-group-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/gemm-group}
CONFIGS=${CONFIGS:-128x192,192x128-staged,128x256-staged,128x128-streamk,128x128-g4-streamk,128x192-streamk,128x192-g2-streamk,128x192-g4-streamk,128x192-g8-streamk,128x256-streamk,128x256-g4-streamk,128x256-g8-streamk,128x128-mc2-streamk}
mkdir -p "$OUT"
log="$OUT/gemm-group-ab.log"
log_header "$log" "BIN=$BIN CONFIGS=$CONFIGS bash bench/device/gemm-group-ab.sh"
run_gpu_tests "$BIN" "$OUT" "$log" || exit $?
# (name M-list N K): attention QKV GEMMs (GPT-3, LLaMA), output GEMM (GPT-3), MLP W1/W2 (GPT-3, LLaMA)
SHAPES=${SHAPES:-"gpt3-qkv 512,1024,2048 4608 12288;llama-qkv 512,1024,2048 3072 8192;gpt3-out 512,1024,2048 12288 1536;gpt3-w1 256,384,512,768,1024 6144 12288;gpt3-w2 256,384,512,768,1024 12288 6144;llama-w1 256,512,1024 5504 8192"}
IFS=';' read -ra list <<< "$SHAPES"
for shape in "${list[@]}"; do
  set -- $shape
  echo "== $1 M=$2 N=$3 K=$4" | tee -a "$log"
  timeout ${SHAPE_LIMIT:-150} "$BIN/braid-gemm" --m "$2" --n "$3" --k "$4" --configs "$CONFIGS" --reps ${REPS:-20} 2>&1 | tee -a "$log"
done
