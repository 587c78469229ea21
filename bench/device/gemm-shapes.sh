#!/usr/bin/env bash
# What CUTLASS's own sm90 kernels reach on the MLP GEMM shapes in other tile/cluster/schedule shapes
# (cooperative 128x256 / 256x128, pingpong 128x128 / 64x256, 2x1 clusters) next to braid's best tiles
# and cuBLASLt, in one call; then the kernels cuBLASLt's candidates launch (ncu: name, grid, block,
# cluster, registers, shared memory, duration), to see which tile shape the fastest one uses.
#   BIN=/tmp/bin OUT=dir BRAID_COMMIT=<hash> [MS=384,768,1024,2048] [SHAPES=...] [CONFIGS=...]
#     [NCU_CASES="gpt3-w1:6144:12288:128 ..."] [GEMMS="gpt3-w1:6144:12288 ..."] bash bench/device/gemm-shapes.sh
set -uo pipefail
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/gemm-shapes}
MS=${MS:-384,768,1024,2048}
SHAPES=${SHAPES:-pp-128x128,pp-128x128-c2,pp-64x256,coop-128x256,coop-128x256-c2,coop-256x128-c2}
CONFIGS=${CONFIGS:-128x128,128x256,128x128-direct-streamk,128x256-streamk}
mkdir -p "$OUT"
log="$OUT/gemm-shapes.log"
{
  echo "# device: $(nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  commit: ${BRAID_COMMIT:-unknown}"
  echo "# command: BIN=$BIN MS=$MS SHAPES=$SHAPES CONFIGS=$CONFIGS GEMMS=${GEMMS:-default} NCU_CASES=${NCU_CASES:-default} bash bench/device/gemm-shapes.sh"
} > "$log"
# (name N K): GPT-3 W1 / W2, LLaMA W1 (gate|up) / W2
GEMMS=${GEMMS:-gpt3-w1:6144:12288 gpt3-w2:12288:6144 llama-w1:5504:8192 llama-w2:8192:2752}
for shape in $GEMMS; do
  set -- ${shape//:/ }
  echo "== $1 N=$2 K=$3" | tee -a "$log"
  timeout ${SHAPE_LIMIT:-120} "$BIN/braid-gemm" --m "$MS" --n "$2" --k "$3" --configs "$CONFIGS" \
    --cutlass-shapes "$SHAPES" --reps ${REPS:-20} 2>&1 | tee -a "$log"
done
# cuBLASLt's candidates as launched (braid-gemm tries up to 8 heuristic algorithms, then times the best).
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [ -x "$NCU" ] && [ "${NCU_SHAPES:-1}" != 0 ]; then
  NCU_CASES=${NCU_CASES:-gpt3-w1:6144:12288:768 gpt3-w2:12288:6144:1024 gpt3-w2:12288:6144:2048 llama-w1:5504:8192:512}
  for shape in $NCU_CASES; do
    set -- ${shape//:/ }
    echo "== cuBLASLt kernels: $1 M=$4 N=$2 K=$3" | tee -a "$log"
    timeout ${NCU_LIMIT:-90} "$NCU" --clock-control none --kernel-name "regex:nvjet|xmma|gemm_kernel|Kernel2" --launch-count 24 \
      --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__registers_per_thread,launch__shared_mem_per_block \
      --csv "$BIN/braid-gemm" --m "$4" --n "$2" --k "$3" --configs none --reps 3 2>/dev/null \
      | python3 "$(dirname "$0")/ncu_launches.py" ns=gpu__time_duration.sum grid=launch__grid_size block=launch__block_size \
          cluster_x=launch__cluster_dim_x cluster_y=launch__cluster_dim_y regs=launch__registers_per_thread \
          smem=launch__shared_mem_per_block | tee -a "$log"
  done
fi
