#!/usr/bin/env bash
# The MLP benchmark (both models, every T) and the attention benchmark (ATTN_CASES, default prompt) in one device call,
# bounded so that both fit the 600-s limit; outputs under $OUT/r packed as one tarball.
#   BIN=/tmp/new BRAID_COMMIT=<hash> OUT=out bash bench/device/mlp-attn-prompt.sh
set -uo pipefail
BIN=${BIN:-build/tools}
mkdir -p "$OUT/r"
LIMIT=${MLP_LIMIT:-150} BIN=$BIN OUT=$OUT/r bash "$(dirname "$0")/mlp-run.sh"
CASES=${ATTN_CASES:-prompt} TORCH_LIMIT=${TORCH_LIMIT:-90} LIMIT=${ATTN_LIMIT:-170} BIN=$BIN OUT=$OUT/r bash "$(dirname "$0")/attn-run.sh"
cd "$OUT" && tar czf all.tgz r && rm -rf r
