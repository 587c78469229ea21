#!/usr/bin/env bash
# What CUTLASS's pingpong 128x128 still has over braid's staged pingpong (session 37): ncu of one launch
# each at GPT-3's attention output GEMM (M=1024, N=12288, K=1536) -- braid 128x128-staged-pp, braid
# 128x128 (cooperative), CUTLASS pp-128x128 -- and braid's per-unit traces of both braid kernels.
#   BIN=/tmp/new OUT=out bash bench/device/pp-gap-ncu.sh
set -uo pipefail
BIN=${BIN:-build/tools}
mkdir -p $OUT/r
M=${M:-1024}; N=${N:-12288}; K=${K:-1536}
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis --section InstructionStats --section LaunchStats"
source "$(dirname "$0")/common.sh"
ncu_profile braid-staged-pp --kernel-name regex:hopper_gemm -- --configs 128x128-staged-pp --no-cublas
ncu_profile braid-coop --kernel-name regex:hopper_gemm -- --configs 128x128 --no-cublas
ncu_profile cutlass-pp --kernel-name-base demangled --kernel-name regex:Pingpong -- --configs none --cutlass-shapes pp-128x128
timeout 120 $BIN/braid-gemm --m $M --n $N --k $K --configs 128x128,128x128-staged-pp --no-cublas --reps 20 \
  --unit-trace $OUT/r/units > $OUT/r/unit-trace.log 2>&1
gzip -f $OUT/r/units*.csv 2>/dev/null
cd $OUT && tar czf all.tgz r && rm -rf r
