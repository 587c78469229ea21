#!/usr/bin/env bash
# One device call comparing builds carried as /tmp/bin/<name>/ (braid-bench-conv, braid-gemm): conv pairs
# (cuDNN rows from PEERS) and single GEMMs, the builds alternating, then ab_table.py per build against
# the first. Optionally the GPU tests of the first build (TESTS=1; /tmp/bin/<first>/braid_gpu_tests).
#   NAMES=new,old PEERS=<-torch.csv> LAYERS=.. BATCHES=.. GEMM_M=512,1024 GEMM_CONFIGS=.. ROUNDS=1 \
#     OUT=$OUT/r bash bench/device/ab-bins.sh
set -uo pipefail
IFS=, read -ra names <<< "${NAMES:-new,old}"
OUT=${OUT:-out}
mkdir -p "$OUT"
first=${names[0]}
if [ "${TESTS:-0}" = 1 ]; then
  { echo "# braid_gpu_tests ($first) on $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date +%F)";
    timeout ${TEST_LIMIT:-200} /tmp/bin/$first/braid_gpu_tests; echo "exit $?"; } > "$OUT/gpu-tests-$first.log" 2>&1
  tail -4 "$OUT/gpu-tests-$first.log"
fi
for r in $(seq 1 ${ROUNDS:-1}); do
  for s in "${names[@]}"; do
    if [ -n "${LAYERS:-}" ]; then
      BIN=/tmp/bin/$s OUT=$OUT PEERS=$PEERS TAG=-$s-r$r LIMIT=${CONV_LIMIT:-150} bash bench/device/conv-run.sh > "$OUT/conv-$s-r$r.txt" 2>&1
      tail -2 "$OUT/conv-$s-r$r.txt"
    fi
    if [ -n "${GEMM_CONFIGS:-}" ]; then
      timeout ${GEMM_LIMIT:-120} /tmp/bin/$s/braid-gemm --m ${GEMM_M:-512,1024} --n ${GEMM_N:-12288} --k ${GEMM_K:-6144} \
        --configs $GEMM_CONFIGS --reps 20 --no-cublas > "$OUT/gemm-$s-r$r.log" 2>&1
      echo "gemm $s r$r exit $?"
    fi
  done
done
if [ -n "${LAYERS:-}" ]; then
  for r in $(seq 1 ${ROUNDS:-1}); do
    for s in "${names[@]:1}"; do
      python3 bench/ab_table.py $OUT/conv-pair-*-$first-r$r.csv $OUT/conv-pair-*-$s-r$r.csv --labels $first,$s \
        > "$OUT/conv-ab-$first-vs-$s-r$r.txt" 2>&1
      tail -25 "$OUT/conv-ab-$first-vs-$s-r$r.txt"
    done
  done
fi
