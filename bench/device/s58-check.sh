#!/usr/bin/env bash
# Session 58's device call: every GPU test at the session's code (the driver entry-point helper touches every tensor
# map), then braid-micro-weight-stream pair (an MLP's two weight matrices read back to back, no arithmetic, timed as the
# benchmarks time a chain).
#   SET=.carry/S58 OUT=$OUT COMMIT=<hash> bash bench/device/s58-check.sh
# SET holds new/{braid_gpu_tests,braid-micro-weight-stream}.xz.
set -uo pipefail
SET=${SET:-.carry/S58}
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
export BRAID_COMMIT=${COMMIT:-unknown} NEW_COMMIT=${COMMIT:-unknown}
unpack_carried "$SET" "$OUT"
gpu_tests_gate /tmp/new "$OUT" || echo "GPU tests FAILED"
log_header "$OUT/pair.log" "braid-micro-weight-stream 20 pair"
timeout 300 /tmp/new/braid-micro-weight-stream 20 pair >> "$OUT/pair.log" 2>&1
echo "exit $?" >> "$OUT/pair.log"
grep -v " alone " "$OUT/pair.log"
