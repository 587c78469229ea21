#!/usr/bin/env bash
# One call's record of a tree: the whole GPU test suite, the MLP at T = 1-128 (issue 3; mlp-run.sh) and the decode
# attention sweep with its PyTorch peer (issue 4; attn-run.sh), from carried binaries.
#   SET=.carry/F OUT=$OUT/f COMMIT=<hash> [TOKENS=1,2,4,8,16,32,64,128] [ATTN_CASES=decode] bash bench/device/pack-sweeps.sh
# SET holds new/{braid_gpu_tests,braid-bench-mlp,braid-bench-attn}.
set -uo pipefail
SET=${SET:-.carry/F}
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
unpack_carried "$SET" "$OUT"
timeout ${TEST_LIMIT:-200} /tmp/new/braid_gpu_tests > "$OUT/gpu-tests.log" 2>&1
echo "exit $?" >> "$OUT/gpu-tests.log"
tail -3 "$OUT/gpu-tests.log"
BIN=/tmp/new OUT="$OUT/mlp" BRAID_COMMIT=${COMMIT:-unknown} LIMIT=${MLP_LIMIT:-200} bash bench/device/mlp-run.sh \
  --tokens ${TOKENS:-1,2,4,8,16,32,64,128}
CASES=${ATTN_CASES:-decode} BIN=/tmp/new OUT="$OUT/attn" BRAID_COMMIT=${COMMIT:-unknown} LIMIT=${ATTN_LIMIT:-200} \
  bash bench/device/attn-run.sh | tail -25
