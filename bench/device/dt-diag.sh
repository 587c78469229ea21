#!/usr/bin/env bash
# The dynamic tail's diagnosis (session 52): per-CTA phase stamps of GPT-3's / LLaMA's GEMMs with and without -dt,
# under BRAID_SKINNY_DT_DIAG knobs (1: no publish fence, 2: no finishing, 4: no publishing; wrong sums, timing only).
#   OUT=<dir> [DIAGS="0 4"] [CONFIGS="a1s4-pk a1s4-pk-dt ..."] [TESTS='*SkinnyDynamic*'] bash bench/device/dt-diag.sh
source "$(dirname "$0")/common.sh"
unpack_carried .carry/DT $OUT/d
B=/tmp/new
if [ -n "${TESTS-}" ]; then
  timeout 200 $B/braid_gpu_tests --gtest_filter="$TESTS" > $OUT/d/gpu-tests.log 2>&1; echo "tests exit $?"
  grep -E "FAILED|OK \]|Failure" $OUT/d/gpu-tests.log | head -20
fi
for dg in ${DIAGS:-0 4}; do
  BRAID_SKINNY_DT_DIAG=$dg BRAID_PHASES_DUMP=1 timeout 90 $B/braid-micro-weight-stream 15 phases ${CONFIGS:-a1s4-pk a1s4-pk-dt} > $OUT/d/phases-diag$dg.log 2>&1
  echo "diag $dg"; grep "^phases" $OUT/d/phases-diag$dg.log | cut -c1-75
done
