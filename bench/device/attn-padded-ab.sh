#!/usr/bin/env bash
# The decode sweep with the output GEMM reading Attn padded (AttentionBlockProblem::attn_rows) against exactly M rows,
# same binary: every GPU test first (the gate), then the decode sweep padded (PyTorch just before), then exact and padded
# again against the same PyTorch rows.
#   SET=.carry/Q OUT=$OUT COMMIT=<hash> bash bench/device/attn-padded-ab.sh
set -uo pipefail
SET=${SET:-.carry/Q}
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
start_gated_run "$SET"
run() {  # run TAG [PEERS]
  CASES=decode BIN=$B OUT="$OUT/r" TAG=$1 PEERS=${2:-} LIMIT=200 bash bench/device/attn-run.sh | grep -E "exit|decode, B" | head -20
}
day=$(date +%Y%m%d)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z' | head -1)
run -padded1
peers="$OUT/r/attn-$gpu-$day-padded1-torch.csv"
BRAID_ATTN_ROWS=exact run -exact "$peers"
run -padded2 "$peers"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
