#!/usr/bin/env bash
# The skinny GEMM reading packed weights (-pk: one 16 KB bulk copy per stage) against the same configurations
# reading W through the tensor map, in one binary on one GPU: the skinny GPU tests, the per-CTA phase stamps of
# GPT-3's / LLaMA's GEMMs (braid-micro-weight-stream phases), then the MLP at few tokens (braid-bench-mlp
# --show-configs: every configuration's GEMMs alone, packed or not, then the chains; cuBLASLt in the same process).
#   SET=.carry/P OUT=$OUT/p COMMIT=<hash> [ROUNDS=1] [TOKENS=1,16] [MODELS=gpt3,llama] [TEST_FILTER='*Skinny*']
#   [PHASES="a1s4-dsm a1s4-dsm-pk ..."] bash bench/device/skinny-pack.sh
# SET holds new/{braid_gpu_tests,braid-bench-mlp,braid-micro-weight-stream}.
set -uo pipefail
SET=${SET:-.carry/P}
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
unpack_carried "$SET" "$OUT"
if [ -n "${TEST_FILTER-*Skinny*}" ]; then
  timeout ${TEST_LIMIT:-300} /tmp/new/braid_gpu_tests --gtest_filter="${TEST_FILTER-*Skinny*}" > "$OUT/gpu-tests.log" 2>&1
  echo "exit $?" >> "$OUT/gpu-tests.log"
  tail -3 "$OUT/gpu-tests.log"
fi
if [ -n "${PHASES-a1s4-dsm a1s4-dsm-pk a1s8 a1s8-pk p1s4 p1s4-pk a2s4 a2s4-pk}" ]; then
  timeout ${PHASE_LIMIT:-120} /tmp/new/braid-micro-weight-stream 15 phases ${PHASES-a1s4-dsm a1s4-dsm-pk a1s8 a1s8-pk p1s4 p1s4-pk a2s4 a2s4-pk} \
    > "$OUT/phases.log" 2>&1
  echo "phases exit $?"
  cut -c1-60 "$OUT/phases.log" | head -40
fi
for r in $(seq 1 ${ROUNDS:-1}); do
  BRAID_COMMIT=${COMMIT:-unknown} timeout ${MLP_LIMIT:-200} /tmp/new/braid-bench-mlp --models ${MODELS:-gpt3,llama} \
    --tokens ${TOKENS:-1,16} --reps 20 --show-configs --csv "$OUT/mlp-r$r.csv" > "$OUT/mlp-r$r.log" 2>&1
  echo "mlp r$r exit $?"
done
