#!/usr/bin/env python3
"""Side-by-side table of two runs of one benchmark (results CSVs per ../shared/results-format.md) that
differ in one switch, e.g. an environment variable: per case, the best peer (from run A), braid's pick in
A and in B with B/A, and per ordering (the variant's name up to its first '/': stream, pdl-only,
tilesync-pdl, ...) the best time in A and in B. Only rows that passed their checks count.
Usage: ab_table.py A.csv B.csv [--labels A,B] [--orderings stream,pdl-only,...]"""
import argparse
import csv
import sys
from collections import OrderedDict


def load(path):
    """(workload, shape) -> {variant: time_us} over the rows that passed."""
    by = OrderedDict()
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["check"] != "pass":
                continue
            by.setdefault((r["workload"], r["shape"]), {})[r["variant"]] = float(r["time_us"])
    return by


def best(rows, pred):
    ts = [t for v, t in rows.items() if pred(v)]
    return min(ts) if ts else None


def ordering_of(variant):
    return variant[len("braid:"):].split("/")[0] if variant.startswith("braid:") else None


def fmt(t):
    return f"{t:8.1f}" if t is not None else "       -"


def ratio(a, b):
    return f"{a / b:6.3f}" if a and b else "     -"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--labels", default="A,B")
    ap.add_argument("--orderings", default="", help="orderings to list (default: every one in A)")
    args = ap.parse_args()
    la, lb = args.labels.split(",")
    A, B = load(args.a), load(args.b)
    if not A:
        sys.exit(f"ab_table.py: no passing rows in {args.a}")
    ords = [o for o in args.orderings.split(",") if o]
    if not ords:
        seen = OrderedDict()
        for rows in A.values():
            for v in rows:
                if ordering_of(v):
                    seen[ordering_of(v)] = 1
        ords = list(seen)
    print(f"# A = {la} ({args.a}), B = {lb} ({args.b}); times in us, ratios A/B (> 1: B faster)")
    head = f"{'case':44s} {'peer':>8s} {'braid ' + la:>10s} {'braid ' + lb:>10s} {la + '/' + lb:>7s}"
    for o in ords:
        head += f" | {o[:17]:>17s} {la[:2] + '/' + lb[:3]:>6s}"
    print(head)
    ratios = []
    for key, ra in A.items():
        rb = B.get(key, {})
        peer = best(ra, lambda v: v.startswith("peer:"))
        pa, pb = ra.get("braid"), rb.get("braid")
        if pa and pb:
            ratios.append(pa / pb)
        line = f"{(key[0] + ' ' + key[1])[:44]:44s} {fmt(peer)} {fmt(pa):>10s} {fmt(pb):>10s} {ratio(pa, pb):>7s}"
        for o in ords:
            ta = best(ra, lambda v: ordering_of(v) == o)
            tb = best(rb, lambda v: ordering_of(v) == o)
            line += f" | {fmt(ta)} {fmt(tb)} {ratio(ta, tb)}"
        print(line)
    if ratios:
        ratios.sort()
        print(f"# braid's pick, {la}/{lb}: min {ratios[0]:.3f}, median {ratios[len(ratios) // 2]:.3f}, max {ratios[-1]:.3f} "
              f"over {len(ratios)} cases")


if __name__ == "__main__":
    main()
