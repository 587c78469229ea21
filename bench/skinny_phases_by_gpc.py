#!/usr/bin/env python3
"""Per-GPC view of the skinny GEMM's phase stamps: does where a CTA sits decide when it finishes?
Reads the GPC map that `braid-micro-sm-topology` prints ("GPC g (n SMs): s s ...") and the per-CTA lines of
`BRAID_PHASES_DUMP=1 braid-micro-weight-stream R phases CONFIG...` ("cta SHAPE skinny-CFG i sm S t0 .. t7", µs from
the first entry), and prints, per shape and configuration and per GPC: its SMs, the CTAs that ran there, and the
median "last in" (the CTA's last unit landed) and "end" stamps -- then the spread of the GPC medians.
Usage: skinny_phases_by_gpc.py TOPOLOGY_LOG PHASES_LOG"""
import re
import statistics
import sys
from collections import defaultdict

LAST_IN, END = 5, 7  # stamp indices (skinny_gemm.cuh: entry, W issued, waited, unit0, unit3, last in, last MMA, end)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gpc_of, gpc_size = {}, {}
    for line in open(sys.argv[1]):
        m = re.match(r"\s*GPC (\d+) \((\d+) SMs\):(.*)", line)
        if m:
            g = int(m.group(1))
            gpc_size[g] = int(m.group(2))
            for s in m.group(3).split():
                gpc_of[int(s)] = g
    if not gpc_of:
        sys.exit("skinny_phases_by_gpc.py: no GPC map in " + sys.argv[1])
    runs = defaultdict(list)  # (shape, cfg) -> [(sm, stamps)]
    for line in open(sys.argv[2]):
        f = line.split()
        if len(f) >= 13 and f[0] == "cta" and f[4] == "sm":
            runs[(f[1], f[2])].append((int(f[5]), [float(x) for x in f[6:14]]))
    if not runs:
        sys.exit("skinny_phases_by_gpc.py: no per-CTA lines in " + sys.argv[2])
    for (shape, cfg), ctas in runs.items():
        by = defaultdict(list)
        for sm, st in ctas:
            by[gpc_of.get(sm, -1)].append(st)
        print(f"{shape} {cfg}: {len(ctas)} CTAs")
        meds = []
        for g in sorted(by):
            last = statistics.median(st[LAST_IN] for st in by[g])
            end = statistics.median(st[END] for st in by[g])
            meds.append(last)
            size = gpc_size.get(g, 0)
            print(f"  GPC {g:2d} ({size:2d} SMs): {len(by[g]):3d} CTAs  last in {last:6.2f}  end {end:6.2f} us (medians)")
        print(f"  GPC medians of 'last in': {min(meds):.2f} .. {max(meds):.2f} us")


if __name__ == "__main__":
    main()
