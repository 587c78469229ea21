# Sourced by the bench/device scripts: the provenance header of a result log and the optional GPU
# tests before a measurement.
#   log_header LOG "command line"      device, date, commit ($BRAID_COMMIT) and the command, into LOG
#   gpu_tests_gate BIN OUT             all of BIN/braid_gpu_tests into OUT/gpu-tests.log (header: $NEW_COMMIT,
#                                      device, date); returns 1, listing the failures, unless every test passed
#   ncu_profile NAME FILTER... -- BRAID_GEMM_ARGS
#                                      one launch (the 4th) of $BIN/braid-gemm $M/$N/$K under ncu ($SECTIONS),
#                                      kernels chosen by FILTER (ncu options); OUT/r/NAME-details.txt, -sass.csv
#                                      (gzipped unless SASS_GZIP=0), -top.txt (the hottest SASS lines)
#   start_gated_run SET                BRAID_COMMIT and NEW_COMMIT from $COMMIT, SET unpacked (unpack_carried) under
#                                      $OUT/r, B=/tmp/new, every GPU test as the gate: on a failure $OUT/r is packed as
#                                      r.tgz and the calling script exits
#   unpack_carried SET OUT             OUT made; the carried binaries SET/<sub>/*.xz unpacked to /tmp/<sub>/; the GPU,
#                                      its driver and clocks and the date into OUT/device.txt
#   start_run SET                      BRAID_COMMIT and NEW_COMMIT from $COMMIT, SET unpacked under $OUT (unpack_carried),
#                                      B=/tmp/new: a measurement without the GPU tests
#   start_filtered_run SET             like start_gated_run, but unpacked under $OUT itself and gated by the GPU tests
#                                      that match $TESTS (default HopperTest.*; run_gpu_tests, verdict in OUT/parts.txt):
#                                      on a failure it lists them and the calling script exits
#   run_gpu_tests BIN OUT LOG          braid_gpu_tests --gtest_filter=$TESTS when TESTS is set (output
#                                      in OUT/gpu-tests.log, the verdict appended to LOG); TESTS_GATE=1
#                                      returns its failure
start_gated_run() {
  export BRAID_COMMIT=${COMMIT:-unknown} NEW_COMMIT=${COMMIT:-unknown}
  unpack_carried "$1" "$OUT/r"
  B=/tmp/new
  if ! gpu_tests_gate "$B" "$OUT/r"; then
    echo "GPU tests failed: nothing measured"
    (cd "$OUT" && tar czf r.tgz r && rm -rf r)
    exit 1
  fi
}
start_run() {
  export BRAID_COMMIT=${COMMIT:-unknown} NEW_COMMIT=${COMMIT:-unknown}
  unpack_carried "$1" "$OUT" > /dev/null
  B=/tmp/new
}
start_filtered_run() {
  start_run "$1"
  TESTS=${TESTS:-HopperTest.*} TEST_LIMIT=${TEST_LIMIT:-200} TESTS_GATE=1 run_gpu_tests "$B" "$OUT" "$OUT/parts.txt" || {
    grep -E "FAILED|Failure" "$OUT/gpu-tests.log" | head
    exit 1
  }
}
unpack_carried() {
  mkdir -p "$2"
  python3 "$(dirname "${BASH_SOURCE[0]}")/unpack.py" "$1" /tmp > /dev/null
  { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader; date -u; } > "$2/device.txt"
}
log_header() {
  {
    echo "# device: $(nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader)"
    echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  commit: ${BRAID_COMMIT:-unknown}"
    echo "# command: $2"
  } > "$1"
}
gpu_tests_gate() {
  { echo "# braid_gpu_tests (${NEW_COMMIT:-?}) on $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%H:%MZ)"
    timeout ${TEST_LIMIT:-240} "$1/braid_gpu_tests"; echo "exit $?"; } > "$2/gpu-tests.log" 2>&1
  tail -3 "$2/gpu-tests.log"
  if grep -q "^\[  FAILED  \]" "$2/gpu-tests.log" || ! grep -q "^\[  PASSED  \]" "$2/gpu-tests.log"; then
    grep -E "FAILED|Failure" "$2/gpu-tests.log" | head -20
    return 1
  fi
}
ncu_profile() {
  local name=$1 ncu; shift
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  local filt=(); while [ "$1" != "--" ]; do filt+=("$1"); shift; done; shift
  timeout 150 $ncu --clock-control none $SECTIONS --import-source yes -f -o $OUT/r/$name "${filt[@]}" \
    --launch-skip 3 --launch-count 1 $BIN/braid-gemm --m $M --n $N --k $K --reps 3 "$@" > $OUT/r/$name-run.log 2>&1
  $ncu --import $OUT/r/$name.ncu-rep --page details > $OUT/r/$name-details.txt 2>&1
  $ncu --import $OUT/r/$name.ncu-rep --page source --csv --print-source sass > $OUT/r/$name-sass.csv 2>/dev/null
  python3 "$(dirname "${BASH_SOURCE[0]}")/ncu_top_sass.py" 40 < $OUT/r/$name-sass.csv > $OUT/r/$name-top.txt 2>&1
  [ "${SASS_GZIP:-1}" = 0 ] || gzip -f $OUT/r/$name-sass.csv
  rm -f $OUT/r/$name.ncu-rep
}
run_gpu_tests() {
  [ -n "${TESTS:-}" ] && [ -x "$1/braid_gpu_tests" ] || return 0
  timeout ${TEST_LIMIT:-200} "$1/braid_gpu_tests" --gtest_filter="$TESTS" > "$2/gpu-tests.log" 2>&1
  local rc=$?
  echo "# gpu tests ($TESTS): exit $rc -- $(grep -E '^\[  (PASSED|FAILED)' "$2/gpu-tests.log" | tr '\n' ' ')" | tee -a "$3"
  if [ $rc -ne 0 ] && [ "${TESTS_GATE:-0}" = 1 ]; then return $rc; fi
  return 0
}
#   gemm_ab_rounds LOG "name M N K configs" ...
#                                      braid-gemm of the builds in $OLD and $NEW, interleaved OLD, NEW, OLD,
#                                      NEW (ROUNDS, default 2) so drift shows, each case under "== round R
#                                      BUILD name N= K=" in LOG; CUBLAS_FIRST=1 also times cuBLASLt in round 1
#                                      of OLD (bench/switch_ab_table.py reads the log)
gemm_ab_rounds() {
  local log=$1 round build bin c
  shift
  local cases=("$@")  # (`set --` below reuses the positional parameters for each case's fields)
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for build in OLD NEW; do
      bin=${!build}
      for c in "${cases[@]}"; do
        set -- $c
        echo "== round $round $build $1 N=$3 K=$4" >> "$log"
        timeout 120 "$bin/braid-gemm" --m "$2" --n "$3" --k "$4" --configs "$5" --reps 30 \
          $([ "${CUBLAS_FIRST:-0}" = 1 ] && [ $round = 1 ] && [ $build = OLD ] || echo --no-cublas) >> "$log" 2>&1
      done
    done
  done
}
