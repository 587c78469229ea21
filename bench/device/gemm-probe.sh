#!/usr/bin/env bash
# On the GPU machine: correctness of braid's Hopper GEMM (GPU tests), then single-GEMM sweeps of
# every tile configuration against cuBLASLt for the MLP shapes, and an ncu read of DRAM throughput
# for the T=1 weight-streaming case. Binaries come prebuilt in $BIN (carried); logs go to $OUT.
#   BIN=.carry/bin OUT=out bash bench/device/gemm-probe.sh
set -uo pipefail
BIN=${BIN:-build}
OUT=${OUT:-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/device.txt"
echo "== GPU tests (Hopper)"
timeout 240 "$BIN/braid_gpu_tests" --gtest_filter='Hopper*' > "$OUT/gpu-tests.log" 2>&1
echo "exit $?"; grep -E "^\[  (PASSED|FAILED)|FAILED|OK \]" "$OUT/gpu-tests.log" | tail -12
G="$BIN/braid-gemm --reps 15 --configs ${CONFIGS:-all}"
{
  echo "== GPT-3 GEMM 2 shape (N=12288, K=6144)"
  $G --m ${MS:-1,64,256,512,1024,2048} --n 12288 --k 6144
  echo "== GPT-3 GEMM 1 shape (N=6144, K=12288, GeLU)"
  $G --m ${MS:-1,256,512,768,1024,2048} --n 6144 --k 12288 --act gelu
  echo "== LLaMA GEMM 1 shape (N=5504, K=8192)"
  $G --m ${MS:-1,256,1024} --n 5504 --k 8192
  echo "== LLaMA GEMM 2 shape (N=8192, K=2752)"
  $G --m ${MS:-1,256,1024} --n 8192 --k 2752
} 2>&1 | tee "$OUT/gemm-sweep.log"
if [ -n "${NCU:-}" ] && command -v ncu >/dev/null; then
  echo "== ncu: T=1 GEMM 2 shape, braid data-parallel vs stream-K vs cuBLASLt"
  M="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size"
  for c in 128x128 128x128-streamk 128x256-streamk; do
    timeout 120 ncu --clock-control none --metrics $M --kernel-name regex:hopper_gemm --launch-skip 3 --launch-count 1 \
      $BIN/braid-gemm --m 1 --n 12288 --k 6144 --configs $c --no-cublas --reps 3 2>&1 | grep -E "hopper_gemm|duration|dram__|lts__|sm__|grid_size" | head -8
  done
  # cuBLASLt: the first kernels its heuristic's algorithms launch (names and DRAM throughput)
  timeout 120 ncu --clock-control none --metrics $M --kernel-name regex:'nvjet|gemm|Kernel' --launch-count 4 \
    $BIN/braid-gemm --m 1 --n 12288 --k 6144 --configs none --reps 3 2>&1 | grep -vE "^==PROF==|^  M=|^braid" | head -40
fi 2>&1 | tee "$OUT/ncu.log"
