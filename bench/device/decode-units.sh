#!/usr/bin/env bash
# What paces a decode output GEMM's units after its PDL wait (session 54): every GPU test (the gate), then fixed decode
# picks with BRAID_SKINNY_PHASES=units (SkinnyParams::phase_units: unit 0's X issue, units 0-2 in, unit 0 done), under
# $OUT/r as r.tgz.   SET=.carry/U COMMIT=<hash> OUT=out [PICKS=...] bash bench/device/decode-units.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
start_gated_run ${SET:-.carry/U}
mkdir -p $OUT/r/units
for c in ${PICKS:-llama:1:512:skinny-a1s8-pk-lt,d8-c16,skinny-a2s4 llama:1:512:skinny-a1s8-pk-lt,d8-c16,skinny-a1s8 gpt3:1:512:skinny-a1s8-dsm-pk-lt,d8-c16,skinny-a1s8}; do
  IFS=: read -r model b cache pick <<< "$c"
  log=$OUT/r/units/$model-$b-$cache-${pick//,/+}.log
  BRAID_SKINNY_PHASES=units timeout 60 $B/braid-bench-attn --pick "$pick" --models $model --cases decode --caches $cache \
    --batches $b --reps 30 > "$log" 2>&1
  echo "== $model B=$b S=$cache $pick"
  grep -E "skinny phases braid:(stream|pdl-only)/" "$log" | cut -c1-330
done
(cd $OUT && tar czf r.tgz r && rm -rf r)
