#!/usr/bin/env bash
# braid-gemm's timed loop on one shape while nvidia-smi samples the SM clock, power and throttle
# reasons every 20 ms; then the same kernels under ncu (one launch each, isolated). To tell whether
# a kernel is slower in the timed loop than alone, and whether the clock is what moved.
#   BIN=/tmp/bin OUT=dir [M=2048 N=12288 K=6144] [CONFIGS=128x256] [SHAPES=coop-128x256] bash bench/device/gemm-clocks.sh
set -uo pipefail
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/gemm-clocks}
M=${M:-2048}; N=${N:-12288}; K=${K:-6144}
CONFIGS=${CONFIGS:-128x256}
SHAPES=${SHAPES:-coop-128x256}
mkdir -p "$OUT"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 20 > "$OUT/smi-M$M.csv" 2>/dev/null &
smi=$!
sleep 0.5
"$BIN/braid-gemm" --m $M --n $N --k $K --configs "$CONFIGS" --cutlass-shapes "$SHAPES" --reps ${REPS:-40} 2>&1 | tee "$OUT/loop-M$M.log"
sleep 0.3
kill $smi 2>/dev/null; wait $smi 2>/dev/null
python3 - "$OUT/smi-M$M.csv" <<'PY'
import sys, collections
rows = [l.strip().split(", ") for l in open(sys.argv[1]) if l.count(",") >= 5]
clk = [int(r[1].split()[0]) for r in rows]; pw = [float(r[3].split()[0]) for r in rows if r[3].split()[0].replace('.','',1).isdigit()]
reasons = collections.Counter(r[5] for r in rows)
busy = [c for c, r in zip(clk, rows) if float(r[3].split()[0]) > 200]
print("  smi samples %d: SM clock min %d median %d max %d MHz; under load (>200 W) median %s MHz; power max %.0f W; throttle reasons %s"
      % (len(clk), min(clk), sorted(clk)[len(clk)//2], max(clk), sorted(busy)[len(busy)//2] if busy else "-", max(pw) if pw else 0, dict(reasons)))
PY
