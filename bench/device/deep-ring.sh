#!/usr/bin/env bash
# (Session 54's deep rings and early W were reverted; to rerun this, apply
#  bench/results/deep-ring-h200-20261129/deep-ring-and-early-w.patch to 24b9385 and build.)
# Deep skinny rings (10 / 12 stages) on the GPU machine, one call: every GPU test (the gate), the decode chains' phase
# stamps with deep-ring output GEMMs (decode-diag.sh), the decode sweep with PyTorch (attn-run.sh), and the MLP at
# small T (mlp-run.sh; GEMM 2 also on a deep ring under PDL alone) -- all under $OUT/r, packed as r.tgz.
#   SET=.carry/D COMMIT=<hash> OUT=out [PICKS=...] [TOKENS=1,8,16] [SKIP_DECODE=1] [SKIP_MLP=1] bash bench/device/deep-ring.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
start_gated_run ${SET:-.carry/D}
if [ -n "${PICKS:-}" ]; then
  SET=${SET:-.carry/D} SIDE=new OUT=$OUT/r PICKS="$PICKS" bash "$(dirname "$0")/decode-diag.sh" 2>&1 | grep -E "^==|braid:pdl-only|out \(" | cut -c1-300
fi
[ -n "${SKIP_DECODE:-}" ] || CASES=decode BIN=$B OUT=$OUT/r/decode TORCH_LIMIT=150 LIMIT=${DECODE_LIMIT:-330} bash "$(dirname "$0")/attn-run.sh" 2>&1 | tail -25
[ -n "${SKIP_MLP:-}" ] || LIMIT=${MLP_LIMIT:-200} BIN=$B OUT=$OUT/r/mlp bash "$(dirname "$0")/mlp-run.sh" --tokens ${TOKENS:-1,8,16}
(cd $OUT && tar czf r.tgz r && rm -rf r)
