#!/usr/bin/env bash
# The attention-block benchmark of issue 4 on the GPU machine: the PyTorch peer first
# (bench/attn_torch.py: cuBLAS + SDPA, CUDA graph), then braid-bench-attn, then the PyTorch peer again
# (TORCH_AFTER=0: not), braid's rows compared with both (braid-bench-attn --peers before,after: the
# second run's variants named "@2"; the GPU's speed drifts within a call, and a peer timed on both sides
# shows how much), the CSV, its log and the plot under $OUT. Each step bounded in time so a partial run
# still returns its log.
#   BIN=.carry/bin OUT=out BRAID_COMMIT=<hash> bash bench/device/attn-run.sh [extra braid-bench-attn args]
# MODELS, CASES, PROMPTS, CACHES, BATCHES narrow the sweep (same syntax as the tools' options).
# PEERS=<an earlier run's -torch.csv> skips the PyTorch step; TAG is appended to the files' base name.
set -uo pipefail
BIN=${BIN:-build/tools}
OUT=${OUT:-out}
mkdir -p "$OUT"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z' | head -1)
day=$(date +%Y%m%d)
base="$OUT/attn-$gpu-$day${TAG:-}"
sel=(${MODELS:+--models $MODELS} ${CASES:+--cases $CASES} ${PROMPTS:+--prompts $PROMPTS} ${CACHES:+--caches $CACHES}
     ${BATCHES:+--batches $BATCHES})
peers=${PEERS:-$base-torch.csv}
if [ -z "${PEERS:-}" ]; then
  timeout ${TORCH_LIMIT:-180} python3 bench/attn_torch.py --out "$peers" "${sel[@]}" > "$base-torch.log" 2>&1
  echo "attn_torch.py exit $?"; tail -4 "$base-torch.log"
fi
timeout ${LIMIT:-360} $BIN/braid-bench-attn --peers "$peers" --out "$base-braid.csv" --reps ${REPS:-30} \
  --commit "${BRAID_COMMIT:-unknown}" "${sel[@]}" "$@" > "$base.log" 2>&1
echo "braid-bench-attn exit $?"
if [ -z "${PEERS:-}" ] && [ "${TORCH_AFTER:-1}" = 1 ]; then
  timeout ${TORCH_LIMIT:-180} python3 bench/attn_torch.py --out "$base-torch-after.csv" "${sel[@]}" > "$base-torch-after.log" 2>&1
  echo "attn_torch.py (after) exit $?"
fi
# The CSV: braid's rows with the peers of both runs (the second's as "@2").
python3 bench/attn_side_by_side.py "$base-braid.csv" $([ -f "$base-torch-after.csv" ] && echo "$base-torch-after.csv") --csv "$base.csv" \
  > "$base-side-by-side.txt" 2>&1 || cp "$base-braid.csv" "$base.csv"
cat "$base-side-by-side.txt"
grep -E "peak|empty-kernel|tuned|best peer|CHECK|FAILED|checks|wrote|rror" "$base.log" | head -80
python3 bench/plot_attn.py "$base.csv" --out "$base.png" > "$base-table.txt" 2>&1 || true
cat "$base-table.txt" | head -50
