#!/usr/bin/env python3
"""Summarizes a same-call A/B log of single GEMMs (bench/device/act-ab.sh, fastdiv-ab.sh's gemm part, gemm-ab.sh):
per case, M and configuration, the mean over rounds of each build's plain time and its time right after
another braid kernel (the kernel-switch penalty), and NEW / OLD.
    python3 bench/switch_ab_table.py act-ab.log [more.log ...]"""
import re
import sys
from collections import defaultdict

t = defaultdict(list)  # (build, case, M, config, after) -> [us]
for path in sys.argv[1:]:
    build = case = None
    for line in open(path):
        m = re.match(r"== round \d+ (\w+) (\S+)", line)
        if m:
            build, case = m.group(1), m.group(2)
            continue
        m = re.match(r"## round \d+ (\w+) braid-gemm (.*)", line)  # bench/device/gemm-ab.sh
        if m:
            args = dict(re.findall(r"--(n|k|act) (\S+)", m.group(2)))
            build = m.group(1)
            case = f"N{args.get('n', '?')}K{args.get('k', '?')}" + (f"-{args['act']}" if "act" in args else "")
            continue
        m = re.match(r"\s+M=(\d+)\s+(\S+)( after \S+)?\s+([\d.]+) us", line)
        if m and build and "cublaslt" not in m.group(2) and "cutlass" not in m.group(2):
            t[(build, case, int(m.group(1)), m.group(2), bool(m.group(3)))].append(float(m.group(4)))
mean = lambda v: sum(v) / len(v)
keys = sorted({k[1:] for k in t})
print(f"{'case':16s} {'M':>5s} {'config':22s} {'':6s} {'OLD us':>8s} {'NEW us':>8s} {'NEW/OLD':>8s}")
ratios = {False: [], True: []}
for case, M, cfg, after in keys:
    o, n = t.get(("OLD", case, M, cfg, after)), t.get(("NEW", case, M, cfg, after))
    if not o or not n:
        continue
    r = mean(n) / mean(o)
    ratios[after].append(r)
    print(f"{case:16s} {M:5d} {cfg:22s} {'after' if after else 'plain':6s} {mean(o):8.1f} {mean(n):8.1f} {r:8.3f}")
for after, rs in ratios.items():
    if rs:
        rs = sorted(rs)
        print(f"{'after a switch' if after else 'plain'}: NEW/OLD median {rs[len(rs) // 2]:.3f}, range {rs[0]:.3f}-{rs[-1]:.3f}, n={len(rs)}")
