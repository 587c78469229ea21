#!/usr/bin/env python3
"""How much of a kernel's code one launch runs, from ncu's SASS source page (SourceCounters section):
the kernel-switch penalty is code fetched again after another kernel ran (docs/hopper-gemm.md), so what
counts is the code a launch walks, and how much of it each CTA walks only once or a few times (cold at
every launch) against the loops that run hot.
   ncu --import REPORT --page source --csv --print-source sass | python3 bench/device/ncu_footprint.py CTAS
CTAS: the launch's CTA count (executions are counted per warp, summed over the launch)."""
import csv
import sys

ctas = int(sys.argv[1]) if len(sys.argv) > 1 else 1
rows = list(csv.reader(sys.stdin))
hdr = next((i for i, r in enumerate(rows) if "Source" in r), None)
if hdr is None:
    sys.exit("no source page")
h = rows[hdr]
body = [r for r in rows[hdr + 1:] if len(r) == len(h)]
src = h.index("Source")
addr = h.index("Address") if "Address" in h else None
ex = next(i for i, c in enumerate(h) if c == "Instructions Executed")
stall_cols = [i for i, c in enumerate(h) if "no_instruction" in c.lower() or "no instruction" in c.lower()]
all_stall = next((i for i, c in enumerate(h) if c.startswith("Warp Stall Sampling (All")), None)


def num(r, i):
    try:
        return float(r[i] or 0)
    except ValueError:
        return 0.0


total = len(body)
run = [r for r in body if num(r, ex) > 0]
# Executions per CTA: warps x passes. Buckets: <= 8 per CTA (prologue, first-unit set-up, epilogue of a
# one-unit CTA: walked cold), <= 64, more (loops).
buckets = [(0, 8), (8, 64), (64, float("inf"))]
print(f"SASS instructions {total} ({total * 16 / 1024:.0f} KB); run by this launch {len(run)} ({len(run) * 16 / 1024:.0f} KB)")
for lo, hi in buckets:
    sel = [r for r in run if lo < num(r, ex) / ctas <= hi]
    print(f"  executed {lo}-{hi} times per CTA: {len(sel):6d} instructions ({len(sel) * 16 / 1024:.0f} KB)")
if addr is not None:
    lines = {int(r[addr], 16) // 128 for r in run if r[addr]}
    print(f"  distinct 128-byte code lines touched: {len(lines)} ({len(lines) * 128 / 1024:.0f} KB)")
if all_stall is not None:
    tot = sum(num(r, all_stall) for r in body)
    print(f"warp stall samples {tot:.0f}")
    for i in stall_cols:
        s = sum(num(r, i) for r in body)
        print(f"  {h[i]}: {s:.0f} ({100 * s / max(tot, 1):.1f}%)")
print("columns: " + " | ".join(h))
