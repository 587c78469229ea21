#!/usr/bin/env bash
# Where a conv tile's time goes, mainloop vs epilogue, from braid-bench-conv's traces (stream order,
# conv 1): per tile, start -> mainloop end -> stores done (TileTrace::mainloop_end_ns), medians over the
# tiles. For each binary in BINS (e.g. two builds to compare in one call) and configuration in CONFIGS.
#   BINS=".carry/bin/braid-bench-conv-A .carry/bin/braid-bench-conv-B" CASES="512x7:24 64x56:32" \
#     CONFIGS="128x64-rowmajor 128x128-rowmajor" bash bench/device/conv-epilogue.sh
set -uo pipefail
BINS=${BINS:-build/tools/braid-bench-conv}; CASES=${CASES:-512x7:24 64x56:32}; CONFIGS=${CONFIGS:-128x64-rowmajor}
T=$(mktemp -d)
for bin in $BINS; do
  for cfg in $CONFIGS; do
    for c in $CASES; do
      d="$T/$(basename "$bin")/$cfg"; mkdir -p "$d"
      timeout 120 "$bin" --layers "${c%:*}" --batches "${c#*:}" --configs "$cfg" --reps 10 --trace-dir "$d" > /dev/null 2>&1
    done
  done
done
python3 - "$T" <<'PY'
import csv, glob, os, statistics as st, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*", "*-stream.csv"))):
    rows = [r for r in csv.DictReader(open(f)) if r["stage"] == "0" and float(r["end_us"]) > 0]
    if not rows or float(rows[0].get("mainloop_end_us", -1)) < 0:
        continue
    s0 = min(float(r["start_us"]) for r in rows)
    ml = [float(r["mainloop_end_us"]) - float(r["start_us"]) for r in rows]
    ep = [float(r["end_us"]) - float(r["mainloop_end_us"]) for r in rows]
    b, cfg = f.split(os.sep)[-3:-1]
    case = os.path.basename(f).replace("trace-conv-", "").replace("-stream.csv", "")
    print(f"{b:22s} {cfg:24s} {case:16s} tiles {len(rows):4d}  mainloop med {st.median(ml):6.2f} us  "
          f"epilogue med {st.median(ep):5.2f} us (max {max(ep):5.2f})  conv span {max(float(r['end_us']) for r in rows) - s0:6.2f} us")
PY
rm -rf "$T"
