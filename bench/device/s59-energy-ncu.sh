#!/usr/bin/env bash
# Session 59: where braid's GEMMs spend the energy that cuBLASLt's do not (bench/results/power-h200-20261129-f5d000a/):
# ncu of one launch each at GPT-3's W1 with GeLU, M = 2048 -- cuBLASLt (the heuristic's first algorithm), braid
# 256x128-t, braid 128x128-staged-pp -- instruction counts, shared-memory and L2 traffic, issue stalls.
#   SET=.carry/S59c OUT=$OUT COMMIT=<hash> bash bench/device/s59-energy-ncu.sh      (SET: new/braid-gemm.xz)
set -uo pipefail
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
start_run "${SET:-.carry/S59c}"
BIN=$B
mkdir -p $OUT/r
M=2048; N=6144; K=12288
SECTIONS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section InstructionStats --section WarpStateStats --section ComputeWorkloadAnalysis"
export SASS_GZIP=1
BRAID_LT_MAX_ALGOS=1 ncu_profile cublaslt --kernel-name regex:nvjet -- --configs none --act gelu
ncu_profile braid-256x128-t --kernel-name regex:hopper_gemm -- --configs 256x128-t --no-cublas --act gelu
ncu_profile braid-128x128-staged-pp --kernel-name regex:hopper_gemm -- --configs 128x128-staged-pp --no-cublas --act gelu
for n in cublaslt braid-256x128-t braid-128x128-staged-pp; do
  echo "== $n"
  grep -E "Duration|SM Frequency|Executed Instructions  |Issue Slots Busy|Memory Throughput|L1/TEX Hit|L2 Hit|Shared Memory|DRAM Throughput|Compute \(SM\) Throughput|Warp Cycles Per Issued" $OUT/r/$n-details.txt | head -20
done
cd $OUT && tar czf ncu.tgz r && rm -rf r
