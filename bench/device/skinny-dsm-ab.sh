#!/usr/bin/env bash
# A/B of the skinny GEMM's cluster (DSMEM) reduction (SkinnyConfig::dsmem, "-dsm") against the global
# reduction: (1) the decode attention block with fixed configurations (braid-bench-attn --pick), two rounds
# in alternation; (2) the MLP at T = 1, 8 with both forms among the skinny candidates (--show-configs:
# every GEMM configuration's time).
#   BIN=.carry/bin OUT=out bash bench/device/skinny-dsm-ab.sh
set -uo pipefail
BIN=${BIN:-build/tools}; OUT=${OUT:-out}; mkdir -p "$OUT"
for round in 1 2; do
  for arm in "gpt3 skinny-a2s4 skinny-a2s4" "gpt3 skinny-a2s4-dsm skinny-a2s4-dsm" \
             "llama skinny-a1s4 skinny-a1s4" "llama skinny-a1s4-dsm skinny-a1s4-dsm" "llama skinny-a1s4-dsm skinny-a2s4-dsm"; do
    set -- $arm
    log="$OUT/dsm-$1-$2-$3-r$round.log"
    timeout 100 "$BIN/braid-bench-attn" --models $1 --cases decode --caches 512,2048 --batches 1,4 --reps 30 \
      --pick "$2,d8-c8,$3" > "$log" 2>&1
    echo "== $1 qkv=$2 out=$3 round $round (exit $?)"
    grep -E "^\[|braid:(stream|pdl-only)/" "$log" | \
      awk '/^\[/{printf "%s %s\n", $3, $4} /braid:/{split($1,a,"/"); printf "   %-22s %s\n", a[1], $2}'
  done
done
timeout 200 "$BIN/braid-bench-mlp" --tokens 1,8 --reps 20 --show-configs --skinny a1s4,a1s4-dsm,a2s4,a2s4-dsm \
  > "$OUT/dsm-mlp.log" 2>&1
echo "== mlp (exit $?)"; grep -E "skinny|best|T=" "$OUT/dsm-mlp.log" | head -60
