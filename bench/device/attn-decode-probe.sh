#!/usr/bin/env bash
# Where the decode attention block's time goes: kernel-only durations and DRAM bytes of every kernel
# braid-bench-attn launches for one decode case (ncu, caches flushed before each launch), summarised per
# kernel name and grid; plus braid's per-tile traces of the chain variants (--trace-dir).
#   BIN=.carry/bin OUT=out MODEL=llama CACHE=512 B=1 bash bench/device/attn-decode-probe.sh
set -uo pipefail
BIN=${BIN:-build/tools}; OUT=${OUT:-out}; MODEL=${MODEL:-llama}; CACHE=${CACHE:-512}; B=${B:-1}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
mkdir -p "$OUT/traces"
tag="decode-$MODEL-B$B-S$CACHE"
sel=(--models "$MODEL" --cases decode --caches "$CACHE" --batches "$B")
timeout ${LIMIT:-200} "$NCU" --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
  --kernel-name regex:'flash|skinny|hopper_gemm|gemm' --launch-count ${COUNT:-400} --csv \
  "$BIN/braid-bench-attn" "${sel[@]}" --reps 3 > "$OUT/$tag-ncu.csv" 2> "$OUT/$tag-ncu.err"
echo "ncu exit $?"
python3 - "$OUT/$tag-ncu.csv" <<'PY'
import csv, sys, statistics, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
order = []
with open(sys.argv[1]) as f:
    lines = [l for l in f if l.startswith('"')]
for r in csv.DictReader(lines):
    key = (r["Kernel Name"][:90], r.get("Grid Size", ""), r.get("Block Size", ""))
    if key not in rows: order.append(key)
    v = float(r["Metric Value"].replace(",", ""))
    unit = r["Metric Unit"]
    if r["Metric Name"] == "gpu__time_duration.sum":
        v = v / 1000.0 if unit in ("nsecond", "ns") else (v * 1000.0 if unit in ("msecond", "ms") else v)
    elif unit in ("Kbyte", "KB"): v *= 1e3
    elif unit in ("Mbyte", "MB"): v *= 1e6
    elif unit in ("Gbyte", "GB"): v *= 1e9
    rows[key][r["Metric Name"]].append(v)
print("%-90s %-14s %-10s %5s %9s %9s %9s" % ("kernel", "grid", "block", "n", "us(med)", "MB read", "TB/s"))
for k in order:
    m = rows[k]
    t = statistics.median(m["gpu__time_duration.sum"])
    rd = statistics.median(m.get("dram__bytes_read.sum", [0])) / 1e6
    print("%-90s %-14s %-10s %5d %9.2f %9.2f %9.2f" % (k[0], k[1], k[2], len(m["gpu__time_duration.sum"]), t, rd, rd / t if t else 0))
PY
timeout 120 "$BIN/braid-bench-attn" "${sel[@]}" --reps 20 --trace-dir "$OUT/traces" > "$OUT/$tag.log" 2>&1
echo "bench exit $?"; grep -E "tuned|braid" "$OUT/$tag.log" | head -20
