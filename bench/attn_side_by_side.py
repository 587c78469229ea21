#!/usr/bin/env python3
"""braid's attention rows against PyTorch timed before and after braid in the same call.

braid-bench-attn writes its rows and those of the PyTorch run it was given (--peers, run just before);
bench/attn_torch.py, run again just after, writes a second peer CSV. The H200's speed drifts within a
call (up to 20% on long GEMM loads), so one peer run seconds or minutes away is not a side-by-side
measurement; the two runs bracket braid's. This script merges the second run's rows into the results CSV
(variants named "<variant>@2", as braid-bench-attn names a second --peers file's rows) and prints, per
case: braid (the pick re-timed; `braid`), braid's sweep minimum (`braid:sweep`, when present), PyTorch
before and after (peer:torch-sdpa-graph), and braid's speedup over each and over the faster of the two.

Usage: attn_side_by_side.py braid.csv [after-torch.csv ...] [--csv merged.csv] [--peer peer:torch-sdpa-graph]
"""
import argparse
import csv
import sys

from plot_common import RESULT_FIELDS as FIELDS


def load_results(path):
    return list(csv.DictReader(open(path)))


def merge_after(rows, after_paths):
    """rows (results format) plus each after-run's peer rows (shape,variant,time_us,check,...), their
    variants suffixed @2, @3, ... (numbered after the peers file braid-bench-attn itself read)."""
    by_shape = {}
    for r in rows:
        by_shape.setdefault(r["shape"], r)
    out = list(rows)
    for i, path in enumerate(after_paths):
        for p in csv.DictReader(open(path)):
            base = by_shape.get(p["shape"])
            if base is None:  # a case braid did not run (a narrower sweep): nothing to compare
                continue
            out.append({"gpu": base["gpu"], "date": base["date"], "commit": base["commit"], "workload": base["workload"],
                        "shape": p["shape"], "dtype": base["dtype"], "variant": f"{p['variant']}@{i + 2}",
                        "time_us": p["time_us"], "floor_us": base["floor_us"], "check": p["check"]})
    return out


def side_by_side(rows, peer="peer:torch-sdpa-graph"):
    """Per shape, in first-seen order: dict with braid, sweep, floor, peers (list of (name, us) for the
    peer's runs that passed, in run order), and the ratios peer / braid."""
    cases = {}
    for r in rows:
        c = cases.setdefault(r["shape"], {"workload": r["workload"], "braid": None, "sweep": None, "peers": [],
                                          "floor": float(r["floor_us"]) if r["floor_us"] else None})
        v, ok = r["variant"], r["check"] == "pass"
        t = float(r["time_us"]) if r["time_us"] else 0.0
        if v == "braid" and ok and t > 0:
            c["braid"] = t
        elif v == "braid:sweep" and ok:
            c["sweep"] = t
        elif (v == peer or v.startswith(peer + "@")) and ok and t > 0:
            c["peers"].append((v, t))
    for c in cases.values():
        c["ratios"] = [p / c["braid"] for _, p in c["peers"]] if c["braid"] else []
        c["vs_best"] = min(p for _, p in c["peers"]) / c["braid"] if c["braid"] and c["peers"] else None
    return cases


def table(cases):
    lines = ["| workload | case | braid µs (sweep) | PyTorch µs, each run | braid / PyTorch, each run | vs the faster | floor / braid |",
             "|---|---|---|---|---|---|---|"]
    for shape, c in cases.items():
        if c["braid"] is None:
            lines.append(f"| {c['workload']} | {shape} | (no passing pick) | | | | |")
            continue
        sweep = f" ({c['sweep']:.1f})" if c["sweep"] else ""
        peers = ", ".join(f"{t:.1f}" for _, t in c["peers"]) or "-"
        ratios = ", ".join(f"{x:.3f}x" for x in c["ratios"]) or "-"
        best = f"{c['vs_best']:.3f}x" if c["vs_best"] else "-"
        fl = f"{c['floor'] / c['braid']:.2f}" if c["floor"] else "-"
        lines.append(f"| {c['workload']} | {shape} | {c['braid']:.1f}{sweep} | {peers} | {ratios} | {best} | {fl} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("braid_csv")
    ap.add_argument("after", nargs="*", help="peer CSVs of PyTorch runs after braid's (bench/attn_torch.py --out)")
    ap.add_argument("--csv", help="write the merged results CSV here")
    ap.add_argument("--peer", default="peer:torch-sdpa-graph")
    a = ap.parse_args(argv)
    rows = load_results(a.braid_csv)
    if not rows:
        sys.exit(f"attn_side_by_side.py: no rows in {a.braid_csv}")
    rows = merge_after(rows, [p for p in a.after if p])
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
    cases = side_by_side(rows, a.peer)
    print(table(cases))
    slower = [s for s, c in cases.items() if c["vs_best"] is not None and c["vs_best"] < 1.0]
    print(f"\nbraid faster than the faster PyTorch run in {sum(1 for c in cases.values() if c['vs_best'] and c['vs_best'] >= 1.0)}"
          f" of {sum(1 for c in cases.values() if c['vs_best'] is not None)} cases" +
          (f"; not in: {', '.join(slower)}" if slower else ""))


if __name__ == "__main__":
    main()
