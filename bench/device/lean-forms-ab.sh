#!/usr/bin/env bash
# The GEMM kernels' lean forms (gemm_config.hpp, "The forms of braid's GEMM kernels") against the general
# form, one binary, BRAID_KERNEL_FORM=general on the OLD side: (1) the GPU tests; (2) the single GEMMs of
# bench/device/shapes/lean-forms.txt, plain and after `icache` (the kernel-switch penalty), interleaved
# twice (gemm-ab.sh); (3) WHAT (default attn; CASES narrows it) whole, lean then general, same peer rows
# (env-ab.sh, ROUNDS).
#   BIN=/tmp/new OUT=dir BRAID_COMMIT=<hash> [WHAT=attn CASES=prompt ROUNDS=1 SKIP_GEMM=1] bash bench/device/lean-forms-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/lean-forms-ab}
mkdir -p "$OUT"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  NEW_COMMIT=${BRAID_COMMIT:-?} gpu_tests_gate "$BIN" "$OUT" || { echo "GPU tests failed: no timing"; exit 1; }
fi
if [ "${SKIP_GEMM:-0}" != 1 ]; then
  OLD=$BIN NEW=$BIN OLD_ENV=BRAID_KERNEL_FORM=general SKIP_TESTS=1 SHAPES=bench/device/shapes/lean-forms.txt \
    NEW_COMMIT=${BRAID_COMMIT:-?} bash bench/device/gemm-ab.sh > /dev/null
  python3 bench/switch_ab_table.py "$OUT/gemm-ab.log" > "$OUT/gemm-ab-table.txt" 2>&1
  cat "$OUT/gemm-ab-table.txt"
fi
if [ "${WHAT:-attn}" != none ]; then
  BIN=$BIN OUT=$OUT WHAT=${WHAT:-attn} AB_ENV=BRAID_KERNEL_FORM AB_VALUE=general ROUNDS=${ROUNDS:-1} \
    bash bench/device/env-ab.sh | grep -vE "^\s+braid:" | tail -40
fi
