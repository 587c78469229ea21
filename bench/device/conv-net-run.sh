#!/usr/bin/env bash
# The conv pair benchmark (cuDNN peers in the call) and the whole-network benchmark in one device call,
# each step's outputs packed as its own tarball under $OUT as soon as it ends (a call cut short still
# returns the finished step).
#   BIN=/tmp/new BRAID_COMMIT=<hash> OUT=out bash bench/device/conv-net-run.sh
set -uo pipefail
BIN=${BIN:-build/tools}
mkdir -p "$OUT/conv" "$OUT/net"
LIMIT=${CONV_LIMIT:-240} BIN=$BIN OUT=$OUT/conv bash "$(dirname "$0")/conv-run.sh" | tail -45
(cd "$OUT" && tar czf conv.tgz conv && rm -rf conv)
LIMIT=${NET_LIMIT:-280} CAPI=$BIN/libbraid_capi.so OUT=$OUT/net bash "$(dirname "$0")/net-run.sh" | tail -30
(cd "$OUT" && tar czf net.tgz net && rm -rf net)
