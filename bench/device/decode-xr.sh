#!/usr/bin/env bash
# The decode attention adding the skinny QKV GEMM's split-K partials itself ("-xr", session 56): the attention GPU
# tests first (then every GPU test when GATE=1), then braid-bench-attn on fixed decode picks, ROUNDS times (default 2):
# the -xr rows against the plain stream / PDL-alone rows of the same run. Logs under $OUT/r (packed as r.tgz).
#   COMMIT=<hash> OUT=out [CACHES=512 BATCHES=1] bash bench/device/decode-xr.sh
set -uo pipefail
source bench/device/common.sh
export BRAID_COMMIT=${COMMIT:-unknown} NEW_COMMIT=${COMMIT:-unknown}
unpack_carried .carry/DX "$OUT/r"
finish() { (cd "$OUT" && tar czf r.tgz r && rm -rf r); exit "${1:-0}"; }
timeout 240 /tmp/new/braid_gpu_tests --gtest_filter='*ttention*' > "$OUT/r/attn-tests.log" 2>&1
echo "attention tests: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/r/attn-tests.log" | tr '\n' ' ')"
grep -q "^\[  FAILED  \]" "$OUT/r/attn-tests.log" && { grep -E "Failure|FAILED|error|Expected|Which is" "$OUT/r/attn-tests.log" | head -30; finish 1; }
[ "${GATE:-0}" = 1 ] && { gpu_tests_gate /tmp/new "$OUT/r" || finish 1; }
for r in $(seq 1 "${ROUNDS:-2}"); do
  for c in ${PICKS:-llama:skinny-a1s8-pk-lt,d8-c16,skinny-a2s4-pk gpt3:skinny-a1s8-pk-lt,d8-c16,skinny-a1s8-pk}; do
    IFS=: read -r m pick <<< "$c"; log=$OUT/r/decode-$m-r$r.log
    args="--pick $pick --models $m --cases decode --caches ${CACHES:-512} --batches ${BATCHES:-1} --reps 30"
    log_header "$log" "braid-bench-attn $args"
    timeout 150 /tmp/new/braid-bench-attn $args >> "$log" 2>&1
    echo "r$r $m: $(grep -E '^  braid:(stream|pdl-only)(-xr)?/' "$log" | awk '{printf "%s %s; ", substr($1,7), $2}')"
    grep -E "FAILED|NOT BIT" "$log" | head -5
  done
done
finish 0
