#!/usr/bin/env bash
# One device call: the GPU tests of a new build, then the same-call A/B of the old and new builds'
# GEMMs (plain and after a kernel switch) and MLP chains (bench/device/act-ab.sh), results in one tarball.
#   .carry/bin.tar.xz holds bin/old/{braid-gemm,braid-bench-mlp} and bin/new/{the same, braid_gpu_tests}
#   OLD_COMMIT=.. NEW_COMMIT=.. [TOKENS=128,256,512] bash bench/device/epilogue-loop-ab.sh
set -uo pipefail
mkdir -p /tmp/b && tar xJf .carry/bin.tar.xz -C /tmp/b
R=$OUT
{ echo "# braid_gpu_tests on $(nvidia-smi --query-gpu=name --format=csv,noheader) (device tool), $(date -u +%FT%H:%MZ), commit ${NEW_COMMIT:-?}; command: braid_gpu_tests"
  timeout 150 /tmp/b/bin/new/braid_gpu_tests; echo "exit $?"; } > $R/gpu-tests.log 2>&1
tail -4 $R/gpu-tests.log
if grep -q "^\[  FAILED  \]" $R/gpu-tests.log || ! grep -q "^\[  PASSED  \]" $R/gpu-tests.log; then
  grep -E "FAILED|Failure|error" $R/gpu-tests.log | head -40; exit 1
fi
OLD=/tmp/b/bin/old NEW=/tmp/b/bin/new OUT=/tmp/ab TOKENS=${TOKENS:-128,256,512} MLP_LIMIT=${MLP_LIMIT:-110} \
  timeout ${AB_LIMIT:-400} bash bench/device/act-ab.sh
(cd /tmp && tar cf $R/ab.tar ab)
grep -E "after|  braid  |cublaslt" /tmp/ab/act-ab.log | head -150
