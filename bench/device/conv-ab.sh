#!/usr/bin/env bash
# A/B of two braid-bench-conv builds in one call (the same GPU): each configuration of CONFIGS timed
# alone per layer/batch by both binaries, alternating A, B, A, B (ROUNDS), so that the difference is
# not the spread between device calls.
#   A=.carry/bin/braid-bench-conv-A B=.carry/bin/braid-bench-conv-B LAYERS=64x56,128x28 BATCHES=16,32 \
#     CONFIGS="128x64-rowmajor 128x128-rowmajor" bash bench/device/conv-ab.sh
set -uo pipefail
LAYERS=${LAYERS:-64x56,128x28,256x14}; BATCHES=${BATCHES:-16,32}
CONFIGS=${CONFIGS:-128x64-rowmajor 128x64-staged-rowmajor 128x128-rowmajor}
for round in $(seq ${ROUNDS:-2}); do
  for cfg in $CONFIGS; do
    for side in A B; do
      bin=${!side}
      timeout 120 "$bin" --layers "$LAYERS" --batches "$BATCHES" --configs "$cfg" --reps ${REPS:-30} 2>&1 |
        awk -v s=$side -v r=$round -v c=$cfg '/^\[/{shape=$2} /tuned:/{print "round", r, s, c, shape, $4, $8}'
    done
  done
done
