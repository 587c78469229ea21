#!/usr/bin/env python3
"""Where a persistent launch's slow CTAs sit: per-unit trace CSVs (braid-gemm --unit-trace PREFIX,
braid-bench-conv --unit-trace-dir DIR; columns block, smid, k_begin, k_end, start_ns, mainloop_end_ns,
end_ns, ...) grouped by the SM's GPC, as braid-micro-sm-topology found them on the same machine (its log:
lines "  GPC g (n SMs): s s s ...").

  bench/unit_trace_sm.py --topology sm-topology.log units-*.csv

For each CSV: the span, the mainloop time per k-step over all units (median, slowest), and per GPC the
busy SMs and their median / slowest mainloop per k-step -- so a GPC that holds more of the launch's CTAs
than the others, and runs them slower, shows as such. Plain Python, no dependencies.
"""
import argparse
import csv
import re
import statistics
import sys


def read_topology(path):
    gpc = {}
    if not path:
        return gpc
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*GPC (\d+) \((\d+) SMs\):((?: \d+)+)", line)
            if m:
                for s in m.group(3).split():
                    gpc[int(s)] = int(m.group(1))
    return gpc


def summarize(path, gpc):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            ks = int(r["k_end"]) - int(r["k_begin"])
            if ks <= 0:
                continue
            ml = (int(r["mainloop_end_ns"]) - int(r["start_ns"])) / ks / 1e3
            rows.append((int(r["smid"]), ml, int(r["start_ns"]), int(r["end_ns"])))
    if not rows:
        return f"{path}: no units"
    span = (max(r[3] for r in rows) - min(r[2] for r in rows)) / 1e3
    mls = [r[1] for r in rows]
    out = [f"{path}: {len(rows)} units on {len({r[0] for r in rows})} SMs, span {span:.1f} us, "
           f"mainloop us/k-step median {statistics.median(mls):.3f} slowest {max(mls):.3f}"]
    by = {}
    for smid, ml, _, _ in rows:
        by.setdefault(gpc.get(smid, -1), []).append(ml)
    parts = []
    for g in sorted(by):
        v = by[g]
        parts.append(f"GPC {g}: {len(v)} x {statistics.median(v):.3f} (max {max(v):.3f})")
    out.append("  " + "; ".join(parts))
    slow = sorted(rows, key=lambda r: -r[1])[: max(1, len(rows) // 10)]
    out.append("  slowest tenth on SMs: " + " ".join(f"{r[0]}(g{gpc.get(r[0], '?')})" for r in slow))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topology", help="braid-micro-sm-topology log of the same machine")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    gpc = read_topology(a.topology)
    for p in a.csv:
        print(summarize(p, gpc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
