#!/usr/bin/env bash
# Where a decode attention-block chain's time goes on the GPU machine: for each pick (model:B:cache:qkv,attn,out),
# the PDL-alone and stream-order chains with the skinny GEMMs' per-CTA phase stamps (BRAID_SKINNY_PHASES: entry, W
# issued, waited, unit 0/3/last in, last MMA, end, from the QKV GEMM's first entry) and the decode kernel's own
# (BRAID_ATTN_PHASES: from each CTA's entry), and per-tile traces. Binaries from SET (unpack.py) sub-folder SIDE.
#   SET=.carry/D SIDE=new OUT=out PICKS="llama:1:512:skinny-a1s4-pk-lt,d8-c16,skinny-a2s4 ..." bash bench/device/decode-diag.sh
set -uo pipefail
python3 bench/device/unpack.py ${SET:-.carry/D} /tmp >/dev/null
B=/tmp/${SIDE:-new}/braid-bench-attn
mkdir -p $OUT/dd/tr
for c in $PICKS; do
  IFS=: read -r model b cache pick <<< "$c"
  log=$OUT/dd/$model-$b-$cache-${pick//,/+}.log
  BRAID_SKINNY_PHASES=1 BRAID_ATTN_PHASES=1 timeout 90 $B --pick "$pick" --models $model --cases decode --caches $cache \
    --batches $b --reps ${REPS:-40} --trace-dir $OUT/dd/tr > "$log" 2>&1
  echo "== $model B=$b S=$cache $pick"
  grep -E 'braid:(stream|pdl-only)/|phases|trace |FAIL|IDENT' "$log" | cut -c1-400
done
cd $OUT && tar czf dd.tgz dd && rm -rf dd
