#!/usr/bin/env bash
# The Hopper attention kernel's K/V ring and start-up, A/B in one process order: braid-bench-attn's
# prompt cases (its per-stage search and chains; the PyTorch peer from a recorded CSV) with each
# build in .carry/<SET>/<side>/, interleaved over two rounds; the GPU tests of the newest build first.
#   SET=.carry/E SIDES="old mid new" PEERS=bench/results/attn-h100-20261127-0f8b07d-torch.csv bash bench/device/attn-ring-ab.sh
set -uo pipefail
python3 bench/device/unpack.py ${SET:-.carry/E} /tmp >/dev/null
SIDES=${SIDES:-old mid new}
last=${SIDES##* }
{ echo "# braid_gpu_tests ($last build) on $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%H:%MZ)"
  timeout 240 /tmp/$last/braid_gpu_tests; echo "exit $?"; } > $OUT/gpu-tests.log 2>&1
tail -3 $OUT/gpu-tests.log
for r in 1 2; do for side in $SIDES; do
  mkdir -p $OUT/$side$r
  timeout 150 /tmp/$side/braid-bench-attn --peers ${PEERS:-bench/results/attn-h100-20261127-0f8b07d-torch.csv} \
    --out $OUT/$side$r/attn.csv --reps 30 --cases prompt > $OUT/$side$r/attn.log 2>&1
  echo "== $side $r"; grep -E "tuned:|braid [0-9]" $OUT/$side$r/attn.log | cut -c1-130
done; done
(cd $OUT && tar czf ab.tgz $(for r in 1 2; do for s in $SIDES; do echo $s$r; done; done) && rm -rf */)
