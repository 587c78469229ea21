#!/usr/bin/env bash
# The transposed kernels with the weights multicast to clusters of 2 or 4 CTAs on the same weight columns
# (-mc2/-mc4; 64-token tiles on one consumer warpgroup), against the same tiles without multicast, braid's
# earlier picks and cuBLASLt in the same process, on the shapes where the tiles make one nearly full wave;
# every variant checked against the reference (err column); no activation. Every GPU test first
# (common.sh gpu_tests_gate: no timing unless all pass).
#   BIN=/tmp/new OUT=dir BRAID_COMMIT=<hash> NEW_COMMIT=<hash> bash bench/device/gemm-transposed-multicast.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
mkdir -p "$OUT"
if [ "${SKIP_TESTS:-0}" != 1 ]; then gpu_tests_gate "$BIN" "$OUT" || { echo "GPU tests failed: no timing"; exit 1; }; fi
log="$OUT/gemm-transposed-multicast.log"
log_header "$log" "BIN=$BIN bash bench/device/gemm-transposed-multicast.sh"
run() { timeout ${GEMM_LIMIT:-100} "$BIN/braid-gemm" --reps 20 "$@" >> "$log" 2>&1; }
Q="64x320-t,64x320-t-mc2,64x320-t-mc4,128x192-t,128x192-t-mc2,128x320-t,128x320-t-mc2"
run --m 512,1024 --n 4608 --k 12288 --configs $Q,64x192-staged                                       # GPT-3 QKV
run --m 512 --n 3072 --k 8192 --configs 64x192-t,64x192-t-mc4,128x192-t,128x192-t-mc2,64x192-staged     # LLaMA QKV
run --m 256 --n 6144 --k 12288 --configs 64x192-t,64x192-t-mc4,64x192,64x192-staged,128x192-t           # GPT-3 W1
run --m 512 --n 6144 --k 12288 --configs 128x192-t,128x192-t-mc2                                      # GPT-3 W1
run --m 256 --n 5568 --k 8192 --configs 64x192-t,64x192-t-mc4,64x192,128x128                         # LLaMA W1 (padded)
run --m 256 --n 8192 --k 2752 --configs 64x320-t,64x320-t-mc2,64x320-t-mc4,128x128,64x128            # LLaMA W2
grep -E "M=|rror|skipped|FAILED" "$log" | cut -c1-120
