#!/usr/bin/env bash
# The decode chain with the output GEMM's weights warmed in L2 by the decode attention (-l2w, session 55), on the GPU
# machine, one call: every GPU test (the gate); fixed decode picks (PICKS: model:B:cache:qkv,attn,out), each printing
# its stream-ordered chains with and without -l2w from one process, twice (output-GEMM phase stamps in round 1); then
# the decode sweep with PyTorch (its tuner times -l2w copies of every stream-ordered chain) -- under $OUT/r, as r.tgz.
#   SET=.carry/L COMMIT=<hash> OUT=out [PICKS=...] [SWEEP=0] bash bench/device/decode-l2w.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
export BRAID_COMMIT=${COMMIT:-unknown} NEW_COMMIT=${COMMIT:-unknown}
unpack_carried ${SET:-.carry/L} $OUT/r
B=/tmp/new
if ! gpu_tests_gate $B $OUT/r; then echo "GPU tests failed: nothing measured"; (cd $OUT && tar czf r.tgz r && rm -rf r); exit 1; fi
mkdir -p $OUT/r/picks
picks=${PICKS:-gpt3:1:512:skinny-a1s8-dsm-pk-lt,d8-c16,skinny-a1s8-pk gpt3:4:2048:skinny-a1s8-dsm-pk-lt,d8-c4,skinny-a1s8-pk llama:1:512:skinny-a1s8-pk-lt,d8-c16,skinny-a2s4-pk llama:4:512:skinny-a1s4-pk-lt,d4-c16,skinny-a1s8-pk llama:1:2048:skinny-a1s8-pk-lt,d8-c16,skinny-a2s4-pk}
for r in 1 2; do
  for c in $picks; do
    IFS=: read -r model b cache pick <<< "$c"
    log=$OUT/r/picks/$model-$b-$cache-${pick//,/+}-r$r.log
    BRAID_SKINNY_PHASES=$([ $r = 1 ] && echo 1) timeout 90 $B/braid-bench-attn --pick "$pick" --models $model \
      --cases decode --caches $cache --batches $b --reps 30 > "$log" 2>&1
    echo "r$r $model B=$b S=$cache $pick: $(grep -E '^  braid:(stream|pdl-only)' "$log" | awk '{printf "%s %s; ", $1, $2}' | sed 's|braid:||g; s|/[^ ]*||g')"
  done
done
if [ "${SWEEP:-1}" = 1 ]; then
  CASES=decode BIN=$B OUT=$OUT/r/decode TORCH_LIMIT=150 LIMIT=${SWEEP_LIMIT:-330} bash "$(dirname "$0")/attn-run.sh" 2>&1 | tail -24
fi
(cd $OUT && tar czf r.tgz r && rm -rf r)
