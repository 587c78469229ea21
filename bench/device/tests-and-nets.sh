#!/usr/bin/env bash
# One device call: the GPU tests, then the whole-network benchmark (bench/device/net-run.sh), both
# results under $OUT.
#   BRAID_COMMIT=<hash> bash bench/device/tests-and-nets.sh
#   (.carry/bin/braid_gpu_tests and .carry/lib/libbraid_capi.so, stripped builds of that commit)
set -uo pipefail
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
{ echo "# braid_gpu_tests on $gpu_name (device tool), $(date +%F), commit $BRAID_COMMIT; command: braid_gpu_tests"
  timeout 150 .carry/bin/braid_gpu_tests; } > "$OUT/gpu-tests.log" 2>&1
tail -3 "$OUT/gpu-tests.log"
CAPI=.carry/lib/libbraid_capi.so LIMIT=${LIMIT:-420} bash bench/device/net-run.sh
