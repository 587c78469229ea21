#!/usr/bin/env bash
# GEMM 2 of the MLP reading Hid with padded rows (GemmArgs::a_rows, workloads::mlp_hid_rows) against exactly T rows,
# same binary: every GPU test first (the gate), then ROUNDS interleaved rounds of braid-bench-mlp --show-configs at
# few tokens with BRAID_MLP_HID_ROWS=exact and with the default (padded), then the whole MLP sweep (padded).
#   SET=.carry/P OUT=$OUT COMMIT=<hash> [TOKENS=1,2,4,8,16,32,64] [ROUNDS=2] bash bench/device/padded-rows-ab.sh
set -uo pipefail
SET=${SET:-.carry/P}
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
start_gated_run "$SET"
for round in $(seq 1 ${ROUNDS:-2}); do
  for mode in exact padded; do
    log="$OUT/r/ab-$mode-r$round.log"
    if [ $mode = exact ]; then export BRAID_MLP_HID_ROWS=exact; else unset BRAID_MLP_HID_ROWS; fi
    timeout 150 $B/braid-bench-mlp --tokens ${TOKENS:-1,2,4,8,16,32,64} --show-configs --reps 20 \
      --csv "$OUT/r/ab-$mode-r$round.csv" > "$log" 2>&1
    echo "round $round $mode: exit $? ($(grep -c 'braid  ' "$log") cases)"
  done
done
unset BRAID_MLP_HID_ROWS
BIN=$B OUT="$OUT/r/sweep" LIMIT=200 bash bench/device/mlp-run.sh
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
