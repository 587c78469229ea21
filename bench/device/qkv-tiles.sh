#!/usr/bin/env bash
# One device call: the GPU tests of a build, then the prompt QKV GEMM shapes (GPT-3: N = 4608 K = 12288;
# LLaMA: N = 3072 K = 8192; M = 512, 1024) with the tiles that give one wave of 128 tiles (128x144,
# 128x96, 128x192) next to the ones the attention benchmark picked before, cuBLASLt in the same run;
# also each after another braid kernel (--before 64x256: the switch a chain pays).
#   .carry/bin.tar.xz holds bin/{braid-gemm,braid_gpu_tests}
# (128x144 and 128x96 were instances of the build measured in bench/results/qkv-tiles-h100-20261125/ and were
# removed after it: braid-gemm now prints them as skipped and times the rest.)
#   COMMIT=.. OUT=dir bash bench/device/qkv-tiles.sh
set -uo pipefail
mkdir -p /tmp/b && tar xJf .carry/bin.tar.xz -C /tmp/b
B=/tmp/b/bin
R=$OUT
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader)
{ echo "# braid_gpu_tests on $dev (device tool), $(date -u +%FT%H:%MZ), commit ${COMMIT:-?}; command: braid_gpu_tests"
  timeout 150 $B/braid_gpu_tests; echo "exit $?"; } > $R/gpu-tests.log 2>&1
tail -4 $R/gpu-tests.log
if grep -q "^\[  FAILED  \]" $R/gpu-tests.log || ! grep -q "^\[  PASSED  \]" $R/gpu-tests.log; then
  grep -E "FAILED|Failure|error" $R/gpu-tests.log | head -40; exit 1
fi
log=$R/qkv-tiles.log
{ echo "# device: $dev, date: $(date -u +%FT%H:%MZ), commit: ${COMMIT:-?}"
  echo "# command: COMMIT=${COMMIT:-?} bash bench/device/qkv-tiles.sh"; } > $log
run() { echo "## braid-gemm $*" >> $log; timeout 150 $B/braid-gemm "$@" >> $log 2>&1; }
run --m 512,1024 --n 4608 --k 12288 --act none --reps 30 --before 64x256 \
  --configs 128x144,128x144-streamk,192x128-staged,128x192,128x192-g8-streamk,128x256-staged
run --m 512,1024 --n 3072 --k 8192 --act none --reps 30 --before 64x256 \
  --configs 128x96,128x96-streamk,128x128,128x192,128x128-g8-streamk,128x256-staged
grep -E "M=|^##" $log | head -80
