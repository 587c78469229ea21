#!/usr/bin/env bash
# Same-call A/B of two builds on what the kernels' index math touches, in parts (PARTS, default all):
#   tests  the GPU tests of NEW (a gate: nothing else runs if one fails)
#   gemm   single GEMMs plain and right after another braid kernel (act-ab.sh: the kernel-switch
#          penalty), then short-K many-tile and split-K / stream-K GEMMs -- OLD, NEW, OLD, NEW
#   conv   the deep conv pairs, every chain variant (ab-bins.sh), the builds alternating
#   OLD=dir NEW=dir OUT=dir OLD_COMMIT=.. NEW_COMMIT=.. [PARTS="tests gemm conv"] bash bench/device/fastdiv-ab.sh
# (OLD/NEW hold braid-gemm / braid-bench-conv as the parts need; NEW braid_gpu_tests. PEERS: a recorded
#  cuDNN -torch.csv for the conv rows.)
set -uo pipefail
source "$(dirname "$0")/common.sh"
OUT=${OUT:-/tmp/fastdiv-ab}
PARTS=${PARTS:-tests gemm conv}
mkdir -p "$OUT"
if [[ " $PARTS " == *" tests "* ]]; then
  gpu_tests_gate "$NEW" "$OUT" || exit 1
fi
if [[ " $PARTS " == *" gemm "* ]]; then
  OLD=$OLD NEW=$NEW OUT=$OUT/gemm TOKENS=${TOKENS:-128,256} MLP_LIMIT=0 bash bench/device/act-ab.sh
  log="$OUT/gemm/more.log"
  { echo "# device: $(nvidia-smi --query-gpu=name --format=csv,noheader), date: $(date -u +%FT%H:%MZ)"
    echo "# old: ${OLD_COMMIT:-?} new: ${NEW_COMMIT:-?}; short-K many-tile, split-K and stream-K GEMMs"; } > "$log"
  # (name M N K configs)
  cases=("gpt3-out 2048 12288 1536 128x128,128x256-staged,192x128-staged"
         "gpt3-w2 256,512 12288 6144 128x128-sk2,128x192-streamk,128x128-g4-streamk,64x128-sk2-rs")
  ROUNDS=2 gemm_ab_rounds "$log" "${cases[@]}"
  grep -E "^==|M=" "$OUT/gemm/act-ab.log" "$log" | grep -v cutlass | sed 's/^.*\.log://' | head -120
fi
if [[ " $PARTS " == *" conv "* ]]; then
  mkdir -p /tmp/bin
  ln -sfn "$(cd "$NEW" && pwd)" /tmp/bin/new
  ln -sfn "$(cd "$OLD" && pwd)" /tmp/bin/old
  NAMES=new,old PEERS=${PEERS:-bench/results/conv-pair-h100-20261124-b6ea848-torch.csv} LAYERS=${LAYERS:-512x7,64x56} \
    BATCHES=${BATCHES:-8,12,20} ROUNDS=${ROUNDS:-2} CONV_LIMIT=${CONV_LIMIT:-100} OUT=$OUT/conv bash bench/device/ab-bins.sh
fi
