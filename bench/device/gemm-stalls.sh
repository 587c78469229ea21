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
  "$NCU" --import "$1" --page source --csv --print-source sass 2>/dev/null | python3 "$(dirname "$0")/ncu_top_sass.py"
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
