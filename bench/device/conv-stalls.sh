#!/usr/bin/env bash
# Where braid's Hopper convolution spends a k-step: ncu's speed-of-light, memory, warp-state (stall
# reasons) and scheduler sections and the SASS lines with the most stall samples, for one launch of
# each configuration in CONFIGS on one layer/batch (the 4th launch: past braid-bench-conv's warm-up).
#   BIN=.carry/bin LAYER=64x56 BATCH=32 CONFIGS="128x64-rowmajor 128x64-staged-rowmajor" OUT=dir \
#     bash bench/device/conv-stalls.sh
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
  "$NCU" --import "$OUT/$tag.ncu-rep" --page source --csv --print-source sass 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
hdr = next((i for i, r in enumerate(rows) if "Source" in r), None)
if hdr is None: sys.exit("no source page")
h = rows[hdr]; body = rows[hdr + 1:]
src = h.index("Source")
col = next(i for i, c in enumerate(h) if c.startswith("Warp Stall Sampling (All"))
tot = sum(float(r[col] or 0) for r in body if len(r) > col)
top = sorted(body, key=lambda r: -float(r[col] or 0) if len(r) > col else 0)[:25]
print(f"total stall samples {tot:.0f}")
for r in top: print(f"{100*float(r[col] or 0)/tot:5.1f}%  {r[src][:110]}")
'
done
