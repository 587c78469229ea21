#!/usr/bin/env bash
# Where the time of X from partials goes (session 56): braid-bench-mlp (this build) with BRAID_SKINNY_XR_DIAG = 0
# (as built), 1 (no partial loads: wrong sums, timing only; BRAID_MLP_TIME_UNCHECKED=1 times them) and 2 (a unit's
# loads issued after its stage's release), with mma.sync and wgmma consumers among the configurations. Logs under $OUT/r.
#   COMMIT=<hash> OUT=out bash bench/device/xr-diag.sh
set -uo pipefail
source bench/device/common.sh
export BRAID_COMMIT=${COMMIT:-unknown}
unpack_carried .carry/XR "$OUT/r"
ARGS="--models ${MODELS:-gpt3} --tokens ${TOKENS:-1} --reps 20 --show-configs --skinny ${SKINNY:-a1s8-pk,a2s4-pk,p1s4-pk,a2s4-wg-pk,p1s4-wg-pk}"
for d in ${DIAGS:-0 1 2}; do
  log=$OUT/r/mlp-diag$d.log
  log_header "$log" "BRAID_SKINNY_XR_DIAG=$d BRAID_MLP_TIME_UNCHECKED=1 braid-bench-mlp $ARGS"
  BRAID_SKINNY_XR_DIAG=$d BRAID_MLP_TIME_UNCHECKED=1 timeout 170 /tmp/new/braid-bench-mlp $ARGS >> "$log" 2>&1
  echo "== diag $d"; grep -E "pdl-only(-xr)?/skinny-[a-z0-9-]+\+skinny-(a2s4|p1s4|a1s8)(-wg)?-pk " "$log" | awk '{print $2, $3, $4}' | sort -k3 -n | head -24
done
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
