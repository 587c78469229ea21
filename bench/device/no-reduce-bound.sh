#!/usr/bin/env bash
# The bound on removing a producer GEMM's split-K tail (session 55): the decode picks and the MLP at T = 1, 8, each
# with BRAID_SKINNY_NO_REDUCE=1 ("on": a late-triggering skinny GEMM skips its reduction -- wrong output, timing only)
# and without ("off"), interleaved twice, logs under $OUT. The carried binaries (.carry/N/new) unpacked by it.
#   BRAID_COMMIT=<hash> OUT=out bash bench/device/no-reduce-bound.sh
# (braid-bench-mlp times only variants that pass their check, so its "on" rows are missing: the MLP is not bounded.)
set -uo pipefail
source bench/device/common.sh; unpack_carried .carry/N $OUT; B=/tmp/new
for r in 1 2; do for side in off on; do
  env=(); [ $side = on ] && env=(BRAID_SKINNY_NO_REDUCE=1)
  log=$OUT/mlp-$side-r$r.log; log_header $log "${env[*]} braid-bench-mlp --models gpt3,llama --tokens 1,8 --reps 20 --show-configs --skinny a1s8-pk,a2s4-pk,p1s4-pk"
  env "${env[@]}" timeout 120 $B/braid-bench-mlp --models gpt3,llama --tokens 1,8 --reps 20 --show-configs --skinny a1s8-pk,a2s4-pk,p1s4-pk >> $log 2>&1
  echo "r$r $side mlp: $(grep -E 'pdl-only/skinny-(a1s8|a2s4|p1s4)-pk-lt\+skinny-(a1s8|a2s4)-pk ' $log | awk '{printf "%s %s %s %s; ", $1, $2, substr($3,16), $4}')"
  for c in llama:skinny-a1s8-pk-lt,d8-c16,skinny-a2s4-pk gpt3:skinny-a1s8-pk-lt,d8-c16,skinny-a1s8-pk; do
    IFS=: read -r m pick <<< "$c"; log=$OUT/decode-$m-$side-r$r.log
    log_header $log "${env[*]} braid-bench-attn --pick $pick --models $m --cases decode --caches 512 --batches 1 --reps 30"
    env "${env[@]}" timeout 60 $B/braid-bench-attn --pick "$pick" --models $m --cases decode --caches 512 --batches 1 --reps 30 >> $log 2>&1
    echo "r$r $side decode $m: $(grep -E '^  braid:(stream|pdl-only)/' $log | awk '{printf "%s %s; ", substr($1,7), $2}')"
  done
done; done
