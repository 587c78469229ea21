#!/usr/bin/env bash
# The Conv2D pair benchmark of issue 5 on the GPU machine: cuDNN through PyTorch first
# (bench/conv_torch.py), then braid-bench-conv with those peer rows, the CSV, its log and the plot
# under $OUT. Each step bounded in time so a partial run still returns its log.
#   BIN=.carry/bin OUT=out BRAID_COMMIT=<hash> bash bench/device/conv-run.sh [extra braid-bench-conv args]
# PEERS=<an earlier run's -torch.csv> skips the cuDNN step; TAG is appended to the files' base name.
set -uo pipefail
BIN=${BIN:-build/tools}
OUT=${OUT:-out}
mkdir -p "$OUT"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z' | head -1)
day=$(date +%Y%m%d)
base="$OUT/conv-pair-$gpu-$day${TAG:-}"
peers=${PEERS:-$base-torch.csv}
if [ -z "${PEERS:-}" ]; then
  timeout ${TORCH_LIMIT:-240} python3 bench/conv_torch.py --out "$peers" ${BATCHES:+--batches $BATCHES} \
    ${LAYERS:+--layers $LAYERS} > "$base-torch.log" 2>&1
  echo "conv_torch.py exit $?"; tail -3 "$base-torch.log"
fi
timeout ${LIMIT:-300} $BIN/braid-bench-conv --peers "$peers" --out "$base.csv" --reps ${REPS:-30} \
  --commit "${BRAID_COMMIT:-unknown}" ${BATCHES:+--batches $BATCHES} ${LAYERS:+--layers $LAYERS} "$@" > "$base.log" 2>&1
echo "braid-bench-conv exit $?"
grep -E "peak|best peer|CHECK|FAILED|checks|wrote|rror" "$base.log" | head -60
python3 bench/plot_conv.py "$base.csv" --out "$base.png" > "$base-table.txt" 2>&1 || true
cat "$base-table.txt" | head -50
