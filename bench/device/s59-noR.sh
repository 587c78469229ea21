#!/usr/bin/env bash
# Session 59's third device call: the Hopper GEMM tests as the gate (64x96 kept, pdl-only-noR in the chain bit-identity
# test), both MLP records with the pdl-only-noR variant among the tuner's, and traces of the LLaMA chain at few tokens.
#   SET=.carry/S59b OUT=$OUT COMMIT=<hash> bash bench/device/s59-noR.sh
# SET holds new/{braid_gpu_tests,braid-bench-mlp}.xz.
set -uo pipefail
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
start_filtered_run "${SET:-.carry/S59b}"
BIN=$B OUT="$OUT/mlp" LIMIT=200 bash bench/device/mlp-run.sh | grep -E "chosen|CHECK" | sed 's/simulated gain.*chosen/chosen/'
mkdir -p "$OUT/tr"
log_header "$OUT/tr/trace.log" "braid-bench-mlp --models llama --tokens 1,32 --reps 20 --trace-dir tr"
timeout 100 $B/braid-bench-mlp --models llama --tokens 1,32 --reps 20 --trace-dir "$OUT/tr" >> "$OUT/tr/trace.log" 2>&1
grep -A1 "wrote.*trace" "$OUT/tr/trace.log"
(cd "$OUT" && tar czf mlp.tgz mlp tr && rm -rf mlp tr)
