#!/usr/bin/env bash
# Session 59: power, SM clock and temperature sampled (nvidia-smi, 50 ms) while braid's GEMM and cuBLASLt's each run
# GPT-3's W1 at M = 2048 for a few seconds on their own -- do braid's compute-bound kernels draw more power per FLOP,
# and so run slower than cuBLASLt's once the GPU is held at its power cap?
#   SET=.carry/S59c OUT=$OUT COMMIT=<hash> bash bench/device/s59-power.sh      (SET: new/braid-gemm.xz)
set -uo pipefail
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
start_run "${SET:-.carry/S59c}"
G="$OUT/power.log"
log_header "$G" "braid-gemm --m 2048 --n 6144 --k 12288 --act gelu --reps ${REPS:-4000}, one kernel per process, nvidia-smi -lms 50 beside"
run() {  # run NAME ARGS...: one process, sampled
  local name=$1; shift
  nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu --format=csv,noheader -lms 50 > "$OUT/smi-$name.csv" &
  local smi=$!
  sleep 0.5
  echo "== $name" >> "$G"
  timeout 120 $B/braid-gemm --m 2048 --n 6144 --k 12288 --act gelu --reps ${REPS:-4000} "$@" >> "$G" 2>&1
  sleep 0.5
  kill $smi
  sleep 3  # cool down a little between the two
}
run cublaslt --configs none
run braid-128x128-staged-pp --no-cublas --configs 128x128-staged-pp
run braid-256x128-t --no-cublas --configs 256x128-t
cat "$G"
for f in "$OUT"/smi-*.csv; do
  python3 - "$f" <<'PY'
import sys, csv
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) == 4]
def num(x): return float(x.strip().split()[0])
vals = [(num(r[1]), num(r[2]), num(r[3])) for r in rows]
busy = [v for v in vals if v[0] > 300]  # the GEMM's plateau (idle draws ~100 W)
if busy:
    n = len(busy)
    print(f"{sys.argv[1].split('/')[-1]}: {n} samples over 300 W: power {sum(v[0] for v in busy)/n:.0f} W, "
          f"SM clock {sum(v[1] for v in busy)/n:.0f} MHz (min {min(v[1] for v in busy):.0f}), temperature up to {max(v[2] for v in busy):.0f} C")
PY
done
