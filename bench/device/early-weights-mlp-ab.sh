#!/usr/bin/env bash
# Early weights (hopper_gemm_kernel; BRAID_EARLY_WEIGHTS) off against on in the MLP benchmark, one carried build
# (/tmp/new), ROUNDS rounds of OFF then ON, for the token counts where the tuner picks a Hopper GEMM under PDL
# (GPT_TOKENS, LLAMA_TOKENS): every variant's time per side, each checked against the reference by the benchmark.
#   OUT=out GPT_TOKENS=32,1536 LLAMA_TOKENS=64,384,1024 bash bench/device/early-weights-mlp-ab.sh
set -uo pipefail
mkdir -p "$OUT"
for r in $(seq 1 ${ROUNDS:-1}); do
  for side in 0 1; do
    for m in gpt3 llama; do
      toks=GPT_TOKENS; [ $m = llama ] && toks=LLAMA_TOKENS
      log=$OUT/mlp-$m-early$side-r$r.log
      BRAID_EARLY_WEIGHTS=$side timeout 280 /tmp/new/braid-bench-mlp --models $m --tokens ${!toks} --reps 20 \
        --csv ${log%.log}.csv > $log 2>&1
      echo "== $m early weights $side round $r"; grep -E "pdl-only/|  braid  " $log | grep -v skinny | cut -c1-110 | head -40
    done
  done
done
