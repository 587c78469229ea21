#!/usr/bin/env python3
"""Markdown table of an MLP results CSV (braid-bench-mlp --csv): per model and T, the floor, the
cuBLASLt peer, braid in stream order, braid's autotuned pick and their ratio, and optionally braid's
pick from an earlier CSV; with --log (the same run's braid-bench-mlp log), the most of the floor any implementation
timed this way can reach: floor / (floor + one empty launch), the launch timed in that run (launch_floor.cuh).
With --also (other calls' CSVs of the same code, repeatable), a column with braid / cuBLASLt in every call, lowest to
highest: how much of a ratio near 1.00x is the spread between calls. Where the CSV has the rows of braid-bench-mlp
--interleave (the pick and cuBLASLt re-timed in alternating rounds), a column with the median of the rounds' ratios.
Usage: mlp_table.py results.csv [--log run.log ...] [--before earlier.csv --before-label TEXT] [--also other.csv ...]"""
import argparse
import csv
import re
import sys


def load(path):
    by = {}
    for r in csv.DictReader(open(path)):
        if not r["workload"].startswith("mlp-"):
            continue
        key = (r["workload"][4:], int(r["shape"].split("=")[1]))
        by.setdefault(key, {})[r["variant"]] = r
    return by


def is_peer(name):
    """A cuBLASLt row of the tuning phase (not the interleaved rounds' re-timing)."""
    return name.startswith("peer:cublaslt") and "-interleaved" not in name


def speedup(variants):
    """cuBLASLt's best passing time over braid's pick in one call's rows of a (model, T), or None without both."""
    peers = [float(r["time_us"]) for n, r in variants.items() if is_peer(n) and r["check"] == "pass"]
    if not peers or "braid" not in variants:
        return None
    return min(peers) / float(variants["braid"]["time_us"])


def interleaved(variants):
    """(median, rounds) of cuBLASLt over braid's pick in the rounds of braid-bench-mlp --interleave, each round's pair
    timed side by side (rows braid:interleaved-r<R>/<pick> and peer:cublaslt...-interleaved-r<R>), or None."""
    braid, peer = {}, {}
    for n, r in variants.items():
        if r["check"] != "pass":
            continue
        m = re.match(r"braid:interleaved-r(\d+)/", n)
        if m:
            braid[int(m.group(1))] = float(r["time_us"])
        m = re.match(r"peer:cublaslt.*-interleaved-r(\d+)$", n)
        if m:
            peer[int(m.group(1))] = float(r["time_us"])
    ratios = sorted(peer[k] / braid[k] for k in braid if k in peer)
    if not ratios:
        return None
    mid = len(ratios) // 2
    return (ratios[mid] if len(ratios) % 2 else 0.5 * (ratios[mid - 1] + ratios[mid])), len(ratios)


def launch_us(log_path):
    """The one-kernel empty graph's time from a braid-bench-mlp log, and the models the log measured."""
    us, models = None, set()
    for line in open(log_path, errors="replace"):
        m = re.search(r"empty-kernel graphs \(same timing\): 1 kernel ([0-9.]+) us", line)
        if m and us is None:
            us = float(m.group(1))
        m = re.match(r"\s+(\w+)\s+T=\d+\s", line)
        if m:
            models.add(m.group(1))
    if us is None:
        sys.exit(f"mlp_table.py: no 'empty-kernel graphs' line in {log_path}")
    return us, models


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--log", action="append", default=[],
                    help="a braid-bench-mlp log of the same run (repeat: one per model, each model's own launch time)")
    ap.add_argument("--before")
    ap.add_argument("--before-label", default="before")
    ap.add_argument("--also", action="append", default=[],
                    help="another call's CSV (repeat): braid / cuBLASLt over this and every such call, lowest-highest")
    a = ap.parse_args()
    now = load(a.csv)
    if not now:
        sys.exit(f"mlp_table.py: no mlp-* rows in {a.csv}")
    before = load(a.before) if a.before else {}
    also = [load(p) for p in a.also]
    launch = {}  # model -> the launch time measured in that model's run ("*": a log naming no model)
    for path in a.log:
        us, models = launch_us(path)
        for m in models or {"*"}:
            launch[m] = us
    head = "| model | T | floor µs | cuBLASLt µs (/floor) | braid stream µs | braid autotuned µs (/floor) | braid / cuBLASLt | autotuner's choice |"
    sep = "|---|---|---|---|---|---|---|---|"
    if launch:
        head += " most of the floor reachable (floor + one empty launch) |"
        sep += "---|"
    if before:
        head += f" {a.before_label} µs |"
        sep += "---|"
    if also:
        head += f" braid / cuBLASLt in {len(also) + 1} calls |"
        sep += "---|"
    inter = any(interleaved(v) is not None for c in [now] + also for v in c.values())
    if inter:
        head += " braid / cuBLASLt timed alternately (median of the rounds; lowest-highest over the calls that did) |"
        sep += "---|"
    print(head)
    print(sep)
    for (model, t) in sorted(now, key=lambda k: (k[0], k[1])):
        v = now[(model, t)]
        floor = float(v["braid"]["floor_us"])
        peer = min((float(r["time_us"]), n) for n, r in v.items() if is_peer(n) and r["check"] == "pass")
        braid = float(v["braid"]["time_us"])
        # The chosen variant's row (runs cut short by a time limit may have written the summary row only).
        pick = next((n for n, r in v.items() if n.startswith("braid:") and abs(float(r["time_us"]) - braid) < 1e-6),
                    "braid:(not in the CSV: see the log)")
        streams = [float(r["time_us"]) for n, r in v.items() if n.startswith("braid:stream/")]
        stream = f"{min(streams):.0f}" if streams else "-"
        row = (f"| {model} | {t} | {floor:.0f} | {peer[0]:.0f} ({floor / peer[0]:.2f}) | {stream} | {braid:.0f} "
               f"({floor / braid:.2f}) | {peer[0] / braid:.2f}x | {pick[len('braid:'):]} |")
        if launch:
            us = launch.get(model, launch.get("*"))
            row += f" {floor / (floor + us):.2f} (+{us:.1f} µs) |" if us is not None else " - |"
        if before:
            b = before.get((model, t), {}).get("braid")
            row += f" {float(b['time_us']):.0f} |" if b else " |"
        if also:
            ratios = [r for r in (speedup(c.get((model, t), {})) for c in [now] + also) if r is not None]
            row += f" {min(ratios):.3f}-{max(ratios):.3f} ({len(ratios)}) |"
        if inter:
            rs = [r for r in (interleaved(c.get((model, t), {})) for c in [now] + also) if r is not None]
            if not rs:
                row += " - |"
            elif len(rs) == 1:
                row += f" {rs[0][0]:.3f}x ({rs[0][1]} rounds) |"
            else:
                row += f" {min(r[0] for r in rs):.3f}-{max(r[0] for r in rs):.3f}x ({len(rs)} calls) |"
        print(row)


if __name__ == "__main__":
    main()
