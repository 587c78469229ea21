#!/usr/bin/env bash
# The skinny GEMM's late PDL trigger lead (BRAID_SKINNY_TRIGGER_LEAD_NS) against a diagnostic switch (AB_ENV) in the
# MLP, on the GPU machine, one carried build (/tmp/new, unpacked by the caller): for each lead in LEADS, braid-bench-mlp
# with AB_ENV=1 ("before") and without ("after") over MLP_SKINNY's configurations, under $OUT/lead.
#   OUT=out AB_ENV=BRAID_SKINNY_NO_CP_ASYNC_W [LEADS="1500 3000 5500"] [TOKENS=1,8] [MLP_SKINNY=...] \
#     bash bench/device/trigger-lead-ab.sh
set -uo pipefail
: "${AB_ENV:?AB_ENV: the environment variable that switches the change off}"
mkdir -p $OUT/lead
for lead in ${LEADS:-1500 3000 5500}; do
  for side in before after; do
    env=(); [ $side = before ] && env=("$AB_ENV=1")
    log=$OUT/lead/mlp-lead$lead-$side.log
    env "${env[@]}" BRAID_SKINNY_TRIGGER_LEAD_NS=$lead timeout 150 /tmp/new/braid-bench-mlp --models gpt3,llama \
      --tokens ${TOKENS:-1,8} --reps 20 --show-configs --skinny ${MLP_SKINNY:-a1s8-pk,a2s4-pk,a1s8-dsm-pk} > "$log" 2>&1
    echo "lead $lead $side: $(grep -E 'braid  ' "$log" | awk '{printf "%s %s %s; ", $1, $2, $4}')"
  done
done
