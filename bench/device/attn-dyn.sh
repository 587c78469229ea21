#!/usr/bin/env bash
# The attention-block chains with fixed stages (--pick QKV,ATTN,OUT), every chain variant the benchmark builds for
# them -- among them the output GEMM by ticket (tilesync-pdl-dyn, rowsync-pdl-dyn, and pdl-only with the same
# output configuration) -- per case of CASES (model:S:pick); then CASE0 (the first) again with every kernel in its
# general form (BRAID_KERNEL_FORM=general) and with per-tile traces (general forms). GPU tests first unless
# SKIP_TESTS=1.
#   SET=.carry/F NEW_COMMIT=<hash> OUT=out CASES="gpt3:512:64x320-t-mc4,wg-r,128x128-staged-pp ..." bash bench/device/attn-dyn.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
python3 bench/device/unpack.py ${SET:-.carry/F} /tmp > /dev/null
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
if [ "${SKIP_TESTS:-0}" != 1 ]; then gpu_tests_gate /tmp/new "$OUT" || echo "GPU TESTS FAILED"; fi
run_case() {  # tag env model s pick [extra args]
  local tag=$1 envs=$2 model=$3 s=$4 pick=$5; shift 5
  env $envs timeout 150 /tmp/new/braid-bench-attn --pick "$pick" --models "$model" --prompts "$s" --cases prompt --reps 30 \
    --out $OUT/$tag.csv "$@" > $OUT/$tag.log 2>&1
  echo "== $tag ($model S=$s $pick $envs)"; grep -E "braid:|trace|FAIL" $OUT/$tag.log | cut -c1-${WIDTH:-120}
}
first=""
for c in $CASES; do
  IFS=: read -r model s pick <<< "$c"
  [ -z "$first" ] && first=$c
  run_case dyn-$model-$s "" $model $s $pick
done
IFS=: read -r model s pick <<< "$first"
run_case general-$model-$s "BRAID_KERNEL_FORM=general" $model $s $pick
mkdir -p $OUT/tr
WIDTH=400 run_case trace-$model-$s "" $model $s $pick --trace-dir $OUT/tr
