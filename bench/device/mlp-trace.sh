#!/usr/bin/env bash
# Tile traces (start, mainloop end, end, SM per tile; bench/plot_timeline.py) of the MLP chains at few tokens: braid's
# stream order, PDL alone with the same kernels, and the tuner's pick, beside cuBLASLt in the same run.
#   OUT=<dir> COMMIT=<hash> SET=<.carry/X> [CONFIGS=a1s4-pk,...] [TOKENS=1] [MODELS=llama,gpt3] bash bench/device/mlp-trace.sh
#   (carry SET: new/braid-bench-mlp.xz)
source "$(dirname "$0")/common.sh"
export BRAID_COMMIT=${COMMIT:-unknown}
unpack_carried ${SET:-.carry/FR} $OUT/d
mkdir -p $OUT/d/tr
SK=(); [ -n "${CONFIGS-}" ] && SK=(--skinny $CONFIGS)
CMD="braid-bench-mlp --models ${MODELS:-llama,gpt3} --tokens ${TOKENS:-1} --reps 20 --show-configs ${SK[*]}"
log_header $OUT/d/mlp.log "$CMD --trace-dir tr"
timeout ${MLP_LIMIT:-400} /tmp/new/$CMD --trace-dir $OUT/d/tr --csv $OUT/d/mlp.csv >> $OUT/d/mlp.log 2>&1
echo "mlp exit $?"
grep -E "chosen|wrote|^    " $OUT/d/mlp.log | grep -v "^    [a-z0-9-]* *[0-9.]* *[0-9.]* *[0-9.]*  (" | head -40
