#!/usr/bin/env bash
# One device call: GPU tests, per-tile epilogue traces of two builds of braid-bench-conv (A/B in the same
# call), then the whole Conv2D pair benchmark against cuDNN with the new build.
#   BRAID_COMMIT=<hash> bash bench/device/conv-epilogue-ab.sh
#   (.carry/bin: braid-bench-conv (new), braid-bench-conv-prev (the build to compare with), and braid_gpu_tests
#   if it fits the carry limit -- the tests run when it is there)
#   TESTS_GATE=1: stop after the GPU tests when any fails.
#   EPI_BINS / EPI_CASES / EPI_CONFIGS override what the traces compare (e.g. two configurations of one
#   build: EPI_BINS=.carry/bin/braid-bench-conv EPI_CONFIGS="128x128-sk3-rowmajor 128x128-sk3-rs-rowmajor")
set -uo pipefail
B=.carry/bin
R=$OUT/r; mkdir -p $R /tmp/cr
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [ -x $B/braid_gpu_tests ]; then  # not carried when the three binaries would pass the carry limit
  { echo "# braid_gpu_tests on $gpu_name (device tool), $(date +%F), commit $BRAID_COMMIT; command: braid_gpu_tests"; timeout 120 $B/braid_gpu_tests; } > $R/gpu-tests.log 2>&1
  tail -3 $R/gpu-tests.log
  # TESTS_GATE=1: a failing test stops the call here (its log comes back; no time spent timing broken code)
  if [ -n "${TESTS_GATE:-}" ] && { grep -q "^\[  FAILED  \]" $R/gpu-tests.log || ! grep -q "^\[  PASSED  \]" $R/gpu-tests.log; }; then
    grep -E "FAILED|Failure|error" $R/gpu-tests.log | head -40; cp $R/gpu-tests.log $OUT/; exit 1
  fi
fi
{ echo "# bench/device/conv-epilogue.sh on $gpu_name (device tool), $(date +%F), commit $BRAID_COMMIT (braid-bench-conv-prev: ${PREV:-previous build})"
  BINS=${EPI_BINS:-"$B/braid-bench-conv-prev $B/braid-bench-conv"} CASES=${EPI_CASES:-"512x7:24 256x14:24 64x56:32"} \
    CONFIGS=${EPI_CONFIGS:-"128x128-rowmajor 64x128-rowmajor 128x64-rowmajor 128x128-sk3-rowmajor"} \
    timeout 200 bash bench/device/conv-epilogue.sh; } > $R/epi.txt 2>&1
cat $R/epi.txt
# AB_CONFIGS (optional): each binary's standalone time of these configurations (the tuner's candidate
# lines) on AB_CASES (layers:batches), both binaries in turn, twice
if [ -n "${AB_CONFIGS:-}" ]; then
  for round in 1 2; do
    for bin in ${EPI_BINS:-$B/braid-bench-conv-prev $B/braid-bench-conv}; do
      for c in ${AB_CASES:-64x56:32 512x7:24}; do
        echo "== round $round $(basename $bin) $c"
        timeout 60 $bin --layers "${c%:*}" --batches "${c#*:}" --configs "$AB_CONFIGS" --reps 20 2>&1 | grep candidates
      done
    done
  done > $R/ab.txt 2>&1
  cat $R/ab.txt
fi
BIN=$B OUT=/tmp/cr TORCH_LIMIT=150 LIMIT=220 bash bench/device/conv-run.sh > $R/conv-run.txt 2>&1
tail -45 $R/conv-run.txt
tar czf $OUT/conv-run.tgz -C /tmp/cr .
