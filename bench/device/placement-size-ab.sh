#!/usr/bin/env bash
# Placement cluster size (session 39): the MLP chains (T = 128-2048) with clusters of 4 (the default), 2 and none
# (BRAID_PLACEMENT_CLUSTER=4/2/1), then the conv pairs with 4 against 2 (env-ab.sh), one device call, binaries
# carried in .carry/s39e.   OUT=$OUT bash bench/device/placement-size-ab.sh
set -uo pipefail
python3 bench/device/unpack.py .carry/s39e /tmp > /dev/null
mkdir -p $OUT/p
for p in 4 2 1; do
  for model in gpt3 llama; do
    BRAID_PLACEMENT_CLUSTER=$p timeout 100 /tmp/new/braid-bench-mlp --models $model --tokens 128,256,384,512,768,1024,1536,2048 --reps 20 --csv $OUT/p/mlp-$model-p$p.csv > $OUT/p/mlp-$model-p$p.log 2>&1
    echo "mlp $model p$p exit $?"
  done
done
OUT=$OUT/p WHAT=conv AB_ENV=BRAID_PLACEMENT_CLUSTER AB_VALUE=2 ROUNDS=1 BIN=/tmp/new LAYERS=512x7,256x14,128x28 BATCHES=8,12,20,32 LIMIT=150 bash bench/device/env-ab.sh > $OUT/p/conv-ab.txt 2>&1
grep -A16 '^# A = ' $OUT/p/conv-ab.txt | cut -c1-110
for m in gpt3 llama; do for p in 4 2 1; do echo "== $m p$p"; grep -E 'braid  ' $OUT/p/mlp-$m-p$p.log | awk '{print $2, $(NF-6), $(NF-5)}' | tr '\n' ' '; echo; done; done
cd $OUT && tar czf p.tgz p && rm -rf p
