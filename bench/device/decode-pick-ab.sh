#!/usr/bin/env bash
# Decode attention blocks with fixed stage configurations, one braid-bench-attn run per pick (every chain
# variant of that pick: stream, PDL alone, its late-trigger copy, the synchronized ones), for A/B of a
# stage's configuration inside the chain -- e.g. the output GEMM's ring depth.
#   BIN=/tmp/old PEERS=<an attn -torch.csv> BRAID_COMMIT=<hash> OUT=out \
#     PICKS="skinny-a1s4,d8-c16,skinny-a1s4 skinny-a1s4,d8-c16,skinny-a1s8" bash bench/device/decode-pick-ab.sh
set -uo pipefail
BIN=${BIN:-build/tools}
mkdir -p "$OUT/r"
i=0
for pick in $PICKS; do
  i=$((i+1))
  { echo "# device: $(nvidia-smi --query-gpu=name --format=csv,noheader)  date: $(date -u +%FT%H:%MZ)  commit: ${BRAID_COMMIT:-unknown}"
    echo "# command: $BIN/braid-bench-attn --peers $PEERS --cases decode --reps ${REPS:-20} --pick $pick"
    timeout ${LIMIT:-130} $BIN/braid-bench-attn --peers "$PEERS" --out "$OUT/r/pick$i.csv" --reps ${REPS:-20} --cases decode \
      --commit "${BRAID_COMMIT:-unknown}" --pick "$pick"
    echo "exit $?"; } > "$OUT/r/pick$i.log" 2>&1
  echo "pick$i $pick: $(grep -c '^  braid ' "$OUT/r/pick$i.log") cases, $(tail -1 "$OUT/r/pick$i.log")"
done
(cd "$OUT" && tar czf decode-pick-ab.tgz r && rm -rf r)
