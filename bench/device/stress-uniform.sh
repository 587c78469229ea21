#!/usr/bin/env bash
# Races after the mainloop change of session 37 (the pipeline state broadcast from lane 0): braid-stress-conv on
# ResNet-38's stage-1 chain (six 64->64 56x56 convs, N=16, residual), each run on a fresh input, checked bit for
# bit against stream order with bounded waits: Conv2DTileSync-PDL and RowSync-PDL with dynamic dispatch (the
# unit ring) for SECONDS each, then a lagging poster (20 us) over four tile configurations. Used again after
# session 38's producer change, with DEEP_CONFIGS: also a deep chain (four 512->512 7x7 convs, N=12) per
# configuration listed, three variants, DEEP_SECONDS each.
#   BIN=/tmp/new OUT=out [SECONDS_EACH=80] [DEEP_CONFIGS="64x64-rowmajor 128x64-sk3-rowmajor"] bash bench/device/stress-uniform.sh
set -uo pipefail
BIN=${BIN:-build/tools}
mkdir -p "$OUT/r"
{ echo "# braid-stress-conv on $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%H:%MZ), commit ${BRAID_COMMIT:-?}"
  timeout 200 "$BIN/braid-stress-conv" --variants conv2dtilesync-pdl,rowsync-pdl-dyn --runs 1000000 --seconds ${SECONDS_EACH:-80}
  echo "exit $?"
  for c in 128x64 128x64-staged 64x64 64x32; do
    timeout 60 "$BIN/braid-stress-conv" --configs $c --poster-delay-ns 20000 --runs 30 \
      --variants conv2dtilesync-pdl,rowsync-pdl-dyn,conv2dtilesync-wait-kernel
    echo "exit $? ($c, lagging poster)"
  done
  for c in ${DEEP_CONFIGS:-}; do
    timeout 150 "$BIN/braid-stress-conv" --C 512 --hw 7 --batch 12 --depth 4 --residual none --configs $c \
      --variants conv2dtilesync-pdl,rowsync-pdl-dyn,conv2dtilesync-wait-kernel --runs 1000000 --seconds ${DEEP_SECONDS:-30}
    echo "exit $? (deep chain, $c)"
  done; } > "$OUT/r/stress.log" 2>&1
tail -25 "$OUT/r/stress.log"
cd "$OUT" && tar czf all.tgz r && rm -rf r
