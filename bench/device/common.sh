# Sourced by the bench/device scripts: the provenance header of a result log and the optional GPU
# tests before a measurement.
#   log_header LOG "command line"      device, date, commit ($BRAID_COMMIT) and the command, into LOG
#   run_gpu_tests BIN OUT LOG          braid_gpu_tests --gtest_filter=$TESTS when TESTS is set (output
#                                      in OUT/gpu-tests.log, the verdict appended to LOG); TESTS_GATE=1
#                                      returns its failure
log_header() {
  {
    echo "# device: $(nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader)"
    echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  commit: ${BRAID_COMMIT:-unknown}"
    echo "# command: $2"
  } > "$1"
}
run_gpu_tests() {
  [ -n "${TESTS:-}" ] && [ -x "$1/braid_gpu_tests" ] || return 0
  timeout ${TEST_LIMIT:-200} "$1/braid_gpu_tests" --gtest_filter="$TESTS" > "$2/gpu-tests.log" 2>&1
  local rc=$?
  echo "# gpu tests ($TESTS): exit $rc -- $(grep -E '^\[  (PASSED|FAILED)' "$2/gpu-tests.log" | tr '\n' ' ')" | tee -a "$3"
  if [ $rc -ne 0 ] && [ "${TESTS_GATE:-0}" = 1 ]; then return $rc; fi
  return 0
}
