#!/usr/bin/env bash
# B multicast in clusters of two (GemmConfig::multicast, "-mc2") against every CTA loading its own B,
# on the MLP GEMM shapes, in one call: braid's configurations with and without -mc2, cuBLASLt and
# CUTLASS's own kernel, each checked against an fp32 reference (braid-gemm). Optionally the GPU tests
# first (TESTS=<gtest filter>; TESTS_GATE=1 stops on a failure).
#   BIN=.carry/bin OUT=dir BRAID_COMMIT=<hash> [TESTS='*Multicast*'] [MS=384,768,...] bash bench/device/gemm-multicast-ab.sh
set -uo pipefail
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/gemm-mc}
MS=${MS:-384,768,1024,1536,2048}
CONFIGS=${CONFIGS:-128x128,128x128-mc2,128x256,128x256-mc2,128x128-streamk,128x128-mc2-streamk,128x256-streamk,128x256-mc2-streamk,128x128-direct,128x128-direct-streamk}
mkdir -p "$OUT"
log="$OUT/gemm-multicast-ab.log"
{
  echo "# device: $(nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  commit: ${BRAID_COMMIT:-unknown}"
  echo "# command: BIN=$BIN MS=$MS bash bench/device/gemm-multicast-ab.sh"
} > "$log"
if [ -n "${TESTS:-}" ] && [ -x "$BIN/braid_gpu_tests" ]; then
  timeout ${TEST_LIMIT:-300} "$BIN/braid_gpu_tests" --gtest_filter="$TESTS" > "$OUT/gpu-tests.log" 2>&1
  rc=$?
  tail -25 "$OUT/gpu-tests.log"
  echo "# gpu tests ($TESTS): exit $rc" | tee -a "$log"
  if [ $rc -ne 0 ] && [ "${TESTS_GATE:-0}" = 1 ]; then exit $rc; fi
fi
# (name N K): GPT-3 W1 / W2, LLaMA W1 (gate|up) / W2
for shape in "gpt3-w1 6144 12288" "gpt3-w2 12288 6144" "llama-w1 5504 8192" "llama-w2 8192 2752"; do
  set -- $shape
  echo "== $1 N=$2 K=$3" | tee -a "$log"
  timeout ${SHAPE_LIMIT:-150} "$BIN/braid-gemm" --m "$MS" --n "$2" --k "$3" --configs "$CONFIGS" --reps ${REPS:-20} 2>&1 | tee -a "$log"
done
