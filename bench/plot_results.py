#!/usr/bin/env python3
"""Plot a results CSV (../shared/results-format.md) as PNG: for each workload, the fraction of the
floor (floor_us / time_us; 1.0 = at the physical limit) reached by every variant, per shape. Failed
checks are drawn as crosses. Usage: plot_results.py results.csv [-o out.png] (default: same base name)."""
import csv
import os
import re
import sys
import plot_common


def shape_key(s):
    nums = [int(x) for x in re.findall(r"\d+", s)]
    return nums or [0]


def main():
    a, plt = plot_common.setup("plot_results.py", __doc__)
    rows = list(csv.DictReader(open(a.csv)))
    if not rows:
        sys.exit(f"{a.csv}: no rows")
    workloads = sorted({r["workload"] for r in rows})
    fig, axes = plt.subplots(len(workloads), 1, figsize=(11, 3.6 * len(workloads)), squeeze=False)
    for ax, wl in zip(axes[:, 0], workloads):
        rs = [r for r in rows if r["workload"] == wl]
        shapes = sorted({r["shape"] for r in rs}, key=shape_key)
        variants = sorted({r["variant"] for r in rs}, key=lambda v: (not v.startswith("peer"), v))
        for v in variants:
            xs, ys, bad = [], [], []
            for i, s in enumerate(shapes):
                m = [r for r in rs if r["shape"] == s and r["variant"] == v]
                if not m:
                    continue
                r = m[0]
                frac = float(r["floor_us"]) / float(r["time_us"]) if float(r["time_us"]) > 0 else 0
                (xs if r["check"] == "pass" else bad).append(i)
                if r["check"] == "pass":
                    ys.append(frac)
            style = "--" if v.startswith("peer") else "-"
            ax.plot(xs, ys, style, marker="o", ms=3, label=v)
            if bad:
                ax.plot(bad, [0] * len(bad), "x", color="red")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels([s.replace(";", "\n") for s in shapes], fontsize=7)
        ax.set_ylabel("fraction of floor")
        ax.set_ylim(0, 1.15)
        g = rows[0]
        ax.set_title(f"{wl} on {g['gpu']} ({g['date']}, commit {g['commit']}); 1.0 = physical floor", fontsize=9)
        ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    out = a.out or os.path.splitext(a.csv)[0] + ".png"
    fig.savefig(out, dpi=110)
    print("wrote", out)


if __name__ == "__main__":
    main()
