#!/usr/bin/env bash
# A/B of two builds of the Hopper GEMM/conv kernels (written for the producer's load order in its plain
# loop: A before B at 71d8fc1, reverted): braid-gemm on weight-streaming and compute-bound shapes and
# braid-bench-conv on the deep conv layers, the two builds alternated twice.
#   OLD=dir NEW=dir PEERS=conv-torch.csv OUT=out bash bench/device/a-first-ab.sh
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
for round in 1 2; do
  for arm in old new; do
    B=$([ $arm = old ] && echo "$OLD" || echo "$NEW")
    log="$OUT/ab-$arm-r$round.log"
    {
      timeout 60 "$B/braid-gemm" --m 64,128,256 --n 5504 --k 8192 --configs 64x128,128x128,128x128-direct --no-cublas --reps 20
      timeout 60 "$B/braid-gemm" --m 512 --n 4608 --k 12288 --configs 192x128-staged,128x192,128x128-direct-streamk --no-cublas --reps 20
      timeout 60 "$B/braid-gemm" --m 1024,2048 --n 12288 --k 6144 --configs 128x128,128x256-staged --no-cublas --reps 10
      timeout 150 "$B/braid-bench-conv" --peers "$PEERS" --layers 512x7,256x14,128x28 --batches 8,12,24 --reps 20
    } > "$log" 2>&1
    echo "== $arm round $round (exit $?)"
  done
done
for arm in old new; do
  echo "== $arm"; grep -hE "^  M=" "$OUT"/ab-$arm-r*.log | awk '{print $1, $2, $3}' | sort | awk '{k=$1" "$2; a[k]=a[k]" "$3} END {for (k in a) print k, a[k]}' | sort
  grep -hE "^\[|^  braid [0-9]" "$OUT"/ab-$arm-r*.log | head -60
done
