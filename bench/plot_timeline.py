#!/usr/bin/env python3
"""Draw a per-SM timeline of a traced braid run (CSV from `braid-demo --trace`), like Figure 1 of the
cuSync paper: one lane per resident block slot of each SM, a bar per tile coloured by stage, the
spin-wait part of each tile drawn pale. Usage: plot_timeline.py trace.csv [more.csv ...] -o out.png"""
import argparse
import csv
import os
import sys


def load(path):
    with open(path) as f:
        return [dict(r) for r in csv.DictReader(f)]


def lanes(rows):
    """Pack tiles of each SM into lanes (greedy by start time): lane = resident block slot."""
    by_sm = {}
    for r in sorted(rows, key=lambda r: float(r["start_us"])):
        by_sm.setdefault(int(r["smid"]), []).append(r)
    y, ticks = 0, []
    for sm in sorted(by_sm):
        ends = []
        for r in by_sm[sm]:
            s = float(r["start_us"])
            for i, e in enumerate(ends):
                if e <= s + 1e-3:
                    ends[i] = float(r["end_us"]); r["lane"] = y + i; break
            else:
                ends.append(float(r["end_us"])); r["lane"] = y + len(ends) - 1
        ticks.append((y, sm))
        y += len(ends)
    return y, ticks


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_timeline.py needs matplotlib (scripts/setup.sh installs it)")
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]
    fig, axes = plt.subplots(len(a.traces), 1, figsize=(12, 3.2 * len(a.traces)), squeeze=False)
    for ax, path in zip(axes[:, 0], a.traces):
        rows = load(path)
        if not rows:
            ax.set_title(f"{os.path.basename(path)}: empty"); continue
        n, ticks = lanes(rows)
        for r in rows:
            st, s, e, w = int(r["stage"]), float(r["start_us"]), float(r["end_us"]), float(r["wait_us"])
            c = colors[st % len(colors)]
            if w > 0:
                ax.barh(r["lane"], w, left=s, height=0.9, color=c, alpha=0.25, linewidth=0)
            ax.barh(r["lane"], e - s - w, left=s + w, height=0.9, color=c, linewidth=0)
            m = float(r.get("mainloop_end_us") or -1)  # older traces have no such column
            if s < m < e:  # the epilogue (stores, split-K reduction), hatched
                ax.barh(r["lane"], e - m, left=m, height=0.9, color="none", edgecolor="k", hatch="////", linewidth=0)
        makespan = max(float(r["end_us"]) for r in rows)
        ax.set_title(f"{os.path.basename(path)}  (makespan {makespan:.1f} us; pale = spin-wait, hatched = epilogue)", fontsize=9)
        ax.set_xlabel("time (us)")
        ax.set_ylabel("SM slots")
        ax.set_ylim(-1, n)
        ax.set_yticks([t for t, _ in ticks[:: max(1, len(ticks) // 12)]])
        ax.set_yticklabels([f"SM{sm}" for _, sm in ticks[:: max(1, len(ticks) // 12)]], fontsize=6)
        for st in sorted({int(r["stage"]) for r in rows}):
            ax.barh(-10, 0, color=colors[st % len(colors)], label=f"stage {st}")
        ax.legend(loc="upper right", fontsize=7)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
