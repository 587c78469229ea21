#!/usr/bin/env bash
# The synced kernel forms (gemm_config.hpp, "The forms of braid's GEMM kernels") in one binary: (1) the GPU tests;
# (2) the MLP sweep of every T with the forms on (the default; cuBLASLt in the same run -- the README's rows);
# (3) the MLP at TOKENS with BRAID_KERNEL_FORM=general (every launch in its general form: the synchronized
# variants' A/B against (2)); (4) optionally (CONV=1) the conv pairs default and general (env-ab.sh).
#   BIN=/tmp/new OUT=dir BRAID_COMMIT=<hash> [TOKENS=384,768,1536,2048] [CONV=1] bash bench/device/synced-forms-ab.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/synced-forms-ab}
mkdir -p "$OUT"
NEW_COMMIT=${BRAID_COMMIT:-?} gpu_tests_gate "$BIN" "$OUT" || { echo "GPU tests failed: no timing"; exit 1; }
BIN=$BIN OUT=$OUT/default bash bench/device/mlp-run.sh > /dev/null
cat $OUT/default/mlp-hopper-*.csv | awk 'NR == 1 || !/^gpu,/' > $OUT/mlp-default.csv
python3 bench/mlp_table.py $OUT/mlp-default.csv > $OUT/mlp-default-table.txt 2>&1
log_header "$OUT/mlp-general.log" "BRAID_KERNEL_FORM=general braid-bench-mlp --tokens ${TOKENS:-384,768,1536,2048}"
BRAID_KERNEL_FORM=general timeout 300 $BIN/braid-bench-mlp --models gpt3,llama --tokens ${TOKENS:-384,768,1536,2048} \
  --reps ${REPS:-20} --csv $OUT/mlp-general.csv >> $OUT/mlp-general.log 2>&1
python3 - "$OUT/mlp-default.csv" "$OUT/mlp-general.csv" <<'PY' | tee $OUT/synced-ab-table.txt
import csv, sys, collections
def load(p):
    d = collections.defaultdict(dict)
    for r in csv.DictReader(open(p)):
        if r["variant"].startswith("braid:") and float(r["time_us"]) > 0:
            d[(r["workload"], r["shape"])][r["variant"][6:]] = float(r["time_us"])
    return d
lean, gen = load(sys.argv[1]), load(sys.argv[2])
print("case | synchronized variant | general form us | synced form us | general/synced | best unsynchronized (forms on) us")
for k in sorted(gen, key=lambda k: (k[0], int(k[1].split("=")[1]))):
    if k not in lean: continue
    unsync = min((t for v, t in lean[k].items() if "sync" not in v), default=0)
    for v, t in sorted(gen[k].items()):
        if "sync" in v and v in lean[k]:
            print(f"{k[0]} {k[1]} | {v} | {t:.1f} | {lean[k][v]:.1f} | {t / lean[k][v]:.3f} | {unsync:.1f}")
PY
if [ "${CONV:-0}" = 1 ]; then
  BIN=$BIN OUT=$OUT/conv WHAT=conv AB_ENV=BRAID_KERNEL_FORM AB_VALUE=general ROUNDS=1 bash bench/device/env-ab.sh | tail -30
fi
