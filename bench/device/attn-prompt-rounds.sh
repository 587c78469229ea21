#!/usr/bin/env bash
# One carried build of braid on the GPU machine: its GPU tests, then the attention prompts of issue 4 with the
# PyTorch peer in the same call (attn-run.sh), then ROUNDS more rounds of braid-bench-attn against those peers
# (the spread between rounds), each round's tuned stages, chain and every attention candidate alone.
#   SET=.carry/S BRAID_COMMIT=<hash> ROUNDS=1 OUT=out bash bench/device/attn-prompt-rounds.sh
set -uo pipefail
python3 bench/device/unpack.py ${SET:-.carry/S} /tmp >/dev/null
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
{ echo "# braid_gpu_tests on $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%H:%MZ), commit ${BRAID_COMMIT:-unknown}"
  timeout 200 /tmp/new/braid_gpu_tests; echo "exit $?"; } > $OUT/gpu-tests.log 2>&1
tail -3 $OUT/gpu-tests.log; grep -E "FAILED|Failure" $OUT/gpu-tests.log | head -20
BIN=/tmp/new OUT=$OUT CASES=${CASES:-prompt} TAG=-r1 bash bench/device/attn-run.sh
for r in $(seq 2 $((1 + ${ROUNDS:-1}))); do
  timeout 150 /tmp/new/braid-bench-attn --peers $OUT/attn-*-r1-torch.csv --out $OUT/r$r.csv --reps 30 \
    --cases ${CASES:-prompt} --commit "${BRAID_COMMIT:-unknown}" > $OUT/r$r.log 2>&1
  echo "== round $r"; grep -E "tuned:|braid [0-9]" $OUT/r$r.log | cut -c1-150
done
grep -h "attention alone" $OUT/attn-*-r1.log $(ls $OUT/r*.log 2>/dev/null)
