#!/usr/bin/env bash
# On the GPU machine: (1) the weight-streaming microbenchmark (bench/micro/weight_stream.cu): which
# strip widths / CTA counts / K-splits of W stream at full bandwidth; (2) braid's GEMM vs CUTLASS's
# own kernel (same collective mainloop) vs cuBLASLt on the GPT-3 GEMM 2 shape; (3) ncu: duration,
# DRAM bytes, L2 hit rate, L2 and tensor-pipe load of braid (column-/row-major) vs CUTLASS at M=1024,
# and braid's warp stalls at M=1.
#   BIN=.carry/bin OUT=out bash bench/device/gemm-diag.sh
set -uo pipefail
BIN=${BIN:-build}
OUT=${OUT:-out}
mkdir -p "$OUT"
nvcc -O3 -arch=sm_90 -o /tmp/weight_stream bench/micro/weight_stream.cu && /tmp/weight_stream | tee "$OUT/weight-stream.log"
$BIN/braid-gemm --m 1,1024,2048 --n 12288 --k 6144 --reps 10 \
  --configs 128x128,128x128-rowmajor,128x256,128x256-rowmajor,128x256-streamk,128x256-streamk-rowmajor 2>&1 | tee "$OUT/gemm-sweep2.log"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second"
{
for c in 128x128 128x128-rowmajor 128x256; do
  echo "-- braid $c M=1024"
  timeout 120 ncu --clock-control none --metrics $M --kernel-name regex:hopper_gemm --launch-skip 3 --launch-count 1 \
    $BIN/braid-gemm --m 1024 --n 12288 --k 6144 --configs $c --no-cublas --reps 3 2>&1 | grep -E "^\s+(gpu__|dram__|lts__|sm__)"
done
echo "-- CUTLASS 128x128x64 M=1024"
timeout 200 ncu --clock-control none --metrics $M --kernel-name regex:device_kernel --launch-skip 3 --launch-count 1 \
  $BIN/braid-gemm --m 1024 --n 12288 --k 6144 --configs none --reps 3 2>&1 | grep -E "^\s+(gpu__|dram__|lts__|sm__)|device_kernel" | head -9
} 2>&1 | tee "$OUT/ncu-compare.log"
S="--section WarpStateStats --section MemoryWorkloadAnalysis --section SpeedOfLight"
timeout 200 ncu --clock-control none $S --kernel-name regex:hopper_gemm --launch-skip 3 --launch-count 1 \
  $BIN/braid-gemm --m 1 --n 12288 --k 6144 --configs 128x128 --no-cublas --reps 3 > "$OUT/ncu-braid-m1.txt" 2>&1
grep -E "Duration|Throughput|Hit Rate|Stall|Warp Cycles Per|Issued Warp" "$OUT/ncu-braid-m1.txt" | head -30
