#!/usr/bin/env bash
# What CUTLASS's pingpong 128x128 still has over braid's staged pingpong (session 37): ncu of one launch
# each at GPT-3's attention output GEMM (M=1024, N=12288, K=1536) -- braid 128x128-staged-pp, braid
# 128x128 (cooperative), CUTLASS pp-128x128 -- and braid's per-unit traces of both braid kernels.
#   BIN=/tmp/new OUT=out bash bench/device/pp-gap-ncu.sh
set -uo pipefail
BIN=${BIN:-build/tools}
mkdir -p $OUT/r
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=${M:-1024}; N=${N:-12288}; K=${K:-1536}
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis --section InstructionStats --section LaunchStats"
prof() {  # name, kernel filter args..., then -- braid-gemm args
  local name=$1; shift
  local filt=(); while [ "$1" != "--" ]; do filt+=("$1"); shift; done; shift
  timeout 150 $NCU --clock-control none $SECTIONS --import-source yes -f -o $OUT/r/$name "${filt[@]}" \
    --launch-skip 3 --launch-count 1 $BIN/braid-gemm --m $M --n $N --k $K --reps 3 "$@" > $OUT/r/$name-run.log 2>&1
  $NCU --import $OUT/r/$name.ncu-rep --page details > $OUT/r/$name-details.txt 2>&1
  $NCU --import $OUT/r/$name.ncu-rep --page source --csv --print-source sass > $OUT/r/$name-sass.csv 2>/dev/null
  python3 bench/device/ncu_top_sass.py 40 < $OUT/r/$name-sass.csv > $OUT/r/$name-top.txt 2>&1
  gzip -f $OUT/r/$name-sass.csv; rm -f $OUT/r/$name.ncu-rep
}
prof braid-staged-pp --kernel-name regex:hopper_gemm -- --configs 128x128-staged-pp --no-cublas
prof braid-coop --kernel-name regex:hopper_gemm -- --configs 128x128 --no-cublas
prof cutlass-pp --kernel-name-base demangled --kernel-name regex:Pingpong -- --configs none --cutlass-shapes pp-128x128
timeout 120 $BIN/braid-gemm --m $M --n $N --k $K --configs 128x128,128x128-staged-pp --no-cublas --reps 20 \
  --unit-trace $OUT/r/units > $OUT/r/unit-trace.log 2>&1
gzip -f $OUT/r/units*.csv 2>/dev/null
cd $OUT && tar czf all.tgz r && rm -rf r
