#!/usr/bin/env bash
# A same-binary A/B of a skinny-GEMM diagnostic switch on the GPU machine, one call: every GPU test (the gate); fixed
# decode picks (PICKS: model:B:cache:qkv,attn,out) and the MLP at T = 1, 8 over MLP_SKINNY's configurations, each with
# AB_ENV=1 ("before") and without ("after"), interleaved twice (phase stamps in round 1); then the decode sweep with
# PyTorch and the MLP at T = 1, 8, 16 -- under $OUT/r, as r.tgz.
#   SET=.carry/C COMMIT=<hash> OUT=out AB_ENV=BRAID_SKINNY_NO_CP_ASYNC_W [PICKS=...] [MLP_SKINNY=...] \
#     bash bench/device/skinny-env-ab.sh
# MLP=0 leaves out the MLP runs (the A/B rounds' and the final sweep's); SWEEP=0 the final sweeps. AB_ON=1: AB_ENV=1
# switches the change on instead (set on the "after" side; the GPU tests then also run with it, as gpu-tests-on.log).
# Session 54 ran it for early W (AB_ENV=BRAID_SKINNY_NO_EARLY_W, 0114b63) and cp.async W (BRAID_SKINNY_NO_CP_ASYNC_W,
# 8bf26a2); both were reverted -- to rerun, apply the patch in bench/results/deep-ring-h200-20261129/ or
# bench/results/cp-async-w-h200-20261129/ and build.
set -uo pipefail
source "$(dirname "$0")/common.sh"
: "${AB_ENV:?AB_ENV: the environment variable that switches the change off}"
start_gated_run ${SET:-.carry/C}
if [ "${AB_ON:-0}" = 1 ]; then
  mkdir -p $OUT/r/on
  if ! env "$AB_ENV=1" bash -c "source $(dirname "$0")/common.sh; gpu_tests_gate $B $OUT/r/on"; then
    echo "GPU tests with $AB_ENV=1 failed: nothing measured"; (cd $OUT && tar czf r.tgz r && rm -rf r); exit 1
  fi
fi
mkdir -p $OUT/r/ab
picks=${PICKS:-gpt3:1:512:skinny-a1s8-dsm-pk-lt,d8-c16,skinny-a1s8-pk gpt3:4:2048:skinny-a1s8-dsm-pk-lt,d8-c4,skinny-a1s8-pk llama:1:512:skinny-a1s8-pk-lt,d8-c16,skinny-a2s4-pk llama:4:512:skinny-a1s4-pk-lt,d4-c16,skinny-a1s8-pk}
for r in 1 2; do
  for side in before after; do
    env=(); [ $side = $([ "${AB_ON:-0}" = 1 ] && echo after || echo before) ] && env=("$AB_ENV=1")
    for c in $picks; do
      IFS=: read -r model b cache pick <<< "$c"
      log=$OUT/r/ab/$side-$model-$b-$cache-${pick//,/+}-r$r.log
      env "${env[@]}" BRAID_SKINNY_PHASES=$([ $r = 1 ] && echo 1) timeout 60 $B/braid-bench-attn --pick "$pick" --models $model \
        --cases decode --caches $cache --batches $b --reps 30 > "$log" 2>&1
      echo "r$r $side $model B=$b S=$cache $pick: $(grep -E '^  braid:(stream|pdl-only)/' "$log" | awk '{printf "%s %s; ", $1, $2}')"
    done
    [ "${MLP:-1}" = 1 ] || continue
    log=$OUT/r/ab/mlp-$side-r$r.log
    env "${env[@]}" timeout 200 $B/braid-bench-mlp --models gpt3,llama --tokens 1,8 --reps 20 --show-configs \
      --skinny ${MLP_SKINNY:-a1s8-pk,a2s4-pk,p1s4-pk,a1s8-dsm-pk,a1s4-pk,a2s4-dsm-pk} > "$log" 2>&1
    echo "r$r $side mlp: $(grep -E 'braid  ' "$log" | awk '{printf "%s %s %s; ", $1, $2, $4}')"
  done
done
[ "${SWEEP:-1}" = 1 ] && CASES=decode BIN=$B OUT=$OUT/r/decode TORCH_LIMIT=150 LIMIT=330 bash "$(dirname "$0")/attn-run.sh" 2>&1 | tail -22
[ "${SWEEP:-1}" = 1 ] && [ "${MLP:-1}" = 1 ] && LIMIT=200 BIN=$B OUT=$OUT/r/mlp bash "$(dirname "$0")/mlp-run.sh" --tokens 1,8,16
(cd $OUT && tar czf r.tgz r && rm -rf r)
