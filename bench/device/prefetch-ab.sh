#!/usr/bin/env bash
# kPrefetchL2 on and off (BRAID_NO_PREFETCH_L2=1), same binaries, same peer rows: the attention block
# (WHAT=attn, bench/device/attn-run.sh) or the conv pairs (WHAT=conv, conv-run.sh), each run whole
# (tuning, checks, every variant) with the switch on, then off, and bench/ab_table.py side by side.
# Optionally the GPU tests first (TESTS=<gtest filter>). Extra arguments go to the benchmark.
#   BIN=/tmp/bin OUT=dir BRAID_COMMIT=<hash> WHAT=attn|conv [CASES=decode ...] [TESTS='*'] bash bench/device/prefetch-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/prefetch-ab}
WHAT=${WHAT:-attn}
mkdir -p "$OUT"
log="$OUT/prefetch-ab-$WHAT.log"
log_header "$log" "BIN=$BIN WHAT=$WHAT bash bench/device/prefetch-ab.sh $*"
run_gpu_tests "$BIN" "$OUT" "$log" || exit $?
unset BRAID_NO_PREFETCH_L2
TAG=-prefetch bash "bench/device/$WHAT-run.sh" "$@" | tee -a "$log"
peers=$(ls "$OUT"/*-prefetch-torch.csv 2>/dev/null | head -1)
[ -n "$peers" ] || { echo "no peer CSV from the first run" | tee -a "$log"; exit 1; }
BRAID_NO_PREFETCH_L2=1 PEERS="$peers" TAG=-noprefetch bash "bench/device/$WHAT-run.sh" "$@" | tee -a "$log"
on=$(ls "$OUT"/*-prefetch.csv | head -1); off=$(ls "$OUT"/*-noprefetch.csv | head -1)
python3 bench/ab_table.py "$off" "$on" --labels noprefetch,prefetch --orderings "${ORDERINGS:-}" | tee "$OUT/prefetch-ab-$WHAT-table.txt" | tee -a "$log"
