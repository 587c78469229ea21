#!/usr/bin/env bash
# Session 60's first device call: GeLU in its tanh form with the SFU's tanh (the form of cuBLASLt's GELU epilogue).
# Every GPU test as the gate (CublasLtGeluIsTheTanhForm among them), then
#   - GPT-3's W1 (GeLU) with braid-gemm at M = 128, 512, 2048 in the configurations the tuner picks there, cuBLASLt
#     in the same process, two rounds; unit traces at M = 2048 (the epilogue's share of a tile);
#   - the GPT-3 MLP record (mlp-run.sh: tuning in rounds, then four rounds side by side with cuBLASLt) of the new
#     build, of the previous build (erf GeLU, $SET/old) and of the new again (new, old, new: drift shows), and
#     LLaMA's (no GeLU; the record at this commit).
#   SET=.carry/S60 OUT=$OUT COMMIT=<hash> bash bench/device/s60-gelu.sh
# SET holds new/{braid_gpu_tests,braid-bench-mlp,braid-gemm}.xz and old/braid-bench-mlp.xz.
set -uo pipefail
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
TEST_LIMIT=${TEST_LIMIT:-240} start_gated_run "${SET:-.carry/S60}"
grep -E "algorithm [0-9]+:|worst:" "$OUT/r/gpu-tests.log" | head -12

log="$OUT/r/gemm-w1.log"
log_header "$log" "braid-gemm --m M --n 6144 --k 12288 --act gelu --configs C --reps 30 (2 rounds)"
for round in 1 2; do
  for c in "128 64x128-staged,128x128" "512 128x192,128x128-staged-pp" "2048 128x128-staged-pp,256x128-t"; do
    set -- $c
    echo "== round $round M=$1" >> "$log"
    timeout 100 $B/braid-gemm --m "$1" --n 6144 --k 12288 --act gelu --configs "$2" --reps 30 >> "$log" 2>&1
  done
done
grep -E "^==| us " "$log" | head -40
# Where a W1 tile's time goes now (mainloop vs epilogue, per unit), M = 2048.
echo "== unit traces M=2048" >> "$log"
timeout 60 $B/braid-gemm --m 2048 --n 6144 --k 12288 --act gelu --configs 256x128-t,128x128-staged-pp --reps 10 --no-cublas \
  --unit-trace "$OUT/r/ut-w1" >> "$log" 2>&1
grep -E "trace" "$log" | tail -4

mlp() {  # mlp NAME BIN MODEL
  echo "== $1 ($3)"
  BIN=$2 OUT="$OUT/r/mlp-$1" MODELS=$3 LIMIT=150 bash bench/device/mlp-run.sh --interleave 4 --tune-rounds 3 |
    grep -E "CHECK|interleaved|error" | tail -20
}
mlp new1 /tmp/new gpt3
mlp old /tmp/old gpt3
mlp new2 /tmp/new gpt3
mlp new-llama /tmp/new llama
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
