#!/usr/bin/env bash
# ncu of braid's skinny GEMM on LLaMA's W1 at several row counts (why it slows down with M while its
# loads and MMAs alone do not: braid-micro-weight-stream xrows): duration, DRAM, warp stall reasons and
# the SASS lines with the most stall samples, one launch per M.
#   BIN=.carry/bin OUT=dir MS="8 32" CONFIG=a1s4-wg bash bench/device/skinny-ncu.sh
set -uo pipefail
BIN=${BIN:-build}; OUT=${OUT:-/tmp/skinny-ncu}; mkdir -p "$OUT"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats --section SourceCounters --section MemoryWorkloadAnalysis"
for M in ${MS:-8 32}; do
  echo "== skinny-${CONFIG:-a1s4-wg} M=$M"
  timeout 200 "$NCU" --clock-control none $SECTIONS --import-source yes -f -o "$OUT/skinny-M$M" --kernel-name regex:skinny_gemm \
    --launch-skip 2 --launch-count 1 "$BIN/braid-micro-weight-stream" 3 op $M ${CONFIG:-a1s4-wg} > "$OUT/run-M$M.log" 2>&1
  "$NCU" --import "$OUT/skinny-M$M.ncu-rep" --page details 2>&1 | grep -E "Duration|DRAM Through|Registers|Warp Cycles Per Issued|Stall|Issued Ipc|No Eligible|Executed Instructions  " | head -40
  "$NCU" --import "$OUT/skinny-M$M.ncu-rep" --page source --csv --print-source sass 2>/dev/null | python3 "$(dirname "$0")/ncu_top_sass.py" 30
done
