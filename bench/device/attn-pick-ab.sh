#!/usr/bin/env bash
# Attention-block chains with fixed stages, one attention config against another in one process order (interleaved,
# ROUNDS rounds): braid-bench-attn --pick QKV,ATTN,OUT for each ATTN in ATTNS, one model and prompt length.
#   BIN=/tmp/new MODEL=gpt3 S=1024 QKV=128x320-t OUT_GEMM=128x128-staged-pp ATTNS="wg wg-s" OUT=out bash bench/device/attn-pick-ab.sh
set -uo pipefail
for r in $(seq 1 ${ROUNDS:-2}); do for a in ${ATTNS:-wg wg-s}; do
  log=$OUT/pick-$MODEL-$S-$a-r$r.log
  timeout 120 ${BIN:-/tmp/new}/braid-bench-attn --pick $QKV,$a,$OUT_GEMM --models $MODEL --prompts $S --cases prompt \
    --reps 30 --out ${log%.log}.csv > $log 2>&1
  echo "== $MODEL S=$S $a round $r: $(grep -E 'braid:(stream|pdl-only)/' $log | awk '{printf "%s %s us; ", $1, $2}')"
done; done
