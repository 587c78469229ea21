#!/usr/bin/env bash
# The fused skinny chain (both GEMMs in one launch, skinny_chain.cuh): where its time goes on this GPU.
# Per-CTA phase stamps (braid-bench-mlp --fused-timeline) beside the two-launch chains, cuBLASLt in the same run.
#   OUT=<dir> COMMIT=<hash> SET=<.carry/X> [CONFIGS=a1s4-pk,a1s8-pk (default: the tuners' candidates)] [TOKENS=1]
#   [MODELS=llama,gpt3] [TESTS=<gtest filter>] bash bench/device/fused-diag.sh
#   (carry SET: new/{braid_gpu_tests,braid-bench-mlp}.xz)
source "$(dirname "$0")/common.sh"
export BRAID_COMMIT=${COMMIT:-unknown}
unpack_carried ${SET:-.carry/DT} $OUT/d
B=/tmp/new
if [ -n "${TESTS-}" ]; then
  { echo "# braid_gpu_tests --gtest_filter=$TESTS (${COMMIT:-?}) on $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%H:%MZ)"
    timeout 300 $B/braid_gpu_tests --gtest_filter="$TESTS"; echo "exit $?"; } > $OUT/d/gpu-tests.log 2>&1
  grep -E "FAILED|Failure|PASSED|^exit" $OUT/d/gpu-tests.log | tail -20
fi
SK=(); [ -n "${CONFIGS-}" ] && SK=(--skinny $CONFIGS)
CMD="braid-bench-mlp --models ${MODELS:-llama,gpt3} --tokens ${TOKENS:-1} --reps 20 --show-configs ${SK[*]} --fused-timeline"
log_header $OUT/d/mlp.log "$CMD"
timeout ${MLP_LIMIT:-400} $B/$CMD --csv $OUT/d/mlp.csv >> $OUT/d/mlp.log 2>&1
echo "mlp exit $?"
grep -E "chosen|fused|^    [a-z0-9-]+ +[0-9.]+ +[0-9.]+|cublaslt" $OUT/d/mlp.log | head -120
