#!/usr/bin/env bash
# The skinny GEMM's warp-specialized ring (a producer warp refills each stage as soon as the consumers
# release it) against the CTA-barrier ring it replaced, two builds in one call on one GPU: the new build's
# GPU tests, then the MLP at few tokens (braid-bench-mlp --show-configs: every skinny configuration's GEMMs
# alone, then the chains; cuBLASLt in the same process), the builds alternating; bench/ab_table.py per round.
#   SET=.carry/W OUT=$OUT/w COMMIT_new=<hash> COMMIT_old=<hash> [ROUNDS=1] [TOKENS=1,16] [MODELS=gpt3,llama] [TESTS=1] bash bench/device/skinny-ws-ab.sh
# SET holds new/{braid_gpu_tests,braid-bench-mlp} and old/braid-bench-mlp.
set -uo pipefail
SET=${SET:-.carry/W}
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
unpack_carried "$SET" "$OUT"
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TEST_LIMIT:-200} /tmp/new/braid_gpu_tests > "$OUT/gpu-tests.log" 2>&1
  echo "exit $?" >> "$OUT/gpu-tests.log"
  tail -3 "$OUT/gpu-tests.log"
fi
for r in $(seq 1 ${ROUNDS:-1}); do
  for b in new old; do
    c=COMMIT_$b
    BRAID_COMMIT=${!c:-unknown} timeout ${MLP_LIMIT:-150} /tmp/$b/braid-bench-mlp --models ${MODELS:-gpt3,llama} --tokens ${TOKENS:-1,16} --reps 20 --show-configs \
      --csv "$OUT/mlp-$b-r$r.csv" > "$OUT/mlp-$b-r$r.log" 2>&1
    echo "mlp $b r$r exit $?"
  done
  python3 bench/ab_table.py "$OUT/mlp-old-r$r.csv" "$OUT/mlp-new-r$r.csv" --labels old,new > "$OUT/mlp-ab-r$r.txt" 2>&1
  cat "$OUT/mlp-ab-r$r.txt"
done
