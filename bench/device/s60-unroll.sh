#!/usr/bin/env bash
# Session 60's fifth device call: GeLU's epilogue loops unrolled (kGeluEpilogueRolled = false) against rolled (the
# previous build), now that GeLU is the tanh form. Every GPU test of the new build as the gate; GPT-3's W1 (GeLU) with
# braid-gemm at the MLP's T in the tiles the tuner picks there, old and new builds interleaved (OLD NEW OLD NEW); then
# GPT-3's MLP record new, old, new (side by side with cuBLASLt in each).
#   SET=.carry/S60u OUT=$OUT COMMIT=<hash> bash bench/device/s60-unroll.sh
# SET holds new/{braid_gpu_tests,braid-gemm,braid-bench-mlp}.xz and old/{braid-gemm,braid-bench-mlp}.xz.
set -uo pipefail
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
TEST_LIMIT=${TEST_LIMIT:-240} start_gated_run "${SET:-.carry/S60u}"
log="$OUT/r/w1-ab.log"
log_header "$log" "braid-gemm --m 128,...,2048 --n 6144 --k 12288 --act gelu --configs ... --reps 20 --no-cublas, OLD NEW OLD NEW"
for round in 1 2; do
  for build in old new; do
    echo "== round $round $build" >> "$log"
    timeout 100 /tmp/$build/braid-gemm --m 128,256,512,768,1024,2048 --n 6144 --k 12288 --act gelu --reps 20 --no-cublas \
      --configs 64x128-staged,64x192,64x192-staged,128x192-t,128x192,192x192-staged,128x128-staged-pp,256x128-t >> "$log" 2>&1
  done
done
grep -cE " us " "$log"
mlp() {  # mlp NAME BIN
  echo "== $1"
  BIN=$2 OUT="$OUT/r/mlp-$1" MODELS=gpt3 LIMIT=150 bash bench/device/mlp-run.sh --interleave 4 --tune-rounds 3 > /dev/null
  grep -E "CHECK|error" "$OUT/r/mlp-$1/"*.log | head -3
}
mlp new1 /tmp/new
mlp old /tmp/old
mlp new2 /tmp/new
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
