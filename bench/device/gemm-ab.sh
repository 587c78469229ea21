#!/usr/bin/env bash
# Two builds of braid-gemm A/B on a set of GEMM shapes, same process order interleaved twice (OLD, NEW,
# OLD, NEW), each shape plain and after `icache` (the instruction caches displaced: the cost of a kernel
# switch); every variant checked against the reference (err column). GPU tests of NEW first (SKIP_TESTS=1
# skips them). SHAPES: a file of braid-gemm argument lines ('#' comments), e.g. bench/device/shapes/*.txt.
# OLD_ENV / NEW_ENV: environment assignments for that side's runs (one binary, two switches: OLD=NEW=/tmp/new
# OLD_ENV=BRAID_KERNEL_FORM=general).
#   OLD=/tmp/old NEW=/tmp/new SHAPES=bench/device/shapes/rowmajor-staged.txt OUT=dir BRAID_COMMIT=<old hash> \
#     NEW_COMMIT=<new hash> bash bench/device/gemm-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
mkdir -p "$OUT"
if [ "${SKIP_TESTS:-0}" != 1 ]; then gpu_tests_gate "$NEW" "$OUT" || { echo "GPU tests failed: no timing"; exit 1; }; fi
log="$OUT/gemm-ab.log"
log_header "$log" "OLD=$OLD NEW=$NEW OLD_ENV=${OLD_ENV:-} NEW_ENV=${NEW_ENV:-} SHAPES=$SHAPES bash bench/device/gemm-ab.sh (new: ${NEW_COMMIT:-?})"
mapfile -t shapes < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$SHAPES")
for round in 1 2; do
  for side in OLD NEW; do
    bin=${!side}
    side_env=${side}_ENV
    for s in "${shapes[@]}"; do
      echo "## round $round $side braid-gemm $s" >> "$log"
      env ${!side_env:-} timeout 120 "$bin/braid-gemm" --reps 20 --no-cublas --before icache $s >> "$log" 2>&1
    done
  done
done
grep -E "^## |M=|FAILED|rror" "$log" | cut -c1-130
