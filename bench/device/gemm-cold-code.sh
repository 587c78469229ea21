#!/usr/bin/env bash
# The kernel-switch penalty, braid against cuBLASLt: (1) each GEMM of the attention and MLP chains timed
# plain, after `tiny` (another kernel, nothing displaced) and after `icache` (a kernel that displaces the
# SMs' instruction caches; code_footprint.cuh) -- braid's kernels and cuBLASLt's best algorithm alike;
# (2) ncu's SASS source counters of one launch each: how much code a launch walks, and how much of it
# each CTA walks only a few times (cold after a switch) -- bench/device/ncu_footprint.py.
#   BIN=/tmp/new OUT=dir BRAID_COMMIT=<hash> bash bench/device/gemm-cold-code.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/r"
log="$OUT/gemm-cold-code.log"
log_header "$log" "BIN=$BIN bash bench/device/gemm-cold-code.sh"
run() { echo "## braid-gemm $*" >> "$log"; timeout 150 "$BIN/braid-gemm" --reps 30 --before tiny,icache "$@" >> "$log" 2>&1; }
run --m 512 --n 4608 --k 12288 --configs 64x320-t-mc4,128x192-t            # GPT-3 QKV, S = 512
run --m 512 --n 12288 --k 1536 --configs 128x128                           # GPT-3 output projection
run --m 512 --n 3072 --k 8192 --configs 64x192-staged                      # LLaMA QKV
run --m 512 --n 8192 --k 1024 --configs 256x128-t                          # LLaMA output projection
run --m 128 --n 6144 --k 12288 --act gelu --configs 128x64-staged          # GPT-3 W1, T = 128
grep -E "M=|rror|FAILED" "$log" | cut -c1-140

SECTIONS="--section SourceCounters --section WarpStateStats --section LaunchStats"
footprint() {  # NAME: the footprint summary of OUT/r/NAME-sass.csv.gz
  local ctas
  ctas=$(grep -m1 -E "^ *Grid Size" "$OUT/r/$1-details.txt" | awk '{print $NF}' | tr -d ,)
  { grep -m1 -E "^  [A-Za-z_].*\(" "$OUT/r/$1-details.txt" | cut -c1-200
    grep -E "Grid Size|Cluster Size|Registers Per|No Instruction" "$OUT/r/$1-details.txt"
    zcat "$OUT/r/$1-sass.csv.gz" | python3 "$HERE/ncu_footprint.py" "${ctas:-1}"; } > "$OUT/r/$1-footprint.txt" 2>&1
  echo "== $1"; head -12 "$OUT/r/$1-footprint.txt"
}
prof() {  # NAME M N K ACT FILTER... -- braid-gemm args
  local name=$1; M=$2 N=$3 K=$4; local act=$5; shift 5
  ncu_profile "$name" "$@" --act "$act"
  footprint "$name"
}
export BRAID_LT_MAX_ALGOS=1  # the heuristic's first algorithm: ncu's 4th launch is that kernel
prof braid-qkv-64x320-t-mc4 512 4608 12288 none --kernel-name regex:hopper_gemm -- --configs 64x320-t-mc4 --no-cublas
prof lt-qkv 512 4608 12288 none --kernel-name regex:"nvjet|xmma" -- --configs none
prof braid-out-128x128 512 12288 1536 none --kernel-name regex:hopper_gemm -- --configs 128x128 --no-cublas
prof lt-out 512 12288 1536 none --kernel-name regex:"nvjet|xmma" -- --configs none
prof cutlass-out-128x128 512 12288 1536 none --kernel-name regex:device_kernel -- --configs none
prof braid-w1-128x64-staged 128 6144 12288 gelu --kernel-name regex:hopper_gemm -- --configs 128x64-staged --no-cublas
prof lt-w1-gelu 128 6144 12288 gelu --kernel-name regex:"nvjet|xmma" -- --configs none
ls "$OUT/r"
