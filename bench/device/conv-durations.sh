#!/usr/bin/env bash
# Kernel-only durations (ncu gpu__time_duration, caches flushed before each launch as ncu does by
# default) of braid's convolution for each configuration in CONFIGS on one layer/batch: what a
# configuration costs without the ~7 us that an event pair around a launch adds (bench/micro/tma_a_loads.cu
# measures that floor). Three launches past braid-bench-conv's first three.
#   BIN=.carry/bin LAYER=512x7 BATCH=24 CONFIGS="128x64-rowmajor 128x128-sk2-rowmajor" bash bench/device/conv-durations.sh
set -uo pipefail
BIN=${BIN:-build/tools}
LAYER=${LAYER:-512x7}; BATCH=${BATCH:-24}; CONFIGS=${CONFIGS:-128x64-rowmajor}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for cfg in $CONFIGS; do
  d=$(timeout 120 "$NCU" --clock-control none --metrics gpu__time_duration.sum --kernel-name regex:hopper_gemm \
        --launch-skip 3 --launch-count 3 --csv "$BIN/braid-bench-conv" --layers "$LAYER" --batches "$BATCH" \
        --configs "$cfg" --reps 4 2>/dev/null | awk -F'","' '/gpu__time_duration/{gsub(/"/,"",$NF); printf "%s%s ", $NF, $(NF-1)}')
  echo "$LAYER N=$BATCH $cfg kernel_us: $d"
done
