#!/usr/bin/env bash
# Same-call A/B for the mainloop's pipeline state broadcast from lane 0 (session 37: the k-loop in
# uniform registers), in parts (PARTS, default "tests gemm"):
#   tests  NEW's GPU tests (a gate: nothing else runs if one fails)
#   gemm   braid-gemm of OLD and NEW interleaved (OLD, NEW, OLD, NEW): the attention output GEMMs, the
#          MLP's GPT-3 GEMMs, a QKV GEMM, split-K / stream-K (segmented kernels); cuBLASLt and CUTLASS's
#          cooperative 128x128 in OLD's first round
#   conv   the deep and the shallow conv pairs, every chain variant, the builds alternating (ab-bins.sh)
#   OLD=dir NEW=dir OUT=dir OLD_COMMIT=.. NEW_COMMIT=.. [PARTS=..] bash bench/device/uniform-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
PARTS=${PARTS:-tests gemm}
mkdir -p "$OUT"
if [[ " $PARTS " == *" tests "* ]]; then
  gpu_tests_gate "$NEW" "$OUT" || exit 1
fi
if [[ " $PARTS " == *" gemm "* ]]; then
  log="$OUT/gemm-ab.log"
  log_header "$log" "OLD=$OLD (${OLD_COMMIT:-?}) NEW=$NEW (${NEW_COMMIT:-?}) PARTS=gemm bash bench/device/uniform-ab.sh"
  cases=("gpt3-out 512,1024,2048 12288 1536 128x128,128x128-staged-pp,128x256-staged,192x128-staged"
         "llama-out 1024,2048 8192 1024 128x128,128x128-staged-pp,128x256-staged"
         "gpt3-w2 256,512,1024 12288 6144 128x128,128x192,128x128-staged-pp,128x256-staged"
         "gpt3-w1 128,256,768 6144 12288 64x192,64x128,128x128,192x192"
         "gpt3-qkv 512 4608 12288 128x192,192x128-staged"
         "gpt3-w2-seg 256,512 12288 6144 128x128-sk2,128x192-streamk,128x128-g4-streamk")
  CUBLAS_FIRST=1 ROUNDS=2 gemm_ab_rounds "$log" "${cases[@]}"
  python3 bench/switch_ab_table.py "$log" | tail -45
fi
if [[ " $PARTS " == *" conv "* ]]; then
  mkdir -p /tmp/bin
  ln -sfn "$(cd "$NEW" && pwd)" /tmp/bin/new
  ln -sfn "$(cd "$OLD" && pwd)" /tmp/bin/old
  NAMES=new,old PEERS=${PEERS:-bench/results/conv-pair-h100-20261126-4b9ad57-torch.csv} LAYERS=${LAYERS:-512x7,64x56} \
    BATCHES=${BATCHES:-8,20} ROUNDS=${ROUNDS:-2} CONV_LIMIT=${CONV_LIMIT:-100} OUT=$OUT/conv bash bench/device/ab-bins.sh
fi
