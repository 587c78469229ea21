#!/usr/bin/env bash
# The transposed epilogue's panel writes by stmatrix .trans (NEW) against the two-byte shared stores
# (OLD), same process order interleaved twice (OLD, NEW, OLD, NEW), on the GEMMs the attention and MLP
# tuners give transposed tiles; plain and after `icache` (the instruction caches displaced: the cost of
# a kernel switch); every variant checked against the reference (err column). GPU tests (NEW) first.
#   OLD=/tmp/old NEW=/tmp/new OUT=dir BRAID_COMMIT=<hash> NEW_COMMIT=<hash> bash bench/device/transposed-stsm-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
mkdir -p "$OUT"
if [ "${SKIP_TESTS:-0}" != 1 ]; then gpu_tests_gate "$NEW" "$OUT" || { echo "GPU tests failed: no timing"; exit 1; }; fi
log="$OUT/transposed-stsm-ab.log"
log_header "$log" "OLD=$OLD NEW=$NEW bash bench/device/transposed-stsm-ab.sh"
shapes=(
  "--m 512 --n 4608 --k 12288 --configs 64x320-t-mc4,128x192-t"    # GPT-3 QKV S = 512
  "--m 1024 --n 4608 --k 12288 --configs 128x320-t"                # GPT-3 QKV S = 1024
  "--m 2048 --n 4608 --k 12288 --configs 192x192-t"                # GPT-3 QKV S = 2048
  "--m 1024 --n 3072 --k 8192 --configs 128x192-t"                 # LLaMA QKV S = 1024
  "--m 512,2048 --n 8192 --k 1024 --configs 256x128-t"             # LLaMA output projection
  "--m 2048 --n 12288 --k 1536 --configs 256x128-t"                # GPT-3 output projection
  "--m 512 --n 12288 --k 6144 --configs 128x192-t"                 # GPT-3 W2, T = 512
  "--m 768 --n 6144 --k 12288 --act gelu --configs 128x192-t"      # GPT-3 W1 (GeLU), T = 768
)
for round in 1 2; do
  for side in OLD NEW; do
    bin=${!side}
    for s in "${shapes[@]}"; do
      echo "## round $round $side braid-gemm $s" >> "$log"
      timeout 120 "$bin/braid-gemm" --reps 20 --no-cublas --before icache $s >> "$log" 2>&1
    done
  done
done
grep -E "^## |M=|FAILED|rror" "$log" | cut -c1-130
