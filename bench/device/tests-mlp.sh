#!/usr/bin/env bash
# One device call: every GPU test (common.sh gpu_tests_gate), then -- only if they all pass -- the MLP
# benchmark of issue 3 (mlp-run.sh: both models, every T, cuBLASLt in the same process); everything under
# $OUT/r, packed as one tarball.
#   BIN=/tmp/new BRAID_COMMIT=<hash> NEW_COMMIT=<hash> OUT=out bash bench/device/tests-mlp.sh
set -uo pipefail
BIN=${BIN:-build/tools}
source "$(dirname "$0")/common.sh"
mkdir -p "$OUT/r"
if gpu_tests_gate "$BIN" "$OUT/r"; then
  LIMIT=${MLP_LIMIT:-170} BIN=$BIN OUT=$OUT/r bash "$(dirname "$0")/mlp-run.sh"
else
  echo "GPU tests failed: no benchmark"
fi
(cd "$OUT" && tar czf all.tgz r && rm -rf r)
