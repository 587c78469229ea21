#!/usr/bin/env bash
# The MLP benchmark of issue 3 on the GPU machine: GPT-3 and LLaMA, every T, fp16, CSV + log + the
# autotuner's cache under $OUT (each model bounded in time so a partial run still returns its log).
#   BIN=.carry/bin OUT=out BRAID_COMMIT=<hash> bash bench/device/mlp-run.sh [extra braid-bench-mlp args]
set -uo pipefail
BIN=${BIN:-build}
OUT=${OUT:-out}
mkdir -p "$OUT"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z' | head -1)
day=$(date +%Y%m%d)
for model in ${MODELS:-gpt3 llama}; do
  timeout ${LIMIT:-280} $BIN/braid-bench-mlp --models $model --reps ${REPS:-20} --csv "$OUT/mlp-hopper-$model-$gpu-$day.csv" \
    --tune-cache "$OUT/braid-tune-mlp-$model.tsv" "$@" 2>&1 | tee "$OUT/mlp-hopper-$model-$gpu-$day.log" | grep -E "braid  |chosen|peak|empty-kernel|CHECK|wrote|error"
done
