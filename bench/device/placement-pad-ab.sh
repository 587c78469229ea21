#!/usr/bin/env bash
# Placement clusters for any CTA count (session 39: launches padded to whole clusters, the CTAs past the
# schedule idle): the GPU tests, then the MLP chains (MLP_TOKENS) and the conv pairs with the default
# (clusters of 4) against plain launches (BRAID_PLACEMENT_CLUSTER=1), same binaries, one device call.
#   BIN=/tmp/new OUT=$OUT BRAID_COMMIT=<hash> bash bench/device/placement-pad-ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source bench/device/common.sh
BIN=${BIN:-/tmp/new}
mkdir -p "$OUT/p"
NEW_COMMIT=${BRAID_COMMIT:-?} gpu_tests_gate "$BIN" "$OUT/p" || exit 1
for p in 4 1; do
  for m in gpt3 llama; do
    BRAID_PLACEMENT_CLUSTER=$p timeout 100 "$BIN/braid-bench-mlp" --models $m --tokens "${MLP_TOKENS:-64,128,256,384,512}" \
      --reps 20 --csv "$OUT/p/mlp-$m-p$p.csv" > "$OUT/p/mlp-$m-p$p.log" 2>&1
    echo "== $m p$p: $(grep -E 'braid  ' "$OUT/p/mlp-$m-p$p.log" | awk '{print $2, $(NF-6)}' | tr '\n' ' ')"
  done
done
OUT=$OUT/p WHAT=conv AB_ENV=BRAID_PLACEMENT_CLUSTER AB_VALUE=1 ROUNDS=1 BIN=$BIN LAYERS=${LAYERS:-512x7,256x14,128x28} \
  BATCHES=${BATCHES:-8,12,20} LIMIT=150 bash bench/device/env-ab.sh > "$OUT/p/conv-ab.txt" 2>&1
grep -A12 '^# A = ' "$OUT/p/conv-ab.txt" | cut -c1-100
(cd "$OUT" && tar czf p.tgz p && rm -rf p)
