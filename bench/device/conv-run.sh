#!/usr/bin/env bash
# The Conv2D pair benchmark of issue 5 on the GPU machine: cuDNN through PyTorch first
# (bench/conv_torch.py), then braid-bench-conv with those peer rows, the CSV, its log and the plot
# under $OUT. Each step bounded in time so a partial run still returns its log.
#   BIN=.carry/bin OUT=out BRAID_COMMIT=<hash> bash bench/device/conv-run.sh [extra braid-bench-conv args]
set -uo pipefail
BIN=${BIN:-build/tools}
OUT=${OUT:-out}
mkdir -p "$OUT"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z' | head -1)
day=$(date +%Y%m%d)
base="$OUT/conv-pair-$gpu-$day"
timeout ${TORCH_LIMIT:-240} python3 bench/conv_torch.py --out "$base-torch.csv" ${BATCHES:+--batches $BATCHES} \
  ${LAYERS:+--layers $LAYERS} > "$base-torch.log" 2>&1
echo "conv_torch.py exit $?"; tail -3 "$base-torch.log"
timeout ${LIMIT:-300} $BIN/braid-bench-conv --peers "$base-torch.csv" --out "$base.csv" --reps ${REPS:-30} \
  --commit "${BRAID_COMMIT:-unknown}" ${BATCHES:+--batches $BATCHES} ${LAYERS:+--layers $LAYERS} "$@" > "$base.log" 2>&1
echo "braid-bench-conv exit $?"
grep -E "peak|best peer|CHECK|FAILED|checks|wrote|rror" "$base.log" | head -60
python3 bench/plot_conv.py "$base.csv" --out "$base.png" > "$base-table.txt" 2>&1 || true
cat "$base-table.txt" | head -50
