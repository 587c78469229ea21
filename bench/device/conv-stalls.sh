#!/usr/bin/env bash
# Where braid's Hopper convolution spends a k-step: ncu's speed-of-light, memory, warp-state (stall
# reasons) and scheduler sections and the SASS lines with the most stall samples, for one launch of
# each configuration in CONFIGS on one layer/batch (the 4th launch: past braid-bench-conv's warm-up).
#   BIN=.carry/bin LAYER=64x56 BATCH=32 CONFIGS="128x64-rowmajor 128x64-staged-rowmajor" OUT=dir \
#     bash bench/device/conv-stalls.sh          (KEEP_REP=1 keeps the .ncu-rep files)
set -uo pipefail
BIN=${BIN:-build/tools}
LAYER=${LAYER:-64x56}; BATCH=${BATCH:-32}; CONFIGS=${CONFIGS:-128x64-rowmajor}
OUT=${OUT:-/tmp/conv-stalls}
mkdir -p "$OUT"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section SourceCounters --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
for cfg in $CONFIGS; do
  tag="conv-$LAYER-N$BATCH-$cfg"
  echo "== braid conv $LAYER N=$BATCH $cfg"
  timeout 200 "$NCU" --clock-control none $SECTIONS --import-source yes -f -o "$OUT/$tag" --kernel-name regex:hopper_gemm \
    --launch-skip 3 --launch-count 1 "$BIN/braid-bench-conv" --layers "$LAYER" --batches "$BATCH" --configs "$cfg" \
    --reps 6 > "$OUT/$tag-run.log" 2>&1
  "$NCU" --import "$OUT/$tag.ncu-rep" --page details 2>&1 | grep -v "^    ---" | head -160
  "$NCU" --import "$OUT/$tag.ncu-rep" --page source --csv --print-source sass 2>/dev/null > "$OUT/$tag-sass.csv"
  python3 "$(dirname "$0")/ncu_top_sass.py" < "$OUT/$tag-sass.csv"
  gzip -f "$OUT/$tag-sass.csv"  # (per-instruction samples and execution counts, for bench/ncu_regions.py)
  [ "${KEEP_REP:-0}" = 1 ] || rm -f "$OUT/$tag.ncu-rep"
done
