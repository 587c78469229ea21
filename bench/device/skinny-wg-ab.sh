#!/usr/bin/env bash
# The skinny GEMM's wgmma consumers ("-wg", SkinnyConfig::wgmma) against its mma.sync consumers: the
# skinny GPU tests first (reference at M = 1..64, bit-identical chains incl. -wg), then every GEMM
# configuration's time alone (--show-configs: both consumers among the candidates) and the chains at
# the token counts where MR = 8, 32 and 64, both models.
#   BIN=.carry/bin OUT=out BRAID_COMMIT=<hash> [TOKENS=8,32,64] bash bench/device/skinny-wg-ab.sh
set -uo pipefail
BIN=${BIN:-build/tools}; OUT=${OUT:-out}; mkdir -p "$OUT"
. "$(dirname "$0")/common.sh"
log="$OUT/skinny-wg-ab.log"
log_header "$log" "TOKENS=${TOKENS:-8,32,64} bash bench/device/skinny-wg-ab.sh"
TESTS='*Skinny*' TESTS_GATE=1 run_gpu_tests "$BIN" "$OUT" "$log" || { echo "GPU tests failed"; tail -30 "$OUT/gpu-tests.log"; exit 1; }
for model in llama gpt3; do
  timeout ${LIMIT:-200} "$BIN/braid-bench-mlp" --models $model --tokens ${TOKENS:-8,32,64} --reps 20 --show-configs \
    >> "$log" 2>&1
  echo "== $model (exit $?)"
done
grep -E "gemm[12] skinny|gemm[12] 64x128 |best|braid  |chosen" "$log"
