#!/usr/bin/env python3
"""The SASS lines of an ncu report with the most warp-stall samples, with their share.
   ncu --import REPORT --page source --csv --print-source sass | python3 bench/device/ncu_top_sass.py [N]"""
import csv
import sys

rows = list(csv.reader(sys.stdin))
hdr = next((i for i, r in enumerate(rows) if "Source" in r), None)
if hdr is None:
    sys.exit("no source page")
h = rows[hdr]
body = rows[hdr + 1:]
src = h.index("Source")
col = next(i for i, c in enumerate(h) if c.startswith("Warp Stall Sampling (All"))
tot = sum(float(r[col] or 0) for r in body if len(r) > col)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 25
top = sorted(body, key=lambda r: -float(r[col] or 0) if len(r) > col else 0)[:n]
print(f"total stall samples {tot:.0f}")
for r in top:
    print(f"{100 * float(r[col] or 0) / tot:5.1f}%  {r[src][:110]}")
