#!/usr/bin/env bash
# Session 48's two changes on the GPU machine, from carried builds (.carry/SET/{old,new}: OLD the commit before,
# NEW with both): the GPU tests of NEW; the transposed GEMMs alone, OLD against NEW (the epilogue's ring of panel
# buffers: shapes/transposed-panels.txt); GPT-3's attention-block chains at S = 512 / 1024 with fixed stages, OLD
# against NEW, then NEW with early weights off against on (BRAID_EARLY_WEIGHTS); the S = 512 chains' per-tile traces.
#   SET=.carry/E BRAID_COMMIT=<old> NEW_COMMIT=<new> OUT=out bash bench/device/panels-early-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
python3 bench/device/unpack.py ${SET:-.carry/E} /tmp > /dev/null
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
if [ "${SKIP_TESTS:-0}" != 1 ]; then gpu_tests_gate /tmp/new "$OUT" || echo "GPU TESTS FAILED"; fi
if [ -x /tmp/old/braid-gemm ]; then
  SKIP_TESTS=1 OLD=/tmp/old NEW=/tmp/new SHAPES=bench/device/shapes/transposed-panels.txt OUT=$OUT/g \
    bash bench/device/gemm-ab.sh > $OUT/gemm-ab-summary.txt 2>&1
  cat $OUT/gemm-ab-summary.txt
fi
cases="gpt3:512:64x320-t-mc4,wg-r,128x128-staged-pp gpt3:1024:128x320-t,wg-s,128x128-staged-pp"
if [ -x /tmp/old/braid-bench-attn ]; then
  echo "### chains: OLD against NEW"
  OLD=/tmp/old NEW=/tmp/new OUT=$OUT/a CASES="$cases" ROUNDS=2 bash bench/device/attn-bin-ab.sh
fi
echo "### chains: NEW, early weights off (OLD side) against on"
OLD=/tmp/new NEW=/tmp/new OLD_ENV=BRAID_EARLY_WEIGHTS=0 OUT=$OUT/e CASES="$cases" ROUNDS=2 bash bench/device/attn-bin-ab.sh
if [ "${TRACES:-1}" = 1 ]; then
  mkdir -p $OUT/tr
  timeout 120 /tmp/new/braid-bench-attn --pick 64x320-t-mc4,wg-r,128x128-staged-pp --models gpt3 --prompts 512 \
    --cases prompt --reps 20 --trace-dir $OUT/tr --out $OUT/tr/s512.csv > $OUT/tr/s512.log 2>&1
  grep -E "braid:|trace" $OUT/tr/s512.log | cut -c1-230
fi
