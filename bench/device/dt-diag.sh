#!/usr/bin/env bash
# The dynamic tail (session 52): GPU tests, per-CTA phase stamps of GPT-3's / LLaMA's GEMMs with and without -dt
# (under BRAID_SKINNY_DT_DIAG knobs: 1 no publish fence, 2 no finishing, 4 no publishing -- wrong sums, timing only),
# and optionally the MLP at few tokens (braid-bench-mlp --show-configs: every configuration, cuBLASLt in the same run).
#   OUT=<dir> COMMIT=<hash> [DIAGS="0 4"] [CONFIGS="a1s4-pk a1s4-pk-dt ..."] [TESTS='*SkinnyDynamic*'] [MLP=1]
#   [TOKENS=1,16] bash bench/device/dt-diag.sh          (carry .carry/DT: new/{braid_gpu_tests,braid-bench-mlp,
#                                                         braid-micro-weight-stream}.xz)
source "$(dirname "$0")/common.sh"
unpack_carried .carry/DT $OUT/d
B=/tmp/new
if [ -n "${TESTS-}" ]; then
  timeout 240 $B/braid_gpu_tests --gtest_filter="$TESTS" > $OUT/d/gpu-tests.log 2>&1; echo "tests exit $?"
  grep -E "FAILED|OK \]|Failure|PASSED" $OUT/d/gpu-tests.log | head -20
fi
for dg in ${DIAGS:-0 4}; do
  BRAID_SKINNY_DT_DIAG=$dg BRAID_PHASES_DUMP=1 timeout 90 $B/braid-micro-weight-stream 15 phases ${CONFIGS:-a1s4-pk a1s4-pk-dt} > $OUT/d/phases-diag$dg.log 2>&1
  echo "diag $dg"; grep "^phases" $OUT/d/phases-diag$dg.log | cut -c1-75
done
if [ -n "${MLP-}" ]; then
  BRAID_COMMIT=${COMMIT:-unknown} timeout 250 $B/braid-bench-mlp --models gpt3,llama --tokens ${TOKENS:-1,16} --reps 20 \
    --show-configs --csv $OUT/d/mlp.csv > $OUT/d/mlp.log 2>&1
  echo "mlp exit $?"; grep -E "chosen|^  (gpt3|llama) +T=[0-9]+ +(braid|cublaslt) " $OUT/d/mlp.log | head -20
fi
