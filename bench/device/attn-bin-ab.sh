#!/usr/bin/env bash
# Two builds of braid-bench-attn (or one, with OLD_ENV / NEW_ENV: environment assignments for that side's runs)
# on the same fixed attention-block chain (--pick QKV,ATTN,OUT), interleaved OLD, NEW for ROUNDS rounds, per case of CASES (model:S pairs with their picks): the chains' times (stream
# order, PDL alone) and each stage alone, every variant checked against the fp32 reference by the benchmark.
#   OLD=/tmp/old NEW=/tmp/new OUT=out CASES="gpt3:512:64x320-t-mc4,wg-r,128x128-staged-pp" bash bench/device/attn-bin-ab.sh
set -uo pipefail
mkdir -p "$OUT"
for r in $(seq 1 ${ROUNDS:-2}); do
  for c in ${CASES}; do
    IFS=: read -r model s pick <<< "$c"
    for side in OLD NEW; do
      bin=${!side}
      side_env=${side}_ENV
      log=$OUT/binab-$model-$s-$side-r$r.log
      env ${!side_env:-} timeout 120 "$bin/braid-bench-attn" --pick "$pick" --models "$model" --prompts "$s" --cases prompt --reps 30 \
        --out "${log%.log}.csv" > "$log" 2>&1
      echo "== $model S=$s $side round $r: $(grep -E 'braid:(stream|pdl-only)/' "$log" | awk '{printf "%s %s us; ", $1, $2}')"
    done
  done
done
