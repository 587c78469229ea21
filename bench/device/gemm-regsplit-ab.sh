#!/usr/bin/env bash
# A/B of register splits (setmaxnreg) of the 192x192 kernel: braid-gemm built with the committed split
# (A) and experiment builds of the one instance (B, C, D: see the log header), run alternately on the
# GPT-3 GEMM shapes in one call, 128x128 alongside as the stable reference.
#   BIN=/tmp/bin OUT=dir BRAID_COMMIT=<hash> VARIANTS="A B C D" bash bench/device/gemm-regsplit-ab.sh
set -uo pipefail
BIN=${BIN:-/tmp/bin}
OUT=${OUT:-/tmp/regsplit}
mkdir -p "$OUT"
log="$OUT/gemm-regsplit-ab.log"
{
  echo "# device: $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  commit: ${BRAID_COMMIT:-unknown}"
  echo "# variants: ${VARIANT_NOTE:-see the commit message}"
} > "$log"
for round in 1 2; do
  for v in ${VARIANTS:-A B C D}; do
    exe="$BIN/braid-gemm-$v"; [ "$v" = A ] && exe="$BIN/braid-gemm"
    for shape in "gpt3-w1 6144 12288" "gpt3-w2 12288 6144"; do
      set -- $shape
      echo "== round $round variant $v $1" >> "$log"
      timeout 60 "$exe" --m ${MS:-384,768,1536} --n "$2" --k "$3" --configs ${CONFIGS:-192x192,128x128} --no-cublas \
        --reps ${REPS:-20} 2>&1 | grep -E "M=" >> "$log"
    done
  done
done
cat "$log"
