#!/usr/bin/env bash
# Where braid's Hopper GEMM loses to CUTLASS's own kernel on the same collective mainloop: ncu's warp
# state statistics (stall reasons), scheduler statistics and the SASS lines with the most stall
# samples, for braid's kernel and CUTLASS's, one launch each.
#   BIN=.carry/gemm M=1024 N=12288 K=6144 CONFIG=128x128 OUT=dir bash bench/device/gemm-stalls.sh
set -uo pipefail
BIN=${BIN:-build/tools}
M=${M:-1024}; N=${N:-12288}; K=${K:-6144}; CONFIG=${CONFIG:-128x128}
OUT=${OUT:-/tmp/gemm-stalls}
mkdir -p "$OUT"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section SourceCounters --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
top_sass() {  # the SASS lines with the most stall samples, with their share
  "$NCU" --import "$1" --page source --csv --print-source sass 2>/dev/null | python3 -c '
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
}
echo "== braid $CONFIG M=$M N=$N K=$K"
timeout 200 "$NCU" --clock-control none $SECTIONS --import-source yes -f -o "$OUT/braid" --kernel-name regex:hopper_gemm \
  --launch-skip 3 --launch-count 1 "$BIN/braid-gemm" --m $M --n $N --k $K --configs $CONFIG --no-cublas --reps 3 > "$OUT/braid-run.log" 2>&1
"$NCU" --import "$OUT/braid.ncu-rep" --page details 2>&1 | grep -v "^    ---" | head -150
top_sass "$OUT/braid.ncu-rep"
echo "== CUTLASS 128x128x64 cooperative M=$M N=$N K=$K"
timeout 250 "$NCU" --clock-control none $SECTIONS --import-source yes -f -o "$OUT/cutlass" --kernel-name regex:device_kernel \
  --launch-skip 3 --launch-count 1 "$BIN/braid-gemm" --m $M --n $N --k $K --configs none --reps 3 > "$OUT/cutlass-run.log" 2>&1
"$NCU" --import "$OUT/cutlass.ncu-rep" --page details 2>&1 | grep -v "^    ---" | head -150
top_sass "$OUT/cutlass.ncu-rep"
