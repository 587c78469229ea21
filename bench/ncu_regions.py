#!/usr/bin/env python3
"""Where a braid Hopper kernel's warps spend their stall samples, by code region, from an ncu source page
exported as CSV (`ncu --import R --page source --csv --print-source sass > R-sass.csv[.gz]`, as
bench/device/conv-stalls.sh and pp-gap-ncu.sh save it):
  consumer k-loop  the wgmma loops (a pipeline full-barrier TRYWAIT through WARPGROUP.DEPBAR.LE gsb0, 0x1)
  producer k-step  the TMA issue loop (between consecutive A-operand loads: UTMALDG.*IM2COL for a
                   convolution, every UTMALDG otherwise)
  other            everything else (epilogue, scheduling, waits between units, poster)
with each region's executed instructions.
    python3 bench/ncu_regions.py R-sass.csv[.gz] [...]"""
import csv
import gzip
import sys


def regions(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    hdr = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
    h, body = rows[hdr], rows[hdr + 1:]
    S, W, E = h.index("Source"), h.index("Warp Stall Sampling (All Samples)"), h.index("Instructions Executed")
    src = [r[S] for r in body]
    tag = ["other"] * len(body)
    for j, t in enumerate(src):  # consumer k-loops
        if "DEPBAR.LE gsb0, 0x1" in t:
            k = j
            while k > 0 and "TRYWAIT" not in src[k] and j - k < 200:
                k -= 1
            for i in range(k, j + 1):
                tag[i] = "consumer k-loop"
    im2col = any("IM2COL" in t for t in src)
    loads = [i for i, t in enumerate(src) if "UTMALDG" in t and (not im2col or "IM2COL" in t)]
    for a, b in zip(loads, loads[1:]):
        if b - a < 200 and all(tag[i] == "other" for i in range(a + 1, b + 1)):
            for i in range(a + 1, b + 1):
                tag[i] = "producer k-step"
    samples, executed = {}, {}
    for r, g in zip(body, tag):
        samples[g] = samples.get(g, 0) + int(float(r[W] or 0))
        executed[g] = executed.get(g, 0) + int(float(r[E] or 0))
    return samples, executed


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        s, e = regions(path)
        ts, te = sum(s.values()) or 1, sum(e.values()) or 1
        print(path)
        for g in ("consumer k-loop", "producer k-step", "other"):
            print(f"  {g:16s} stall samples {100 * s.get(g, 0) / ts:5.1f}%   instructions executed {100 * e.get(g, 0) / te:5.1f}%")
