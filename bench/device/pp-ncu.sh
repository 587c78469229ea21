#!/usr/bin/env bash
# Pingpong vs cooperative on the attention's output GEMMs (short K), braid and CUTLASS, and ncu
# source-level stall samples of braid's 128x128-pp, its 128x128 and CUTLASS's pp-128x128 at GPT-3 out
# M=2048 (session 37: why braid's pingpong was slower). BIN set by the caller via .carry/S37.
set -uo pipefail
python3 bench/device/unpack.py .carry/S37 /tmp >/dev/null
B=/tmp/cur
mkdir -p $OUT/r
for nk in "12288 1536" "8192 1024"; do set -- $nk
  timeout 150 $B/braid-gemm --m 512,1024,2048 --n $1 --k $2 --configs 128x128,128x128-pp,128x128-staged,128x256-staged \
    --cutlass-shapes pp-128x128,coop-128x128,coop-128x256,coop-256x128-c2,pp-64x256 --reps 30 >> $OUT/r/out-gemm-pp.log 2>&1
done
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section ComputeWorkloadAnalysis"
BIN=$B M=2048 N=12288 K=1536 SASS_GZIP=0
source "$(dirname "$0")/common.sh"
ncu_profile braid-pp --kernel-name regex:hopper_gemm -- --configs 128x128-pp --no-cublas
ncu_profile braid-coop --kernel-name regex:hopper_gemm -- --configs 128x128 --no-cublas
ncu_profile cutlass-pp --kernel-name-base demangled --kernel-name regex:Pingpong -- --configs none --cutlass-shapes pp-128x128
cd $OUT && tar czf all.tgz r && rm -rf r
