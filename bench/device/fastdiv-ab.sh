#!/usr/bin/env bash
# One device call: the GPU tests of NEW (a gate), then the same-call A/B of two builds on what the
# kernels' index math touches -- single GEMMs plain and right after another braid kernel (act-ab.sh,
# the kernel-switch penalty) and the deep conv pairs (ab-bins.sh) -- interleaved so drift shows.
#   OLD=dir NEW=dir OUT=dir OLD_COMMIT=.. NEW_COMMIT=.. bash bench/device/fastdiv-ab.sh
# (OLD/NEW hold braid-gemm, braid-bench-conv, braid-bench-mlp; NEW also braid_gpu_tests. PEERS: a
#  recorded cuDNN -torch.csv for the conv rows.)
set -uo pipefail
OUT=${OUT:-/tmp/fastdiv-ab}
mkdir -p "$OUT"
{ echo "# braid_gpu_tests ($NEW_COMMIT) on $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%H:%MZ)"
  timeout ${TEST_LIMIT:-200} "$NEW/braid_gpu_tests"; echo "exit $?"; } > "$OUT/gpu-tests.log" 2>&1
tail -4 "$OUT/gpu-tests.log"
if grep -q "^\[  FAILED  \]" "$OUT/gpu-tests.log" || ! grep -q "^\[  PASSED  \]" "$OUT/gpu-tests.log"; then
  grep -E "FAILED|Failure" "$OUT/gpu-tests.log" | head -20
  exit 1
fi
OLD=$OLD NEW=$NEW OUT=$OUT/gemm TOKENS=${TOKENS:-128,256} MLP_LIMIT=0 bash bench/device/act-ab.sh
grep -E "^==|M=" "$OUT/gemm/act-ab.log" | head -80
mkdir -p /tmp/bin
ln -sfn "$(cd "$NEW" && pwd)" /tmp/bin/new
ln -sfn "$(cd "$OLD" && pwd)" /tmp/bin/old
NAMES=new,old PEERS=${PEERS:-bench/results/conv-pair-h100-20261124-b6ea848-torch.csv} LAYERS=${LAYERS:-512x7,64x56} \
  BATCHES=${BATCHES:-8,12,20} ROUNDS=${ROUNDS:-2} CONV_LIMIT=${CONV_LIMIT:-100} OUT=$OUT/conv bash bench/device/ab-bins.sh
