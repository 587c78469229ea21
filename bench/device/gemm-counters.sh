#!/usr/bin/env bash
# Hardware counters of braid's GEMM, CUTLASS's kernels and cuBLASLt's on one shape, one launch each
# (ncu): time, SM clock, tensor-pipe activity, DRAM and L2 traffic, instructions. To tell a slower
# mainloop from more memory traffic (tile order, L2 reuse) or a lower clock (power).
#   BIN=/tmp/bin OUT=dir [M=1024 N=6144 K=12288] [CONFIGS=128x128] [SHAPES=pp-128x128] bash bench/device/gemm-counters.sh
set -uo pipefail
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/gemm-counters}
M=${M:-1024}; N=${N:-6144}; K=${K:-12288}
CONFIGS=${CONFIGS:-128x128}
SHAPES=${SHAPES:-pp-128x128}
mkdir -p "$OUT"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
METRICS=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct,smsp__inst_executed.sum,launch__grid_size,launch__cluster_dim_x,launch__registers_per_thread
echo "== M=$M N=$N K=$K (braid $CONFIGS, CUTLASS coop-128x128 + $SHAPES, cuBLASLt's first candidates)"
# skip the first launches of each kernel (the correctness run, warm-up): take the 4th
timeout ${NCU_LIMIT:-240} "$NCU" --clock-control none --kernel-name "regex:${KERNELS:-hopper_gemm|device_kernel}" \
  --launch-count ${LAUNCHES:-40} --metrics $METRICS --csv \
  "$BIN/braid-gemm" --m $M --n $N --k $K --configs "$CONFIGS" --cutlass-shapes "$SHAPES" --reps 3 2>/dev/null \
  | python3 "$(dirname "$0")/ncu_launches.py" ns=gpu__time_duration.sum clk=sm__cycles_elapsed.avg.per_second \
      tensor%=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active dramR=dram__bytes_read.sum \
      dramW=dram__bytes_write.sum "L2rd(tex)=lts__t_sectors_srcunit_tex_op_read.sum" L2rd=lts__t_sectors_op_read.sum \
      L2hit%=lts__t_sector_op_read_hit_rate.pct inst=smsp__inst_executed.sum grid=launch__grid_size \
      clu=launch__cluster_dim_x regs=launch__registers_per_thread
