#!/usr/bin/env bash
# One GEMM experiment switch on and off, same binary, alternating per shape, each configuration timed,
# checked and traced per unit (braid-gemm --unit-trace): AB_ENV=BRAID_STREAMK_LAST_ARRIVAL (default;
# stream-K's owner reduction against the last arrival, modes "owner" / "last-arrival") or e.g.
# AB_ENV=BRAID_STREAMK_ALL_CTAS (the tail's cost model against every CTA: "default" / "STREAMK_ALL_CTAS=1").
# Optionally the GPU tests first (TESTS=<gtest filter>).
#   BIN=.carry/bin OUT=dir BRAID_COMMIT=<hash> [AB_ENV=...] [TESTS='*'] [SHAPES='name M-list N K configs;...'] bash bench/device/gemm-env-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/gemm-env-ab}
AB_ENV=${AB_ENV:-BRAID_STREAMK_LAST_ARRIVAL}
if [ "$AB_ENV" = BRAID_STREAMK_LAST_ARRIVAL ]; then on=owner; off=last-arrival; else on=default; off="${AB_ENV#BRAID_}=1"; fi
mkdir -p "$OUT/traces"
log="$OUT/gemm-env-ab.log"
log_header "$log" "BIN=$BIN AB_ENV=$AB_ENV bash bench/device/gemm-env-ab.sh"
run_gpu_tests "$BIN" "$OUT" "$log" || exit $?
SHAPES=${SHAPES:-"gpt3-qkv 512,1024 4608 12288 128x192-g4-streamk,128x192-g8-streamk,128x256-g4-streamk,128x128-g4-streamk;gpt3-out 512,1024 12288 1536 128x192-streamk,128x128-streamk,128x256-streamk;llama-qkv 512,1024 3072 8192 128x128-g4-streamk,128x128-g8-streamk,128x192-g8-streamk;gpt3-w1 256,512 6144 12288 128x128-mc2-streamk,128x192-g2-streamk,128x128-g4-streamk"}
IFS=';' read -ra list <<< "$SHAPES"
for shape in "${list[@]}"; do
  set -- $shape
  for mode in "$on" "$off"; do
    echo "== $1 M=$2 N=$3 K=$4 reduction=$mode" | tee -a "$log"
    if [ "$mode" = "$off" ]; then export "$AB_ENV"=1; else unset "$AB_ENV"; fi
    timeout ${SHAPE_LIMIT:-60} "$BIN/braid-gemm" --m "$2" --n "$3" --k "$4" --configs "$5" --reps ${REPS:-15} \
      --unit-trace "$OUT/traces/$1-${mode%%=*}" $( [ "$mode" = "$off" ] && echo --no-cublas ) 2>&1 | tee -a "$log"
  done
  unset "$AB_ENV"
done
