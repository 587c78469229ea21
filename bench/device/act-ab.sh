#!/usr/bin/env bash
# Same-call A/B of two builds of braid's GEMM (e.g. before/after an epilogue change): the MLP GEMM
# shapes at few tokens, each configuration timed plain and after another braid kernel (--before, the
# kernel switch a chain pays), interleaved A, B, A, B so drift shows; then the MLP chains of both builds.
#   OLD=/tmp/old NEW=/tmp/new OUT=dir [TOKENS=128,256,512] bash bench/device/act-ab.sh
# (OLD/NEW: folders holding braid-gemm and braid-bench-mlp; W1_CONFIGS: the GPT-3 W1 configurations;
#  MLP_LIMIT=0 skips the chains)
set -uo pipefail
OUT=${OUT:-/tmp/act-ab}
TOKENS=${TOKENS:-128,256,512}
mkdir -p "$OUT"
log="$OUT/act-ab.log"
{
  echo "# device: $(nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  old: ${OLD_COMMIT:-?}  new: ${NEW_COMMIT:-?}"
  echo "# command: OLD=$OLD NEW=$NEW TOKENS=$TOKENS bash bench/device/act-ab.sh"
} > "$log"
# (name N K act configs)
cases=("gpt3-w1 6144 12288 gelu ${W1_CONFIGS:-64x128,128x128,128x128-direct,64x192}"
       "gpt3-w2 12288 6144 none 64x192,128x192,128x128"
       "llama-w1 5504 8192 none 64x128,128x128-direct")
for round in 1 2; do
  for build in OLD NEW; do
    bin=${!build}
    for c in "${cases[@]}"; do
      set -- $c
      echo "== round $round $build $1 N=$2 K=$3 act=$4" >> "$log"
      timeout 120 "$bin/braid-gemm" --m "$TOKENS" --n "$2" --k "$3" --act "$4" --configs "$5" --before 64x256 \
        --reps 30 --no-cublas >> "$log" 2>&1
    done
  done
done
[ "${MLP_LIMIT:-150}" = 0 ] && exit 0
for build in OLD NEW; do
  bin=${!build}
  for model in gpt3 llama; do
    echo "== $build mlp $model" >> "$log"
    timeout ${MLP_LIMIT:-150} "$bin/braid-bench-mlp" --models $model --tokens "$TOKENS" --reps 20 \
      --csv "$OUT/mlp-$model-$build.csv" >> "$OUT/mlp-$model-$build.log" 2>&1
    grep -E "  braid  |cublaslt|chosen" "$OUT/mlp-$model-$build.log" >> "$log"
  done
done
