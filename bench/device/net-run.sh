#!/usr/bin/env bash
# End-to-end ResNet-38 / VGG-19 inference of issue 5 on the GPU machine: bench/net_torch.py (PyTorch
# with cuDNN vs the same networks with braid's tile-synchronized conv chains, all CUDA-graphed), the
# CSV, its log and the plot under $OUT. Bounded in time so a partial run still returns its log.
#   CAPI=.carry/lib/libbraid_capi.so OUT=out BRAID_COMMIT=<hash> bash bench/device/net-run.sh [net_torch.py args]
set -uo pipefail
CAPI=${CAPI:-build/libbraid_capi.so}
OUT=${OUT:-out}
mkdir -p "$OUT"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z' | head -1)
base="$OUT/net-$gpu-$(date +%Y%m%d)"
timeout ${LIMIT:-400} python3 bench/net_torch.py --lib "$CAPI" --out "$base.csv" --commit "${BRAID_COMMIT:-unknown}" \
  ${NETS:+--nets $NETS} ${BATCHES:+--batches $BATCHES} ${REPS:+--reps $REPS} "$@" > "$base.log" 2>&1
echo "net_torch.py exit $?"
grep -vE "^\[.*layer " "$base.log" | tail -40
python3 bench/plot_net.py "$base.csv" --out "$base.png" > "$base-table.txt" 2>&1 || true
cat "$base-table.txt" | head -40
