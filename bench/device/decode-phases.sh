#!/usr/bin/env bash
# Per-tile traces of fixed decode attention-block chains (QKV skinny GEMM -> decode attention -> output skinny GEMM),
# with each tile's mainloop end (the skinny GEMM: its last MMA before the reduction; the decode kernel: the key
# loop's end before the merge), to split the time after each stage's wait. Binaries from SET (unpack.py): each of
# SIDES (sub-folders: old new) runs every pick, ROUNDS times interleaved; traces from the first round.
#   SET=.carry/L OUT=out SIDES="old new" ROUNDS=2 PICKS="llama:1:512:skinny-a1s4-lt,d8-c16,skinny-a1s4-dsm ..." \
#     bash bench/device/decode-phases.sh
set -uo pipefail
python3 bench/device/unpack.py ${SET:-.carry/L} /tmp >/dev/null
mkdir -p $OUT/ph
for r in $(seq 1 ${ROUNDS:-1}); do
  for c in $PICKS; do
    IFS=: read -r model b cache pick <<< "$c"
    for side in ${SIDES:-new}; do
      log=$OUT/ph/$side-$model-$b-$cache-${pick//,/+}-r$r.log
      tr=(); [ $r = 1 ] && { mkdir -p $OUT/ph/tr-$side; tr=(--trace-dir $OUT/ph/tr-$side); }
      timeout 60 /tmp/$side/braid-bench-attn --pick "$pick" --models $model --cases decode --caches $cache --batches $b \
        --reps 40 "${tr[@]}" > "$log" 2>&1
      echo "r$r $side $model B=$b S=$cache $pick: $(grep -E 'braid:(stream|pdl-only|tilesync-pdl)/|FAIL|IDENT' "$log" | awk '{printf "%s %s; ", $1, $2}')"
    done
  done
done
cd $OUT && tar czf ph.tgz ph && rm -rf ph
