#!/usr/bin/env bash
# X from the producer's partials (MlpVariant::x_reduced, "-xr"; session 56): the skinny GPU tests first, then every GPU
# test as the gate, then braid-bench-mlp of the previous build (.carry/XR/old) and this one (new) interleaved ROUNDS
# times (default 2) -- the "-xr" rows against the same pairs' plain PDL-alone rows of the same run, and the old build's
# rows for the kernels' cost of carrying the path. Logs and a summary under $OUT/r (packed as r.tgz).
#   COMMIT=<hash> OUT=out TOKENS=1,8 bash bench/device/xr-ab.sh
set -uo pipefail
source bench/device/common.sh
export BRAID_COMMIT=${COMMIT:-unknown} NEW_COMMIT=${COMMIT:-unknown}
unpack_carried .carry/XR "$OUT/r"
finish() { (cd "$OUT" && tar czf r.tgz r && rm -rf r); exit "${1:-0}"; }
timeout 120 /tmp/new/braid_gpu_tests --gtest_filter='*Skinny*' > "$OUT/r/skinny-tests.log" 2>&1
echo "skinny tests: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/r/skinny-tests.log" | tr '\n' ' ')"
grep -q "^\[  FAILED  \]" "$OUT/r/skinny-tests.log" && { grep -E "Failure|FAILED|error" "$OUT/r/skinny-tests.log" | head -30; finish 1; }
[ "${GATE:-1}" = 1 ] && { gpu_tests_gate /tmp/new "$OUT/r" || finish 1; }
ARGS="--models ${MODELS:-gpt3,llama} --tokens ${TOKENS:-1,8} --reps 20 --show-configs --skinny ${SKINNY:-a1s8-pk,a2s4-pk,p1s4-pk}"
for r in $(seq 1 "${ROUNDS:-2}"); do for b in ${BUILDS:-old new}; do
  log=$OUT/r/mlp-$b-r$r.log
  log_header "$log" "braid-bench-mlp $ARGS"
  timeout 170 /tmp/$b/braid-bench-mlp $ARGS >> "$log" 2>&1
  echo "== r$r $b"; grep -E "pdl-only-xr/|chosen|not run" "$log" | cut -c1-150 | head -40
done; done
finish 0
