#!/usr/bin/env bash
# Pingpong vs cooperative on the attention's output GEMMs (short K), braid and CUTLASS, and ncu
# source-level stall samples of braid's 128x128-pp, its 128x128 and CUTLASS's pp-128x128 at GPT-3 out
# M=2048 (session 37: why braid's pingpong was slower). BIN set by the caller via .carry/S37.
set -uo pipefail
python3 bench/device/unpack.py .carry/S37 /tmp >/dev/null
B=/tmp/cur
mkdir -p $OUT/r
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for nk in "12288 1536" "8192 1024"; do set -- $nk
  timeout 150 $B/braid-gemm --m 512,1024,2048 --n $1 --k $2 --configs 128x128,128x128-pp,128x128-staged,128x256-staged \
    --cutlass-shapes pp-128x128,coop-128x128,coop-128x256,coop-256x128-c2,pp-64x256 --reps 30 >> $OUT/r/out-gemm-pp.log 2>&1
done
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section ComputeWorkloadAnalysis"
timeout 120 $NCU --clock-control none $SECTIONS --import-source yes -f -o $OUT/r/braid-pp --kernel-name regex:hopper_gemm \
  --launch-skip 3 --launch-count 1 $B/braid-gemm --m 2048 --n 12288 --k 1536 --configs 128x128-pp --no-cublas --reps 3 > $OUT/r/ncu-run.log 2>&1
timeout 120 $NCU --clock-control none $SECTIONS --import-source yes -f -o $OUT/r/braid-coop --kernel-name regex:hopper_gemm \
  --launch-skip 3 --launch-count 1 $B/braid-gemm --m 2048 --n 12288 --k 1536 --configs 128x128 --no-cublas --reps 3 >> $OUT/r/ncu-run.log 2>&1
timeout 120 $NCU --clock-control none $SECTIONS --import-source yes -f -o $OUT/r/cutlass-pp --kernel-name-base demangled --kernel-name regex:Pingpong \
  --launch-skip 3 --launch-count 1 $B/braid-gemm --m 2048 --n 12288 --k 1536 --configs none --cutlass-shapes pp-128x128 --reps 3 >> $OUT/r/ncu-run.log 2>&1
for r in braid-pp braid-coop cutlass-pp; do
  $NCU --import $OUT/r/$r.ncu-rep --page details > $OUT/r/$r-details.txt 2>&1
  $NCU --import $OUT/r/$r.ncu-rep --page source --csv --print-source sass > $OUT/r/$r-sass.csv 2>/dev/null
  python3 bench/device/ncu_top_sass.py 40 < $OUT/r/$r-sass.csv > $OUT/r/$r-top.txt 2>&1
  rm -f $OUT/r/$r.ncu-rep
done
cd $OUT && tar czf all.tgz r && rm -rf r
