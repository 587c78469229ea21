#!/usr/bin/env bash
# ncu comparison of braid's GEMM with CUTLASS's own kernel (same collective mainloop) on one shape:
# duration, DRAM bytes, L2 hit rate and load, tensor-pipe activity, SM clock.
#   BIN=.carry/bin M=1024 N=12288 K=6144 CONFIGS="128x128 128x256" bash bench/device/gemm-ncu.sh
set -uo pipefail
BIN=${BIN:-build}
M=${M:-1024}; N=${N:-12288}; K=${K:-6144}
MET="gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second"
for c in ${CONFIGS:-128x128 128x256}; do
  echo "-- braid $c M=$M N=$N K=$K"
  timeout 120 ncu --clock-control none --metrics $MET --kernel-name regex:hopper_gemm --launch-skip 3 --launch-count 1 \
    $BIN/braid-gemm --m $M --n $N --k $K --configs $c --no-cublas --reps 3 2>&1 | grep -E "^\s+(gpu__|dram__|lts__|sm__)"
done
echo "-- CUTLASS 128x128x64 M=$M N=$N K=$K"
timeout 200 ncu --clock-control none --metrics $MET --kernel-name regex:device_kernel --launch-skip 3 --launch-count 1 \
  $BIN/braid-gemm --m $M --n $N --k $K --configs none --reps 3 2>&1 | grep -E "^\s+(gpu__|dram__|lts__|sm__)"
