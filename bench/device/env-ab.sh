#!/usr/bin/env bash
# One environment switch off and on (AB_ENV=<VAR>: unset, then VAR=$AB_VALUE, default 1), same binaries,
# same peer rows:
# the attention block (WHAT=attn, bench/device/attn-run.sh) or the conv pairs (WHAT=conv, conv-run.sh),
# each run whole (tuning, checks, every variant), then bench/ab_table.py side by side. ROUNDS=2 repeats
# the pair of runs (run-to-run spread). Optionally the GPU tests first (TESTS=<gtest filter>). Extra
# arguments go to the benchmark.
#   BIN=/tmp/bin OUT=dir BRAID_COMMIT=<hash> WHAT=attn|conv AB_ENV=BRAID_STREAMK_ALL_CTAS [CASES=decode ...]
#     [TESTS='*'] [ROUNDS=1] bash bench/device/env-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/env-ab}
WHAT=${WHAT:-attn}
AB_ENV=${AB_ENV:?AB_ENV=<environment variable to set to 1 in the second arm>}
AB_VALUE=${AB_VALUE:-1}
on=${AB_ENV#BRAID_}; on=$(echo "$on" | tr 'A-Z_' 'a-z-'); [ "$AB_VALUE" = 1 ] || on="$on$AB_VALUE"
mkdir -p "$OUT"
log="$OUT/env-ab-$WHAT.log"
log_header "$log" "BIN=$BIN WHAT=$WHAT AB_ENV=$AB_ENV AB_VALUE=$AB_VALUE ROUNDS=${ROUNDS:-1} bash bench/device/env-ab.sh $*"
run_gpu_tests "$BIN" "$OUT" "$log" || exit $?
peers=""
for r in $(seq 1 "${ROUNDS:-1}"); do
  unset "$AB_ENV"
  PEERS="$peers" TAG="-r$r-default" bash "bench/device/$WHAT-run.sh" "$@" | tee -a "$log"
  [ -n "$peers" ] || peers=$(ls "$OUT"/*-r1-default-torch.csv 2>/dev/null | head -1)
  [ -n "$peers" ] || { echo "no peer CSV from the first run" | tee -a "$log"; exit 1; }
  export "$AB_ENV"="$AB_VALUE"
  PEERS="$peers" TAG="-r$r-$on" bash "bench/device/$WHAT-run.sh" "$@" | tee -a "$log"
  unset "$AB_ENV"
  a=$(ls "$OUT"/*-r$r-default.csv | head -1); b=$(ls "$OUT"/*-r$r-$on.csv | head -1)
  python3 bench/ab_table.py "$b" "$a" --labels "$on,default" --orderings "${ORDERINGS:-}" \
    | tee "$OUT/env-ab-$WHAT-r$r-table.txt" | tee -a "$log"
done
